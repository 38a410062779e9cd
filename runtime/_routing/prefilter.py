"""A keyword prefilter for the intent table: which patterns cannot match a text.

``required_literals(source)`` reads a regular expression's parse tree and returns strings of
which every match contains at least one (lowercased, for case-insensitive patterns), or None
when no such set can be told (a pattern made only of classes, optional parts or anchors).
``trigger_for`` joins the sets of a run of patterns into one search for any of their literals
(written as a trie), run once on the lowercased text: when it finds nothing, none of those
patterns is tried. Skipping a pattern that cannot match changes no result; it only saves the
search. ``anchored(source)`` tells a pattern that can only match at the start of the text
(``^...``): its own search fails at once elsewhere, so looking for its keywords first would
cost more than it saves. ``Keywords`` finds which of many keywords a text holds in one pass,
so that each pattern's own keywords can be checked with a bit mask rather than a search.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "Keywords",
    "anchored",
    "heads",
    "required_clauses",
    "required_literals",
    "trigger_for",
]

_MAX_CHARSET = 8  # a character class of up to this many literal characters counts


def required_literals(source: str) -> frozenset[str] | None:
    """Strings one of which every match of ``source`` contains, or None if none can be told."""
    try:
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser as sre  # type: ignore[attr-defined]

        tree = sre.parse(source, re.IGNORECASE)
    except Exception:  # a future Python without these internals: no prefilter, same results
        return None
    found = _sequence(list(tree), c)
    if found is None or not all(found):
        return None
    return frozenset(s.lower() for s in found)


def anchored(source: str) -> bool:
    """Whether every match of ``source`` starts at the beginning of the text."""
    try:
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser as sre  # type: ignore[attr-defined]

        tree = sre.parse(source, re.IGNORECASE)
    except Exception:  # a future Python without these internals: not known to be anchored
        return False
    return _starts_anchored(list(tree), c)


def heads(source: str) -> frozenset[str] | None:
    """Strings one of which every match of ``source`` starts with (lowercased), or None when
    that cannot be told: after any zero-width assertions (``\\b``, a lookaround) the pattern
    starts with a literal, a small class of literals, or a group or alternation each of whose
    branches does. A pattern anchored at the start (``^``) has none: it is matched at 0."""
    try:
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser as sre  # type: ignore[attr-defined]

        tree = sre.parse(source, re.IGNORECASE)
    except Exception:  # a future Python without these internals: not told
        return None
    found = _heads(list(tree), c)
    if not found or not all(found):
        return None
    return frozenset(s.lower() for s in found)


def _heads(items: list[Any], c: Any) -> frozenset[str] | None:
    for k, (op, av) in enumerate(items):
        if op is c.AT:
            if av in (c.AT_BEGINNING, c.AT_BEGINNING_STRING):
                return None
            continue  # \b, \B, $: zero width
        if op in (c.ASSERT, c.ASSERT_NOT):
            continue  # a lookahead or lookbehind: zero width
        if op is c.LITERAL:
            run = []
            for op2, av2 in items[k:]:
                if op2 is not c.LITERAL:
                    break
                run.append(chr(av2))
            return frozenset({"".join(run)})
        return _item(op, av, c, _heads)  # a group, a repeat, an alternation, a class
    return None  # nothing but zero-width items: not told


def _starts_anchored(items: list[Any], c: Any) -> bool:
    if not items:
        return False
    op, av = items[0]
    if op is c.AT:
        return av in (c.AT_BEGINNING, c.AT_BEGINNING_STRING)
    if op is c.SUBPATTERN:
        return _starts_anchored(list(av[-1]), c)
    if op is c.ATOMIC_GROUP:
        return _starts_anchored(list(av), c)
    if op is c.BRANCH:
        return all(_starts_anchored(list(branch), c) for branch in av[1])
    return False


def _best(candidates: Iterable[frozenset[str]]) -> frozenset[str] | None:
    """The most selective set: the longest shortest string, then the fewest strings."""
    best: frozenset[str] | None = None
    for cand in candidates:
        if not cand or not all(cand):
            continue
        key = (min(len(s) for s in cand), -len(cand))
        if best is None or key > (min(len(s) for s in best), -len(best)):
            best = cand
    return best


def required_clauses(source: str) -> tuple[tuple[frozenset[str], ...], ...] | None:
    """For each alternative at the top of ``source`` (the whole pattern when it has one),
    every set of strings of which each of its matches holds one (lowercased), or None when
    ``source`` cannot be read. A match of the pattern is a match of one alternative, so it
    can only be where, for some alternative, the text holds a string of each of its sets
    (an alternative with no set may match anywhere). ``required_literals`` gives one set,
    the most selective of the whole pattern; these are all of them, branch by branch."""
    try:
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser as sre  # type: ignore[attr-defined]

        tree = sre.parse(source, re.IGNORECASE)
    except Exception:  # a future Python without these internals: not told
        return None
    items = list(tree)
    if len(items) == 1 and items[0][0] is c.BRANCH:
        branches = [list(branch) for branch in items[0][1][1]]
    else:
        branches = [items]
    return tuple(
        tuple(
            frozenset(s.lower() for s in found)
            for found in _candidates(branch, c)
            if found and all(found)
        )
        for branch in branches
    )


def _sequence(items: list[Any], c: Any) -> frozenset[str] | None:
    return _best(_candidates(items, c))


def _candidates(items: list[Any], c: Any) -> list[frozenset[str]]:
    """Sets of strings of which every match of the sequence ``items`` holds one, each."""
    candidates: list[frozenset[str]] = []
    run: list[str] = []
    for op, av in items:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            candidates.append(frozenset({"".join(run)}))
            run = []
        found = _item(op, av, c)
        if found is not None:
            candidates.append(found)
    if run:
        candidates.append(frozenset({"".join(run)}))
    return candidates


_Walk = Callable[[list[Any], Any], frozenset[str] | None]


def _item(op: Any, av: Any, c: Any, walk: _Walk | None = None) -> frozenset[str] | None:
    """What one non-literal item of a sequence holds, its inner sequences read by ``walk``
    (``_sequence``: strings every match holds; ``_heads``: strings every match starts with)."""
    walk = walk or _sequence
    if op is c.SUBPATTERN:
        return walk(list(av[-1]), c)
    if op is c.ATOMIC_GROUP:
        return walk(list(av), c)
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        low, _high, sub = av
        return walk(list(sub), c) if low >= 1 else None
    if op is c.BRANCH:
        union: set[str] = set()
        for branch in av[1]:
            found = walk(list(branch), c)
            if found is None:
                return None
            union |= found
        return frozenset(union)
    if op is c.IN:
        if len(av) <= _MAX_CHARSET and all(o is c.LITERAL for o, _ in av):
            return frozenset(chr(v) for _, v in av)
        return None
    return None


def trigger_for(sets: Iterable[frozenset[str] | None]) -> re.Pattern[str] | None:
    """A search for any literal of ``sets`` (in lowercased text), or None if any set is None
    (unknown). The literals are written as a trie (``de(?:lete|tails)``): at each position of
    the text the engine then compares one character per branch of the trie rather than one
    per literal, which for fifty literals is less than half the time of a flat alternation."""
    literals: set[str] = set()
    for found in sets:
        if found is None:
            return None
        literals |= found
    if not literals:
        return None
    # A literal that contains another is found whenever that one is: only the other counts.
    kept = [w for w in literals if not any(o != w and o in w for o in literals)]
    return re.compile(_trie(sorted(kept)))


def _trie(words: list[str]) -> str:
    """A regular expression matching any of ``words`` (none a prefix of another), as a trie."""
    branches: dict[str, list[str]] = {}
    for word in words:
        branches.setdefault(word[0], []).append(word[1:])
    alternatives = []
    for first, rests in branches.items():
        head = re.escape(first)
        if "" in rests:  # the word ends here (no other word goes on from it: see the caller)
            alternatives.append(head)
        else:
            alternatives.append(head + _trie(rests))
    if len(alternatives) == 1:
        return alternatives[0]
    return "(?:" + "|".join(alternatives) + ")"


class Keywords:
    """Which of ``words`` (lowercased keywords) a lowercased text holds, found in one pass.

    A trie that prefers the longer word at each node gives the longest word starting at a
    place; every other word starting there is a prefix of it (``prefixes``). One ``findall``
    reads it at every place where a word starts (``_at_each``: each match is the one character
    there, so the next is looked for one character on, and overlapping words are all found):
    ``holds(text)`` is exactly the words ``w`` with ``w in text``. The words are looked for
    in a few such scans, by their first character (``_BUCKET``), since the engine tries the
    branches of a trie's top one by one at every place holding a first character. With
    ``ascii_only`` only the ASCII words are looked for (the caller's text is ASCII: no other
    word can be in it).
    """

    __slots__ = ("_scans", "_search", "prefixes", "words")

    def __init__(self, words: Iterable[str], *, ascii_only: bool = False) -> None:
        self.words = frozenset(w for w in words if w)
        looked = sorted(w for w in self.words if w.isascii() or not ascii_only)
        self.prefixes: dict[str, tuple[str, ...]] = {
            w: tuple(w[:j] for j in range(1, len(w) + 1) if w[:j] in self.words) for w in looked
        }
        """Each word looked for: the words it starts with, itself included."""
        self._search = re.compile(_longest(looked)).search if looked else None
        self._scans: tuple[Callable[[str], list[str]], ...] = tuple(
            re.compile(_at_each(group), re.DOTALL).findall for group in _by_first(looked)
        )

    def longest(self, text: str) -> list[str]:
        """At each place of ``text`` (lowercased) where a word starts, the longest one (in no
        particular order)."""
        scans = self._scans
        if len(scans) == 1:
            return scans[0](text)
        out: list[str] = []
        for scan in scans:
            out += scan(text)
        return out

    def places(self, text: str) -> list[tuple[int, str]]:
        """At each place of ``text`` (lowercased) where a word starts: the place and the
        longest word starting there."""
        search = self._search
        out: list[tuple[int, str]] = []
        if search is None:
            return out
        m = search(text)
        while m is not None:
            place = m.start()
            out.append((place, m.group()))
            m = search(text, place + 1)
        return out

    def holds(self, text: str) -> set[str]:
        """The words in ``text`` (lowercased)."""
        prefixes = self.prefixes
        return {w for found in self.longest(text) for w in prefixes[found]}


_BUCKET = 96
"""The most first characters of words other than ASCII looked for in one scan (measured over
the evaluation set: one scan of the Chinese variant's 250 first characters cost 28.8 k
instructions per Chinese input, scans of at most 96 each 22.8 k, of at most 48 each 24.4 k,
of 24 each 30.6 k: each scan costs about 1.4 k to start)."""


def _by_first(words: list[str]) -> list[list[str]]:
    """``words`` (sorted, none empty) in groups by their first character: the words starting
    with an ASCII character, then the others, at most ``_BUCKET`` first characters a group."""
    firsts = sorted({w[0] for w in words if not w[0].isascii()})
    groups = [[w for w in words if w[0].isascii()]]
    for i in range(0, len(firsts), _BUCKET):
        chars = set(firsts[i : i + _BUCKET])
        groups.append([w for w in words if w[0] in chars])
    return [group for group in groups if group]


def _at_each(words: list[str]) -> str:
    """A regular expression whose ``findall`` gives, at each place where one of ``words``
    (sorted, none empty) starts, the longest word starting there. Each match is the one
    character at that place (so the next is looked for one character on), and its group the
    word, read by a lookahead inside a lookbehind of that character; the match starts with a
    class of the words' first characters, which the engine skips to. (A lookahead at the
    start would leave the engine nothing to skip to; a search from one character on after each
    find costs a call, a match object and its group per word found.)"""
    first = "".join(sorted({w[0] for w in words}))
    return "[" + re.escape(first) + "](?<=(?=(" + _longest(words) + ")).)"


def _longest(words: list[str]) -> str:
    """A regular expression matching any of ``words`` (sorted, none empty) as a trie whose
    longer branches are tried before a word that ends at their node: at any place it matches
    the longest of the words that start there."""
    branches: dict[str, list[str]] = {}
    ends = False
    for word in words:
        if word:
            branches.setdefault(word[0], []).append(word[1:])
        else:
            ends = True
    alternatives = [re.escape(first) + _longest(rests) for first, rests in branches.items()]
    if ends and alternatives:
        alternatives.append("")  # a word ends here: matched when no longer one goes on
    if len(alternatives) == 1:
        return alternatives[0]
    return "(?:" + "|".join(alternatives) + ")" if alternatives else ""
