"""The embedded model through its worker process against the same engine in-process.

The ``local`` provider runs llama.cpp in a worker process (``skillrt.llm.llama_worker``) and
reads its tokens over a pipe; the target is a decode speed within 10% of llama.cpp run in this
process. Both sides use the same ``LlamaEngine``, the same load mode (the one the provider
settles on here), prompt, seed and temperature 0; runs alternate (worker, in-process, ...) so
a busy machine slows both alike. Decode speed is counted from the first token to the last.

Run alone: ``python -m benchmarks.bench_local_worker [--quick]`` (prints JSON); or
``python -m benchmarks --only local_worker``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import statistics
import threading
import time
from typing import Any

from benchmarks._common import row

__all__ = ["local_worker"]

_PROMPT = [{"role": "user", "content": "Tell me a long story about a fox and a crow."}]


def _decode_rate(stamps: list[float]) -> float:
    """Tokens per second between the first and the last piece."""
    if len(stamps) < 2 or stamps[-1] <= stamps[0]:
        return 0.0
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


async def _measure(runs: int, max_tokens: int) -> dict[str, Any]:
    from skillrt.llm.llama_engine import LlamaEngine
    from skillrt.llm.local import LocalProvider

    provider = LocalProvider(n_ctx=1024, seed=0, temperature=0.0, repeat_penalty=1.0)
    worker: list[float] = []
    inproc: list[float] = []
    try:
        await provider.load()
        await provider.chat(_PROMPT, max_tokens=4)  # warm
        mode = provider.mode or "default"
        path = provider.model_path
        if path is None:
            raise RuntimeError("no GGUF model")
        engine = LlamaEngine(path, mode=mode, n_ctx=1024, seed=0)
        engine.load()
        try:
            for _ in range(runs):
                sent: list[float] = []
                await provider.chat(
                    _PROMPT,
                    max_tokens=max_tokens,
                    stream_cb=lambda _d, sent=sent: sent.append(time.perf_counter()),
                )
                worker.append(_decode_rate(sent))
                made: list[float] = []
                engine.generate(
                    _PROMPT,  # type: ignore[arg-type]
                    max_tokens=max_tokens,
                    temperature=0.0,
                    repeat_penalty=1.0,
                    schema=None,
                    emit=lambda _t, made=made: made.append(time.perf_counter()),
                    stop=threading.Event(),
                )
                inproc.append(_decode_rate(made))
        finally:
            engine.close()
    finally:
        await provider.aclose()
    return {"mode": mode, "worker": worker, "in_process": inproc}


def local_worker(runs: int = 5, max_tokens: int = 128, quick: bool = False) -> dict[str, Any]:
    """Decode tokens/s through the worker process and in-process, and their ratio."""
    title = "Embedded model: worker process against in-process"
    if importlib.util.find_spec("llama_cpp") is None:
        return {
            "name": "local_worker",
            "title": title,
            "params": {},
            "rows": [row("skipped", None, note="llama_cpp is not installed (skillrt[local])")],
            "details": {},
        }
    if quick:
        runs, max_tokens = min(runs, 2), min(max_tokens, 48)
    out = asyncio.run(_measure(runs, max_tokens))
    worker = statistics.median(out["worker"]) if out["worker"] else 0.0
    inproc = statistics.median(out["in_process"]) if out["in_process"] else 0.0
    ratio = worker / inproc if inproc else 0.0
    rows = [
        row("decode, worker process (median)", worker, "tokens/s", note=f"mode {out['mode']}"),
        row("decode, in-process (median)", inproc, "tokens/s", note=f"{max_tokens} tokens"),
        row("worker / in-process", ratio, "×", target="≥ 0.90", met=ratio >= 0.9),
    ]
    return {
        "name": "local_worker",
        "title": title,
        "params": {"runs": runs, "max_tokens": max_tokens},
        "rows": rows,
        "details": out,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(json.dumps(local_worker(quick=args.quick), indent=2, default=str))


if __name__ == "__main__":
    main()
