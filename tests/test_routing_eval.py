"""The routing evaluation set: the regex path alone routes at least 95% of it.

``tests/data/routing_eval.tsv`` holds requests phrased as people phrase them, written before
the table was tuned; rows marked ``held`` are held out (never tuned on) and reported apart, so
the figure for unseen phrasing stays honest. Follow-ups (a post in focus) and browsing
follow-ups (after a Browse task) are reported apart too. ``python -m benchmarks --only
routing`` prints the figures.
"""

from __future__ import annotations

import pytest

from benchmarks.bench_routing import load_eval, routing_eval
from skillrt._routing.router import IntentTable


def test_the_set_is_large_bilingual_and_covers_every_intent() -> None:
    rows = load_eval()
    assert len(rows) >= 300
    zh = [text for *_, text in rows if not text.isascii()]
    en = [text for *_, text in rows if text.isascii()]
    assert len(zh) >= 120 and len(en) >= 120
    intents = {intent for _, intent, _, _ in rows}
    assert intents >= set(IntentTable.default().specs) | {"UNKNOWN", "CHAT"}
    held = [r for r in rows if r[0] == "held"]
    assert len(held) >= 78 and {r[0] for r in rows} == {"tune", "held"}
    held_followups = [r for r in held if r[2] and r[2].get("focus")]
    assert len(held_followups) >= 25
    assert {t.isascii() for *_, t in held_followups} == {True, False}  # English and Chinese
    # No duplicates: the same words may come back only in another context ("go back").
    assert len({(repr(context), text) for _, _, context, text in rows}) == len(rows)


def test_the_regex_path_alone_routes_at_least_95_percent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = routing_eval(passes=0)
    accuracy, counts, misses = result["accuracy"], result["counts"], result["misses"]
    with capsys.disabled():  # the figures, shown with -s or in the report of a failure
        print()
        for group in sorted(counts):
            print(f"routing eval {group}: {100 * accuracy[group]:.1f}% of {counts[group]}")
    assert accuracy["all"] >= 0.95, misses
    assert accuracy["tune"] >= 0.95, misses.get("tune")
    assert accuracy["followup"] >= 0.95 and accuracy["browse"] >= 0.95, misses
    # Held-out rows were never tuned on: this guards against regressions, not a target.
    assert accuracy["held"] >= 0.80, misses.get("held")
    assert accuracy["held_followup"] >= 0.80, misses.get("held")


def test_the_keyword_prefilter_never_skips_a_pattern_that_matches() -> None:
    """Every pattern's required keywords appear in every text it matches (so skipping the
    pattern when they are absent changes no result), over the evaluation set and the samples."""
    from skillrt._routing.prefilter import required_literals
    from skillrt._routing.router import normalize_text
    from skillrt.skills.samples import SAMPLE_INPUTS

    table = IntentTable.default()
    texts = [normalize_text(t) for *_, t in load_eval()] + [t for t, _ in SAMPLE_INPUTS]
    texts += ["WRITE AN ARTICLE ABOUT ZIG", "Delete POSTS/OLD.md", "Ｓｕｍｍａｒｉｚｅ this"]
    known = 0
    for pattern in (*table.patterns, *table.fallbacks):
        literals = required_literals(pattern.regex.pattern)
        if literals is None:
            continue
        known += 1
        for text in map(normalize_text, texts):
            if pattern.regex.search(text):
                assert any(word in text.lower() for word in literals), (pattern.where, text)
    assert known >= 0.9 * (len(table.patterns) + len(table.fallbacks))


async def test_the_packaged_table_is_compiled_at_the_first_parse() -> None:
    from skillrt._routing.router import IntentRouter

    router = IntentRouter(None)
    assert router._table is None  # building a runtime compiles no regex
    await router.parse("write an article about Zig")
    assert router._table is not None


def test_a_trigger_finds_exactly_the_texts_that_hold_one_of_its_keywords() -> None:
    """The trie a trigger is written as finds a keyword wherever a plain `in` does."""
    import random

    from skillrt._routing.prefilter import trigger_for

    rng = random.Random(13)
    for _ in range(2000):
        words = frozenset(
            "".join(rng.choice("ab.?删") for _ in range(rng.randint(1, 4)))
            for _ in range(rng.randint(1, 6))
        )
        trigger = trigger_for([words])
        assert trigger is not None
        for _ in range(5):
            text = "".join(rng.choice("abc.?删 ") for _ in range(rng.randint(0, 12)))
            assert (trigger.search(text) is not None) == any(w in text for w in words), (
                words,
                text,
            )
    assert trigger_for([frozenset({"de", "delete", "dealer", "deal"})]).pattern == "de"  # type: ignore[union-attr]


def test_anchored_patterns_are_told_and_only_match_at_the_start() -> None:
    from skillrt._routing.prefilter import anchored
    from skillrt._routing.router import normalize_text

    assert anchored("^abc") and anchored("(?:^a|^b)c") and anchored("^(?:a|b)$")
    assert not anchored("abc") and not anchored("(?:^a|b)") and not anchored("a^")
    table = IntentTable.default()
    texts = [normalize_text(t) for *_, t in load_eval()]
    told = [p for p in (*table.patterns, *table.fallbacks) if anchored(p.regex.pattern)]
    assert len(told) >= 10
    for pattern in told:
        for text in texts:
            m = pattern.regex.search(text)
            assert m is None or m.start() == 0, (pattern.where, text)


def test_what_the_router_skips_by_script_cannot_match() -> None:
    """English patterns are skipped for text without an ASCII letter, Chinese ones for ASCII
    text, and ASCII text is searched with the patterns compiled for ASCII: none of it changes
    a match."""
    import re

    from skillrt._routing.matching import _ascii
    from skillrt._routing.prefilter import required_literals
    from skillrt._routing.router import normalize_text

    table = IntentTable.default()
    for pattern in (*table.patterns, *table.fallbacks):
        if pattern.latin:
            words = required_literals(pattern.regex.pattern)
            assert words and all(re.search("[a-z]", w) for w in words), pattern.where
    texts = [normalize_text(t) for *_, t in load_eval()]
    ascii_texts = [t for t in texts if t.isascii()] + ["WRITE AN ARTICLE ABOUT ZIG", "K"]
    for pattern in (*table.patterns, *table.fallbacks):
        if pattern.chinese:
            assert not any(pattern.regex.search(t) for t in ascii_texts), pattern.where
            continue
        for text in ascii_texts:
            a, u = _ascii(pattern.regex).search(text), pattern.regex.search(text)
            assert (a and (a.span(), a.groupdict())) == (u and (u.span(), u.groupdict()))
