"""Fixtures: a temp debate dir with a source, a service on a manual clock, a seated pair.

Helpers live in ``tests/helpers.py``; the fake model servers' fixtures come from the
``fake_models`` plugin.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from rp1_duel.clock import ManualClock
from rp1_duel.coordination import DuelService

from helpers import SOURCE, Player, join

pytest_plugins = ["fake_models", "fake_web", "fake_github", "pg_server"]


@pytest.fixture(autouse=True, scope="session")
def no_user_configuration(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every process the suite starts reads an empty user configuration, never the developer's
    ~/.config/duel/config.toml (tests of the configuration pass their own HOME and env)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
        yield


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "design.md"
    path.write_text(SOURCE, encoding="utf-8")
    return path


@pytest.fixture
def debate_dir(tmp_path: Path) -> Path:
    return tmp_path / "debates"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def service(debate_dir: Path, clock: ManualClock) -> DuelService:
    return DuelService(debate_dir, clock=clock)


@pytest.fixture(params=["directory", pytest.param("postgresql", marks=pytest.mark.slow)])
def service_on_each_store(
    request: pytest.FixtureRequest, debate_dir: Path, clock: ManualClock
) -> Iterator[DuelService]:
    """The service over each store: the debate dir, then a PostgreSQL database (slow: it
    starts a server). A test of what only a debate dir has (its files) is marked ``directory_only``."""
    if request.param == "directory":
        yield DuelService(debate_dir, clock=clock)
        return
    if request.node.get_closest_marker("directory_only"):
        pytest.skip("checks the debate dir's own files")
    from rp1_duel.coordination import DebateDir
    from rp1_duel.coordination._postgres import PostgresStore

    url = request.getfixturevalue("postgres_url")
    store = PostgresStore(url, DebateDir(debate_dir))
    start = store.now().wall
    store.offset = lambda: clock.wall - start  # the database's clock, moved as the manual clock moves
    yield DuelService(debate_dir, store=store)
    store.close()


@pytest.fixture
def pair(service: DuelService, source: Path) -> tuple[Player, Player]:
    """Two participants in one duel, defaults as the protocol gives them."""
    return join(service, source, "Alice", harness="claude-code", model_id="claude-x"), join(
        service, source, "Bob", harness="codex", model_id="gpt-x"
    )


SLOW_TIMEOUT_SECONDS = 300


def pytest_configure(config: pytest.Config) -> None:
    """A suite started under ``nohup`` or as a shell's background job ignores SIGHUP or SIGINT, and every `duel`
    it starts would inherit the ignore: the tests that send those signals check what duel does by default."""
    for number, default in ((signal.SIGHUP, signal.SIG_DFL), (signal.SIGINT, signal.default_int_handler)):
        if signal.getsignal(number) == signal.SIG_IGN:
            signal.signal(number, default)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A slow test (processes, servers) runs under the slow tier's timeout unless it names its own."""
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT_SECONDS))
