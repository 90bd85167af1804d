"""What a person sees of `duel join` on standard error (issue 28 item 5), the console alone."""

from __future__ import annotations

import io
import time

import pytest

from rp1_duel.coordination import Usage
from rp1_duel.participant import console
from rp1_duel.participant.console import ConsoleReporter
from rp1_duel.participant.providers import Progress, ProviderError
from rp1_duel.participant.retry import RetryNotice
from rp1_duel.turns import TurnViolation


def lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_a_rejected_draft_shows_eight_violations_says_how_many_more_and_where_the_draft_is_kept():
    stream = io.StringIO()
    violations = [
        TurnViolation(code="MISSING_SECTION", message=f"section {n} is missing", line=n) for n in range(1, 11)
    ]
    ConsoleReporter("Claude", stream).turn_rejected(
        3, violations, 1, "/debates/.duel/participants/k.drafts/d.md", repairs_left=3
    )
    shown = lines(stream)
    assert shown[0] == "[Claude] turn 3 draft 1 rejected: MISSING_SECTION; asking for a repair"
    assert shown[1:9] == [f"[Claude]   line {n}: MISSING_SECTION section {n} is missing" for n in range(1, 9)]
    assert shown[9:] == [
        "[Claude]   and 2 more",
        "[Claude]   the rejected draft is kept in /debates/.duel/participants/k.drafts/d.md",
    ]


@pytest.fixture
def quick_ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "QUIET_TICK_SECONDS", 0.05)


@pytest.mark.usefixtures("quick_ticks")
def test_off_a_terminal_a_request_is_said_when_it_starts_while_it_streams_and_when_it_ends():
    stream = io.StringIO()
    reporter = ConsoleReporter("Claude", stream)
    reporter.composing()
    reporter.progress(Progress(output_tokens=120))
    time.sleep(0.2)
    reporter.composed(Usage(input_tokens=41, output_tokens=900, cache_write_tokens=3097, requests=1, seconds=2.0))
    shown = lines(stream)
    assert shown[0] == "[Claude] asking the model (a line every 0 s until it answers)"
    assert any(line.startswith("[Claude] writing… ~120 tokens, ") for line in shown[1:-1]), shown
    assert shown[-1] == "[Claude] wrote 900 tokens in 2.0s; input 3,138 tokens (3,097 written to the cache)"


@pytest.mark.usefixtures("quick_ticks")
def test_the_clock_says_waiting_to_retry_during_a_retry_wait_not_thinking():
    stream = io.StringIO()
    reporter = ConsoleReporter("Claude", stream)
    reporter.composing()
    reporter.retrying(RetryNotice(ProviderError("PROVIDER_UNAVAILABLE", "overloaded", retryable=True), 2, 30.0))
    time.sleep(0.2)
    reporter.composed(Usage(input_tokens=10, output_tokens=20, requests=2, retries=1))
    waits = [line for line in lines(stream) if "…" in line and "asking" not in line]
    assert waits, lines(stream)
    assert all(line.startswith("[Claude] waiting to retry… ") for line in waits), waits


def test_a_line_with_the_cached_parts_of_input_in_brackets_and_every_request():
    stream = io.StringIO()
    ConsoleReporter("GPT", stream).composed(
        Usage(input_tokens=200, output_tokens=50, cache_read_tokens=800, requests=3, seconds=1.25)
    )
    assert lines(stream) == ["[GPT] wrote 50 tokens in 1.2s; input 1,000 tokens (800 read from the cache); 3 requests"]
