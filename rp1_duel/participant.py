"""One participant of a duel, start to finish: the loop behind ``duel join``.

States: preparing → waiting_for_participant → debating → closing → completed |
invalidated. The loop talks to the lock service in process (not through ``duel
tools``), waits with the service's ``wait`` (no fixed sleeps), composes its turns with
a provider while a background thread keeps its lease fresh, validates each draft
locally and asks the provider for up to three repairs before appending.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from . import artifact, prompt
from .clock import parse_iso
from .errors import DuelError
from .identity import resolve_target, resolve_topic, slugify
from .providers import Provider
from .record import source_names, turn_context
from .rules import TurnViolation, validate_turn
from .service import DuelService, DuelSettings
from .source import SourceDocument
from .storage import DebateDir, DuelLock, write_atomic

MAX_REPAIRS = 3
WAIT_SLICE_SECONDS = 30.0  # wait returns on any change anyway; this only bounds each call

PREPARING, WAITING, DEBATING, CLOSING = "preparing", "waiting_for_participant", "debating", "closing"
COMPLETED, INVALIDATED = "completed", "invalidated"


@dataclass(frozen=True)
class ParticipantConfig:
    target: str  # absolute path of the source
    debate_dir: str
    name: str
    harness: str = "duel"
    topic: str | None = None
    persona: str | None = None
    position: str | None = None
    settings: DuelSettings = DuelSettings()


@dataclass
class ParticipantResult:
    state: str
    duel_id: str | None = None
    participant_id: str | None = None
    seat: int | None = None
    outcome: str | None = None
    reason: str | None = None
    debate_path: str | None = None
    turns_written: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Reporter(Protocol):
    """What a person sees; :class:`rp1_duel.console.ConsoleReporter` prints it."""

    def state(self, state: str, detail: str) -> None: ...
    def progress(self, tokens: int) -> None: ...
    def turn_accepted(self, number: int, stance: str) -> None: ...
    def turn_rejected(self, number: int, violations: list[TurnViolation], attempt: int) -> None: ...


class LeaseKeeper:
    """Refreshes a lease in the background while a turn is being composed.

    A slow model keeps the floor as long as this process lives; a dead process stops
    refreshing, and the lease expires for the peer.
    """

    def __init__(self, service: DuelService, duel_id: str, pid: str, token: str, lease: str, lease_seconds: int):
        self._args = (duel_id, pid, token, lease)
        self._service = service
        self._interval = max(1.0, lease_seconds / 3)
        self._stop = threading.Event()
        self.lost = threading.Event()
        self._thread = threading.Thread(target=self._run, name="duel-lease-keeper", daemon=True)

    def __enter__(self) -> "LeaseKeeper":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                if not self._service.refresh_lock(*self._args)["refreshed"]:
                    self.lost.set()
                    return
            except DuelError:
                self.lost.set()
                return


class SeatStash:
    """The participant token, kept owner-only in the state folder so a rerun resumes the seat.

    Also held under a lock for the process's lifetime: two ``duel join`` runs with the same
    identity would otherwise share one seat.
    """

    def __init__(self, debate: DebateDir, key: str):
        folder = debate.state_root / "participants"
        folder.mkdir(mode=0o700, exist_ok=True)
        self.path = folder / f"{key}.json"
        self._lock = DuelLock(folder / f"{key}.lock", timeout=0.2)

    def __enter__(self) -> "SeatStash":
        try:
            self._lock.__enter__()
        except DuelError:
            raise DuelError("SEAT_TAKEN", "another `duel join` with this name, harness and model is running; "
                                          "pass a different --name") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.__exit__()

    def token(self) -> str | None:
        try:
            return json.loads(self.path.read_text()).get("participant_token")
        except (OSError, ValueError, AttributeError):
            return None

    def save(self, data: dict[str, Any]) -> None:
        keep = {k: data[k] for k in ("duel_id", "participant_id", "participant_token", "seat")}
        write_atomic(self.path, json.dumps(keep).encode())


class Duelist:
    """Runs one participant through a whole duel."""

    def __init__(self, config: ParticipantConfig, provider: Provider, reporter: Reporter,
                 service: DuelService | None = None):
        self.config = config
        self.provider = provider
        self.report = reporter
        self.service = service or DuelService(config.debate_dir)
        self.result = ParticipantResult(PREPARING)
        self.token = ""
        self.lease: str | None = None  # the lease this process holds, to release it on Ctrl-C
        self.identity = (config.name, config.harness, provider.model)
        self._last_wait = ""  # the last wait shown, so a long wait is not repeated line by line

    # -- the loop ---------------------------------------------------------------------
    def run(self) -> ParticipantResult:
        self._enter(PREPARING, f"joining as {self.config.name} ({self.config.harness} / {self.provider.model})")
        with self._stash() as stash:
            joined = self._join(stash)
            while True:
                status = self.service.status(joined["duel_id"], participant_id=self.result.participant_id)
                step = status["next_step"]
                if step == "closed":
                    return self._finish(status)
                try:
                    getattr(self, f"_on_{step}")(status)
                except DuelError as exc:
                    if exc.code != "DUEL_CLOSED":  # the peer closed first: the next status says so
                        raise

    def interrupt(self) -> None:
        """Ctrl-C: give the floor back; the seat stays resumable by running the same command."""
        if self.lease and self.result.duel_id:
            try:
                self.service.release_lock(self.result.duel_id, self.result.participant_id, self.token, self.lease)
            except DuelError:
                pass  # already expired or closed: nothing is held
            self.lease = None

    def _stash(self) -> SeatStash:
        source = resolve_target(self.config.target)
        slug = slugify(resolve_topic(self.config.topic, source))
        key = hashlib.sha256("\n".join((source.path, slug, *self.identity)).encode()).hexdigest()[:32]
        debate = self.service.debate
        debate.ensure()
        return SeatStash(debate, key)

    def _join(self, stash: SeatStash) -> dict[str, Any]:
        name, harness, model = self.identity
        data = self.service.join(
            target=self.config.target, participant_name=name, topic=self.config.topic, harness=harness,
            model_id=model, participant_token=stash.token(), settings=self.config.settings,
        )
        stash.save(data)
        self.token = data["participant_token"]
        self.result.duel_id, self.result.participant_id = data["duel_id"], data["participant_id"]
        self.result.seat, self.result.debate_path = data["seat"], data["debate_path"]
        self.max_turns = data["max_turns"]
        self.lease_seconds = data["lease_seconds"]
        self.source = SourceDocument.from_path(data["source_path"])
        self.source_names = source_names(data["source_path"], str(Path(data["debate_path"]).parent))
        self.system = prompt.system_prompt(name, data["topic"], self.source, self.source_names[-1],
                                           self.config.persona, self.config.position)
        self.report.state(PREPARING, f"seat {data['seat']} of duel {data['duel_id']} → {data['debate_path']}")
        return data

    def _enter(self, state: str, detail: str) -> None:
        self.result.state = state
        self.report.state(state, detail)

    # -- one handler per next_step ------------------------------------------------------
    def _on_wait_peer(self, status: dict[str, Any]) -> None:
        self._wait(status, WAITING, f"waiting for a peer ({self._left(status['peer_wait_until'])} left)")

    def _on_wait_turn(self, status: dict[str, Any]) -> None:
        owner = status["lock"]["owner_participant_id"]
        holder = next((p["display_name"] for p in status["participants"] if p["id"] == owner), None)
        floor = f"{holder} holds the floor" if holder else "the peer's turn"
        left = self._left(status["turn_deadline"])
        self._wait(status, DEBATING, f"{floor}; turn {status['turn_count'] + 1} due within {left}")

    def _on_claim_lock(self, status: dict[str, Any]) -> None:
        if self._claim(status) is not None:
            self._take_turn(status)

    _on_compose_turn = _on_claim_lock

    def _on_release_lock(self, status: dict[str, Any]) -> None:
        lease = self._claim(status)
        if lease is not None:
            self.service.release_lock(self.result.duel_id, self.result.participant_id, self.token, lease)
            self.lease = None

    def _on_claim_timeout(self, status: dict[str, Any]) -> None:
        if self._claim(status, for_timeout=True) is not None:
            self._close("TIMEOUT", "the peer did not come or did not answer in time")

    def _on_close_timeout(self, status: dict[str, Any]) -> None:
        self._on_claim_timeout(status)

    def _on_close(self, status: dict[str, Any]) -> None:
        if self._claim(status) is not None:
            duel = status["duel"]
            outcome = duel["pending_outcome"] or "INVALIDATED"
            self._close(outcome, duel["invalid_reason"])

    # -- pieces -----------------------------------------------------------------------------
    def _wait(self, status: dict[str, Any], state: str, detail: str) -> None:
        if self.result.state != state or self._last_wait != detail:
            self._enter(state, detail)
            self._last_wait = detail
        self.service.wait(self.result.duel_id, self.result.participant_id, WAIT_SLICE_SECONDS,
                          next_step=status["next_step"])

    def _left(self, moment: str | None) -> str:
        if moment is None:
            return "no limit"
        seconds = max(0, int(parse_iso(moment) - self.service.clock()))
        return f"{seconds // 60}m {seconds % 60:02d}s"

    def _claim(self, status: dict[str, Any], for_timeout: bool = False) -> str | None:
        data = self.service.claim_lock(self.result.duel_id, self.result.participant_id, self.token, for_timeout)
        if not data["acquired"]:
            self.service.wait(self.result.duel_id, self.result.participant_id,
                              min(WAIT_SLICE_SECONDS, data["retry_after_seconds"] or WAIT_SLICE_SECONDS))
            return None
        self.lease = data["lease_token"]
        return self.lease

    def _close(self, outcome: str, reason: str | None, summary: str | None = None) -> None:
        self._enter(CLOSING, f"closing with {outcome}")
        try:
            self.service.release_lock(self.result.duel_id, self.result.participant_id, self.token, self.lease,
                                      close=True, outcome=outcome, reason=reason, summary=summary)
        except DuelError as exc:
            if exc.code not in ("TIMEOUT_REJECTED", "LEASE_EXPIRED", "LEASE_NOT_HELD"):
                raise
            self.report.state(self.result.state, f"close refused ({exc.code}): {exc.message}")
            return
        self.lease = None

    def _take_turn(self, status: dict[str, Any]) -> None:
        number = status["turn_count"] + 1
        self._enter(DEBATING, f"composing turn {number} with {self.provider.model}")
        text = artifact.parse(Path(self.result.debate_path).read_text(encoding="utf-8"))
        blocks = text.blocks[: status["turn_count"]]
        context = turn_context(self.source, self.source_names, blocks, self.identity, number)
        prefix = prompt.heading_prefix(number, *self.identity)
        violations: list[TurnViolation] = []
        draft = None
        with LeaseKeeper(self.service, self.result.duel_id, self.result.participant_id, self.token,
                         self.lease, self.lease_seconds) as keeper:
            for attempt in range(1 + MAX_REPAIRS):
                request = prompt.build_request(
                    duel_id=self.result.duel_id, system=self.system, blocks=blocks, number=number,
                    max_turns=self.max_turns, prefix=prefix, own_turns_before=(number - 1) // 2,
                    violations=violations, draft=draft)
                draft = self.provider.compose(request, self.report.progress)
                if keeper.lost.is_set():
                    self.report.state(DEBATING, "lease lost while composing; claiming again")
                    return
                violations = validate_turn(draft, context).violations
                if not violations:
                    break
                self.report.turn_rejected(number, violations, attempt + 1)
            else:
                codes = ", ".join(sorted({v.code for v in violations}))
                self._close("INVALIDATED", f"{self.identity[0]} could not write a valid turn {number} "
                                           f"after {MAX_REPAIRS} repairs ({codes})")
                return
        try:
            data = self.service.append(self.result.duel_id, self.result.participant_id, self.token, self.lease,
                                       draft, release=True)
        except DuelError as exc:
            if exc.code in ("LEASE_EXPIRED", "LEASE_NOT_HELD"):
                self.report.state(DEBATING, f"lease lost before the append ({exc.code}); claiming again")
                return
            raise
        self.result.turns_written.append(number)
        self.report.turn_accepted(number, data["stance"])
        if data["terminal_outcome"] is None:
            self.lease = None

    def _finish(self, status: dict[str, Any]) -> ParticipantResult:
        duel = status["duel"]
        self.result.outcome = duel["outcome"]
        self.result.state = INVALIDATED if duel["outcome"] == "INVALIDATED" else COMPLETED
        self.result.reason = duel["reason"]
        self.report.state(self.result.state, f"{duel['outcome']} → {self.result.debate_path}")
        return self.result

