"""Routing benchmark: µs per ``IntentRouter.parse`` on the router's sample inputs.

Three paths, each over the samples that take it:

- **regex**: the cache is empty and a pattern of ``config/intents.toml`` decides with enough
  confidence that the model is not asked;
- **cache hit**: the same inputs again, answered from the LRU;
- **miss to the model**: the cache is empty and no pattern decides (or one below the router's
  ``regex_trust``), so a ``FunctionModel`` that answers at once is asked with the structured
  schema; this is the router's own cost around a model call, not a model's latency. Few
  samples take this path, so it is also measured over all samples with the patterns removed
  from the table (same intents, same prompt).

A skill is registered for every intent of the table, so every pattern is live.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from pydantic import BaseModel

from benchmarks._common import percentile, row

__all__ = ["routing", "sample_inputs"]


class _NoParams(BaseModel):
    pass


def sample_inputs() -> list[tuple[str, dict[str, Any] | None]]:
    """(text, context) pairs from ``skillrt.router_samples.SAMPLE_INPUTS`` (no context)."""
    from skillrt.router_samples import SAMPLE_INPUTS

    return [(text, None) for text, _intent in SAMPLE_INPUTS]


def _router(llm: Any, *, patterns: bool = True) -> Any:
    """A router with a skill for every intent of the table; without ``patterns`` the regex
    table is emptied (same intents), so every input goes to the model."""
    from skillrt import IntentRouter, Skill, SkillResult
    from skillrt.router import IntentTable

    async def noop(ctx: Any, params: _NoParams) -> SkillResult:
        return SkillResult()

    table = IntentTable.default()
    if not patterns:
        table = IntentTable(table.specs, [], "benchmark: intents without patterns")
    router = IntentRouter(llm, patterns=table, cache_size=4096)
    for intent in router.table.specs:
        router.register_skill(
            Skill(
                name=f"bench_{intent.lower()}",
                description=intent,
                params=_NoParams,
                fn=noop,
                intents=[intent],
            )
        )
    return router


def _stats(ns: list[int]) -> dict[str, float]:
    us = [n / 1000 for n in ns]
    return {
        "mean_us": statistics.fmean(us) if us else 0.0,
        "p50_us": percentile(us, 0.5),
        "p99_us": percentile(us, 0.99),
        "n": len(us),
    }


async def _routing(passes: int) -> dict[str, Any]:
    from skillrt.testing import FunctionModel, ModelOptions

    samples = sample_inputs()
    answer = {"type": "ANSWER_QUESTION", "confidence": 0.9, "parameters": {"question": "q"}}

    def reply(messages: list[Any], options: ModelOptions) -> dict[str, Any]:
        return answer

    model = FunctionModel(reply, model="bench-router")
    router = _router(model)

    # Which path does each sample take? (one untimed pass on an empty cache)
    regex_inputs: list[tuple[str, dict[str, Any] | None]] = []
    model_inputs: list[tuple[str, dict[str, Any] | None]] = []
    for text, context in samples:
        before = model.call_count
        intent = await router.parse(text, context)
        if model.call_count > before:
            model_inputs.append((text, context))
        elif intent.source == "regex":
            regex_inputs.append((text, context))

    times: dict[str, list[int]] = {
        "regex": [],
        "cache_hit": [],
        "model_miss": [],
        "model_miss_all": [],
    }
    llm_only = _router(model, patterns=False)
    clock = time.perf_counter_ns
    for _ in range(passes):
        router.cache_clear()
        for text, context in regex_inputs:
            t0 = clock()
            await router.parse(text, context)
            times["regex"].append(clock() - t0)
        for text, context in model_inputs:
            t0 = clock()
            await router.parse(text, context)
            times["model_miss"].append(clock() - t0)
        for text, context in regex_inputs + model_inputs:
            t0 = clock()
            hit = await router.parse(text, context)
            times["cache_hit"].append(clock() - t0)
            if not hit.cached:
                raise RuntimeError(f"expected a cache hit for {text!r}")
        llm_only.cache_clear()
        for text, context in samples:
            t0 = clock()
            await llm_only.parse(text, context)
            times["model_miss_all"].append(clock() - t0)
    return {
        "samples": len(samples),
        "regex_inputs": len(regex_inputs),
        "model_inputs": len(model_inputs),
        "stats": {k: _stats(v) for k, v in times.items()},
    }


def routing(passes: int = 200) -> dict[str, Any]:
    """µs per input for the regex path, a cache hit and a miss that asks a FunctionModel."""
    out = asyncio.run(_routing(passes))
    s = out["stats"]
    regex, hit, miss, miss_all = s["regex"], s["cache_hit"], s["model_miss"], s["model_miss_all"]
    rows = [
        row(
            f"regex path ({out['regex_inputs']} of {out['samples']} samples)",
            regex["mean_us"],
            "µs/input",
            target="< 20",
            met=regex["mean_us"] < 20,
            note=f"p50 {regex['p50_us']:.1f}, p99 {regex['p99_us']:.1f}",
        ),
        row(
            "cache hit (all samples)",
            hit["mean_us"],
            "µs/input",
            target="< 20",
            met=hit["mean_us"] < 20,
            note=f"p50 {hit['p50_us']:.1f}, p99 {hit['p99_us']:.1f}",
        ),
        row(
            f"miss to a FunctionModel ({out['model_inputs']} samples)",
            miss["mean_us"],
            "µs/input",
            note=f"p50 {miss['p50_us']:.1f}, p99 {miss['p99_us']:.1f}; model answers at once",
        ),
        row(
            f"miss to a FunctionModel, patterns off ({out['samples']} samples)",
            miss_all["mean_us"],
            "µs/input",
            note=(
                f"p50 {miss_all['p50_us']:.1f}, p99 {miss_all['p99_us']:.1f};"
                " every sample asks the model"
            ),
        ),
    ]
    return {
        "name": "routing",
        "title": "3. Routing: IntentRouter.parse over router_samples.SAMPLE_INPUTS",
        "params": {"passes": passes},
        "rows": rows,
        "details": out,
    }
