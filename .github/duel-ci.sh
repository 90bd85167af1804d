#!/usr/bin/env bash
# The duel review action's last step (action.yml): its inputs, passed as environment variables, become
# `duel ci github`'s options. A flag input is "true" or "false"; anything else is a usage error.
set -euo pipefail

args=(--glob "${DUEL_RECORDS:-debates/**/*.md}")
flag() {  # flag INPUT-NAME VALUE OPTION
  case "$2" in
    true) args+=("$3") ;;
    false | "") ;;
    *) echo "::error::the input $1 is \"true\" or \"false\"" >&2; exit 2 ;;
  esac
}
flag require-consensus "${DUEL_REQUIRE_CONSENSUS:-false}" --require-consensus
flag require-verified "${DUEL_REQUIRE_VERIFIED:-false}" --require-verified
if [[ -n "${DUEL_ALLOWED_SIGNERS:-}" ]]; then
  args+=(--allowed-signers "$DUEL_ALLOWED_SIGNERS")
fi
exec duel ci github "${args[@]}"
