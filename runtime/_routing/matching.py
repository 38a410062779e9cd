"""Which patterns of the intent table can match a text, and where their matches can start.

The router (``router.py``) tries the table's patterns in precedence order. Most cannot match
a given text, and searching one costs the ``re`` engine a try at every place of the text, so
this module tells, from one scan of the lowercased text for every pattern's keywords
(``prefilter.Keywords``), which patterns are worth trying and how:

- a pattern none of whose keywords (``prefilter.required_literals``) is in the text cannot
  match, and is not tried;
- a pattern anchored at the start (``^...``) is matched at the start only (``re.match``), where
  a search would try every place and fail at all but the first;
- a pattern every match of which starts with one of a few strings (its ``heads``:
  ``\\b(?:write|draft)\\s+...`` starts with "write" or "draft") is matched only at the places
  where the scan found one of them, in order (``re.match(text, pos)``); the first match is the
  one a search would find, since a search finds the first place where the pattern matches
  and every such place holds a head. Only heads whose characters are ASCII or have no case
  are used (a cased character could match, under IGNORECASE, one whose ``lower()`` is not it);
- the others are searched as they are.

A text holding a character that matches an ASCII letter under IGNORECASE without lowering to
it (``CASE_ODD``) is handled by the router as before: a pattern is searched when a keyword of
its run is there (the runs that used to share one trigger search).
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple, TypeAlias

from skillrt._routing.intent_table import IntentPattern
from skillrt._routing.prefilter import Keywords, _longest, anchored, heads, required_literals

__all__ = [
    "CASE_ODD",
    "Entry",
    "Search",
    "TableIndex",
    "built_index",
    "case_odd",
    "index_for",
    "keywords_of",
]

Search: TypeAlias = Callable[[str], "re.Match[str] | None"]
Match: TypeAlias = Callable[[str, int], "re.Match[str] | None"]


class Entry(NamedTuple):
    """One pattern, ready to be tried."""

    search: Search  # its search (a match at the start for a pattern anchored there)
    pattern: IntentPattern
    own: frozenset[str]  # its keywords (one of which every match holds); empty: not told
    run: frozenset[str]  # the keywords of its run (see ``_entries``): the odd texts' filter
    match_at: Match | None  # its match at a place, when its matches start at a head
    heads: Match | None  # a search for its heads in lowercased text, from a place


class TableIndex(NamedTuple):
    """The patterns that can match one kind of text, and the keywords that tell which may."""

    entries: tuple[Entry, ...]  # the ordinary patterns, then the fallbacks, in order
    ordinary: int  # how many of them are ordinary ones
    keywords: Keywords  # the keywords and heads of them all, and the not_when rules' keywords
    always: frozenset[int]  # the entries searched whatever the text holds
    by_word: dict[str, tuple[int, ...]]  # a word found longest at a place: the entries it allows
    rule_words: frozenset[str] | None  # the words that tell a not_when rule may match


# Characters that match an ASCII letter of a pattern under IGNORECASE but whose ``lower()`` is
# not that letter (dotless ı and İ match "i", ſ matches "s"): in a text holding one, a pattern
# may match without its keywords in the lowercased text. NFKC leaves ı and İ (ſ becomes s).
# tests/test_routing_same_cheaper.py checks there are no others (and that İ is the only
# character whose lower() is not one character, so elsewhere a text and its lowercased form
# have their characters at the same places).
CASE_ODD = ("\u0130", "\u0131", "\u017f")


def case_odd(text: str) -> bool:
    """Whether ``text`` holds a character of ``CASE_ODD``."""
    return not text.isascii() and ("\u0130" in text or "\u0131" in text or "\u017f" in text)


@functools.lru_cache(maxsize=4096)
def _ascii(regex: re.Pattern[str]) -> re.Pattern[str]:
    """``regex`` compiled for ASCII text: \\w, \\b, \\s and case only as ASCII has them."""
    return re.compile(regex.pattern, (regex.flags & ~re.UNICODE) | re.ASCII)


keywords_of = functools.cache(required_literals)
"""The keywords of a pattern (one of which every match holds), or None when none can be told."""


@functools.cache
def _literals(source: str) -> frozenset[str] | None:
    """The keywords of a pattern, or None for one searched as it is: keywords that cannot be
    told, or a pattern anchored at the start (whose search is cheaper than the keywords')."""
    return None if anchored(source) else keywords_of(source)


def _caseless(word: str) -> bool:
    """Whether every character of ``word`` is ASCII or has no case."""
    return all(ch.isascii() or ch.lower() == ch.upper() for ch in word)


@functools.cache
def _head_search(source: str) -> Match | None:
    """A search, in lowercased text, for the places where a match of the pattern can start
    (its heads), when that is cheaper than searching the pattern itself; else None.

    The ``re`` engine skips ahead to the places a pattern can start only when it starts with
    a literal, or a set of them, of no case; a pattern that starts with a cased letter under
    IGNORECASE or with ``\\b`` or a lookaround is tried at every place of the text (each
    alternative of its first group in turn). The heads' search (a trie of lowercase
    literals, of no case) skips to them."""
    found = heads(source)
    if found is None or not all(_caseless(w) for w in found):
        return None
    if not any(ch.lower() != ch.upper() for w in found for ch in w):
        try:
            from re import _constants as c  # type: ignore[attr-defined]
            from re import _parser as sre  # type: ignore[attr-defined]

            first = list(sre.parse(source, re.IGNORECASE))[:1]
        except Exception:  # a future Python without these internals: searched as it is
            return None
        if first and first[0][0] not in (c.AT, c.ASSERT, c.ASSERT_NOT):
            return None  # heads of no case, first: the engine skips to them itself
    return re.compile(_longest(sorted(found))).search


_BLOCK = 3  # measured: 3 patterns a trigger beat a trigger per intent (-10%) or per pattern


def _entries(patterns: Sequence[IntentPattern], ascii_text: bool) -> list[Entry]:
    """Patterns in order, each with its own keywords and those of its run: runs of one intent
    whose keywords are known (at most ``_BLOCK`` patterns, which used to share one trigger
    search) and runs of patterns without known keywords (always searched). For ASCII text
    (``ascii_text``) the patterns are searched as compiled with ``re.ASCII``: the same matches
    there, found in about two thirds of the time (case-insensitive matching need not consider
    the rest of Unicode)."""
    runs: list[tuple[tuple[str, bool], list[IntentPattern]]] = []
    for p in patterns:
        key = (p.intent, _literals(p.regex.pattern) is None)
        if runs and runs[-1][0] == key and (key[1] or len(runs[-1][1]) < _BLOCK):
            runs[-1][1].append(p)
        else:
            runs.append((key, [p]))
    entries: list[Entry] = []
    for _key, run in runs:
        either = frozenset().union(*(_literals(p.regex.pattern) or () for p in run))
        for p in run:
            # A pattern anchored at the start has its keywords too: they are told by the one
            # scan of the text, which costs nothing more per pattern.
            words = keywords_of(p.regex.pattern) or frozenset()
            regex = _ascii(p.regex) if ascii_text else p.regex
            starts = _head_search(p.regex.pattern)
            search = regex.match if anchored(p.regex.pattern) else regex.search
            match_at = regex.match if starts is not None else None
            entries.append(Entry(search, p, words, either, match_at, starts))
    return entries


def _allowing(
    keywords: Keywords, allows: Mapping[str, Iterable[int]]
) -> dict[str, tuple[int, ...]]:
    """For each word the scan can find longest at a place: the entries any of the words
    starting there (its prefixes among the words) allows."""
    return {
        word: tuple(sorted({i for w in prefixes for i in allows.get(w, ())}))
        for word, prefixes in keywords.prefixes.items()
    }


def index_for(
    ordinary: Sequence[IntentPattern],
    fallbacks: Sequence[IntentPattern],
    rule_sets: Sequence[frozenset[str] | None],
    ascii_only: bool,
) -> TableIndex:
    """The index of ``ordinary`` then ``fallbacks`` (each in precedence order) for a kind of
    text (``ascii_only``: ASCII text), with the keywords of the not_when rules (``rule_sets``,
    each None when a rule's cannot be told) looked for in the same scan.

    Kept for the process (by the patterns, which are equal for routers of the same skills):
    the index a router builds in ``AgentRuntime.warm_up``'s thread is the one the runtime's
    router then uses, rather than 20-60 ms of building again on the event loop at the first
    input of each kind. An index is only read once built, so routers (and threads) share it."""
    key = (tuple(ordinary), tuple(fallbacks), tuple(rule_sets), ascii_only)
    found = _INDEXES.get(key)
    if found is None:
        found = _build_index(*key)
        with _INDEXES_LOCK:
            if len(_INDEXES) >= _KEPT_INDEXES:
                _INDEXES.clear()  # many sets of skills in one process (tests): start again
            found = _INDEXES.setdefault(key, found)
    return found


def built_index(
    ordinary: Sequence[IntentPattern],
    fallbacks: Sequence[IntentPattern],
    rule_sets: Sequence[frozenset[str] | None],
    ascii_only: bool,
) -> TableIndex | None:
    """``index_for``'s index when it is built already (None: it would be built now)."""
    return _INDEXES.get((tuple(ordinary), tuple(fallbacks), tuple(rule_sets), ascii_only))


_IndexKey: TypeAlias = tuple[
    tuple[IntentPattern, ...], tuple[IntentPattern, ...], tuple["frozenset[str] | None", ...], bool
]
_INDEXES: dict[_IndexKey, TableIndex] = {}
_INDEXES_LOCK = threading.Lock()
_KEPT_INDEXES = 32  # a few kinds of text for each set of skills a process routes


def _build_index(
    ordinary: tuple[IntentPattern, ...],
    fallbacks: tuple[IntentPattern, ...],
    rule_sets: tuple[frozenset[str] | None, ...],
    ascii_only: bool,
) -> TableIndex:
    entries = _entries(ordinary, ascii_only) + _entries(fallbacks, ascii_only)
    rule_set: frozenset[str] | None = None
    if all(found is not None for found in rule_sets):
        rule_set = frozenset().union(*(found or () for found in rule_sets))
    words = frozenset().union(*(e.own for e in entries), rule_set or ())
    keywords = Keywords(words, ascii_only=ascii_only)
    allows: dict[str, list[int]] = {}  # a keyword: the entries it allows
    for i, entry in enumerate(entries):
        for word in entry.own:
            allows.setdefault(word, []).append(i)
    rule_words = None
    if rule_set is not None:  # the words found longest whose prefixes hold a rule's
        rule_words = frozenset(
            word
            for word, prefixes in keywords.prefixes.items()
            if not rule_set.isdisjoint(prefixes)
        )
    return TableIndex(
        entries=tuple(entries),
        ordinary=len(ordinary),
        keywords=keywords,
        always=frozenset(i for i, e in enumerate(entries) if not e.own),
        by_word=_allowing(keywords, allows),
        rule_words=rule_words,
    )
