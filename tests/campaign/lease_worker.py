"""One client of the lease campaign, as a process of its own (so the nemesis can kill or pause it).

``python lease_worker.py CONFIG CLIENT SEAT KIND``: ``KIND`` ``library`` calls the service in
this process, ``tools`` starts a real ``duel tools`` process for each op. The client plays a seat of
the campaign's current duel (``duel.json``, written by the driver): it claims the floor, writes
turns, refreshes, releases and closes, choosing each step from its own seeded random stream. A
lease it was granted (or handed back: another client of its seat holds it) it keeps using until an
answer tells it the lease is gone: a paused holder wakes and tries its refresh, append or close as if
nothing happened.

Each op is written to ``history-CLIENT.jsonl`` twice: its call (``seq``, ``op``, ``args``,
``start``) before it runs, its answer (``end``, ``result``) when it comes; a killed client's last
call has no answer. Lease tokens stay in the process: the history names a lease by its fence.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rp1_duel.errors import DuelError

from lease_checker import NO_JSON_ANSWER
from lease_faults import CampaignClock, FaultyFiles, read_json

Answer = dict[str, Any]
TOOLS_SHIM = (
    "import sys; from lease_faults import run_tools_process; run_tools_process(*(sys.argv.pop(1) for _ in 'abc'))"
)
LOST = {"LEASE_EXPIRED", "LEASE_NOT_HELD", "TURN_DEADLINE_PASSED", "DUEL_CLOSED"}


def summary(op: str, data: dict[str, Any]) -> Answer:
    """What the history keeps of an answer (the protocol's JSON, as both fronts give it)."""
    if op == "claim":
        token = data.get("lease_token")
        fence = int(token.split("-", 1)[0]) if token else None
        return {"acquired": data["acquired"], "reason": data["reason"], "fence": fence, "_token": token}
    if op == "status":
        duel = data["duel"]
        return {
            "next_step": data["next_step"],
            "turns": data["turn_count"],
            "fence": data["lock"]["fence"],
            "pending": duel["pending_outcome"],
        }
    if op == "refresh":
        return {"refreshed": data["refreshed"], "reason": data["reason"]}
    if op == "append":
        return {"turn": data["turn_number"], "sha256": data["turn_sha256"], "outcome": data["terminal_outcome"]}
    return {"released": data["released"], "closed": data["closed"]}


class Client:
    """A seat's client: its service (or its ``duel tools`` command line), its lease, its history."""

    def __init__(self, config: dict[str, Any], name: str, seat: str, kind: str):
        self.config, self.name, self.seat, self.kind = config, name, seat, kind
        self.folder = Path(config["folder"])
        self.rnd = random.Random(f"{config['seed']}:{name}")
        self.clock = CampaignClock(self.folder)
        self.database = bool(config["store"])
        self.files = FaultyFiles(self.folder, random.Random(f"{config['seed']}:{name}:files"))
        self.files.install()
        self.history = (self.folder / f"history-{name}.jsonl").open("a", encoding="utf-8")
        self.seq = 0
        self.lease: tuple[str, int, str] | None = None  # duel id, fence, token
        self.duel: dict[str, Any] = {}
        self.trusted = self.folder / f"trusted-{name}.json"  # the lease a client without fencing trusts
        self.service = self._service() if kind == "library" else None

    def _service(self) -> Any:
        from rp1_duel.coordination import DebateDir, DuelService

        debate = DebateDir(self.config["debate_dir"])
        if self.database:
            from rp1_duel.coordination._postgres import PostgresStore

            store: Any = PostgresStore(self.config["store"], debate)
            store.offset = lambda: self.clock.shifts()["mono"]
        elif self.config["broken"]:
            from lease_faults import UnfencedStore

            store = UnfencedStore(debate, self.clock, self.trusted)
        else:
            return DuelService(debate.root, clock=self.clock)
        return DuelService(debate.root, store=store)

    # -- recording -----------------------------------------------------------------------
    def record(self, op: str, args: dict[str, Any], call: Callable[[], Answer]) -> Answer:
        """Run ``call`` as op ``op``, its call and its answer written to the history."""
        self.seq += 1
        line = {"seq": self.seq, "client": self.name, "op": op, "args": {"duel": self.duel["duel"], **args}}
        line["start"] = self.clock.lease_time(database=self.database)
        self.history.write(json.dumps(line) + "\n")
        self.history.flush()
        try:
            answer = call()
        except DuelError as exc:
            answer = {"error": exc.code}
        end = self.clock.lease_time(database=self.database)
        kept = {k: v for k, v in answer.items() if not k.startswith("_")}
        self.history.write(json.dumps({"seq": self.seq, "client": self.name, "end": end, "result": kept}) + "\n")
        self.history.flush()
        return answer

    # -- the ops, through either front ---------------------------------------------------------
    def op(self, op: str, **kwargs: Any) -> Answer:
        """One op through the library or a ``duel tools`` process; its answer summarised."""
        service = self.service
        if service is None:
            return self._tools(op, **kwargs)
        from rp1_duel.coordination import LeaseToken, Seat

        me = self.duel["seats"][self.seat]
        seat = Seat(self.duel["duel"], me["id"], me["token"])
        lease = LeaseToken(self.lease[2]) if self.lease else None
        calls: dict[str, Callable[[], Any]] = {
            "claim": lambda: service.claim_lock(seat, for_timeout=kwargs.get("for_timeout", False)),
            "status": lambda: service.status(seat.duel_id, participant_id=seat.participant_id),
            "refresh": lambda: service.refresh_lock(seat, lease),
            "append": lambda: service.append(seat, lease, kwargs["text"], release=kwargs["release"]),
            "release": lambda: service.release_lock(
                seat, lease, close=kwargs.get("close", False), outcome=kwargs.get("outcome")
            ),
        }
        return summary(op, calls[op]().to_dict())

    def _tools(self, op: str, **kwargs: Any) -> Answer:
        me = self.duel["seats"][self.seat]
        command = {"claim": "claim-lock", "status": "status", "refresh": "refresh-lock"}
        argv = [command.get(op, op if op == "append" else "release-lock"), "--duel-id", self.duel["duel"]]
        argv += ["--participant-id", me["id"], f"--participant-token={me['token']}"]
        if self.lease and op in {"refresh", "append", "release"}:
            argv.append(f"--lease-token={self.lease[2]}")
        if kwargs.get("for_timeout"):
            argv.append("--for-timeout")
        if op == "append":
            turn_file = self.folder / f"turn-{self.name}.md"
            turn_file.write_text(kwargs["text"], encoding="utf-8")
            argv += ["--turn-file", str(turn_file), *(["--release"] if kwargs["release"] else [])]
        if kwargs.get("close"):
            argv += ["--close", "--outcome", kwargs["outcome"]]
        where = [
            "--debate-dir",
            self.config["debate_dir"],
            *(["--store", self.config["store"]] if self.database else []),
        ]
        seed = f"{self.config['seed']}:{self.name}:{self.seq}"
        trusted = str(self.trusted) if self.config["broken"] else ""
        shim = [sys.executable, "-c", TOOLS_SHIM, str(self.folder), seed, trusted, "tools"]
        done = subprocess.run([*shim, *argv, *where], capture_output=True, timeout=120, check=False)
        try:
            envelope = json.loads(done.stdout)
        except ValueError:  # duel tools answers one JSON object, whatever happens: this one broke that
            sys.stderr.write(done.stderr.decode(errors="replace"))
            return {"error": NO_JSON_ANSWER}
        if not envelope["success"]:
            raise DuelError(envelope["error"]["code"], envelope["error"]["message"])
        return summary(op, envelope["data"])

    # -- the seat's behaviour ---------------------------------------------------------------------
    def step(self) -> None:
        """One step, drawn from the client's random stream: claim without a lease, else use it."""
        self.files.reload()
        draw = self.rnd.random()
        if self.lease is None or self.lease[0] != self.duel["duel"]:
            self.hold(None)
            if draw < 0.85:
                self.claim(for_timeout=draw >= 0.8)
            else:
                self.record("status", {"seat": self.seat}, lambda: self.op("status"))
        elif draw < 0.45:
            self.turn()
        elif draw < 0.65:
            self.use("refresh")
        elif draw < 0.8:
            self.use("release")
        elif draw < 0.9:
            self.record("status", {"seat": self.seat}, lambda: self.op("status"))
        else:
            time.sleep(self.rnd.uniform(0, 0.02))  # holding the floor while "composing"

    def claim(self, *, for_timeout: bool) -> None:
        """Ask for the floor; keep the lease granted, or the seat's own handed back (a sibling's)."""
        answer = self.record(
            "claim", {"seat": self.seat, "for_timeout": for_timeout}, lambda: self.op("claim", for_timeout=for_timeout)
        )
        if answer.get("acquired"):
            self.hold((self.duel["duel"], answer["fence"], answer["_token"]))
        elif answer.get("error") == "DUEL_CLOSED":  # the driver is starting the next duel
            time.sleep(0.1)
        else:  # refused: look again a little later, as a seat told to retry does
            time.sleep(self.rnd.uniform(0, 0.03))

    def use(self, op: str, **kwargs: Any) -> None:
        """An op under the lease this client holds; an answer saying it is gone drops it."""
        assert self.lease is not None
        args = {"seat": self.seat, "fence": self.lease[1], **{k: v for k, v in kwargs.items() if k != "text"}}
        answer = self.record(op, args, lambda: self.op(op, **kwargs))
        gone = answer.get("error") in LOST or answer.get("refreshed") is False
        if gone or answer.get("released") or (op == "append" and kwargs["release"] and "turn" in answer):
            self.hold(None)

    def hold(self, lease: tuple[str, int, str] | None) -> None:
        """Keep ``lease`` (None: none), and show the nemesis, through ``holders/``, whether this client holds one."""
        self.lease = lease
        mark = self.folder / "holders" / self.name
        if lease is None:
            mark.unlink(missing_ok=True)
        else:
            mark.touch()

    def turn(self) -> None:
        """Look at the duel, then write the next turn or close it, as the status says."""
        status = self.record("status", {"seat": self.seat}, lambda: self.op("status"))
        if "error" in status:
            return
        if status["next_step"] == "close" and status["pending"]:
            self.use("release", close=True, outcome=status["pending"])
            return
        if status["next_step"] == "release_lock":
            self.use("release")
            return
        # compose_turn, or (a lease that lapsed unnoticed) anything else: write, and be told
        from helpers import make_turn

        me = self.duel["seats"][self.seat]
        n = status["turns"] + 1
        text = make_turn(n, me["name"], me["harness"], me["model"])
        self.use("append", turn=n, text=text, release=self.rnd.random() < 0.5)

    def run(self) -> None:
        """Step until the driver says stop, following the duel the driver names."""
        stop = self.folder / "stop"
        while not stop.exists():
            duel = read_json(self.folder / "duel.json", {})
            if duel.get("duel") != self.duel.get("duel"):
                self.duel = duel
                self.hold(None)
            self.step()
            # A holder composes between its ops (most pauses find it there); a library client otherwise
            # leaves the others a moment, a tools client has left them a process start already.
            pause = 0.02 if self.lease else (0.004 if self.kind == "library" else 0.0)
            time.sleep(self.rnd.uniform(0, pause))


if __name__ == "__main__":
    config_path, client_name, seat_name, kind_name = sys.argv[1:]
    Client(json.loads(Path(config_path).read_text()), client_name, seat_name, kind_name).run()
