"""The service's calls that stand for the CLI's former reach into the store."""

from __future__ import annotations

from pathlib import Path

from rp1_duel.coordination.service import DuelService


def test_prepare_store_creates_the_debate_dirs_state_folder_and_says_where(debate_dir: Path) -> None:
    service = DuelService(debate_dir)
    assert service.prepare_store() == str(debate_dir)
    assert (debate_dir / ".duel" / "duels").is_dir()
    assert service.prepare_store() == str(debate_dir)  # again: nothing to do
