"""A unified diff of two lists of lines, byte for byte as :func:`difflib.unified_diff` writes it.

difflib finds the longest block of equal lines in the whole range, then again on either side of
it, scanning each range line by line: a 16 MiB document with 50 edits spread through it costs
about 50 scans of its 200,000 lines (issue 42). Its answer depends only on the runs of equal lines
it can match (the diagonals of its comparison): :class:`_Matcher` finds them in one scan, then
answers each range from the runs inside it, so the blocks, the hunks and the patch stay difflib's.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Final, Literal, Protocol

_Run = tuple[int, int, int]  # a[i:i+size] == b[j:j+size], each b line one difflib may match on
_Box = tuple[int, int, int, int]  # alo, ahi, blo, bhi
_Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


def unified_diff(
    before: list[str], after: list[str], fromfile: str, tofile: str, *, kept: list[_Run] | None = None
) -> Iterator[str]:
    """What ``difflib.unified_diff`` yields for these arguments, its line ends LF; with ``kept``, runs of lines
    known to be the same in both (in order), those are matched as they are and difflib compares only the lines
    between them: lines it would set aside as too frequent are then never shown removed and added again."""
    matcher = _Matcher(before, after) if kept is None else _Between(before, after, kept)
    started = False
    for group in matcher.get_grouped_opcodes(3):
        if not started:
            started = True
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in before[i1:i2])
                continue
            if tag in {"replace", "delete"}:
                yield from ("-" + line for line in before[i1:i2])
            if tag in {"replace", "insert"}:
                yield from ("+" + line for line in after[j1:j2])


def _range(start: int, stop: int) -> str:
    """A hunk's range of lines, as difflib writes it: ``3`` for one line, ``2,0`` for none before line 3."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


class _Between(difflib.SequenceMatcher[str]):
    """The opcodes of two lists of lines whose runs ``kept`` are known to match: those runs equal, difflib's
    opcodes for the lines between each two."""

    def __init__(self, a: list[str], b: list[str], kept: list[_Run]):
        super().__init__(None, [], [])  # only get_grouped_opcodes is asked for, and it reads get_opcodes
        opcodes: list[_Opcode] = []
        i = j = 0
        for ki, kj, size in [*kept, (len(a), len(b), 0)]:
            between = difflib.SequenceMatcher(None, a[i:ki], b[j:kj]).get_opcodes() if ki > i or kj > j else []
            opcodes += [(tag, i + i1, i + i2, j + j1, j + j2) for tag, i1, i2, j1, j2 in between]
            opcodes.append(("equal", ki, ki + size, kj, kj + size))
            i, j = ki + size, kj + size
        self._opcodes: list[_Opcode] = []
        for code in opcodes:
            if code[0] == "equal" and self._opcodes and self._opcodes[-1][0] == "equal":
                self._opcodes[-1] = ("equal", self._opcodes[-1][1], code[2], self._opcodes[-1][3], code[4])
            elif code[1] < code[2] or code[3] < code[4]:  # not an empty run
                self._opcodes.append(code)

    def get_opcodes(self) -> list[_Opcode]:
        """See :meth:`difflib.SequenceMatcher.get_opcodes`."""
        return list(self._opcodes)


class _Matcher(difflib.SequenceMatcher[str]):
    """difflib's matcher (no junk function, popular lines set aside as difflib does), finding each
    range's longest block among the runs inside it instead of by scanning the range."""

    # Set by SequenceMatcher; typeshed does not declare them.
    a: list[str]
    b: list[str]
    b2j: dict[str, list[int]]  # where each line of b that may start a match is, popular ones aside

    def __init__(self, a: list[str], b: list[str]):
        super().__init__(None, a, b)
        self._all: _Runs | None = None
        self._pending: dict[_Box, _Runs] = {}  # the runs of the ranges difflib will ask about next

    def find_longest_match(
        self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None
    ) -> difflib.Match:
        """The block ``SequenceMatcher.find_longest_match`` gives: the longest run inside the range
        (the first by where it starts, on a tie), then grown over equal lines either side."""
        a, b = self.a, self.b
        ahi, bhi = len(a) if ahi is None else ahi, len(b) if bhi is None else bhi
        box = (alo, ahi, blo, bhi)
        runs = self._pending.pop(box, None)
        if runs is None:
            runs = self._all_runs().inside(box)
        i, j, size = runs.longest() or (alo, blo, 0)
        while i > alo and j > blo and a[i - 1] == b[j - 1]:
            i, j, size = i - 1, j - 1, size + 1
        while i + size < ahi and j + size < bhi and a[i + size] == b[j + size]:
            size += 1
        if size:  # the ranges either side, as get_matching_blocks asks about them
            for side in ((alo, i, blo, j), (i + size, ahi, j + size, bhi)):
                if side[0] < side[1] and side[2] < side[3]:
                    self._pending[side] = runs.inside(side)
        return difflib.Match(i, j, size)

    def _all_runs(self) -> _Runs:
        """Every maximal run of lines of ``a`` equal to lines of ``b`` that difflib matches on (not
        the popular ones), in one scan: what its longest-match scan finds over the whole range."""
        if self._all is None:
            runs: list[list[int]] = []
            previous: dict[int, list[int]] = {}
            for i, line in enumerate(self.a):
                current = {}
                for j in self.b2j.get(line, ()):
                    run = previous.get(j - 1)
                    if run is None:
                        run = [i, j, 0]
                        runs.append(run)
                    run[2] += 1
                    current[j] = run
                previous = current
            found = [(i, j, size) for i, j, size in runs]  # in the order they start in a, then in b
            chained = all(i + size <= after[0] and j + size <= after[1] for (i, j, size), after in pairwise(found))
            self._all = _Chain(found).whole() if chained else _RunList(found)
        return self._all


class _Runs(Protocol):
    def longest(self) -> _Run | None:
        """The longest run, the first to start on a tie; None when there is none."""

    def inside(self, box: _Box) -> _Runs:
        """The parts of the runs inside ``box``."""


@dataclass(frozen=True)
class _RunList:
    """Runs in any order: each question is a pass over them."""

    runs: list[_Run]

    def longest(self) -> _Run | None:
        """See :class:`_Runs`."""
        return min(self.runs, key=lambda run: (-run[2], run[0], run[1]), default=None)

    def inside(self, box: _Box) -> _RunList:
        """See :class:`_Runs`."""
        return _RunList([part for run in self.runs if (part := _cut(run, box)) is not None])


class _Chain:
    """Runs each starting after the one before ends, in ``a`` and in ``b``: the usual case (no line
    matched twice). The runs inside a range are then a slice of them, only its first and last cut
    short, and a tree of their sizes finds the longest among the others in logarithmic time."""

    def __init__(self, runs: list[_Run]):
        self.runs = runs
        self.i_starts, self.j_starts = [i for i, _, _ in runs], [j for _, j, _ in runs]
        self.i_ends, self.j_ends = [i + size for i, _, size in runs], [j + size for _, j, size in runs]
        self.leaves = 1 << max(0, len(runs) - 1).bit_length()
        self.tree = [_NONE] * self.leaves + [(-size, index) for index, (_, _, size) in enumerate(runs)]
        self.tree += [_NONE] * (2 * self.leaves - len(self.tree))
        for node in range(self.leaves - 1, 0, -1):
            self.tree[node] = min(self.tree[2 * node], self.tree[2 * node + 1])

    def whole(self) -> _Slice:
        """All the runs."""
        return (
            _Slice(chain=self, lo=0, hi=len(self.runs), head=self.runs[0], tail=self.runs[-1])
            if self.runs
            else _Slice(chain=self, lo=0, hi=0)
        )

    def best(self, lo: int, hi: int) -> tuple[int, int]:
        """``(-size, index)`` of the longest run from index ``lo`` to before ``hi``, the first on a tie."""
        found, lo, hi = _NONE, lo + self.leaves, hi + self.leaves
        while lo < hi:
            if lo & 1:
                found, lo = min(found, self.tree[lo]), lo + 1
            if hi & 1:
                hi -= 1
                found = min(found, self.tree[hi])
            lo, hi = lo // 2, hi // 2
        return found


_NONE: Final = (1, 0)  # a tree node with no run: every run, of size 1 or more, is less


@dataclass(kw_only=True, frozen=True)
class _Slice:
    """The runs ``lo`` to before ``hi`` of a chain, the first and last as cut to a range."""

    chain: _Chain
    lo: int
    hi: int
    head: _Run | None = None
    tail: _Run | None = None

    def run(self, index: int) -> _Run:
        """Run ``index`` of the chain, as cut to this slice's range."""
        cut = self.head if index == self.lo else self.tail if index == self.hi - 1 else None
        return cut or self.chain.runs[index]

    def longest(self) -> _Run | None:
        """See :class:`_Runs`."""
        if self.lo >= self.hi:
            return None
        first, last = self.run(self.lo), self.run(self.hi - 1)
        _, index = min((-first[2], self.lo), (-last[2], self.hi - 1), self.chain.best(self.lo + 1, self.hi - 1))
        return self.run(index)

    def inside(self, box: _Box) -> _Slice:
        """See :class:`_Runs`."""
        alo, ahi, blo, bhi = box
        chain, head, tail = self.chain, None, None
        lo = max(bisect_right(chain.i_ends, alo, self.lo, self.hi), bisect_right(chain.j_ends, blo, self.lo, self.hi))
        hi = min(bisect_left(chain.i_starts, ahi, self.lo, self.hi), bisect_left(chain.j_starts, bhi, self.lo, self.hi))
        while lo < hi and (head := _cut(self.run(lo), box)) is None:
            lo += 1
        while lo < hi and (tail := _cut(self.run(hi - 1), box)) is None:
            hi -= 1
        return _Slice(chain=chain, lo=lo, hi=hi, head=head, tail=tail)


def _cut(run: _Run, box: _Box) -> _Run | None:
    """The part of ``run`` inside ``box``, if any."""
    alo, ahi, blo, bhi = box
    i, j, size = run
    skip, end = max(0, alo - i, blo - j), min(size, ahi - i, bhi - j)
    return (i + skip, j + skip, end - skip) if end > skip else None
