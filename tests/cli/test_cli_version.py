"""``duel --version``: the installed package's version, from its metadata."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from rp1_duel.cli import main


def test_duel_version_prints_the_installed_version_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"duel {version('rp1-duel')}\n"


def test_the_version_comes_before_any_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version", "validate", "no-such-file.md"])  # eager: the command never runs
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("duel ")
