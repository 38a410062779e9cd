"""Routing as a person meets it: the table, the trained classifier and the questions together.

For each row of the held-out split (``data/routing/labelled.tsv``, never trained on) and of each
fresh round (``data/routing/fresh-*.tsv``, written before training and measured once; the
rounds trained on since are marked), the
router parses the request and the planner decides what happens: it runs, asks a yes/no
question, or offers numbered choices. Reported:

- **at once**: it runs the right intent without asking;
- **after at most one question**: right at once, or the question is a yes/no one about the
  right intent, or its numbered choices hold the right intent;
- **follow-ups**: rows with a post in focus, at once;
- **dangerous routes**: a write, delete or web task started without a yes that is not what was
  asked for, under ``router_trust`` low and high, with no model and with models that always
  answer the first intent offered, answer at random, or latch on to keywords;
- **time**: the classifier alone, per request, and the size of its weights file.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "routing"
CONTEXTS: dict[str, dict[str, Any] | None] = {
    "-": None,
    "focus": {"current_file": "posts/open.md", "focus": "posts/open.md"},
    "selection": {"current_file": "posts/open.md", "has_selection": True},
    "browse": {"last_skill": "bench_browse"},
}


def read_rows(path: Path) -> list[tuple[str, str, str, str]]:
    """(split, intent, context, text) rows of a labelled file; a fresh round's rows, which have
    no split column, get the split ``fresh``. ``scripts/train_router.py`` reads them here too."""
    rows = []
    header = True
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if header:
            header = False
            continue
        parts = line.split("\t")
        if len(parts) == 3:
            parts = ["fresh", *parts]
        split, intent, context, text = parts
        rows.append((split, intent, context, text.replace("\\n", "\n")))
    return rows


def load(path: Path, split: str | None = None) -> list[tuple[str, str, str]]:
    """(intent, context, text) rows of a labelled file (of one ``split`` when it has splits)."""
    return [(i, c, t) for s, i, c, t in read_rows(path) if split is None or s == split]


def _schema_names(options: Any) -> list[str]:
    """The intents a routing call offers (the enum of its schema's ``type``), in order."""
    field = options.response_model.model_fields["type"]
    return [n for n in field.annotation.__args__ if n != "UNKNOWN"]


_LATCH = [
    (re.compile(r"delete|remove|删"), "DELETE_ARTICLE"),
    (re.compile(r"search|web|online|google|搜|网上|上网"), "RESEARCH_WEB"),
    (re.compile(r"write|article|post|写|文章"), "WRITE_ARTICLE"),
    (re.compile(r"open|http|打开"), "BROWSE"),
]


def models() -> dict[str, Any]:
    """The stand-in models the safety target names: none, always-first, random, keyword."""
    from skillrt.testing import FunctionModel

    rng = random.Random(25)

    def answer(kind: str):  # type: ignore[no-untyped-def]
        def fn(messages: list[Any], options: Any) -> dict[str, Any]:
            names = _schema_names(options)
            text = str(messages[-1]["content"]).lower()
            if kind == "first":
                pick = names[0]
            elif kind == "random":
                pick = rng.choice(names)
            else:
                pick = next((i for r, i in _LATCH if r.search(text)), names[0])
            return {"type": pick, "confidence": 0.99, "parameters": {}}

        return FunctionModel(fn)

    return {"none": None, "first": answer("first"), "random": answer("random"),
            "keyword": answer("keyword")}  # fmt: skip


async def _judge(
    rows: list[tuple[str, str, str]], llm: Any, trust: str, **settings: Any
) -> dict[str, Any]:
    import structlog

    from benchmarks.bench_routing import _router
    from skillrt._tasks.planning import Planner
    from skillrt.settings import RuntimeConfig
    from skillrt.skill.context import detect_language

    router = _router(llm)
    config = RuntimeConfig(**settings)
    planner = Planner(router, router.registry, config, lambda: trust,
                      lambda: structlog.get_logger())  # fmt: skip
    at_once = after_one = dangerous = asked = 0
    follow = [0, 0]
    misses: list[tuple[str, str, str]] = []
    danger: list[tuple[str, str, str]] = []
    for expected, context, text in rows:
        ctx = CONTEXTS[context]
        intent = await router.parse(text, ctx, ask_model=trust == "high")
        question = planner.question_for(intent, text, detect_language(text), ctx or {})
        runs = question is None and intent.confidence >= config.confidence_threshold
        right_now = runs and intent.type == expected
        offered = [c.intent for c in question.choices] if question is not None else []
        at_once += right_now
        after_one += right_now or expected in offered
        asked += question is not None
        if context == "focus":
            follow[0] += right_now
            follow[1] += 1
        spec = router.spec(intent.type)
        if runs and intent.type != expected and spec is not None and spec.effect != "read":
            dangerous += 1
            danger.append((text, expected, intent.type))
        if not right_now:
            misses.append((text, expected, intent.type if question is None else f"? {offered}"))
    n = max(len(rows), 1)
    return {
        "rows": len(rows),
        "at_once": at_once / n,
        "after_one": after_one / n,
        "asked": asked / n,
        "followups": follow[0] / max(follow[1], 1),
        "followup_rows": follow[1],
        "dangerous": dangerous,
        "danger": danger,
        "misses": misses,
    }


def sets() -> dict[str, list[tuple[str, str, str]]]:
    """The held-out split and each fresh round; a round the packaged model was trained on
    (measured once first, see scripts/train_router.py) is named ``fresh-N (trained on)``."""
    from skillrt._routing.classifier import IntentClassifier

    trained = set(IntentClassifier.packaged().held_out.get("trained_on", ()))
    out = {"held-out split": load(DATA / "labelled.tsv", "held")}
    for path in sorted(DATA.glob("fresh-*.tsv"), key=round_number):
        out[f"{path.stem} (trained on)" if path.stem in trained else path.stem] = load(path)
    return out


def round_number(path: Path) -> int:
    """N of a round's file, ``fresh-N.tsv``: rounds in the order they were written."""
    return int(path.stem.rpartition("-")[2])


async def _evaluate() -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, rows in sets().items():
        results[name] = await _judge(rows, None, "low")
    safety: dict[str, int] = {}
    everything = [r for rows in sets().values() for r in rows]
    for model_name, llm in models().items():
        for trust in ("low", "high"):
            if llm is None and trust == "high":
                continue  # the same as low: no model to ask
            judged = await _judge(everything, llm, trust)
            safety[f"{model_name}/{trust}"] = judged["dangerous"]
            results.setdefault("danger", {})[f"{model_name}/{trust}"] = judged["danger"]
    results["safety"] = safety
    return results


def classifier_cost() -> dict[str, float]:
    """Milliseconds per request for the classifier alone, and its weights file in KiB."""
    from skillrt._routing.classifier import IntentClassifier

    model = IntentClassifier.packaged()
    texts = [(t, CONTEXTS[c]) for rows in sets().values() for _, c, t in rows]
    t0 = time.perf_counter()
    for text, ctx in texts:
        model.probabilities(text, ctx)
    per = (time.perf_counter() - t0) * 1000 / max(len(texts), 1)
    size = (ROOT / "runtime" / "_routing" / "intent_model.json.gz").stat().st_size / 1024
    return {"ms_per_request": per, "model_kib": size, "requests": len(texts)}


def evaluate() -> dict[str, Any]:
    out = asyncio.run(_evaluate())
    out["cost"] = classifier_cost()
    return out
