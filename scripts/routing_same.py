"""Check that two versions of the package route every request the same way.

    python scripts/routing_same.py                    # main against this checkout
    python scripts/routing_same.py --base REV --head REV_OR_DIR

A change meant to make routing cheaper must change no decision. This runs the whole routing
pipeline, as the runtime runs it for one input, over every request in ``data/routing/`` (the
template rows of every split, every fresh round, the hand-written ``written-*.tsv``), the
evaluation set ``tests/data/routing_eval.tsv`` and the router samples, on both versions, and
compares what each produced, exactly:

- ``refusal`` and ``IntentRouter.screen`` (what ``process_input`` checks before a task);
- ``IntentRouter.parse`` (the intent, its confidence, parameters, source, language, skill);
- ``Planner.question_for`` (no question, a yes/no question or numbered choices: their text and
  each choice's intent, parameters and label), and what the planner does then;
- the classifier's probabilities themselves, to the last bit (routing rounds them).

Each request is run with the context it was written for, and again with every other context
(none, a post in focus, a selection, an open file, right after a browsing task) on the
benchmark's router; under ``router_trust`` low and high with no model; on a router without the
classifier; on the built-in skills as the runtime registers them; with a plugin's intents
registered (one with patterns, one the classifier never saw); and with two stand-in models
that always answer (the first candidate, a keyword match). Requests go through in file order
with the runtime's default cache, so cache hits are compared too.

Each side is the package as committed at a revision (``git archive``) or as it stands in a
checkout folder, imported from a copy laid out as installed (``skillrt`` with its ``config``
and ``skills`` inside), in its own process. Prints the number of outcomes compared and each
difference; exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "routing"
EVAL = ROOT / "tests" / "data" / "routing_eval.tsv"
_PARTS = ("runtime", "config", "skills")  # package-dir: skillrt, skillrt.config, skillrt.skills

CONTEXTS: dict[str, dict[str, Any] | None] = {
    "-": None,
    "focus": {"current_file": "posts/open.md", "focus": "posts/open.md"},
    "selection": {"current_file": "posts/open.md", "has_selection": True},
    "selected": {"current_file": "posts/open.md", "selected_text": "fn main() {}"},
    "file": {"current_file": "posts/open.md"},
    "browse": {"last_skill": "<the browsing skill>"},  # named per router, see _context
}
_EVAL_CONTEXT = {"selection": "selected"}  # the evaluation set's selection carries its text


# --- the requests -------------------------------------------------------------------------------


def requests() -> list[tuple[str, str]]:
    """(context, text) of every request: data/routing/, the evaluation set, the samples."""
    sys.path.insert(0, str(ROOT))  # the labelled files are read as the benchmark reads them
    from benchmarks.bench_intents import read_rows

    found: list[tuple[str, str]] = []
    for path in sorted(DATA.glob("*.tsv")):
        found.extend((context, text) for _split, _intent, context, text in read_rows(path))
    for line in EVAL.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("split\t"):
            continue
        _split, _intent, context, text = line.split("\t", 3)
        found.append((_EVAL_CONTEXT.get(context, context), text))
    from skillrt.skills.samples import SAMPLE_INPUTS  # this checkout's, for both sides

    found.extend(("-", text) for text, _intent in SAMPLE_INPUTS)
    return found


# --- one side: run the pipeline, write each outcome ---------------------------------------------


def _routers() -> dict[str, Any]:
    """The routers compared, by name."""
    import re

    from pydantic import BaseModel

    from skillrt import Intent, IntentRouter, Skill, SkillResult
    from skillrt._routing.intent_table import IntentTable
    from skillrt.skills import builtin_skills

    class NoParams(BaseModel):
        topic: str = ""

    async def noop(ctx: Any, params: NoParams) -> SkillResult:
        return SkillResult()

    def bench(classifier: bool) -> IntentRouter:
        router = IntentRouter(None, classifier="packaged" if classifier else None)
        for intent in IntentTable.default().specs:
            router.register_skill(
                Skill(
                    name=f"bench_{intent.lower()}",
                    description=intent,
                    params=NoParams,
                    fn=noop,
                    intents=[intent],
                )
            )
        return router

    builtin = IntentRouter(None)
    for s in builtin_skills():
        builtin.register_skill(s)
    plugin = bench(True)
    book = Intent(
        "BOOK_MEETING",
        description="Book a meeting in the calendar",
        effect="write",
        label=("预约会议：{what}", "Book a meeting: {what}"),
        names=("book", "预约"),
        examples=("book a meeting with Ana on Friday",),
        cues=(r"\bmeetings?\b", "会议"),
        patterns=(r"\bbook (?:a )?meeting (?:about|on) (?P<topic>.+)",),
        params=("topic",),
        offered=5,
    )
    note = Intent(
        "TAKE_NOTE",
        description="Write a note down",
        effect="write",
        cues=(r"\bnotes?\b", r"\bremember\b", "记下"),
        params=("topic",),
        text_param="topic",
    )
    plugin.register_skill(
        Skill(name="Calendar", description="calendar", params=NoParams, fn=noop, declares=[book])
    )
    plugin.register_skill(
        Skill(name="Notes", description="notes", params=NoParams, fn=noop, declares=[note])
    )
    plugin.register_skill(
        Skill(
            name="Weather",
            description="the weather",
            params=NoParams,
            fn=noop,
            intents=["WEATHER"],
            pattern=re.compile(r"\bweather in (?P<topic>\w+)", re.I),
        )
    )
    return {
        "bench": bench(True),
        "bench-no-classifier": bench(False),
        "builtin": builtin,
        "plugin": plugin,
    }


def _models() -> dict[str, Any]:
    """Stand-in models that always answer: the first intent offered, or one its keywords name."""
    import re

    from skillrt.testing import FunctionModel

    latch = [
        (re.compile(r"delete|remove|删"), "DELETE_ARTICLE"),
        (re.compile(r"search|web|online|google|搜|网上|上网"), "RESEARCH_WEB"),
        (re.compile(r"write|article|post|写|文章"), "WRITE_ARTICLE"),
        (re.compile(r"open|http|打开"), "BROWSE"),
        (re.compile(r"meeting|note|weather"), "TAKE_NOTE"),
    ]

    def answer(kind: str) -> Any:
        def fn(messages: list[Any], options: Any) -> dict[str, Any]:
            field = options.response_model.model_fields["type"]
            names = [n for n in field.annotation.__args__ if n != "UNKNOWN"]
            text = str(messages[-1]["content"]).lower()
            pick = names[0]
            if kind == "keyword":
                pick = next((i for r, i in latch if r.search(text)), names[0])
            return {"type": pick, "confidence": 0.99, "parameters": {"topic": text[-40:]}}

        return FunctionModel(fn)

    return {"first": answer("first"), "keyword": answer("keyword")}


def _context(name: str, router: Any) -> dict[str, Any] | None:
    context = CONTEXTS[name]
    if context is not None and "last_skill" in context:
        browsing = [s.name for s in router.skills if "BROWSE" in s.intents]
        context = {"last_skill": browsing[0] if browsing else "none"}
    return context


async def _outcome(planner: Any, router: Any, raw: str, ctx: Any, ask: bool) -> list[Any]:
    """Everything the runtime decides for one input before a skill runs, as plain data."""
    from skillrt._routing.inputs import as_dict, clean_text, refusal
    from skillrt._routing.router import CHAT
    from skillrt._tasks.planning import route_context
    from skillrt.skill.context import detect_language

    text = clean_text(raw)
    context = as_dict("context", ctx)
    lang = detect_language(text)
    refused = refusal(raw, text, planner.config.max_input_chars, router, lang)
    if refused is not None:
        return ["refused", list(refused)]
    screened = router.screen(text, route_context(context))
    if screened == "word" or (screened == "chat" and not router.handles(CHAT)):
        return ["screened", screened]
    intent = await router.parse(text, route_context(context), ask_model=ask)
    out: list[Any] = ["parsed", screened, intent.model_dump(mode="json")]
    if intent.type == CHAT and not router.handles(CHAT):
        return [*out, "small talk"]
    question = planner.question_for(intent, text, lang, context)
    if question is None and intent.confidence < planner.config.confidence_threshold:
        return [*out, "rephrase", router.rephrase_message(text)]
    if question is not None:
        choices = [[c.intent, c.parameters, c.label, list(c.names)] for c in question.choices]
        out += ["ask", question.kind, question.text, choices]
    skill = router.find_skill(intent)
    return [*out, "run", skill.name if skill is not None else None]


async def _emit(cases: list[tuple[str, str]], out_path: Path) -> None:
    import structlog

    import skillrt
    from skillrt._tasks.planning import Planner
    from skillrt.settings import RuntimeConfig

    print(f"skillrt from {Path(skillrt.__file__).parent}", file=sys.stderr)
    routers = _routers()
    models = _models()
    runs: list[tuple[str, str, str | None, bool]] = [  # router, trust, model, every context
        ("bench", "low", None, True),
        ("bench", "high", None, False),
        ("bench-no-classifier", "low", None, False),
        ("builtin", "low", None, False),
        ("builtin", "high", None, False),
        ("plugin", "low", None, False),
        ("plugin", "high", None, False),
        ("bench", "high", "first", False),
        ("plugin", "high", "keyword", False),
    ]
    config = RuntimeConfig()
    t0 = time.process_time()
    with out_path.open("w", encoding="utf-8") as out:
        for name, trust, model_name, every in runs:
            router = routers[name]
            router.cache_clear()
            router.llm = models[model_name] if model_name else None
            planner = Planner(
                router, router.registry, config, lambda t=trust: t, structlog.get_logger
            )
            # As Planner.plan decides whether a model may be asked.
            ask = trust == "high" or router.classifier is None or bool(router.unclassified)
            for i, (context_name, text) in enumerate(cases):
                names = list(CONTEXTS) if every else [context_name]
                for cname in names:
                    got = await _outcome(planner, router, text, _context(cname, router), ask)
                    key = f"{name}/{trust}/{model_name}/{i}/{cname}"
                    out.write(json.dumps([key, got], ensure_ascii=False, sort_keys=True) + "\n")
        # The classifier's probabilities themselves (routing rounds them to 3 places).
        from skillrt._routing.classifier import IntentClassifier

        model = IntentClassifier.packaged()
        for i, (_context_name, text) in enumerate(cases):
            for cname in ("-", "focus", "selected", "browse"):
                ctx = {"browsing": True} if cname == "browse" else CONTEXTS[cname]
                probs = model.probabilities(text, ctx)
                key = f"classifier/{i}/{cname}"
                out.write(json.dumps([key, probs], ensure_ascii=False, sort_keys=True) + "\n")
    where = Path(skillrt.__file__).parent
    print(f"{where}: {time.process_time() - t0:.1f} s of CPU", file=sys.stderr)


# --- the two sides ------------------------------------------------------------------------------


def _layout(source: Path, dest: Path) -> Path:
    """``dest/skillrt``: the package as installed, from runtime/, config/ and skills/."""
    pkg = dest / "skillrt"
    shutil.rmtree(dest, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(source / "runtime", pkg, ignore=ignore)
    shutil.copytree(source / "config", pkg / "config", ignore=ignore)
    shutil.copytree(source / "skills", pkg / "skills", ignore=ignore)
    return dest


def _side(spec: str, work: Path) -> Path:
    """A folder to put first on sys.path for ``spec``: a checkout folder, or a git revision."""
    if Path(spec).is_dir():
        return _layout(Path(spec), work / "site")
    shutil.rmtree(work / "tree", ignore_errors=True)
    command = ["git", "-C", str(ROOT), "archive", "--format=tar", spec, *_PARTS]
    # git, found on PATH, with this script's own arguments
    archive = subprocess.run(command, check=True, capture_output=True).stdout  # noqa: S603
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(work / "tree", filter="data")
    return _layout(work / "tree", work / "site")


def _run_side(
    label: str, spec: str, work: Path, cases: Path, limit: int
) -> subprocess.Popen[bytes]:
    site = _side(spec, work / label)
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONHASHSEED": "0"}
    out = work / f"{label}.jsonl"
    cmd = [sys.executable, __file__, "--emit", str(cases), "--out", str(out), "--limit", str(limit)]
    return subprocess.Popen(cmd, env=env)  # noqa: S603 (this script, run on one side)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main", help="a revision or a checkout folder")
    parser.add_argument("--head", default=str(ROOT), help="a revision or a checkout folder")
    parser.add_argument("--limit", type=int, default=10**9, help="only the first N requests")
    parser.add_argument("--keep", help="keep both sides' outcomes in this folder")
    parser.add_argument("--emit", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.emit:
        cases = json.loads(Path(args.emit).read_text(encoding="utf-8"))[: args.limit]
        asyncio.run(_emit(cases, Path(args.out)))
        return 0
    with tempfile.TemporaryDirectory(prefix="routing-same-") as tmp:
        work = Path(args.keep) if args.keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        cases = work / "cases.json"
        cases.write_text(json.dumps(requests(), ensure_ascii=False), encoding="utf-8")
        sides = {"base": args.base, "head": args.head}
        procs = {k: _run_side(k, spec, work, cases, args.limit) for k, spec in sides.items()}
        if any(p.wait() != 0 for p in procs.values()):
            print("a side failed to run", file=sys.stderr)
            return 2
        base = (work / "base.jsonl").read_text(encoding="utf-8").splitlines()
        head = (work / "head.jsonl").read_text(encoding="utf-8").splitlines()
        differ = [(a, b) for a, b in zip(base, head, strict=False) if a != b]
        if len(base) != len(head):
            print(f"outcomes: {len(base)} on {args.base}, {len(head)} on {args.head}")
        for a, b in differ[:20]:
            print(f"- {a}\n+ {b}")
        print(
            f"{len(base)} outcomes of {len(json.loads(cases.read_text(encoding='utf-8')))} "
            f"requests compared, {args.base} against {args.head}: {len(differ)} differ"
        )
        return 1 if differ or len(base) != len(head) else 0


if __name__ == "__main__":
    sys.exit(main())
