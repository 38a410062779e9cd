"""doctor's table as rich prints it, without importing rich, for plain cells.

``skillrt doctor`` printed its checks with rich's ``Table`` (no box, no header, no edge
padding; mark and name ``no_wrap``, the value folded) on a ``Console()``: importing rich's
console and table, and rendering, were ~125 M of doctor's ~930 M instructions, for a table of
unstyled text (no colour, no markup, no highlighting: the same bytes on a terminal as in a
pipe). ``table_text`` lays the cells out as rich 15 does (its column widths, word wrapping
and folding, padding), only where that is plainly the same:

- every character is one cell wide for rich and none is whitespace but the space (printable
  ASCII, and Latin-1 and Latin Extended letters and signs such as doctor's ``·``): no tab,
  no line break, nothing wide or combining;
- the width is the one ``Console()`` finds (``COLUMNS``, else the first of stdin, stdout and
  stderr that is a terminal, else 80) and not a dumb terminal's, Jupyter's or Windows'; the
  mark and name columns fit whole with at least one cell left for the value;
- stdout is a plain stream that takes the text (UTF-8, or the text is ASCII).

Anything else gives ``None`` and doctor prints with rich as before. ``tests/test_cli_plaintable.py``
compares both on many tables and widths.
"""

from __future__ import annotations

import builtins
import itertools
import os
import sys
from collections.abc import Iterator, Sequence

__all__ = ["print_table", "table_text"]


def _plain(cell: str) -> bool:
    """Whether every character is one of rich's one-cell characters (its first ranges:
    U+0020-U+007E, U+00A0-U+00AC, U+00AE-U+02FF) and none is whitespace but the space (U+00A0
    is, to Python's str.split and re's \\s, which rich words with). Printable ones only: no
    control character, U+00A0 or U+00AD."""
    if not cell.isprintable():
        return False
    return cell.isascii() or all(ord(char) < 0x300 for char in cell)


def console_width() -> int | None:
    """The width ``rich.console.Console()`` would give (``None``: left to rich)."""
    if sys.platform.startswith("win") or hasattr(builtins, "get_ipython"):
        return None  # legacy Windows consoles, Jupyter: rich's own rules
    environ = os.environ
    if environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return None  # 80 on a terminal, whatever COLUMNS says: left to rich
    columns = environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        if not columns.isascii():  # int() of other digits: left to rich
            return None
        return int(columns)
    for descriptor in (0, 1, 2):
        try:
            width = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
        return width or 80
    return 80


def _words(text: str) -> Iterator[tuple[int, str]]:
    """rich._wrap.words where the space is the only whitespace: each word with the spaces
    before and after it, and where it starts (trailing spaces alone make no word)."""
    position, size = 0, len(text)
    while position < size:
        end = position
        while end < size and text[end] == " ":
            end += 1
        if end == size:
            return
        found = text.find(" ", end)
        end = size if found < 0 else found
        while end < size and text[end] == " ":
            end += 1
        yield position, text[position:end]
        position = end


def _divide(text: str, width: int) -> list[int]:
    """rich._wrap.divide_line for one-cell characters, folding words wider than ``width``."""
    breaks: list[int] = []
    offset = 0
    for start, word in _words(text):
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:  # fold: chop_cells
            chunks = [word[index : index + width] for index in range(0, len(word), width)]
            for number, chunk in enumerate(chunks):
                if start:
                    breaks.append(start)
                if number == len(chunks) - 1:
                    offset = len(chunk)
                else:
                    start += len(chunk)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    return breaks


def _wrap(text: str, width: int) -> list[str]:
    """Text.wrap with justify "left" and overflow "fold": each line exactly ``width``."""
    offsets = _divide(text, width)
    bounds = [0, *offsets, len(text)]
    lines = []
    for start, end in itertools.pairwise(bounds):
        line = text[start:end]
        if len(line) > width:  # rstrip_end: trailing spaces past the width
            trailing = len(line) - len(line.rstrip())
            line = line[: len(line) - min(trailing, len(line) - width)]
        lines.append(line[:width].ljust(width))
    return lines


def table_text(rows: Sequence[tuple[str, str, str]], width: int) -> str | None:
    """The table rich prints for these rows at this console width, or ``None`` where the
    rows are not plain (see the module's text)."""
    if not rows or not all(_plain(cell) for row in rows for cell in row):
        return None
    marks = max(len(row[0]) for row in rows) + 1  # cell, then padding right
    names = max(len(row[1]) for row in rows) + 2  # padding left and right
    values = min(max(len(row[2]) for row in rows) + 1, width)  # padding left
    if marks + names + 2 > width or values < 2:  # rich would shrink every column, or
        return None  # lay out empty values: left to it
    values = min(values, width - marks - names)  # the value column collapses first
    out = []
    for mark, name, value in rows:
        lines = _wrap(value, values - 1)
        first = mark.ljust(marks - 1) + "  " + name.ljust(names - 2) + " "
        out.append(first + " " + lines[0])
        blank = " " * (marks + names)
        out.extend(blank + " " + line for line in lines[1:])
    return "".join(line + "\n" for line in out)


def print_table(rows: Sequence[tuple[str, str, str]]) -> bool:
    """Print the table as ``Console().print(table)`` prints it; False (nothing printed)
    where that is not plainly the same: then print it with rich."""
    stream = sys.stdout
    if stream is None or hasattr(stream, "rich_proxied_file"):
        return False
    width = console_width()
    if width is None:
        return False
    text = table_text(rows, width)
    if text is None:
        return False
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("_", "-")
    if not text.isascii() and encoding not in ("utf-8", "utf8"):
        return False  # rich adds a hint to the UnicodeEncodeError: left to it
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:  # as rich's Console.on_broken_pipe
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(1) from None
    return True
