"""The cheaper routing path gives the same answers as the plain one.

The table's keywords are found in one scan (``prefilter.Keywords``, with the not_when rules'
since the second round) and a pattern is searched only when its own keywords are there;
the classifier computes its features as a set, with the code check counted without the regex;
``holds_back`` skips searches whose keywords are absent; the negation check is written with a
literal first (``_NEGATION_SCAN``); a decision's ``ParsedIntent`` is built without the
validator when it would change nothing; ``holds_back`` also skips a search when no alternative
of its pattern can match (``_Gate``); the planner works out params only for a question or a
url; the classifier sums every feature's row with a count column instead of building the set
of known ones. Each is checked here against the plain computation it
replaces. (``scripts/routing_same.py`` compares whole routing outcomes between two versions
over every request in data/routing.)
"""

from __future__ import annotations

import itertools
import random
import re
import sys
from typing import Any

import pytest

from benchmarks.bench_routing import load_eval
from skillrt._routing import clarify
from skillrt._routing import classifier as C
from skillrt._routing.intent_table import IntentTable
from skillrt._routing.matching import CASE_ODD as _CASE_ODD
from skillrt._routing.prefilter import Keywords, required_literals
from skillrt._routing.router import IntentRouter, normalize_text


def _texts() -> list[str]:
    texts = [t for *_, t in load_eval()]
    return texts + [t.upper() for t in texts[::5]] + ["ſtop", "İs there", "dıd I write it"]


def test_keywords_finds_exactly_the_words_a_text_holds() -> None:
    rng = random.Random(29)
    for _ in range(2000):
        words = {
            "".join(rng.choice("ab.?删") for _ in range(rng.randint(1, 4)))
            for _ in range(rng.randint(1, 8))
        }
        scan = Keywords(words)
        for _ in range(5):
            text = "".join(rng.choice("abc.?删 ") for _ in range(rng.randint(0, 14)))
            assert scan.holds(text) == {w for w in words if w in text}, (words, text)
    assert Keywords({"de", "delete", "xé"}, ascii_only=True).holds("delete") == {"de", "delete"}


def _longest_at_each(words: set[str], text: str) -> list[str]:
    """The plain computation ``Keywords.longest`` replaces: at each place of ``text`` where a
    word starts, the longest one, in order."""
    out = []
    for i in range(len(text)):
        here = [w for w in words if text.startswith(w, i)]
        if here:
            out.append(max(here, key=len))
    return out


def test_keywords_longest_is_the_longest_word_at_each_place() -> None:
    """The scans by first character (several once there are more than ``_BUCKET`` first
    characters other than ASCII) give the longest word at each place, as a search from one
    character on after each find did: for random words over many first characters, and for
    the table's own words (every variant the benchmark's router builds) on the evaluation
    set."""
    from skillrt._routing import prefilter

    rng = random.Random(38)
    wide = [chr(0x4E00 + i) for i in range(prefilter._BUCKET * 2 + 17)]
    alphabet = ["a", "b", "-", "]", "\\", "^", "\n", *wide[:6]]
    for _ in range(300):
        words = {
            "".join(rng.choice(alphabet + wide) for _ in range(rng.randint(1, 3)))
            for _ in range(rng.randint(1, 300))
        }
        scan = Keywords(words)
        for _ in range(5):
            text = "".join(rng.choice(alphabet + wide[:40]) for _ in range(rng.randint(0, 20)))
            assert sorted(scan.longest(text)) == sorted(_longest_at_each(words, text)), text
    from benchmarks.bench_routing import _router

    router = _router(None, classifier=False)
    contexts = [(False, False, False), (True, True, False), (False, True, True)]
    checked = 0
    for text in _texts():
        norm = normalize_text(text)
        lowered = norm.lower()
        for selection, has_file, browsing in contexts:
            keywords = router._variant(norm, selection, has_file, browsing).keywords
            found = sorted(keywords.longest(lowered))
            assert found == sorted(_longest_at_each(set(keywords.prefixes), lowered)), text
            checked += len(found)
    assert checked > 3000


def test_only_the_odd_characters_match_a_letter_without_lowering_to_it() -> None:
    """Under IGNORECASE a pattern's ASCII letter matches these characters and no others whose
    ``lower()`` is not that letter; a text holding one is searched as before (run by run)."""
    letters = re.compile("[a-z]", re.IGNORECASE)
    odd = {
        chr(o)
        for o in range(128, sys.maxunicode + 1)
        if letters.fullmatch(chr(o)) and not ("a" <= chr(o).lower() <= "z")
    }
    odd |= {chr(o) for o in range(sys.maxunicode + 1) if len(chr(o).lower()) != 1}
    assert odd == set(_CASE_ODD)
    table = IntentTable.default()
    for pattern in (*table.patterns, *table.fallbacks):
        for word in required_literals(pattern.regex.pattern) or ():
            # The table's other keyword characters have no case: nothing else matches them.
            assert all(ch.isascii() or ch.lower() == ch.upper() for ch in word), pattern.where


async def test_a_text_with_an_odd_character_routes_as_the_old_run_triggers_did() -> None:
    router = IntentRouter(None, classifier=None)
    from skillrt.skills import builtin_skills

    for skill in builtin_skills():
        router.register_skill(skill)
    got = await router.parse("wrıte an article about Zig")  # dotless ı matches "i"
    again = await router.parse("write an article about Zig")
    assert got.type == again.type == "WRITE_ARTICLE"


@pytest.mark.parametrize("context", [None, {"current_file": "a.md"}, {"browsing": True}])
def test_the_classifier_features_are_the_same_set(context: dict[str, Any] | None) -> None:
    for text in map(normalize_text, _texts()):
        assert C._feature_set(text, context) == set(C.features(text, context)), text


def test_the_code_check_counts_as_the_regex_does() -> None:
    rng = random.Random(7)
    alphabet = list("{}();=<>[]:`|-=> selectfrom defnconstreturn ab用x")
    texts = [C._clean(t[:600]) for t in _texts()]
    texts += [
        " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20))).split())
        for _ in range(20000)
    ]
    texts += ["a => b", "x::y", ":::", "def f(): return 1", "用def", "ls -la | grep x", "-v x"]
    for text in texts:
        plain = len(C._CODE.findall(text)) >= 3 or C._SNIPPET.search(text) is not None
        assert C._holds_code(text) == plain, text


def test_the_classifier_gives_the_same_probabilities_twice_and_without_its_last_answer() -> None:
    model = C.IntentClassifier.packaged()
    for text in _texts()[:200]:
        first = model.probabilities(text, {"focus": "a.md"})
        model._last = None
        assert model.probabilities(text, {"focus": "a.md"}) == first
        assert model.probabilities(text, {"focus": "a.md", "current_file": "b.md"}) == first


def test_holds_back_answers_as_every_search_would() -> None:
    def plain(text: str) -> bool:
        text = text.strip()
        said = clarify._LEAVES_ALONE.sub(" ", text).strip()
        searching = clarify._SEARCH_FIRST.search(text) is not None
        return (
            clarify._NEGATION.search(said) is not None
            or (not searching and clarify._ASKS_ABOUT.search(said) is not None)
            or clarify._ABOUT_ME.search(text) is not None
            or clarify._PRAISE.search(text) is not None
        )

    texts = [*_texts(), "DON'T DELETE IT", "原文别动，不要翻译", "ſtop deleting", "did I write it?"]
    for text in texts:
        assert clarify.holds_back(text) == plain(text), text


def test_the_negation_scan_finds_a_negation_exactly_when_the_plain_search_does() -> None:
    """``_NEGATION_SCAN`` (every branch starting with a literal) answers as
    ``_NEGATION_WORD`` on every request and on random strings of the characters that matter."""
    from skillrt._routing import router as R

    rng = random.Random(31)
    alphabet = [*"notevrd '’tn_x1.", "no need", "never", "别", "不要", "不需要", "无需", "甭", "é"]
    texts = [*_texts(), "NOT now", "snot", "don’t", "cannot", "no  need", "knot", "_not", "1not"]
    for _ in range(20000):
        texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))))
    for text in texts:
        plain = R._NEGATION_WORD.search(text) is not None
        assert (R._NEGATION_SCAN.search(text) is not None) == plain, text


@pytest.mark.parametrize("cached", [False, True])
def test_a_decision_becomes_the_intent_validation_would_build(cached: bool) -> None:
    """``_Decision.intent`` builds the ``ParsedIntent`` without validation when validation
    would keep every value as it is; anything else (an int, a value out of range) goes
    through the validator, which converts it or raises as before."""
    from pydantic import ValidationError

    from skillrt._routing.router import ParsedIntent, _Decision

    decisions = [
        _Decision("WRITE_ARTICLE", 0.9, {"topic": "Zig"}, "regex"),
        _Decision("CHAT", 0.0, {}, "none", "zh", "Chat", 5, 0.25, 0.5),
        _Decision("X", 1, {}, "llm"),  # type: ignore[arg-type]  # an int: converted
        _Decision("X", 0.5, {}, "llm", cost=1),  # type: ignore[arg-type]
        _Decision("X", float("nan"), {}, "llm"),  # out of range: raises
        _Decision("X", 0.5, {1: "a"}, "regex"),  # type: ignore[dict-item]  # raises
    ]
    for d in decisions:
        fields = d._asdict() | {"raw": "r", "cached": cached}
        if cached:
            fields |= {"tokens": 0, "cost": 0.0}
        try:
            plain = ParsedIntent(**fields)
        except ValidationError:
            with pytest.raises(ValidationError):
                d.intent("r", cached=cached)
            continue
        got = d.intent("r", cached=cached)
        assert got == plain
        assert got.model_dump_json() == plain.model_dump_json()
        assert got.model_fields_set == plain.model_fields_set
        assert got.parameters == d.parameters
        assert got.parameters is not d.parameters  # a copy: the cache's stays as it was


def _written() -> list[str]:
    """Every request of data/routing/ (the template rows, the fresh rounds, the hand-written
    files), as the router normalises it."""
    from pathlib import Path

    from benchmarks.bench_intents import read_rows

    data = Path(__file__).resolve().parent.parent / "data" / "routing"
    return [normalize_text(t) for path in sorted(data.glob("*.tsv")) for *_, t in read_rows(path)]


def test_holds_back_skips_a_search_only_where_it_cannot_match() -> None:
    """``holds_back`` skips a search when the text lacks a string of each set of every
    alternative of its pattern (``_Gate``): on every request of data/routing, the evaluation
    set and random strings of the strings that matter, a skipped search finds nothing, and
    ``holds_back`` answers as running every search does."""
    gates = clarify._holding()
    searches = [
        (gates.leaves_alone, clarify._LEAVES_ALONE),
        (gates.negation, clarify._NEGATION),
        (gates.asks_about, clarify._ASKS_ABOUT),
        (gates.about_me, clarify._ABOUT_ME),
    ]
    strings = sorted(
        {s for gate, _rx in searches for sets in gate.alternatives or () for o in sets for s in o}
    )
    rng = random.Random(37)
    texts = [*_texts(), *_written()]
    for _ in range(20000):
        texts.append(" ".join(rng.choice([*strings, "x", "?", ",", "I"]) for _ in range(5)))
    for text in texts:
        text = text.strip()
        lowered = None if clarify._case_odd(text) else text.lower()
        held = None if lowered is None else gates.keywords.holds(lowered)
        for gate, regex in searches:
            if not clarify._may_match(gate, held, lowered):
                assert regex.search(text) is None, (regex.pattern[:40], text)
    for text in texts[: len(texts) - 20000]:
        said = clarify._LEAVES_ALONE.sub(" ", text.strip()).strip()
        plain = (
            clarify._NEGATION.search(said) is not None
            or (
                clarify._SEARCH_FIRST.search(text.strip()) is None
                and clarify._ASKS_ABOUT.search(said) is not None
            )
            or clarify._ABOUT_ME.search(text.strip()) is not None
            or clarify._PRAISE.search(text.strip()) is not None
        )
        assert clarify.holds_back(text) == plain, text


def test_the_gates_strings_have_no_case_but_ascii_letters() -> None:
    """The gates look for their strings in the lowercased text: a string's other characters
    must have no case, or a match could hold a form the lowercased text does not."""
    gates = clarify._holding()
    for gate in (gates.leaves_alone, gates.negation, gates.asks_about, gates.about_me):
        assert gate.alternatives
        for sets in gate.alternatives:
            for options in sets:
                for s in options:
                    assert all(ch.isascii() or ch.lower() == ch.upper() for ch in s), s


async def test_the_planner_asks_what_it_asked_when_it_worked_out_every_params() -> None:
    """``Planner.question_for`` works out a route's params only where they are asked about
    (an intent with a url parameter) or shown (a question): on the evaluation set, with each
    context and both trusts, it asks exactly what working them out first asked."""
    import structlog

    from skillrt._routing.clarify import confirm_question
    from skillrt._routing.router import ParsedIntent
    from skillrt._tasks.planning import Planner, open_post, route_context
    from skillrt.settings import RuntimeConfig
    from skillrt.skills import builtin_skills

    router = IntentRouter(None)
    for skill in builtin_skills():
        router.register_skill(skill)
    config = RuntimeConfig()
    planner = Planner(router, router.registry, config, lambda: "low", structlog.get_logger)

    def confirmed_first(intent: ParsedIntent, text: str, context: dict[str, Any]) -> Any:
        """The confirm question as asked before: the params worked out for every effect."""
        spec = router.spec(intent.type)
        known = router.handles(intent.type) or (
            intent.skill is not None and router.find_skill(intent) is not None
        )
        if not (known and spec is not None and spec.effect != "read") or clarify.holds_back(text):
            return "no confirm"
        params = router.params_for(intent.type, text, intent.parameters)
        pageless = (
            "url" in spec.params
            and not params.get("url")
            and not router.in_browsing_session(route_context(context))
        )
        likely = intent.confidence >= config.confidence_threshold
        unsure = likely and intent.confidence < config.act_threshold
        if intent.source == "llm" or pageless or unsure:
            # with no post open or in focus, a delete naming none is DeleteArticle's to ask
            # which (the skill runs) or quotes the request: never "the current post"
            current = open_post(spec, params, context)
            if current is None and intent.source != "llm" and likely:
                return "no confirm"
            return confirm_question(spec, params, text, "en", current=current)
        return "no confirm"

    contexts: list[dict[str, Any]] = [
        {},
        {"current_file": "posts/a.md", "focus": "posts/a.md"},
        {"last_skill": "Browse"},
    ]
    asked = 0
    for *_, text in load_eval():
        for context in contexts:
            intent = await router.parse(text, route_context(context), ask_model=False)
            for source in ("regex", "llm"):
                intent = intent.model_copy(update={"source": source})
                got = planner.question_for(intent, text, "en", context)
                plain = confirmed_first(intent, text, context)
                if got is not None and got.kind == "confirm":
                    asked += 1
                    assert plain != "no confirm", text
                    assert (got.text, got.choices) == (plain.text, plain.choices), text
                else:
                    assert plain == "no confirm", text
    assert asked > 100


def test_the_classifier_gives_the_probabilities_of_its_plain_weights_to_the_bit() -> None:
    """The packed rows (one integer per feature, a count column) give each request exactly
    the probabilities a plain sum of the model file's int8 weights gives."""
    import base64
    import gzip
    import json
    import math
    from importlib import resources

    model = C.IntentClassifier.packaged()
    ref = resources.files("skillrt._routing").joinpath("intent_model.json.gz")
    data = json.loads(gzip.decompress(ref.read_bytes()))
    raw = base64.b64decode(data["weights"])
    width = len(model.classes)
    index = {name: i for i, name in enumerate(data["features"].split("\n"))}

    def plain(text: str, context: dict[str, Any] | None) -> tuple[float, ...]:
        found = set(C.features(text, context))
        known = [index[f] for f in found if f in index]
        columns = [
            sum(int.from_bytes(raw[i * width + k : i * width + k + 1], signed=True) for i in known)
            for k in range(width)
        ]
        norm = model.scale / math.sqrt(max(len(found), 1))
        logits = [
            (b + c * norm) / model.temperature for b, c in zip(model.bias, columns, strict=True)
        ]
        top = max(logits)
        exps = [math.exp(v - top) for v in logits]
        total = sum(exps)
        return tuple([e / total for e in exps])

    contexts: list[dict[str, Any] | None] = [None, {"focus": "a.md"}, {"browsing": True}]
    texts = [*_texts(), *_written()[::7]]
    for text in texts:
        for context in contexts:
            model._last = None
            assert model._probabilities(text, context) == plain(text, context), text


def test_the_router_keeps_the_small_talk_answer_only_for_the_same_text() -> None:
    """``screen`` and ``parse`` ask ``is_small_talk`` of one input; the router keeps the last
    answer, which is the answer for that text and no other."""
    router = IntentRouter(None, classifier=None)
    texts = [normalize_text(t) for t in _texts()[:300]] + ["ok", "thanks!", "ok", "write it"]
    for before, text in itertools.pairwise(texts):
        assert router._small_talk(before) == clarify.is_small_talk(before), before
        assert router._small_talk(text) == clarify.is_small_talk(text), text
        assert router._small_talk(text) == clarify.is_small_talk(text), text


def _heads_match(heads: Any, match_at: Any, text: str) -> Any:
    """The router's way (``_match_table``): the pattern matched at each place of its heads."""
    lowered = text.lower()
    found = heads(lowered, 0)
    while found is not None:
        m = match_at(text, found.start())
        if m is not None:
            return m
        found = heads(lowered, found.start() + 1)
    return None


def test_a_pattern_matched_at_its_heads_finds_what_its_search_finds() -> None:
    """A pattern whose matches start at one of its heads is matched only where the heads'
    search finds one, in order: the first match is the search's, groups and all."""
    from skillrt._routing.matching import _ascii, _head_search, case_odd

    rng = random.Random(37)
    texts = [normalize_text(t) for t in _texts()]
    table = IntentTable.default()
    words = sorted({w for p in table.patterns for w in required_literals(p.regex.pattern) or ()})
    for _ in range(3000):  # the table's own words, run together at random places
        parts = [rng.choice(words) for _ in range(rng.randint(1, 5))]
        texts.append(rng.choice(["", " "]).join(parts) + rng.choice(["", " x", ".", " 的"]))
    texts = [t for t in texts if not case_odd(t)]
    used = 0
    for pattern in (*table.patterns, *table.fallbacks):
        heads = _head_search(pattern.regex.pattern)
        if heads is None:
            continue
        used += 1
        for text in texts:
            regex = _ascii(pattern.regex) if text.isascii() else pattern.regex
            plain, ours = regex.search(text), _heads_match(heads, regex.match, text)
            assert (plain and (plain.span(), plain.groupdict())) == (
                ours and (ours.span(), ours.groupdict())
            ), (pattern.where, text)
    assert used >= 60  # most English patterns start at a head


def test_heads_are_told_only_where_every_match_starts_with_one() -> None:
    from skillrt._routing.prefilter import heads

    assert heads(r"\b(?:Write|draft)\s+x") == {"write", "draft"}
    assert heads(r"(?<!not )\bdelete") == {"delete"}
    assert heads(r"(?:ab|cd)+e") == {"ab", "cd"}
    for source in (r"^write", r"a?b", r"(?:^|, )x", r"\bx*y", r"\w+ing", r"(?:a|)b", r"\b"):
        assert heads(source) is None, source


def test_an_anchored_pattern_is_matched_where_a_search_finds_it() -> None:
    from skillrt._routing.prefilter import anchored

    table = IntentTable.default()
    texts = [normalize_text(t) for t in _texts()]
    for pattern in (*table.patterns, *table.fallbacks):
        if anchored(pattern.regex.pattern):
            for text in texts:
                plain, ours = pattern.regex.search(text), pattern.regex.match(text)
                assert (plain and (plain.span(), plain.groupdict())) == (
                    ours and (ours.span(), ours.groupdict())
                ), (pattern.where, text)
