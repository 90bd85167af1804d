"""Participant benchmarks, with the fake model servers (no network, no key).

1. Prompt-cache reuse: for each participant's turns 2 and later, the share of the prompt
   (system, then messages, as the APIs cache them) that is a byte-identical prefix of that participant's previous request (target ≥ 80%).
2. Orchestration overhead per turn: a turn's wall time minus the model's own time
   (status, claim, reading the artifact, prompt, local validation, append; target ≤ 150 ms).
3. Repair round-trips per turn when every answer is wrapped (a fence, a preamble, a
   <think> block, a closing remark; tests/fake_debater.py ``wrapped``): target 0.
4. Rate-limit recovery: the time from a 429 with ``retry-after: 3`` to the retried request,
   through the participant's own retries (target 3–4 s).

    python bench/bench_participant.py
"""

from __future__ import annotations

import functools
import itertools
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from rp1_duel.coordination import Usage  # noqa: E402
from rp1_duel.participant.loop import Duelist, ParticipantConfig  # noqa: E402
from rp1_duel.participant.providers import Progress, TurnRequest, select_provider  # noqa: E402
from rp1_duel.participant.reporter import ParticipantState  # noqa: E402
from rp1_duel.participant.retry import RetryNotice, RetryPolicy, compose_with_retries  # noqa: E402
from rp1_duel.settings import DuelSettings  # noqa: E402
from rp1_duel.turns import TurnViolation  # noqa: E402

from fake_debater import debater, wrapped  # noqa: E402
from fake_models import FakeAnthropicServer, FakeOpenAIServer  # noqa: E402
from helpers import SOURCE  # noqa: E402

MAX_TURNS = 8


def design_doc() -> str:
    """conftest.SOURCE plus filler sections: a ~25 KB design document."""
    extra = "".join(
        f"\n## Appendix {i}: operating note {i}\n"
        + "".join(f"Note {i}.{j}: the service records every grant and release for later review.\n" for j in range(12))
        for i in range(30)
    )
    return SOURCE + extra


class TimedProvider:
    """Wraps a provider to measure the model's own time."""

    def __init__(self, inner):
        self.inner, self.name, self.model, self.remote = inner, inner.name, inner.model, inner.remote
        self.reasoning = inner.reasoning
        self.model_seconds = []

    def preflight(self):
        return self.inner.preflight()

    def compose(self, request, progress):
        started = time.perf_counter()
        try:
            return self.inner.compose(request, progress)
        finally:
            self.model_seconds.append(time.perf_counter() - started)


class Quiet:
    """A reporter that prints nothing; it times each turn from "composing" to "accepted"."""

    def __init__(self) -> None:
        self.turn_seconds: list[float] = []
        self._started: float | None = None

    def state(self, state: ParticipantState, detail: str) -> None:  # noqa: ARG002  the Reporter protocol's signature
        if detail.startswith("composing turn"):
            self._started = time.perf_counter()

    def composing(self) -> None:
        pass

    def progress(self, progress: Progress) -> None:
        pass

    def retrying(self, notice: RetryNotice) -> None:
        pass

    def composed(self, usage: Usage) -> None:
        pass

    def turn_accepted(self, number: int, stance: str) -> None:  # noqa: ARG002  the Reporter protocol's signature
        assert self._started is not None, f"turn {number} accepted before it was composed"
        self.turn_seconds.append(time.perf_counter() - self._started)

    def turn_rejected(
        self, number: int, violations: list[TurnViolation], attempt: int, kept: str | None, *, repairs_left: int | None
    ) -> None:
        pass

    def verifying(self, number: int, writer: str | None, citations: int) -> None:
        pass

    def verified(self, number: int, writer: str | None, counts: Mapping[str, int], *, sent_back: bool) -> None:
        pass


def prompt_bytes(body: dict) -> bytes:
    """The prompt in the order the API caches it (system, then messages), whatever the JSON key order."""
    return json.dumps([body.get("system"), body["messages"]], ensure_ascii=False).encode()


def shared_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # binary search on prefix equality: fast for long bodies
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def play(source: Path, debates: str, claude_api: FakeAnthropicServer, gpt_api: FakeOpenAIServer) -> list:
    """A whole duel of two in-process participants, Claude in seat 1."""
    settings = DuelSettings(max_turns=MAX_TURNS)
    runs = []
    for name, model, env in (
        ("Claude", "claude-x", {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": claude_api.base_url}),
        ("GPT", "gpt-x", {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": gpt_api.base_url}),
    ):
        provider = TimedProvider(select_provider(model, provider=None, base_url=None, env=env))
        reporter = Quiet()
        duelist = Duelist(
            ParticipantConfig(target=str(source), debate_dir=debates, name=name, settings=settings), provider, reporter
        )
        runs.append((name, duelist, provider, reporter))
    threads = []
    for index, (_, duelist, _, _) in enumerate(runs):
        threads.append(threading.Thread(target=duelist.run))
        threads[-1].start()
        if index == 0:
            time.sleep(0.3)  # Claude takes seat 1
    for thread in threads:
        thread.join()
    return runs


def main() -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAnthropicServer(debater) as claude_api,
        FakeOpenAIServer(debater) as gpt_api,
    ):
        source = Path(tmp) / "design.md"
        source.write_text(design_doc())
        runs = play(source, str(Path(tmp) / "debates"), claude_api, gpt_api)
        print(
            f"source: {len(source.read_bytes()) / 1024:.1f} KB; duel of {MAX_TURNS} turns; "
            f"outcome {runs[0][1].result.outcome}"
        )
        print("\n1. prompt-cache reuse (byte-identical prefix of the same participant's previous request)")
        for server in (claude_api, gpt_api):
            bodies = [prompt_bytes(r["body"]) for r in server.requests]
            shares = [shared_prefix(prev, cur) / len(cur) for prev, cur in itertools.pairwise(bodies)]
            listed = ", ".join(f"{s:.0%}" for s in shares)
            print(f"   {server.kind:9s}: turns 2+: {listed}  (min {min(shares):.0%}, target ≥ 80%)")
        print("\n2. orchestration overhead per turn (turn wall time minus model time; target ≤ 150 ms)")
        for name, _duelist, provider, reporter in runs:
            overhead = [(t - m) * 1000 for t, m in zip(reporter.turn_seconds, provider.model_seconds, strict=True)]
            print(
                f"   {name:7s}: median {statistics.median(overhead):.1f} ms, max {max(overhead):.1f} ms "
                f"over {len(overhead)} turns (model time median "
                f"{statistics.median(provider.model_seconds) * 1000:.1f} ms, fake server on loopback)"
            )
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAnthropicServer(wrapped) as claude_api,
        FakeOpenAIServer(wrapped) as gpt_api,
    ):
        source = Path(tmp) / "design.md"
        source.write_text(design_doc())
        runs = play(source, str(Path(tmp) / "debates"), claude_api, gpt_api)
        turns = sum(len(duelist.result.turns_written) for _, duelist, _, _ in runs)
        requests = len(claude_api.requests) + len(gpt_api.requests)
        print("\n3. repair round-trips per turn, every answer wrapped (fence, preamble, <think>, closing remark)")
        print(
            f"   {(requests - turns) / turns:.2f} ({requests} requests for {turns} turns, outcome "
            f"{runs[0][1].result.outcome}; target 0)"
        )
    rate_limit_recovery()


def rate_limit_recovery() -> None:
    print("\n4. rate-limit recovery (429 with retry-after: 3, then the retried request; target 3–4 s)")
    request = TurnRequest(system="s", history="h", instruction="i", cache_key="k")
    for server_class, model, env_names in (
        (FakeAnthropicServer, "claude-x", ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")),
        (FakeOpenAIServer, "gpt-x", ("OPENAI_API_KEY", "OPENAI_BASE_URL")),
    ):
        with server_class(script=[{"status": 429, "retry_after": 3}]) as api:
            provider = select_provider(
                model, provider=None, base_url=None, env=dict(zip(env_names, ("k", api.base_url), strict=True))
            )
            compose_with_retries(
                functools.partial(provider.compose, request, lambda _progress: None),
                RetryPolicy(),
                deadline=time.time() + 1800,
            )
            first, retried = (r["received_at"] for r in api.requests)
            print(f"   {api.kind:9s}: {retried - first:.2f} s from the 429 to the retried request")


if __name__ == "__main__":
    main()
