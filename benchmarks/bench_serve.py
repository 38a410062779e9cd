"""``skillrt serve`` under load: many SSE clients at once, and the task list's request rate.

The server runs in its own process (``python -m benchmarks.bench_serve --serve``: uvicorn on
127.0.0.1, an ephemeral port, the durable SQLite store, a test model whose every call takes
``delay_s``), so the clients' parsing does not share its interpreter. Each of ``clients``
clients at once POSTs a ``steps``-step task (one model call per step) with ``Accept:
text/event-stream`` and reads its stream to the final ``message``.

Reported: wall time for all of them against the ideal (``steps × delay_s``: every task's calls
overlap), p50/p99 time to the first event, and requests/s for ``GET /v1/tasks``.

Run alone: ``python -m benchmarks.bench_serve [--quick]`` (prints JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import machine, percentile, row, temp_dir

__all__ = ["serve_concurrency"]

_TOKEN = "bench-token-0123456789abcdef"


def _serve(root: Path, delay_s: float) -> None:
    """The server process: print the port, serve until stdin closes or SIGTERM."""
    from pydantic import BaseModel

    from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
    from skillrt.server.run import make_server
    from skillrt.testing import FunctionModel

    class Params(BaseModel):
        topic: str
        steps: int = 3

    @skill(name="Steps", params=Params, description="One model call per step")
    async def steps(ctx: SkillContext, params: Params) -> SkillResult:
        parts = []
        for i in range(1, params.steps + 1):
            ctx.progress(i, params.steps, f"step {i}")

            async def call(i: int = i) -> str:
                result = await ctx.llm.chat([{"role": "user", "content": f"{params.topic} {i}"}])
                return result.content

            parts.append(await ctx.step(f"part{i}", call))
        return SkillResult(message=" ".join(parts))

    (root / "posts").mkdir(parents=True, exist_ok=True)
    config = load_config(content_root=root, state_dir=root / ".state", log_level="error")
    llm = FunctionModel(lambda messages, options: "a short answer", delay=delay_s)
    runtime = AgentRuntime(config, llm=llm, skills=[steps])
    server = make_server(runtime, token=_TOKEN, host="127.0.0.1", port=0, log_level="error")
    server.on_started = lambda port: print(port, flush=True)

    async def main() -> None:
        serving = asyncio.ensure_future(server.serve())
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)  # the parent closed our stdin: stop
        server.skillrt.begin_shutdown()
        server.should_exit = True
        await serving

    asyncio.run(main())


# The clients speak HTTP/1.1 over plain asyncio streams: an HTTP library's own overhead in
# this process (200 streams at once) would be measured instead of the server's.


def _dechunk(body: bytes) -> bytes:
    out, pos = bytearray(), 0
    while True:
        eol = body.index(b"\r\n", pos)
        size = int(body[pos:eol].split(b";")[0], 16)
        if size == 0:
            return bytes(out)
        out += body[eol + 2 : eol + 2 + size]
        pos = eol + 4 + size


async def _one(port: int, steps: int, started: float) -> dict[str, Any]:
    body = json.dumps({"params": {"topic": "bench", "steps": steps}}).encode()
    t0 = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"POST /v1/skills/Steps/run HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Authorization: Bearer " + _TOKEN.encode() + b"\r\nAccept: text/event-stream\r\n"
        b"Content-Type: application/json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\nConnection: close\r\n\r\n"
        + body
    )
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(head.decode("latin-1"))
    raw, first = b"", None
    while not raw.endswith(b"0\r\n\r\n"):
        chunk = await reader.read(65536)
        if not chunk:
            break
        raw += chunk
        if first is None and b"\nid: " in raw:
            first = time.perf_counter() - t0
    writer.close()
    text = _dechunk(raw).decode()
    final = json.loads(text.rsplit("event: message\ndata: ", 1)[1].split("\n", 1)[0])
    return {
        "first_event_s": first,
        "state": final["state"],
        "done_at_s": time.perf_counter() - started,
    }


async def _lister(port: int, count: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = (
        b"GET /v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
        + _TOKEN.encode()
        + b"\r\n\r\n"
    )
    for _ in range(count):
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(head.decode("latin-1"))
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        await reader.readexactly(length)
    writer.close()


async def _load(port: int, clients: int, steps: int, requests: int) -> dict[str, Any]:
    await _one(port, 1, time.perf_counter())  # warm up: the first checkpoint, imports
    started = time.perf_counter()
    results = await asyncio.gather(*(_one(port, steps, started) for _ in range(clients)))
    wall = time.perf_counter() - started
    concurrency = 16
    per_worker = max(1, requests // concurrency)
    t0 = time.perf_counter()
    await asyncio.gather(*(_lister(port, per_worker) for _ in range(concurrency)))
    list_s = time.perf_counter() - t0
    return {
        "wall_s": wall,
        "results": results,
        "list_requests": per_worker * concurrency,
        "list_s": list_s,
    }


def serve_concurrency(
    clients: int = 200,
    steps: int = 3,
    delay_s: float = 0.1,
    requests: int = 2000,
    quick: bool = False,
) -> dict[str, Any]:
    """``clients`` SSE clients at once, each a ``steps``-step task of ``delay_s`` model calls."""
    if quick:
        clients, requests = min(clients, 20), min(requests, 200)
    with temp_dir("serve") as root:
        server = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.bench_serve", "--serve", str(root), str(delay_s)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parent.parent,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline().strip())
            out = asyncio.run(_load(port, clients, steps, requests))
        finally:
            if server.stdin is not None:
                server.stdin.close()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            if server.stdout is not None:
                server.stdout.close()
    results = out["results"]
    completed = sum(1 for r in results if r["state"] == "COMPLETED")
    firsts = [r["first_event_s"] * 1000 for r in results if r["first_event_s"] is not None]
    ideal = steps * delay_s
    wall = out["wall_s"]
    rps = out["list_requests"] / out["list_s"]
    rows = [
        row(
            f"{clients} SSE clients x {steps}-step task ({delay_s * 1000:.0f} ms calls): wall",
            wall,
            "s",
            note=f"ideal {ideal:.2f} s (x{wall / ideal:.1f}); {completed}/{clients} completed",
        ),
        row("time to first event (p50)", percentile(firsts, 0.5), "ms"),
        row(
            "time to first event (p99)",
            percentile(firsts, 0.99),
            "ms",
            note=f"max {max(firsts) if firsts else 0:.0f} ms",
        ),
        row(
            "GET /v1/tasks",
            rps,
            "req/s",
            note=f"{out['list_requests']} requests, 16 at a time, keep-alive",
        ),
    ]
    return {
        "name": "serve",
        "title": "skillrt serve",
        "params": {"clients": clients, "steps": steps, "delay_s": delay_s},
        "rows": rows,
        "details": {
            "completed": completed,
            "clients": clients,
            "wall_s": wall,
            "ideal_s": ideal,
            "first_event_ms": {"p50": percentile(firsts, 0.5), "p99": percentile(firsts, 0.99)},
            "tasks_list_rps": rps,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_serve")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--serve", nargs=2, metavar=("ROOT", "DELAY_S"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(Path(args.serve[0]), float(args.serve[1]))
        return
    print(json.dumps({"machine": machine(), **serve_concurrency(quick=args.quick)}, default=str))


if __name__ == "__main__":
    main()
