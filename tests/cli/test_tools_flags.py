"""`duel tools` reads an op's flags without argparse when they are written plainly (rp1_duel/cli/tools_flags.py),
and leaves the rest to argparse: what the plain reader reads, argparse reads the same; what argparse refuses, the
plain reader leaves to it."""

from __future__ import annotations

import contextlib
import io
from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rp1_duel.cli.tools_flags import OPS, flags_of, read_plain
from rp1_duel.cli.tools_parser import FlagsRefused, parse

ALL_FLAGS = sorted({flag for op in OPS for flag, _ in flags_of(op)})
VALUES = ["x", "", "-", "-5", "5", "0", "3.5", "nan", "a b", "-a b", "--x", "x=y", "pt_abc", "é", "redact", "chair"]


def same(plain: SimpleNamespace | None, parsed: SimpleNamespace | None) -> bool:
    """Whether the two readings are one: each flag's value, compared as written out (``nan`` is not equal to itself)."""
    return repr(sorted(vars(plain or SimpleNamespace()).items())) == repr(
        sorted(vars(parsed or SimpleNamespace()).items())
    )


def by_argparse(argv: list[str]) -> SimpleNamespace | None:
    """Argparse's reading, or None when it refuses (or prints help)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return parse(argv)
    except (FlagsRefused, SystemExit):
        return None


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """An op with its required flags, then a few more tokens: mostly its own flags, sometimes another op's, whole,
    abbreviated or with ``=``, with values of every shape (its choices among them)."""
    op = draw(st.sampled_from([*OPS, "join", "join", "join"]))  # a join's flags have types, choices and defaults
    own = dict(flags_of(op))
    required = [flag for flag, kwargs in own.items() if kwargs.get("required")]
    tokens = [token for flag in required if draw(st.integers(0, 9)) for token in (flag, "v")]
    for _ in range(draw(st.integers(0, 4))):
        flag = draw(st.sampled_from(sorted(own)) if draw(st.integers(0, 9)) else st.sampled_from(ALL_FLAGS))
        choices = [str(choice) for choice in own.get(flag, {}).get("choices", ())]
        value = draw(st.sampled_from(VALUES + choices) | st.text(max_size=4))
        shape = draw(st.sampled_from(["spaced"] * 8 + ["equals"] * 6 + ["alone"] * 3 + ["abbreviated", "help", "--"]))
        tokens += {
            "spaced": [flag, value],
            "equals": [f"{flag}={value}"],
            "alone": [flag],
            "abbreviated": [flag[:-2], value],
            "help": ["--help"],
            "--": ["--", value],
        }[shape]
    shuffled = draw(st.permutations(tokens)) if draw(st.integers(0, 9)) == 0 else tokens
    return [op, *shuffled]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command_lines())
def test_what_the_plain_reader_reads_argparse_reads_the_same(argv):
    plain = read_plain(argv)

    if plain is not None:
        assert same(plain, by_argparse(argv))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command_lines())
def test_what_argparse_refuses_the_plain_reader_leaves_to_it(argv):
    if by_argparse(argv) is None:
        assert read_plain(argv) is None


def test_a_seats_usual_commands_take_the_plain_reader():
    seat = ["--duel-id", "d-1", "--participant-id", "p-00000001", "--participant-token=pt_x"]
    for argv in (
        ["join", "--target", "design.md", "--participant-name", "Alice", "--model-id", "claude-x", "--max-turns", "6"],
        ["status", "--duel-id", "d-1"],
        ["claim-lock", *seat],
        ["refresh-lock", *seat, "--lease-token", "3-abc"],
        ["release-lock", *seat, "--lease-token", "3-abc", "--close", "--outcome", "DISSENT"],
        ["append", *seat, "--turn-file", "-", "--release"],
        ["wait", *seat, "--timeout", "30", "--next-step", "wait_turn"],
    ):
        plain = read_plain(argv)
        assert plain is not None, argv
        assert plain == by_argparse(argv)


def test_a_flag_given_twice_counts_its_last_value_as_with_argparse():
    argv = ["status", "--duel-id", "a", "--duel-id=b"]

    plain = read_plain(argv)

    assert plain == by_argparse(argv)
    assert plain is not None
    assert plain.duel_id == "b"
