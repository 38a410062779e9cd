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
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchmarks import bench_intents
from benchmarks._common import percentile, row

__all__ = ["EVAL_PATH", "load_eval", "routing", "routing_eval", "sample_inputs"]

EVAL_PATH = Path(__file__).resolve().parent.parent / "tests" / "data" / "routing_eval.tsv"
"""The routing evaluation set: requests as people phrase them, with the intent expected."""

_EVAL_CONTEXTS: dict[str, dict[str, Any] | None] = {
    "-": None,
    "selection": {"current_file": "posts/open.md", "selected_text": "fn main() {}"},
    "file": {"current_file": "posts/open.md"},
    # A follow-up: the session's focus, passed by the runtime as the open file.
    "focus": {"current_file": "posts/open.md", "focus": "posts/open.md"},
    # A browsing follow-up: the session's last task was the browsing skill's (the benchmark's
    # router names the skill serving each intent bench_<intent>).
    "browse": {"last_skill": "bench_browse"},
}


def _kind(context: dict[str, Any] | None) -> str | None:
    """Which kind of follow-up a row is: ``followup`` (a post in focus), ``browse`` (after a
    Browse task), or None (a request on its own)."""
    if not context:
        return None
    if context.get("focus"):
        return "followup"
    if context.get("last_skill") == "bench_browse":
        return "browse"
    return None


class _NoParams(BaseModel):
    pass


def sample_inputs() -> list[tuple[str, dict[str, Any] | None]]:
    """(text, context) pairs from ``skillrt.skills.samples.SAMPLE_INPUTS`` (no context)."""
    from skillrt.skills.samples import SAMPLE_INPUTS

    return [(text, None) for text, _intent in SAMPLE_INPUTS]


def _router(llm: Any, *, patterns: bool = True, classifier: bool = True) -> Any:
    """A router with a skill for every intent of the table; without ``patterns`` the regex
    table is emptied (same intents), so every input goes to the model; without
    ``classifier`` the trained classifier is left out (the table and the model alone)."""
    from skillrt import IntentRouter, Skill, SkillResult
    from skillrt._routing.router import IntentTable

    async def noop(ctx: Any, params: _NoParams) -> SkillResult:
        return SkillResult()

    table = IntentTable.default()
    if not patterns:
        table = IntentTable(table.specs, [], "benchmark: intents without patterns")
    router = IntentRouter(
        llm, patterns=table, cache_size=4096, classifier="packaged" if classifier else None
    )
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


def load_eval(path: Path = EVAL_PATH) -> list[tuple[str, str, dict[str, Any] | None, str]]:
    """(split, expected intent, context, text) per row of the evaluation set."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("split\t"):
            continue
        split, intent, context, text = line.split("\t", 3)
        rows.append((split, intent, _EVAL_CONTEXTS[context], text))
    return rows


async def _routing_eval(path: Path, passes: int) -> dict[str, Any]:
    rows = load_eval(path)
    router = _router(None, classifier=False)
    by_split: dict[str, list[int]] = {}
    misses: dict[str, list[tuple[str, str, str]]] = {}
    for split, expected, context, text in rows:
        got = (await router.parse(text, context)).type
        kind = _kind(context)
        groups = [split] if kind is None else [split, kind, f"{split}_{kind}"]
        for group in groups:
            by_split.setdefault(group, []).append(int(got == expected))
        if got != expected:
            misses.setdefault(split, []).append((text, expected, got))
    times: list[int] = []
    with_classifier: list[int] = []
    runtime_router = _router(None)  # as the runtime routes: the table and the classifier
    clock = time.perf_counter_ns
    for _ in range(passes):
        for _split, _expected, context, text in rows:
            router.cache_clear()  # every parse on an empty cache
            t0 = clock()
            await router.parse(text, context)
            times.append(clock() - t0)
            runtime_router.cache_clear()
            t0 = clock()
            await runtime_router.parse(text, context, ask_model=False)
            with_classifier.append(clock() - t0)
    accuracy = {k: sum(v) / len(v) for k, v in by_split.items()}
    everything = by_split.get("tune", []) + by_split.get("held", [])
    accuracy["all"] = sum(everything) / len(everything)
    counts = {k: len(v) for k, v in by_split.items()} | {"all": len(everything)}
    return {
        "accuracy": accuracy,
        "counts": counts,
        "misses": misses,
        "stats": _stats(times),
        "stats_classifier": _stats(with_classifier),
    }


def routing_eval(path: Path = EVAL_PATH, passes: int = 20) -> dict[str, Any]:
    """Accuracy of the regex path alone (no model) on the evaluation set, and µs per input
    with an empty cache, for the table alone (``stats``) and as the runtime routes, the table
    and the classifier (``stats_classifier``). ``accuracy`` and ``counts`` are keyed by group:
    ``all``, ``tune``, ``held``, the follow-ups ``followup`` and ``browse`` (see ``_kind``),
    and each of those within a split (``held_followup``, ``tune_browse``, ...)."""
    return asyncio.run(_routing_eval(path, passes))


def _accuracy_note(acc: dict[str, float], counts: dict[str, int]) -> str:
    """The figures of the groups that matter, as "tuned rows 100.0% of 273, ..."."""
    names = {
        "tune": "tuned rows",
        "held": "held-out rows",
        "held_followup": "held-out follow-ups",
        "held_browse": "held-out browsing follow-ups",
    }
    return ", ".join(
        f"{label} {100 * acc[key]:.1f}% of {counts[key]}"
        for key, label in names.items()
        if key in counts
    )


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
    router = _router(model, classifier=False)

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
    llm_only = _router(model, patterns=False, classifier=False)
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


def _intent_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows for the table, the classifier and the questions together (``bench_intents``)."""
    out = []
    for name, r in result.items():
        if name in ("safety", "danger", "cost"):
            continue
        fresh = name.startswith("fresh") and not name.endswith("(trained on)")
        graded = fresh or name.startswith("held")  # the follow-up target's sets
        out.append(
            row(
                f"{name}: right at once, no model ({r['rows']} requests)",
                100 * r["at_once"],
                "%",
                target=">= 90" if fresh else None,
                met=r["at_once"] >= 0.9 if fresh else None,
                note=f"asked on {100 * r['asked']:.1f}%",
            )
        )
        out.append(
            row(
                f"{name}: right after at most one question",
                100 * r["after_one"],
                "%",
                target=">= 97" if fresh else None,
                met=r["after_one"] >= 0.97 if fresh else None,
            )
        )
        out.append(
            row(
                f"{name}: follow-ups with a focus, at once ({r['followup_rows']})",
                100 * r["followups"],
                "%",
                target=">= 90" if graded else None,
                met=r["followups"] >= 0.9 if graded else None,
            )
        )
    worst = max(result["safety"].values())
    out.append(
        row(
            "dangerous routes without a yes (every set, each model and trust)",
            worst,
            "routes (worst case)",
            target="0",
            met=worst == 0,
            note=", ".join(f"{k} {v}" for k, v in result["safety"].items()),
        )
    )
    cost = result["cost"]
    out.append(
        row(
            f"classifier alone ({cost['requests']} requests)",
            cost["ms_per_request"],
            "ms/request",
            target="<= 2",
            met=cost["ms_per_request"] <= 2,
            note=f"weights file {cost['model_kib']:.0f} KiB in the wheel",
        )
    )
    return out


def routing(passes: int = 200, eval_passes: int = 20) -> dict[str, Any]:
    """µs per input for the regex path, a cache hit and a miss that asks a FunctionModel; the
    regex path's accuracy on the evaluation set (``tests/data/routing_eval.tsv``)."""
    out = asyncio.run(_routing(passes))
    ev = routing_eval(passes=eval_passes)
    acc, counts, ev_stats = ev["accuracy"], ev["counts"], ev["stats"]
    s = out["stats"]
    regex, hit, miss, miss_all = s["regex"], s["cache_hit"], s["model_miss"], s["model_miss_all"]
    rows = [
        row(
            f"regex path accuracy, evaluation set ({counts['all']} inputs)",
            100 * acc["all"],
            "%",
            target=">= 95",
            met=acc["all"] >= 0.95,
            note=_accuracy_note(acc, counts),
        ),
        row(
            f"regex path, evaluation set ({counts['all']} inputs, empty cache)",
            ev_stats["mean_us"],
            "µs/input",
            target="<= 20",
            met=ev_stats["mean_us"] <= 20,
            note=f"p50 {ev_stats['p50_us']:.1f}, p99 {ev_stats['p99_us']:.1f}",
        ),
        row(
            f"table and classifier, evaluation set ({counts['all']} inputs, empty cache)",
            ev["stats_classifier"]["mean_us"],
            "µs/input",
            note=(
                f"p50 {ev['stats_classifier']['p50_us']:.1f},"
                f" p99 {ev['stats_classifier']['p99_us']:.1f}; as the runtime routes, no model"
            ),
        ),
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
    intents = bench_intents.evaluate()
    rows += _intent_rows(intents)
    return {
        "name": "routing",
        "title": "3. Routing: IntentRouter.parse over router_samples.SAMPLE_INPUTS",
        "params": {"passes": passes},
        "rows": rows,
        "details": {**out, "eval": ev, "intents": intents},
    }
