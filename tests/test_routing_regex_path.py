"""Stop 39's cheaper regex path gives the answers of the plain computation.

- ``router._language`` tells ``detect_language``'s answer without its search for paths and
  URLs when that search cannot change it;
- the table's decision is made in the text's language (``_match_table(..., language)``), as
  ``parse`` used to set it afterwards;
- a ``ParsedIntent`` built without the validator has a set of fields given of its own.
"""

from __future__ import annotations

import random
from pathlib import Path

from benchmarks.bench_intents import read_rows
from benchmarks.bench_routing import _router, load_eval
from skillrt._routing import router as R
from skillrt._routing.router import normalize_text
from skillrt.skill.context import detect_language

_DATA = Path(__file__).resolve().parent.parent / "data" / "routing"


def _requests() -> list[str]:
    texts = [normalize_text(t) for *_, t in load_eval()]
    texts += [
        normalize_text(t) for path in sorted(_DATA.glob("*.tsv")) for *_, t in read_rows(path)
    ]
    return texts


def _random_texts(n: int) -> list[str]:
    """Chinese, English words, paths, URLs, addresses and spaces mixed at random."""
    rng = random.Random(39)
    parts = ["写", "文章", "总结", "翻译成英文", "的", "Rust", "post", "a", "of", "md", " ", "  ",
             "posts/x.md", "http://a.b/c", "a@b.cn", "C:\\d", "v1.2", "：", ":", "。", ".", "/",
             "ab", "Zig语言", "x/y", "README", "删掉", "ok"]  # fmt: skip
    return ["".join(rng.choice(parts) for _ in range(rng.randint(1, 14))) for _ in range(n)]


def test_the_language_is_what_detect_language_says() -> None:
    texts = _requests() + _random_texts(20_000)
    took_the_short_way = 0
    for text in texts:
        text = text[:500]
        assert R._language(text) == detect_language(text), text
        took_the_short_way += not text.isascii()
    assert took_the_short_way > 1_000  # the Chinese requests were asked


async def test_a_table_decision_is_made_in_the_texts_language() -> None:
    router = _router(None, classifier=False)
    seen = set()
    for _split, _intent, context, text in load_eval():
        norm = normalize_text(text)
        language = detect_language(norm[:500])
        selection = bool(context and (context.get("selected_text") or context.get("has_selection")))
        has_file = bool(context and context.get("current_file"))
        browsing = router._browsing(context)
        plain = router._match_table(norm, selection, has_file, browsing)
        made = router._match_table(norm, selection, has_file, browsing, language)
        if plain is None:
            assert made is None
            continue
        assert made == plain._replace(language=language)
        assert type(made) is R._Decision
        router.cache_clear()
        parsed = await router.parse(text, context)
        assert parsed.language == language
        seen.add(language)
    assert seen == {"en", "zh"}


def test_each_intent_has_its_own_set_of_fields_given() -> None:
    decision = R._Decision("WRITE_ARTICLE", 0.9, {"topic": "Zig"}, "regex")
    first, second = decision.intent("a"), decision.intent("b")
    assert first.model_fields_set == set(R._INTENT_FIELDS)
    first.model_fields_set.discard("raw")
    assert second.model_fields_set == set(R._INTENT_FIELDS)
    assert decision.intent("c").model_fields_set == set(R._INTENT_FIELDS)
