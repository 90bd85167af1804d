#!/usr/bin/env bash
# The duel review action's last step (action.yml): its inputs, passed as environment variables, become
# `duel ci github`'s options. A flag input is "true" or "false"; anything else is a usage error (exit 2).
set -euo pipefail

args=(--glob "${DUEL_GLOB:-debates/**/*.md}")
flag() { # flag INPUT VALUE OPTION-WHEN-TRUE OPTION-WHEN-FALSE
  case "$2" in
    true) args+=(${3:+"$3"}) ;;
    false) args+=(${4:+"$4"}) ;;
    *) echo "duel review: the input $1 is \"true\" or \"false\"" >&2 && exit 2 ;;
  esac
}
flag require-consensus "${DUEL_REQUIRE_CONSENSUS:-false}" --require-consensus ""
flag require-verified "${DUEL_REQUIRE_VERIFIED:-false}" --require-verified ""
flag comment "${DUEL_COMMENT:-true}" "" --no-comment

# Who may sign is read from the pull request's base commit: a pull request must not choose its own signers.
if [[ -n "${DUEL_ALLOWED_SIGNERS:-}" ]]; then
  base=$(python3 -c 'import json, os, sys
path = os.environ.get("GITHUB_EVENT_PATH") or ""
event = json.load(open(path)) if path and os.path.isfile(path) else {}
print(event.get("pull_request", {}).get("base", {}).get("sha", ""))')
  signers="$DUEL_ALLOWED_SIGNERS"
  if [[ -n "$base" ]]; then
    signers="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/duel-allowed-signers"
    git cat-file blob "$base:$DUEL_ALLOWED_SIGNERS" >"$signers" 2>/dev/null \
      || { echo "duel review: allowed-signers: $DUEL_ALLOWED_SIGNERS is not in the pull request's base commit" >&2 && exit 2; }
  fi
  args+=(--allowed-signers "$signers")
fi
exec duel ci github "${args[@]}"
