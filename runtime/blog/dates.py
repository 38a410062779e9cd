"""Dates asked for in a question: "2024年", "in 2023", "last year", "March 2024", "去年"...

``find_dates(text, today)`` returns the range of days the question names (``DateRange``, both
ends included, as ``YYYY-MM-DD`` strings that compare as dates) and the question without
those words, so that "2023" is a filter rather than a search term. A question that names no
date gives None.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

__all__ = ["DateRange", "find_dates"]

_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_YEAR = r"((?:19|20)\d{2})"
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("zh_month", re.compile(rf"{_YEAR}\s*年\s*(\d{{1,2}})\s*月(?:份)?")),
    ("zh_year", re.compile(rf"{_YEAR}\s*年(?:度)?")),
    ("en_month", re.compile(rf"\b(?:in\s+|during\s+)?({_MONTH_NAMES})\.?,?\s+{_YEAR}\b", re.I)),
    ("since", re.compile(rf"\b(?:since|after)\s+{_YEAR}\b", re.I)),
    ("before", re.compile(rf"\bbefore\s+{_YEAR}\b", re.I)),
    ("en_year", re.compile(rf"\b(?:in|during|from|of|for)\s+(?:the\s+year\s+)?{_YEAR}\b", re.I)),
    ("last_year", re.compile(r"\blast\s+year\b|\bprevious\s+year\b|去年|上一年", re.I)),
    ("this_year", re.compile(r"\bthis\s+year\b|今年|本年", re.I)),
    ("last_month", re.compile(r"\blast\s+month\b|上个月|上月", re.I)),
    ("this_month", re.compile(r"\bthis\s+month\b|这个月|本月", re.I)),
    ("bare_year", re.compile(rf"(?<![\d.-]){_YEAR}(?![\d.-])")),
)


@dataclass(frozen=True, slots=True)
class DateRange:
    """Days from ``start`` to ``end`` (both ``YYYY-MM-DD``, included); ``label`` is how the
    question named them (``2023``, ``last year``)."""

    start: str
    end: str
    label: str

    def holds(self, date: str | None) -> bool:
        return date is not None and self.start <= date[:10] <= self.end


def _year(year: int, label: str) -> DateRange:
    return DateRange(f"{year:04d}-01-01", f"{year:04d}-12-31", label)


def _month(year: int, month: int, label: str) -> DateRange | None:
    if not 1 <= month <= 12:
        return None
    last = calendar.monthrange(year, month)[1]
    return DateRange(f"{year:04d}-{month:02d}-01", f"{year:04d}-{month:02d}-{last:02d}", label)


def _range(kind: str, match: re.Match[str], today: dt.date) -> DateRange | None:
    label = " ".join(match.group(0).split())
    if kind == "zh_month":
        return _month(int(match[1]), int(match[2]), label)
    if kind == "en_month":
        return _month(int(match[2]), _MONTHS[match[1].casefold().rstrip(".")], label)
    if kind == "bare_year" and not 1990 <= int(match[1]) <= today.year + 1:
        return None  # "the 2048 game" is not a date
    if kind in ("zh_year", "en_year", "bare_year"):
        return _year(int(match[1]), match[1])
    if kind == "since":
        return DateRange(f"{int(match[1]):04d}-01-01", "9999-12-31", label)
    if kind == "before":
        return DateRange("0000-01-01", f"{int(match[1]) - 1:04d}-12-31", label)
    if kind == "last_year":
        return _year(today.year - 1, label)
    if kind == "this_year":
        return _year(today.year, label)
    if kind == "last_month":
        first = today.replace(day=1) - dt.timedelta(days=1)
        return _month(first.year, first.month, label)
    return _month(today.year, today.month, label)  # this_month


def find_dates(text: str, today: dt.date) -> tuple[DateRange | None, str]:
    """The range of dates ``text`` asks about (the first one it names), and ``text`` without
    the words that named it; ``(None, text)`` when it names none."""
    for kind, pattern in _RULES:
        match = pattern.search(text)
        if match is None:
            continue
        found = _range(kind, match, today)
        if found is not None:
            rest = text[: match.start()] + " " + text[match.end() :]
            return found, " ".join(rest.split())
    return None, text
