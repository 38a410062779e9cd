"""LLM benchmarks: how fast an abort closes a stream, and how fast the embedded model is.

- ``abort_latency``: the ``openai`` provider streams from the OpenAI-compatible test server
  (``tests/openai_server.py``, on 127.0.0.1, slow tokens); after a few tokens another task
  aborts the call. Measured per abort: abort to ``TaskCancelled`` in the caller, and abort to
  the moment the *server* saw the connection close. Then the same with the calling task
  cancelled instead of the signal.
- ``local_model_speed``: the ``local`` provider on the bundled SmolLM2-135M-Instruct GGUF:
  load time, time to first token, decode tokens per second, a structured (grammar) call, and
  abort to ``TaskCancelled``.

Run alone: ``python -m benchmarks.bench_llm [--quick]`` (prints JSON); or through
``python -m benchmarks``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import statistics
import time
from typing import Any

from pydantic import BaseModel, Field

from benchmarks._common import percentile, row

__all__ = ["abort_latency", "local_model_speed"]

_PROMPT = [{"role": "user", "content": "Tell me a long story about a fox and a crow."}]


def _ms(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {
        "p50_ms": percentile(ms, 0.5),
        "p99_ms": percentile(ms, 0.99),
        "max_ms": max(ms) if ms else 0.0,
        "mean_ms": statistics.fmean(ms) if ms else 0.0,
    }


async def _aborts(
    aborts: int, cancels: int, after_deltas: int, chunk_delay: float
) -> dict[str, Any]:
    from skillrt.abort import AbortController
    from skillrt.exceptions import TaskCancelled
    from skillrt.llm.openai_provider import OpenAIProvider
    from tests.openai_server import OpenAIServer, Reply

    words = " ".join(f"token{i}" for i in range(2000))
    raised: list[float] = []
    closed: list[float] = []
    extra_chunks: list[int] = []
    cancel_closed: list[float] = []
    with OpenAIServer() as server:
        server.default = Reply(words, chunk_delay=chunk_delay)
        provider = OpenAIProvider(
            base_url=server.base_url, api_key="bench", model="gpt-4o-mini", max_retries=0
        )
        try:
            for _ in range(aborts):
                controller = AbortController()
                enough = asyncio.Event()
                count = 0

                def on_delta(_delta: str, _enough: asyncio.Event = enough) -> None:
                    nonlocal count
                    count += 1
                    if count == after_deltas:
                        _enough.set()

                async def abort_when_ready(
                    _enough: asyncio.Event = enough, _controller: AbortController = controller
                ) -> tuple[float, int]:
                    await _enough.wait()
                    sent = server.chat_requests[-1].chunks_sent
                    at = time.perf_counter()
                    _controller.abort("benchmark")
                    return at, sent

                aborter = asyncio.create_task(abort_when_ready())
                count = 0
                try:
                    await provider.chat(_PROMPT, signal=controller.signal, stream_cb=on_delta)
                    raise RuntimeError("the call was not aborted")
                except TaskCancelled:
                    raised_at = time.perf_counter()
                aborted_at, sent_before = await aborter
                request = server.chat_requests[-1]
                if not server.wait_for(lambda r=request: r.disconnected_at is not None, 5):
                    raise RuntimeError("the server never saw the connection close")
                assert request.disconnected_at is not None
                raised.append(raised_at - aborted_at)
                closed.append(request.disconnected_at - aborted_at)
                extra_chunks.append(request.chunks_sent - sent_before)
            for _ in range(cancels):
                started = asyncio.Event()
                call = asyncio.create_task(
                    provider.chat(_PROMPT, stream_cb=lambda _d, s=started: s.set())
                )
                await started.wait()
                cancelled_at = time.perf_counter()
                call.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await call
                request = server.chat_requests[-1]
                if not server.wait_for(lambda r=request: r.disconnected_at is not None, 5):
                    raise RuntimeError("the server never saw the connection close")
                assert request.disconnected_at is not None
                cancel_closed.append(request.disconnected_at - cancelled_at)
        finally:
            await provider.aclose()
    return {
        "aborts": aborts,
        "cancels": cancels,
        "chunk_delay_ms": chunk_delay * 1000,
        "abort_to_raise": _ms(raised),
        "abort_to_server_disconnect": _ms(closed),
        "cancel_to_server_disconnect": _ms(cancel_closed),
        "chunks_sent_after_abort_max": max(extra_chunks) if extra_chunks else 0,
    }


def abort_latency(aborts: int = 200, quick: bool = False) -> dict[str, Any]:
    """Abort-to-stream-closed latency p50/p99 over ``aborts`` aborts against the test server."""
    if quick:
        aborts = min(aborts, 20)
    cancels = max(10, aborts // 4)
    out = asyncio.run(_aborts(aborts, cancels, after_deltas=3, chunk_delay=0.005))
    closed, raised, cancel = (
        out["abort_to_server_disconnect"],
        out["abort_to_raise"],
        out["cancel_to_server_disconnect"],
    )
    rows = [
        row(
            f"abort -> server sees the connection close (p50, {aborts} aborts)",
            closed["p50_ms"],
            "ms",
            target="< 100",
            met=closed["p99_ms"] < 100,
            note=f"p99 {closed['p99_ms']:.2f}, max {closed['max_ms']:.2f}",
        ),
        row(
            "abort -> server sees the connection close (p99)",
            closed["p99_ms"],
            "ms",
            target="< 100",
            met=closed["p99_ms"] < 100,
        ),
        row(
            "abort -> TaskCancelled in the caller (p50)",
            raised["p50_ms"],
            "ms",
            note=f"p99 {raised['p99_ms']:.2f}",
        ),
        row(
            f"task cancelled -> server sees the close (p50, {out['cancels']} cancels)",
            cancel["p50_ms"],
            "ms",
            target="< 100",
            met=cancel["p99_ms"] < 100,
            note=f"p99 {cancel['p99_ms']:.2f}",
        ),
        row(
            "chunks the server wrote after the abort (max)",
            out["chunks_sent_after_abort_max"],
            "chunks",
            note=f"server streams a chunk every {out['chunk_delay_ms']:g} ms",
        ),
    ]
    return {
        "name": "abort",
        "title": "LLM abort: openai provider against the local test server",
        "params": {"aborts": aborts, "cancels": cancels},
        "rows": rows,
        "details": out,
    }


class _Intent(BaseModel):
    type: str = Field(pattern="^(WRITE_ARTICLE|SUMMARIZE|UNKNOWN)$")
    confidence: float
    parameters: dict[str, Any] = Field(default_factory=dict)


async def _local(runs: int, max_tokens: int) -> dict[str, Any]:
    from skillrt.abort import AbortController
    from skillrt.exceptions import TaskCancelled
    from skillrt.llm.local import LocalProvider

    provider = LocalProvider(seed=1)
    try:
        started = time.perf_counter()
        await provider.load()
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        await provider.chat([{"role": "user", "content": "Hi"}], max_tokens=1)
        cold_s = time.perf_counter() - started  # the first evaluation allocates llama.cpp buffers
        ttft: list[float] = []
        decode_tps: list[float] = []
        overall_tps: list[float] = []
        for _ in range(runs):
            first: list[float] = []
            started = time.perf_counter()
            result = await provider.chat(
                _PROMPT,
                max_tokens=max_tokens,
                temperature=0.8,
                stream_cb=lambda _d, f=first: f.append(time.perf_counter()) if not f else None,
            )
            ended = time.perf_counter()
            tokens = result.usage.completion_tokens
            ttft.append(first[0] - started)
            if tokens > 1 and ended > first[0]:
                decode_tps.append((tokens - 1) / (ended - first[0]))
            overall_tps.append(tokens / (ended - started))
        started = time.perf_counter()
        structured = await provider.chat(
            [{"role": "user", "content": "Classify: write an article about Rust ownership"}],
            response_model=_Intent,
            max_tokens=96,
        )
        structured_s = time.perf_counter() - started
        stops: list[float] = []
        for _ in range(runs):
            controller = AbortController()
            state = [0.0, 0.0]  # deltas seen, when the abort was sent

            def on_delta(_d: str, s: list[float] = state, c: AbortController = controller) -> None:
                s[0] += 1
                if s[0] == 5:
                    s[1] = time.perf_counter()
                    c.abort("benchmark")

            try:
                await provider.chat(
                    _PROMPT, max_tokens=400, signal=controller.signal, stream_cb=on_delta
                )
            except TaskCancelled:
                stops.append(time.perf_counter() - state[1])
    finally:
        await provider.aclose()
    return {
        "model": provider.model,
        "model_path": str(provider.model_path),
        "load_s": load_s,
        "first_call_s": cold_s,
        "runs": runs,
        "max_tokens": max_tokens,
        "ttft": _ms(ttft),
        "decode_tokens_per_s": statistics.fmean(decode_tps) if decode_tps else 0.0,
        "overall_tokens_per_s": statistics.fmean(overall_tps) if overall_tps else 0.0,
        "structured_call_s": structured_s,
        "structured_tokens": structured.usage.completion_tokens,
        "abort_to_raise": _ms(stops),
    }


def local_model_speed(runs: int = 5, max_tokens: int = 128, quick: bool = False) -> dict[str, Any]:
    """The embedded model on this machine: load, time to first token, tokens per second."""
    if importlib.util.find_spec("llama_cpp") is None:
        return {
            "name": "local_model",
            "title": "Local model (llama.cpp)",
            "params": {},
            "rows": [row("skipped", None, note="llama_cpp is not installed (skillrt[local])")],
            "details": {},
        }
    if quick:
        runs, max_tokens = min(runs, 2), min(max_tokens, 48)
    out = asyncio.run(_local(runs, max_tokens))
    stop = out["abort_to_raise"]
    rows = [
        row("model load", out["load_s"] * 1000, "ms", note=out["model"]),
        row("first call after load (1 token)", out["first_call_s"] * 1000, "ms"),
        row(
            "time to first token (p50)",
            out["ttft"]["p50_ms"],
            "ms",
            note=f"p99 {out['ttft']['p99_ms']:.0f}; one-line prompt, warm model",
        ),
        row("decode speed", out["decode_tokens_per_s"], "tokens/s", note=f"{max_tokens} tokens"),
        row("overall speed incl. prompt", out["overall_tokens_per_s"], "tokens/s"),
        row(
            "structured call (grammar-constrained JSON)",
            out["structured_call_s"] * 1000,
            "ms",
            note=f"{out['structured_tokens']} tokens",
        ),
        row(
            "abort -> TaskCancelled (max)",
            stop["max_ms"],
            "ms",
            target="< 200",
            met=stop["max_ms"] < 200,
            note=f"p50 {stop['p50_ms']:.1f}",
        ),
    ]
    return {
        "name": "local_model",
        "title": "Local model: SmolLM2-135M-Instruct via llama.cpp",
        "params": {"runs": runs, "max_tokens": max_tokens},
        "rows": rows,
        "details": out,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--aborts", type=int, default=200)
    args = parser.parse_args()
    results = [
        abort_latency(args.aborts, quick=args.quick),
        local_model_speed(quick=args.quick),
    ]
    print(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
