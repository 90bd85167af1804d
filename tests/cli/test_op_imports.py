"""What each `duel tools` lock op loads (issue 40, item 5): an agent pays a whole process for each
call, and its imports are most of that process (bench/bench_startup.py). Each op may load these
rp1_duel modules and no others, and no third-party package at all; a new import on one of these
paths must be added here on purpose, with its cost measured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # every test starts `duel tools` processes

# What every op loads: the flags' reader, the configuration, the service, the debate dir store.
EVERY_OP = {
    "rp1_duel",
    "rp1_duel.cli",
    "rp1_duel.cli.arguments",
    "rp1_duel.cli.stopping",
    "rp1_duel.cli.tools",
    "rp1_duel.cli.tools_flags",
    "rp1_duel.clock",
    "rp1_duel.configuration",
    "rp1_duel.confinement",
    "rp1_duel.digest",
    "rp1_duel.coordination",
    "rp1_duel.coordination._joining",
    "rp1_duel.coordination._retrying",
    "rp1_duel.coordination._state",
    "rp1_duel.coordination._state_watch",
    "rp1_duel.coordination._store",
    "rp1_duel.coordination._store_url",
    "rp1_duel.coordination.identity",
    "rp1_duel.coordination.policy",
    "rp1_duel.coordination._result_core",
    "rp1_duel.coordination.service",
    "rp1_duel.coordination.storage",
    "rp1_duel.ctrl_c",
    "rp1_duel.errors",
    "rp1_duel.files",
    "rp1_duel.printable",
    "rp1_duel.schedule",
    "rp1_duel.settings",
    "rp1_duel.vocabulary",
}
# A lock op that writes logs a lease event (not every event type: .events is not loaded) and
# answers with its own result (not the other lock ops', nor the record ops': ._record_results).
LEASE_EVENTS = {"rp1_duel.coordination._event_core", "rp1_duel.coordination._lease_events"}
ALLOWED = {
    # A status answers with a status (.results, which no lock op builds) and sums the usage its duel
    # logged (none here: no event type is built).
    "status": EVERY_OP
    | {
        "rp1_duel.coordination.counts",
        "rp1_duel.coordination.results",
        "rp1_duel.participant",
        "rp1_duel.participant.usage",
    },
    "claim-lock, refused": EVERY_OP | {"rp1_duel.coordination._claim_result"},
    "claim-lock": EVERY_OP | LEASE_EVENTS | {"rp1_duel.coordination._claim_result"},
    "refresh-lock": EVERY_OP | LEASE_EVENTS | {"rp1_duel.coordination._refresh_result"},
    "release-lock": EVERY_OP | LEASE_EVENTS | {"rp1_duel.coordination._release_result"},
    # A join reads the source and renders the artifact without turns: no turn grammar, no Markdown
    # parser, no history, no rules, no record parser (.artifact), no citation matching (those load
    # with the first append), and no audience, rulings or signatures (a new duel has none); its
    # answer is its own (._join_result), not a lock op's; a new seat logs its events (._seat_events),
    # not those of a seat taken again.
    "join": EVERY_OP
    | {
        "rp1_duel.coordination._event_core",
        "rp1_duel.coordination._artifact_writer",
        "rp1_duel.coordination._join_result",
        "rp1_duel.coordination._seat_events",
        "rp1_duel.record",
        "rp1_duel.record.front_matter",
        "rp1_duel.record.rendering",
        "rp1_duel.record.sources",
        "rp1_duel.turns",
        "rp1_duel.turns.markdown",
        "rp1_duel.turns.source",
    },
}


def imported(cwd: Path, *args: str) -> tuple[dict[str, Any], set[str]]:
    """Run ``duel tools ARGS`` under ``-X importtime``: its answer's data, and every module it imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rp1_duel", "tools", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")][1:]  # past the header
    return json.loads(proc.stdout)["data"], {line.split("|")[-1].strip() for line in lines}


def bare_interpreter_imports(cwd: Path) -> set[str]:
    """What ``python -c pass`` imports here: the environment's own (site, .pth hooks, an editable finder)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True, cwd=cwd, check=True
    )
    return {line.split("|")[-1].strip() for line in proc.stderr.splitlines()[1:] if "|" in line}


def third_party(modules: set[str], environment: set[str]) -> set[str]:
    """The modules neither rp1_duel's, the standard library's nor the environment's own. The copy module
    probes for Jython's org.python.core, which the import log lists although it is not there."""
    return {
        name
        for name in modules - environment
        if name.split(".")[0] not in {*sys.stdlib_module_names, "rp1_duel", "org"}
    }


def test_each_lock_op_loads_only_its_own_modules_and_no_third_party_package(source: Path, debate_dir: Path) -> None:
    where = ["--debate-dir", str(debate_dir)]
    loaded: dict[str, set[str]] = {}
    alice, loaded["join"] = imported(
        debate_dir.parent, "join", "--target", str(source), "--participant-name", "Alice", *where
    )
    bob, _ = imported(debate_dir.parent, "join", "--target", str(source), "--participant-name", "Bob", *where)

    def seat(joined: dict[str, Any]) -> list[str]:
        return [
            "--duel-id",
            joined["duel_id"],
            "--participant-id",
            joined["participant_id"],
            f"--participant-token={joined['participant_token']}",
            *where,
        ]

    granted, loaded["claim-lock"] = imported(debate_dir.parent, "claim-lock", *seat(alice))
    lease = ["--lease-token", granted["lease_token"]]
    _, loaded["refresh-lock"] = imported(debate_dir.parent, "refresh-lock", *seat(alice), *lease)
    refused, loaded["claim-lock, refused"] = imported(debate_dir.parent, "claim-lock", *seat(bob))
    _, loaded["release-lock"] = imported(debate_dir.parent, "release-lock", *seat(alice), *lease)
    _, loaded["status"] = imported(debate_dir.parent, "status", "--duel-id", alice["duel_id"], *where)
    assert (granted["acquired"], refused["acquired"]) == (True, False)

    environment = bare_interpreter_imports(debate_dir.parent)
    for op, modules in loaded.items():
        ours = {name for name in modules if name.split(".")[0] == "rp1_duel"}
        assert ours - ALLOWED[op] == set(), op  # a module this op did not load before
        assert ALLOWED[op] - ours == set(), op  # one it no longer loads: tighten the list
        assert third_party(modules, environment) == set(), op
        assert "argparse" not in modules, op  # written plainly, an op's flags are read without it (cli/tools_flags.py)
