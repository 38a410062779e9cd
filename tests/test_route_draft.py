"""``IntentRouter.decide`` and ``settle``: a route worked out with no effect (no model, the
cache neither read into its order nor written, no counter), then settled as ``parse`` would
settle it at that moment (stop 38: the PostgreSQL lease overlapped with routing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillrt._routing.router import IntentRouter
from skillrt.skills.samples import SAMPLE_INPUTS
from skillrt.testing import FunctionModel, ModelOptions

from .test_router import ALL_INTENTS, make_skill

EVAL = Path(__file__).parent / "data" / "routing_eval.tsv"
CONTEXTS: list[dict[str, Any] | None] = [
    None,
    {"current_file": "posts/a.md"},
    {"current_file": "posts/a.md", "has_selection": True},
]


def _inputs(limit: int = 160) -> list[str]:
    rows = [line.split("\t") for line in EVAL.read_text(encoding="utf-8").splitlines()]
    texts = [r[3] for r in rows if len(r) == 4 and r[0] in ("tune", "held")][:limit]
    return [*texts, *(t for t, _ in SAMPLE_INPUTS), "", "ok", "  "]


def _router(llm: Any = None, timer: Any = None) -> IntentRouter:
    kwargs: dict[str, Any] = {} if timer is None else {"timer": timer}
    router = IntentRouter(llm, **kwargs)  # the packaged classifier too
    for name in ALL_INTENTS:
        router.register_skill(make_skill(name.title().replace("_", ""), [name]))
    return router


def _first_candidate(calls: list[str]) -> FunctionModel:
    def fn(messages: list[Any], options: ModelOptions) -> Any:
        calls.append(str(messages[-1]["content"]))
        field = options.response_model.model_fields["type"]  # type: ignore[union-attr]
        names = [n for n in field.annotation.__args__ if n != "UNKNOWN"]  # type: ignore[union-attr]
        return {"type": names[0], "confidence": 0.9, "parameters": {}}

    return FunctionModel(fn)


async def test_decide_then_settle_routes_every_input_as_parse_does() -> None:
    asked_parse: list[str] = []
    asked_draft: list[str] = []
    parsing = _router(_first_candidate(asked_parse))
    drafting = _router(_first_candidate(asked_draft))
    texts = _inputs()
    for ask in (False, True):
        for context in CONTEXTS:
            for text in [*texts, *texts[:20]]:  # the repeats are cache hits
                want = await parsing.parse(text, context, ask_model=ask)
                got = await drafting.settle(drafting.decide(text, context), ask_model=ask)
                assert got.model_dump() == want.model_dump(), (text, context, ask)
    assert asked_draft == asked_parse and asked_parse  # the same model calls, in order
    assert drafting.cache_info() == parsing.cache_info()
    assert list(drafting._cache._data) == list(parsing._cache._data)  # the same LRU order


async def test_decide_asks_no_model_and_leaves_the_cache_and_its_counts_alone() -> None:
    calls: list[str] = []
    router = _router(_first_candidate(calls))
    for text in ("write an article about tomatoes", "嗯，那个东西你看着办吧", "ok"):
        await router.parse(text)
    cached, info, asked = dict(router._cache._data), router.cache_info(), list(calls)
    order = list(router._cache._data)
    drafts = [router.decide(t) for t in _inputs(60)]
    drafts.append(router.decide("write an article about tomatoes"))  # cached: looked at only
    drafts.append(router.decide("嗯，那个东西你看着办吧"))
    assert router.cache_info() == info and dict(router._cache._data) == cached
    assert list(router._cache._data) == order and calls == asked
    assert drafts[-2].worked is None and drafts[-1].worked is None
    unsure = router.decide("hmm, that thing from yesterday about the garden")
    sure = router.decide("write an article about the garden")
    assert unsure.wants_model and not sure.wants_model


async def test_a_draft_settles_on_the_answer_cached_meanwhile() -> None:
    router = _router()
    draft = router.decide("write an article about tomatoes")
    first = await router.parse("write an article about tomatoes")
    settled = await router.settle(draft)
    assert settled.cached and settled.type == first.type
    assert router.cache_info()[:2] == (1, 1)  # a hit, as parse would count it


async def test_a_draft_whose_cached_answer_expired_is_worked_out_then() -> None:
    now = [0.0]
    router = _router(timer=lambda: now[0])
    want = await router.parse("write an article about tomatoes")
    draft = router.decide("write an article about tomatoes")
    assert draft.worked is None  # the cache held it
    now[0] += 10_000  # past the TTL
    got = await router.settle(draft)
    assert not got.cached and got.model_dump() == want.model_dump()


async def test_a_draft_made_before_skills_changed_is_decided_again() -> None:
    router = IntentRouter(None)
    router.register_skill(make_skill("Asker", ["ANSWER_QUESTION"]))
    draft = router.decide("write an article about tomatoes")
    router.register_skill(make_skill("Writer", ["WRITE_ARTICLE"]))
    got = await router.settle(draft)
    fresh = IntentRouter(None)
    fresh.register_skill(make_skill("Asker", ["ANSWER_QUESTION"]))
    fresh.register_skill(make_skill("Writer", ["WRITE_ARTICLE"]))
    assert got.model_dump() == (await fresh.parse("write an article about tomatoes")).model_dump()
    assert got.type == "WRITE_ARTICLE"
