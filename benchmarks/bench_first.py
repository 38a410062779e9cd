"""How long a process's first requests hold the event loop (``python -m benchmarks --only
first_input``).

What is built once per process (routing's table and classifier, each kind of text's index)
was built on the event loop by the first request that needed it, and every other task and
request on that loop waited: 0.2 s at the first routed input of a Python host or ``skillrt
mcp``, 20-60 ms at the first Chinese request. Each case runs in a fresh process (a child),
with a ticker on the loop (a 1 ms sleep, again and again) whose longest gap is the longest
hold of the loop:

- **no warm_up**: the first routed input of a runtime whose host never called ``warm_up``;
- **after warm_up**: the first input once ``warm_up`` has built routing's tables;
- **a new kind of text**: a Chinese request after an English one (its index not built yet).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import row, temp_dir

__all__ = ["first_inputs"]

_ENGLISH = "summarize posts/a.md"
_CHINESE = "总结一下 posts/a.md"


async def _held(call: Any) -> tuple[float, float]:
    """(seconds ``call`` took, the longest gap of a 1 ms ticker on the loop meanwhile)."""
    gaps: list[float] = []
    stop = asyncio.Event()

    async def tick() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0.01)  # the ticker running
    gaps.clear()
    started = time.perf_counter()
    await call
    took = time.perf_counter() - started
    await asyncio.sleep(0.002)  # the gap that ended with the call, counted
    stop.set()
    await ticker
    return took, max(gaps, default=0.0)


async def _child(root: Path, warm: bool) -> dict[str, float]:
    from skillrt import AgentRuntime, load_config
    from skillrt.testing import FunctionModel

    (root / "posts").mkdir(parents=True, exist_ok=True)
    (root / "posts" / "a.md").write_text("# A\n\nA post about Rust.\n", encoding="utf-8")
    config = load_config(content_root=root, state_dir=root / ".skillrt", log_level="warning")
    rt = AgentRuntime(config, llm=FunctionModel(lambda m, o: "A summary.", model="bench"))
    await rt.initialize()
    if warm:
        rt.warm_up()
        warming = rt._warming  # its future: the tables built before the input comes
        if warming is not None:
            await asyncio.wrap_future(warming)
    first_s, first_hold = await _held(rt.process_input(_ENGLISH))
    out = {"first_s": first_s, "first_hold_s": first_hold}
    if not warm:  # Chinese next, in a session of its own (no post in focus)
        other = {"session_id": "another"}
        kind_s, kind_hold = await _held(rt.process_input(_CHINESE, other))
        out |= {"new_kind_s": kind_s, "new_kind_hold_s": kind_hold}
    await rt.close()
    return out


def _run_child(warm: bool) -> dict[str, float]:
    with temp_dir("first-input") as root:
        cmd = [
            sys.executable,
            "-m",
            "benchmarks.bench_first",
            str(root),
            "warm" if warm else "cold",
        ]
        repo = str(Path(__file__).resolve().parent.parent)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [repo, os.environ.get("PYTHONPATH")])),
        }
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"first-input child failed:\n{done.stderr[-3000:]}")
        result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
        return result


def first_inputs(runs: int = 3) -> dict[str, Any]:
    """The longest hold of the event loop at a process's first requests, medians of ``runs``
    fresh processes each."""
    cold = [_run_child(False) for _ in range(runs)]
    warm = [_run_child(True) for _ in range(runs)]

    def ms(results: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in results) * 1000

    rows = [
        row(
            "first routed input, no warm_up: the loop's longest hold",
            ms(cold, "first_hold_s"),
            "ms",
            note=f"its reply after {ms(cold, 'first_s'):.0f} ms: routing's tables built in a "
            "thread meanwhile (the code before stop 42 held the loop 190 ms)",
        ),
        row(
            "first routed input after warm_up: the loop's longest hold",
            ms(warm, "first_hold_s"),
            "ms",
            note=f"its reply after {ms(warm, 'first_s'):.1f} ms (before stop 42: 18 ms held, its "
            "kind of text's index built again by the runtime's router)",
        ),
        row(
            "a new kind of text (Chinese after English): the loop's longest hold",
            ms(cold, "new_kind_hold_s"),
            "ms",
            note=f"its reply after {ms(cold, 'new_kind_s'):.0f} ms: its index built in a thread "
            "(before stop 42: 79 ms held)",
        ),
    ]
    return {
        "name": "first_input",
        "title": f"The first requests of a process (median of {runs} processes each)",
        "params": {"runs": runs},
        "rows": rows,
        "details": {"cold": cold, "warm": warm},
    }


if __name__ == "__main__":
    result = asyncio.run(_child(Path(sys.argv[1]), sys.argv[2] == "warm"))
    print(json.dumps(result))
