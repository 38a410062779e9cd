"""Profiles of the hot paths with pyinstrument (in the ``bench`` extra).

``profile_per_task`` samples sequential three-step tasks (checkpoints on and off);
``profile_concurrency`` samples 1,000 concurrent tasks with 100 ms model calls;
``profile_serve`` samples ``skillrt serve``'s loop thread (its own process) under 50
keep-alive clients running a skill with no steps. Both report
the functions with the most self time, the share of time in a few areas we watch (SQLite
commits, pydantic, transitions, structlog, asyncio, the event loop waiting), and can save
pyinstrument's HTML report for a closer look.
"""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks._common import row, temp_dir
from benchmarks.bench_runtime import PROMPT, concurrency_runtime, make_runtime

__all__ = ["available", "profile_concurrency", "profile_per_task", "profile_serve"]

AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # (area, substrings of "function file"); the first match along a sample's stack wins,
    # searched from the leaf up, so a commit inside the checkpoint store counts as SQLite.
    ("event loop idle (select/epoll)", ("/selectors.py",)),
    ("SQLite execute/commit (fsync)", ("execute ", "commit ", "executescript ")),
    ("pydantic (dump/validate)", ("/pydantic/", "/pydantic_core/", "model_dump", "model_validate")),
    ("redaction (Redactor)", ("_io/logs.py", "_io/redaction.py")),
    ("transitions (state machine lib)", ("/transitions/",)),
    ("structlog", ("/structlog/",)),
    ("json", ("/json/",)),
    ("asyncio machinery", ("/asyncio/",)),
    ("HTTP (uvicorn, starlette, fastapi)", ("/uvicorn/", "/starlette/", "/fastapi/")),
)


def available() -> bool:
    try:
        import pyinstrument  # noqa: F401
    except ImportError:
        return False
    return True


_REPO = str(Path(__file__).resolve().parent.parent) + "/"


def _short(path: str) -> str:
    for marker in ("site-packages/", _REPO, "/lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1]
    return os.path.basename(path)


def _split(frame_info: str) -> tuple[str, str, str]:
    ident = frame_info.split("\x01", 1)[0]
    parts = ident.split("\x00")
    while len(parts) < 3:
        parts.append("")
    return parts[0], parts[1], parts[2]


_OWN = ("runtime/", "skills/", "benchmarks/", "/skillrt/")


def _area(frames: list[tuple[str, str, str]]) -> str:
    """The area a sample belongs to: the first library area met walking up from the leaf,
    or skillrt's own code when one of its frames comes first."""
    for func, path, _ in reversed(frames):
        text = f"{func} {path}"
        hit = next((name for name, needles in AREAS if any(n in text for n in needles)), None)
        if hit is not None:
            return hit
        if any(own in path for own in _OWN):
            return "skillrt's own code"
    return "other"


def summarise(session: Any, top: int = 12) -> dict[str, Any]:
    """Top functions by self time, and time by area, from a pyinstrument session."""
    self_time: dict[str, float] = defaultdict(float)
    incl_time: dict[str, float] = defaultdict(float)
    areas: dict[str, float] = defaultdict(float)
    total = 0.0
    for stack, seconds in session.frame_records:
        total += seconds
        if not stack:
            continue
        frames = [_split(f) for f in stack]
        func, path, line = frames[-1]
        self_time[f"{func} ({_short(path)}:{line})"] += seconds
        seen: set[str] = set()
        for f, p, _ in frames:
            key = f"{f} ({_short(p)})"
            if key not in seen:
                seen.add(key)
                incl_time[key] += seconds
        areas[_area(frames)] += seconds
    total = total or 1e-9

    def ranked(table: dict[str, float], n: int) -> list[dict[str, Any]]:
        items = sorted(table.items(), key=lambda kv: kv[1], reverse=True)[:n]
        return [
            {"frame": k, "seconds": round(v, 4), "share": round(v / total, 4)} for k, v in items
        ]

    return {
        "sampled_s": round(total, 4),
        "samples": session.sample_count,
        "top_self": ranked(self_time, top),
        "top_inclusive_skillrt": ranked(
            {k: v for k, v in incl_time.items() if "runtime/" in k}, top
        ),
        "areas": ranked(areas, len(areas)),
    }


def _profile(coro_fn: Any, html: Path | None) -> dict[str, Any]:
    """Run ``coro_fn(profiler)``; it starts and stops the profiler around the part to sample."""
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0002, async_mode="disabled")
    try:
        extra = asyncio.run(coro_fn(profiler))
    finally:
        if profiler.is_running:
            profiler.stop()
    session = profiler.last_session
    if session is None:
        raise RuntimeError("the profiler was never started")
    if html is not None:
        html.parent.mkdir(parents=True, exist_ok=True)
        html.write_text(profiler.output_html(), encoding="utf-8")
    summary = summarise(session)
    summary.update(extra or {})
    return summary


def _rows(title: str, summary: dict[str, Any], n: int = 6) -> list[dict[str, Any]]:
    rows = [
        row(f"{title}: {a['frame']}", a["share"] * 100, "% of samples")
        for a in summary["areas"][:n]
    ]
    rows += [
        row(f"{title}: top self {t['frame']}", t["share"] * 100, "% of samples")
        for t in summary["top_self"][:4]
    ]
    return rows


def profile_per_task(tasks: int = 300, html_dir: Path | None = None) -> dict[str, Any]:
    """Sample ``tasks`` sequential skillrt tasks, checkpoints on, then off."""
    results: dict[str, Any] = {}
    for label, checkpoints in (("checkpoints_on", True), ("checkpoints_off", False)):
        with temp_dir("profile") as root:

            async def run(
                profiler: Any, root: Path = root, checkpoints: bool = checkpoints
            ) -> dict[str, Any]:
                rt = make_runtime(root, checkpoints=checkpoints)
                await rt.initialize()
                await rt.process_input(PROMPT.format(i=-1))  # warm: first-use costs aside
                profiler.start()
                for i in range(tasks):
                    msg = await rt.process_input(PROMPT.format(i=i))
                    if msg.state != "COMPLETED":
                        raise RuntimeError(f"task {i}: {msg.state} {msg.content!r}")
                profiler.stop()
                await rt.close()
                return {"tasks": tasks}

            html = html_dir / f"per_task_{label}.html" if html_dir else None
            results[label] = _profile(run, html)
    rows = _rows("on", results["checkpoints_on"]) + _rows("off", results["checkpoints_off"])
    return {
        "name": "profile_per_task",
        "title": "Profile: per-task path (pyinstrument)",
        "params": {"tasks": tasks},
        "rows": rows,
        "details": results,
    }


def profile_concurrency(
    tasks: int = 1000, delay_s: float = 0.1, html_dir: Path | None = None
) -> dict[str, Any]:
    """Sample ``tasks`` concurrent tasks with three model calls of ``delay_s`` each."""
    results: dict[str, Any] = {}
    for label, checkpoints in (("checkpoints_on", True), ("checkpoints_off", False)):
        with temp_dir("profile-conc") as root:

            async def run(
                profiler: Any, root: Path = root, checkpoints: bool = checkpoints
            ) -> dict[str, Any]:
                rt = concurrency_runtime(root, tasks, delay_s, checkpoints)
                await rt.initialize()
                loop = asyncio.get_running_loop()
                profiler.start()
                started = loop.time()
                msgs = await asyncio.gather(
                    *(rt.process_input(PROMPT.format(i=i)) for i in range(tasks))
                )
                wall = loop.time() - started
                profiler.stop()
                await rt.close()
                done = sum(1 for m in msgs if m.state == "COMPLETED")
                return {"tasks": tasks, "completed": done, "wall_s": round(wall, 3)}

            html = html_dir / f"concurrency_{label}.html" if html_dir else None
            results[label] = _profile(run, html)
    rows = _rows("on", results["checkpoints_on"]) + _rows("off", results["checkpoints_off"])
    return {
        "name": "profile_concurrency",
        "title": f"Profile: {tasks} concurrent tasks (pyinstrument)",
        "params": {"tasks": tasks, "delay_s": delay_s},
        "rows": rows,
        "details": results,
    }


def profile_serve(
    clients: int = 50, seconds: float = 5.0, html_dir: Path | None = None
) -> dict[str, Any]:
    """Sample ``skillrt serve``'s loop thread while ``clients`` keep-alive clients run a skill
    with no steps (``POST /v1/skills/Nothing/run``) for ``seconds``."""
    from benchmarks.bench_serve import profile_served

    summary = profile_served(clients, seconds)
    html, text = summary.pop("html"), summary.pop("text")
    if html_dir is not None:
        html_dir.mkdir(parents=True, exist_ok=True)
        (html_dir / "serve.html").write_text(html, encoding="utf-8")
        (html_dir / "serve.txt").write_text(text, encoding="utf-8")
    rows = _rows("serve", summary, n=8)
    rows += [
        row(f"serve: top skillrt frame {t['frame']}", t["share"] * 100, "% of samples")
        for t in summary["top_inclusive_skillrt"][:6]
    ]
    load = summary["load"]
    rows.append(
        row(
            "serve: requests while sampled",
            load["requests"],
            "",
            note=f"{load['rps']:.0f} req/s under the profiler (not the benchmark's figure)",
        )
    )
    return {
        "name": "profile_serve",
        "title": f"Profile: skillrt serve, {clients} clients, a skill with no steps (pyinstrument)",
        "params": {"clients": clients, "seconds": seconds},
        "rows": rows,
        "details": summary,
    }
