"""The lease campaign's quick mode (docs/lease-evidence.md): 2,000 ops on each store under every
kind of fault, their history checked, no violation found; and the same campaign over a store
without fencing, which the checker must catch. A failing run prints its seed and the command that
replays it. ``DUEL_CAMPAIGN_SEED`` runs another seed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pg_server import running_server

from lease_campaign import run_campaign

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]  # a dozen processes for about 20 s a store

QUICK_OPS = 2000
QUICK_SECONDS = 120  # the quick mode's bound, per store
SEED = int(os.environ.get("DUEL_CAMPAIGN_SEED", "1"))


def test_the_campaign_on_a_debate_dir_finds_no_violation(tmp_path: Path) -> None:
    result = run_campaign(tmp_path / "campaign", store="dir", seed=SEED, ops=QUICK_OPS, time_limit=QUICK_SECONDS)

    assert result.violations == [], result.report()
    assert result.ops >= QUICK_OPS and result.seconds < QUICK_SECONDS, result.report()
    assert {"kill", "stop", "clock-mono", "clock-wall", "fsync-fail", "rename-fail", "enospc"} <= set(result.faults)


def test_the_campaign_on_postgresql_finds_no_violation(tmp_path: Path) -> None:
    with running_server() as server:  # its own: the campaign restarts it
        result = run_campaign(
            tmp_path / "campaign", store="postgres", seed=SEED, ops=QUICK_OPS, server=server, time_limit=QUICK_SECONDS
        )

    assert result.violations == [], result.report()
    assert result.ops >= QUICK_OPS and result.seconds < QUICK_SECONDS, result.report()
    assert {"kill", "stop", "clock-mono", "pg-cut", "pg-restart"} <= set(result.faults)


def test_the_checker_catches_a_store_without_fencing(tmp_path: Path) -> None:
    result = run_campaign(
        tmp_path / "campaign", store="dir", seed=SEED, ops=QUICK_OPS, broken=True, time_limit=QUICK_SECONDS
    )

    lapses = {"lapse_not_told", "lapsed_write_accepted", "overlapping_writes"}
    assert lapses & {violation.kind for violation in result.violations}, result.report()
    assert "--broken" in result.report()
