"""A repetition guard for streamed generations: stop a model that loops, keep what came before.

Small models fall into loops (``1. 1. 1. …`` until ``max_tokens``; one sentence again and
again). The guard watches the stream as it arrives and raises ``RepetitionStopped`` when

- the end of the text is one unit repeated far past normal use: a unit of ``p`` characters
  (1 to ``max_period``) repeated at least ``max(min_repeats, min_span / p)`` times, so 300
  identical characters, ``1. `` a hundred times, or a 100-character paragraph four times
  (also with each run of whitespace made one space: a sentence said again and again with its
  line breaks moved); or
- one line (list markers, numbering and end punctuation ignored) makes up ``line_repeats``
  of the last ``2 * line_repeats`` lines (``1. x`` / ``2. x`` / ``3. x``…), or three
  quarters of them for a short line (under ``min_line_chars``, a CJK character counting
  two: ``- 走走走`` twenty times); or
- the last ``2 * line_repeats`` lines are a cycle of at most ``max_cycle`` distinct lines
  (``1. Title:`` / ``- Key points:`` / ``2. Title:`` / ``- Key points:``…); or
- the last lines are one turn of at most ``max_cycle`` lines, longer together than
  ``max_period`` characters, repeated ``min_repeats`` times in a row: two paragraphs of the
  prompt written out again and again, too long a unit for the first rule to see (SmolLM2-135M
  wrote one such pair eight times, 2,800 characters, before its length limit stopped it).

Ordinary Markdown stays well below both: a table rule or a horizontal line is far shorter
than ``min_span``, and repeated lines in code rarely fill half of a window of sixteen.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Iterator

from skillrt.exceptions import RepetitionStopped

__all__ = ["RepetitionGuard"]

_LINE_PREFIX = re.compile(r"^[\s>*+#\-\d.)、]*")
_LINE_SUFFIX = re.compile(r"[\s;；。，,.!！?？:：、]+$")
_HAS_WORD = re.compile(r"[^\W\d_]")
_NOT_SPACE = re.compile(r"\S+")
_PROBE = 8  # characters at the end of the text looked for again to find candidate periods


def _unflattened(text: str, at: int) -> int:
    """Where in ``text`` the character ``at`` of ``" ".join(text.split())`` is (``at`` on one
    of the spaces: the end of the word before it)."""
    flat = 0
    end = 0
    for word in _NOT_SPACE.finditer(text):
        size = word.end() - word.start()
        if at <= flat + size:
            return word.start() + (at - flat)
        flat += size + 1
        end = word.end()
    return end


class RepetitionGuard:
    """Feed it each streamed delta; it raises ``RepetitionStopped`` when the text loops."""

    __slots__ = (
        "_checks",
        "_keep",
        "_lines",
        "_partial",
        "_parts",
        "_since_check",
        "_size",
        "_tail",
        "check_every",
        "line_repeats",
        "max_cycle",
        "max_period",
        "min_line_chars",
        "min_repeats",
        "min_span",
    )

    def __init__(
        self,
        *,
        min_span: int = 300,
        min_repeats: int = 4,
        max_period: int = 200,
        line_repeats: int = 8,
        max_cycle: int = 3,
        min_line_chars: int = 12,
        check_every: int = 16,
    ) -> None:
        self.min_span = min_span
        self.min_repeats = min_repeats
        self.max_period = max_period
        self.line_repeats = line_repeats
        self.max_cycle = max_cycle
        self.min_line_chars = min_line_chars
        self.check_every = check_every
        self._parts: list[str] = []
        self._size = 0
        self._tail = ""
        self._since_check = 0
        self._checks = 0
        self._partial = ""
        # (normalised line, offset of its start, offset of its end) of the recent lines: made
        # at the first line that ends (a deque costs more to make than the rest of the guard,
        # and most calls, a word or a JSON answer, stream none)
        self._lines: deque[tuple[str, int, int]] | None = None
        self._keep = -self._window()  # the tail kept: the last ``_window()`` characters

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def _window(self) -> int:
        return max(self.min_span, self.min_repeats * self.max_period) + self.max_period

    def feed(self, delta: str) -> None:
        """Take one delta; raises ``RepetitionStopped`` when the text now loops."""
        if not delta:
            return
        start = self._size
        self._parts.append(delta)
        self._size += len(delta)
        self._tail = (self._tail + delta)[self._keep :]
        self._since_check += len(delta)
        if "\n" in delta:
            self._feed_lines(delta, start)
        else:  # no line ends here: what ``_feed_lines`` would do
            self._partial += delta
        if self._since_check >= self.check_every:
            self._since_check = 0
            self._check_period()

    def _periods(self, tail: str) -> Iterator[int]:
        """The periods worth a full look, smallest first: every one from 1 to ``max_period``,
        or, when every window is longer than its period by ``_PROBE`` characters or more,
        only those at which the last ``_PROBE`` characters occur again ``p`` characters
        earlier, which a window with that period must have (found by ``rfind``, in C:
        checking every period by slicing the window cost ~60 µs per streamed token)."""
        n = len(tail)
        if n < _PROBE or (
            self.min_span < _PROBE + self.max_period and self.min_repeats - 1 < _PROBE
        ):
            yield from range(1, self.max_period + 1)
            return
        probe = tail[n - _PROBE :]
        low = max(0, n - _PROBE - self.max_period)  # where the probe starts for max_period
        end = n - 1  # an occurrence ends before the last character: a period of at least 1
        while (start := tail.rfind(probe, low, end)) != -1:
            yield n - _PROBE - start
            end = start + _PROBE - 1

    def _repeating(self, tail: str) -> int | None:
        """The period of a unit repeated at the end of ``tail`` far past normal use (see the
        module docstring), or None."""
        for period in self._periods(tail):
            span = period * max(self.min_repeats, math.ceil(self.min_span / period))
            if span <= len(tail) and tail[-span + period :] == tail[-span:-period]:
                return period
        return None

    def _loop_of(self, text: str, period: int) -> tuple[str, int]:
        """The loop of ``period`` at the end of ``text``: its unit, and how much of ``text``
        comes before it, one copy of a sentence-sized unit kept (``1. `` or ``=`` is not
        content)."""
        begin = len(text) - period * max(self.min_repeats, math.ceil(self.min_span / period))
        while begin > 0 and text[begin - 1] == text[begin - 1 + period]:
            begin -= 1
        unit = text[begin : begin + period]
        return unit, begin + period if len(unit.strip()) >= self.min_line_chars else begin

    def _check_period(self) -> None:
        tail = self._tail
        period = self._repeating(tail)
        if period is not None:
            text = self.text
            unit, keep = self._loop_of(text, period)
            raise RepetitionStopped(text[:keep].rstrip(), unit=unit, streamed=len(text))
        self._checks += 1
        # The first look (a whole text fed at once: the writing skills' check) and every
        # fourth after it: a loop is long.
        if self._checks % 4 == 1 and "\n" in tail:
            self._check_flat_period(tail)

    def _check_flat_period(self, tail: str) -> None:
        """The same rule over the tail with each run of whitespace made one space: a sentence
        said again and again with its line breaks moved (``X. X. X.`` / ``X. X.`` / …), which
        no line repeats and no exact period spans."""
        flat = " ".join(tail.split())
        period = self._repeating(flat)
        if period is not None:
            unit, keep = self._loop_of(flat, period)
            text = self.text
            cut = len(text) - len(tail) + _unflattened(tail, keep)
            raise RepetitionStopped(text[:cut].rstrip(), unit=unit, streamed=len(text))

    def _feed_lines(self, delta: str, start: int) -> None:
        offset = start - len(self._partial)
        pieces = (self._partial + delta).split("\n")
        self._partial = pieces.pop()
        for line in pieces:
            end = offset + len(line)
            key = _LINE_SUFFIX.sub("", _LINE_PREFIX.sub("", line))
            if key:
                lines = self._lines
                if lines is None:
                    lines = self._lines = deque(maxlen=2 * self.line_repeats)
                lines.append((key, offset, end))
                self._check_lines(key, lines)
            offset = end + 1

    def _check_cycle(self, window: deque[tuple[str, int, int]]) -> None:
        if len(window) < (window.maxlen or 0):
            return
        keys = {key for key, _begin, _end in window}
        if len(keys) > self.max_cycle or not all(_HAS_WORD.search(key) for key in keys):
            return
        ends: dict[str, int] = {}
        for key, _begin, end in window:
            ends.setdefault(key, end)
        text = self.text
        cut = max(ends.values())  # one turn of the cycle is kept
        raise RepetitionStopped(text[:cut].rstrip(), unit=" / ".join(keys), streamed=len(text))

    def _check_long_turns(self, lines: deque[tuple[str, int, int]]) -> None:
        n = len(lines)
        for size in range(1, self.max_cycle + 1):
            needed = self.min_repeats * size
            if n < needed:
                return
            recent = [lines[i] for i in range(n - needed, n)]
            turn = [key for key, _begin, _end in recent[:size]]
            if sum(len(key) for key in turn) <= self.max_period:
                continue
            repeated = all(recent[i][0] == turn[i % size] for i in range(size, needed))
            if repeated and all(_HAS_WORD.search(key) for key in turn):
                text = self.text
                cut = recent[size - 1][2]  # one turn is kept
                raise RepetitionStopped(
                    text[:cut].rstrip(), unit=" / ".join(turn), streamed=len(text)
                )

    def _check_lines(self, key: str, lines: deque[tuple[str, int, int]]) -> None:
        self._check_cycle(lines)
        self._check_long_turns(lines)
        if not _HAS_WORD.search(key):
            return
        width = sum(2 if ord(ch) > 0x2E80 else 1 for ch in key)
        if width < 2:
            return
        needed = self.line_repeats
        if width < self.min_line_chars:  # "end", "走走走": only when they fill the window
            needed = (3 * lines.maxlen) // 4 if lines.maxlen else needed
        same = [(begin, end) for k, begin, end in lines if k == key]
        if len(same) < needed:
            return
        text = self.text
        cut = same[0][1]  # keep everything up to the end of the first copy in the window
        raise RepetitionStopped(text[:cut].rstrip(), unit=key, streamed=len(text))
