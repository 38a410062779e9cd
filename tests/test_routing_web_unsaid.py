"""A web search the request says no word of is asked about before it runs: the classifier sent
"整理一下" (tidy up, 0.89) to ResearchWeb, which searched the web for "整理一下" unasked."""

from __future__ import annotations

import pytest
import structlog

from benchmarks.bench_routing import _router
from skillrt._tasks.planning import Planner
from skillrt.settings import RuntimeConfig


async def _planned(text: str) -> tuple[str, bool]:
    """(the intent routed, whether it runs unasked), as the runtime plans it with no model."""
    router = _router(None)
    config = RuntimeConfig()
    planner = Planner(
        router, router.registry, config, lambda: "low", lambda: structlog.get_logger()
    )
    intent = await router.parse(text, None, ask_model=False)
    question = planner.question_for(intent, text, "zh", {})
    return intent.type, question is None and intent.confidence >= config.confidence_threshold


@pytest.mark.parametrize("text", ["整理一下", "帮我整理一下", "收拾一下", "清理一下"])
async def test_a_web_search_with_no_word_of_one_asks_first(text: str) -> None:
    intent, runs = await _planned(text)
    assert not (intent == "RESEARCH_WEB" and runs), (text, intent)


@pytest.mark.parametrize(
    "text",
    [
        "dig up some sources on the history of the QWERTY layout",
        "find me sources on the four-day work week studies",
        "search the web for the latest Rust release",
        "上网查一下 Hugo 最新版本有什么变化",
    ],
)
async def test_a_web_search_it_names_still_runs(text: str) -> None:
    assert await _planned(text) == ("RESEARCH_WEB", True)
