"""duel: two AI agents debate a Markdown document through a lease-based lock service.

The library is the product; :mod:`rp1_duel.cli` is a thin layer over it. Packages, and
the one direction data flows through them (cli → ci → mcp_server → benchmark → review → participant → coordination →
verify → record → turns; tests/test_layout.py holds them to it):

- :mod:`rp1_duel.turns`: the Markdown scanner, the source document, the turn grammar
  and the turn rules (docs/protocol.md section 7);
- :mod:`rp1_duel.record`: the artifact, the one history replay, outcomes,
  ``duel validate``, ``duel apply`` and the verification sidecar (sections 6 and 8);
- :mod:`rp1_duel.verify`: ``duel verify``, guarded fetches, verdicts and the voters' quorum
  (section 10);
- :mod:`rp1_duel.coordination`: the lock service over a shared directory (sections 2–5, 9);
- :mod:`rp1_duel.participant`: the loop behind ``duel join``, prompts and model providers;
- :mod:`rp1_duel.review`: ``duel report``, ``duel watch`` and ``duel list``;
- :mod:`rp1_duel.benchmark`: ``duel bench``, its corpus of documents with seeded defects, runs and scores;
- :mod:`rp1_duel.mcp_server`: ``duel mcp``, one seat for an agent harness over MCP;
- :mod:`rp1_duel.ci`: ``duel ci github``, a pull request's records checked and commented on;
- :mod:`rp1_duel.cli`: ``duel`` and ``duel tools``;
- top level: :mod:`.vocabulary` (the protocol's words), :mod:`.errors`, :mod:`.clock`,
  :mod:`.schedule`, :mod:`.settings`, :mod:`.files` (atomic writes), :mod:`.printable` (outside text made safe to print),
  :mod:`.confinement` (paths that data names stay inside the project), :mod:`.configuration`
  (the layered defaults: user, project, local files).

The names below are importable from ``rp1_duel`` directly; they load on first use, so
``import rp1_duel`` stays cheap for the one-shot ``duel tools`` commands.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

PROTOCOL_VERSION = 1

_EXPORTS = {
    "DuelService": "rp1_duel.coordination",
    "Seat": "rp1_duel.coordination",
    "LeaseToken": "rp1_duel.coordination",
    "DuelSettings": "rp1_duel.settings",
    "Config": "rp1_duel.configuration",
    "load_config": "rp1_duel.configuration",
    "DuelError": "rp1_duel.errors",
    "ManualClock": "rp1_duel.clock",
    "validate_turn": "rp1_duel.turns",
    "TurnContext": "rp1_duel.turns",
    "TurnViolation": "rp1_duel.turns",
    "parse_turn": "rp1_duel.turns",
    "SourceDocument": "rp1_duel.turns",
    "read_source": "rp1_duel.turns",
    "History": "rp1_duel.record",
    "RecordFile": "rp1_duel.record",
    "evaluate": "rp1_duel.record",
    "Schedule": "rp1_duel.schedule",
    "validate_file": "rp1_duel.record",
    "agreed_revision": "rp1_duel.record",
    "apply_agreed": "rp1_duel.record",
    "Duelist": "rp1_duel.participant.loop",
    "ParticipantConfig": "rp1_duel.participant.loop",
    "select_provider": "rp1_duel.participant.providers",
    "build_report": "rp1_duel.review.report",
    "read_report": "rp1_duel.review.report_files",
    "assess_artifact": "rp1_duel.review.report_files",
    "render_markdown": "rp1_duel.review.report.markdown",
    "render_html": "rp1_duel.review.report.html",
}

# The documented surface: the lazy exports above, the protocol version and the version.
# tests/test_layout.py checks it is exactly those and that every name resolves.
__all__ = [
    "PROTOCOL_VERSION",
    "Config",
    "DuelError",
    "DuelService",
    "DuelSettings",
    "Duelist",
    "History",
    "LeaseToken",
    "ManualClock",
    "ParticipantConfig",
    "RecordFile",
    "Schedule",
    "Seat",
    "SourceDocument",
    "TurnContext",
    "TurnViolation",
    "__version__",
    "agreed_revision",
    "apply_agreed",
    "assess_artifact",
    "build_report",
    "evaluate",
    "load_config",
    "parse_turn",
    "read_report",
    "read_source",
    "render_html",
    "render_markdown",
    "select_provider",
    "validate_file",
    "validate_turn",
]

if TYPE_CHECKING:
    from .clock import ManualClock as ManualClock
    from .configuration import Config as Config
    from .configuration import load_config as load_config
    from .coordination import DuelService as DuelService
    from .coordination import LeaseToken as LeaseToken
    from .coordination import Seat as Seat
    from .errors import DuelError as DuelError
    from .participant import Duelist as Duelist
    from .participant import ParticipantConfig as ParticipantConfig
    from .participant import select_provider as select_provider
    from .record import History as History
    from .record import RecordFile as RecordFile
    from .record import agreed_revision as agreed_revision
    from .record import apply_agreed as apply_agreed
    from .record import evaluate as evaluate
    from .record import validate_file as validate_file
    from .review import assess_artifact as assess_artifact
    from .review import build_report as build_report
    from .review import read_report as read_report
    from .review import render_html as render_html
    from .review import render_markdown as render_markdown
    from .schedule import Schedule as Schedule
    from .settings import DuelSettings as DuelSettings
    from .turns import SourceDocument as SourceDocument
    from .turns import TurnContext as TurnContext
    from .turns import TurnViolation as TurnViolation
    from .turns import parse_turn as parse_turn
    from .turns import read_source as read_source
    from .turns import validate_turn as validate_turn


def _version() -> str:
    # importlib.metadata costs tens of milliseconds: paid only when the version is asked for.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rp1-duel")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's ``__getattr__`` (PEP 562) that loads each of ``exports`` (a name and the module,
    absolute or ``.name`` within ``package``, it comes from) on first use and keeps it: the lazy face
    of this package and of each subpackage, so importing a face loads none of the modules behind it."""

    def load(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        home = exports[name]
        module = package + home if home.startswith(".") else home
        # __import__ is the import statement's own path, which -X importtime reports
        # (importlib.import_module's is not): what a command loads stays visible.
        __import__(module)
        value = getattr(sys.modules[module], name)
        setattr(sys.modules[package], name, value)
        return value

    return load


_load_export = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    """Load an export on first use (PEP 562), so ``import rp1_duel`` stays cheap."""
    if name == "__version__":
        return _version()
    return _load_export(name)


def __dir__() -> list[str]:
    """The documented exports, sorted (PEP 562), rather than the module's internals."""
    return sorted(__all__)
