"""What ``duel report`` reads, at the edge: the artifact (bounded, as ``duel validate`` reads it),
the usage events recorded next to it, and its verification sidecar. Read-only: nothing is created.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..coordination.service import DuelService
from ..coordination.storage import STATE_DIR
from ..errors import DuelError
from ..record.artifact import FrontMatter, FrontMatterError, parse
from ..record.history import read_artifact_text
from ..record.verification import SidecarError, load, sidecar_path
from ..vocabulary import RecordCode
from .report import Report, SidecarFile, build_report


def read_report(path: str | os.PathLike[str], env: Mapping[str, str] = os.environ) -> Report:
    """The report of the artifact at ``path``; raises :class:`DuelError` (``UNREADABLE``, ``FRONT_MATTER``)."""
    where = Path(path)
    try:
        text = read_artifact_text(where)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0]
        raise DuelError(RecordCode.UNREADABLE, f"cannot read {where}: {reason}") from None
    notes: list[str] = []
    events = _usage_events(where, _duel_id(text), notes)
    return build_report(text, str(where), usage_events=events, sidecar=_sidecar(where), env=env, notes=notes)


def _sidecar(artifact: Path) -> SidecarFile | None:
    """The verification sidecar next to the artifact, read through its own module, if there is one."""
    path = sidecar_path(artifact)
    if not os.path.lexists(path):
        return None
    try:
        return SidecarFile(str(path), load(path))
    except (OSError, SidecarError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return SidecarFile(str(path), None, reason)


def _duel_id(text: str) -> str | None:
    try:
        return FrontMatter.parse(parse(text).front_matter).duel_id
    except FrontMatterError:
        return None  # build_report says why


def _usage_events(artifact: Path, duel_id: str | None, notes: list[str]) -> list[dict[str, Any]] | None:
    """The duel's ``usage`` events when its state sits next to the artifact, as the service leaves it:
    ``<debate dir>/<duel id>.md`` and ``<debate dir>/.duel/duels/<duel id>/``. None when there is none."""
    if duel_id is None or artifact.name != f"{duel_id}.md":
        return None
    service = DuelService(artifact.parent)
    try:
        if not (service.debate.duel_folder(duel_id) / "state.json").is_file():
            return None
        service.debate.check_readable()  # a state folder other users can write is not evidence
        return service.events(duel_id, ("usage",))
    except DuelError as exc:
        notes.append(f"recorded usage not read from {artifact.parent / STATE_DIR}: {exc.message}")
        return None
