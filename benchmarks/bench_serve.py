"""``skillrt serve`` under load: many SSE clients at once, and the task list's request rate.

The server runs in its own process (``python -m benchmarks.bench_serve --serve``: uvicorn on
127.0.0.1, an ephemeral port, the durable SQLite store, a test model whose every call takes
``delay_s``), so the clients' parsing does not share its interpreter. Each of ``clients``
clients at once POSTs a ``steps``-step task (one model call per step) with ``Accept:
text/event-stream`` and reads its stream to the final ``message``.

Reported: wall time for all of them against the ideal (``steps × delay_s``: every task's calls
overlap), p50/p99 time to the first event, and requests/s for ``GET /v1/tasks``.

``serve_rate`` (part of the ``serve`` suite): requests/s and server CPU per request of a skill
with no steps (``POST /v1/skills/Nothing/run``, a JSON reply) against a bare FastAPI endpoint
taking the same body and answering the same JSON, in the same run, with the same uvicorn
settings (httptools, no access log, no server header). ``rate_clients`` keep-alive clients
send requests back to back for ``seconds``; the server's CPU is its process's user + system
time (every thread) over those seconds, read from ``/proc``, and so are its write system
calls per request (a count load does not move: socket writes, SQLite's, the loop's wake-ups;
the rows' notes give it). The sides alternate, ``rounds``
of each, and the medians are reported against the targets: ≥ 0.5× the bare endpoint's
requests/s, ≤ 0.3 ms of server CPU per request.

``disconnect_abort``: how fast ``?cancel_on_disconnect=true`` stops a task, against an abort
in the same process. The model is the OpenAI-compatible test server (``tests/openai_server.py``,
a real socket, slow tokens), which notes when its client closes the stream. Served: a client
reads the SSE stream up to the first streamed token, then closes its socket; measured from the
close to the model server seeing its stream closed, and to the task's ``CANCELLED``. In
process: the same runtime, ``runtime.abort(task_id)`` at the first token, measured the same
way. Everything runs in one process (the servers in their own threads), on one clock.

Run alone: ``python -m benchmarks.bench_serve [--quick]`` (prints JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from benchmarks._common import machine, percentile, row, temp_dir

if TYPE_CHECKING:
    from skillrt import AgentRuntime, Skill
    from tests.openai_server import OpenAIServer
    from tests.server_support import LiveServer

__all__ = ["disconnect_abort", "profile_served", "serve_concurrency", "serve_rate"]

_TOKEN = "bench-token-0123456789abcdef"
_T = TypeVar("_T")


def _steps_skill() -> Skill[Any]:
    """``Steps``: one model call per step, ``steps`` of them, each a durable step."""
    from pydantic import BaseModel

    from skillrt import SkillContext, SkillResult, skill

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

    return steps


def _nothing_skill() -> Skill[Any]:
    """``Nothing``: a skill with no steps; it answers at once."""
    from pydantic import BaseModel

    from skillrt import SkillContext, SkillResult, skill

    class Params(BaseModel):
        topic: str

    @skill(name="Nothing", params=Params, description="No steps: answers at once")
    async def nothing(ctx: SkillContext, params: Params) -> SkillResult:
        return SkillResult(message=f"done: {params.topic}")

    return nothing


def _runtime(root: Path, llm: Any) -> AgentRuntime:
    from skillrt import AgentRuntime, load_config

    (root / "posts").mkdir(parents=True, exist_ok=True)
    config = load_config(content_root=root, state_dir=root / ".state", log_level="error")
    return AgentRuntime(config, llm=llm, skills=[_steps_skill(), _nothing_skill()])


def _uvicorn_settings() -> dict[str, Any]:
    """What both sides of ``serve_rate`` run with (``make_server`` sets the same)."""
    return {
        "host": "127.0.0.1",
        "port": 0,
        "log_level": "error",
        "lifespan": "on",
        "server_header": False,
        "access_log": False,
    }


def _serve_bare() -> None:
    """The bare FastAPI endpoint: the same body model and JSON reply as the skill's route,
    nothing else (no token, no guards, no task)."""
    import uvicorn

    from benchmarks._bare_app import app

    class Bare(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets=sockets)
            print(self.servers[0].sockets[0].getsockname()[1], flush=True)

    server = Bare(uvicorn.Config(app, http="httptools", **_uvicorn_settings()))

    async def main() -> None:
        serving = asyncio.ensure_future(server.serve())
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        server.should_exit = True
        await serving

    _run(main())


def _loop_choice() -> str:
    """``serve.loop`` as ``skillrt serve`` would read it from the environment (default auto)."""
    return os.environ.get("SKILLRT_SERVE__LOOP", "auto")


def _run(main: Coroutine[Any, Any, _T]) -> _T:
    """``main`` on the event loop ``skillrt serve`` runs on (``serve.loop``: uvloop's when
    installed, unless ``SKILLRT_SERVE__LOOP=asyncio``): both sides of ``serve_rate`` and the
    in-process counts run on it."""
    from skillrt.server.run import new_event_loop

    with asyncio.Runner(loop_factory=lambda: new_event_loop(_loop_choice())) as runner:
        return runner.run(main)


def loop_name() -> str:
    """Which event loop ``_run`` uses: ``uvloop`` or ``asyncio``."""
    from skillrt.server.run import new_event_loop

    loop = new_event_loop(_loop_choice())
    try:
        return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
    finally:
        loop.close()


def _serve(root: Path, delay_s: float, profile_out: Path | None = None) -> None:
    """The server process: print the port, serve until stdin closes or SIGTERM. With
    ``profile_out``, the loop's thread is sampled with pyinstrument from the first request to
    the end, and the summary (``bench_profile.summarise``) written there as JSON."""
    from skillrt.server.run import make_server
    from skillrt.testing import FunctionModel

    llm = FunctionModel(lambda messages, options: "a short answer", delay=delay_s)
    runtime = _runtime(root, llm)
    server = make_server(runtime, token=_TOKEN, host="127.0.0.1", port=0, log_level="error")
    server.on_started = lambda port: print(port, flush=True)
    server.tune_gc = not os.environ.get("SKILLRT_BENCH_DEFAULT_GC")  # as ``skillrt serve``

    async def main() -> Any:
        serving = asyncio.ensure_future(server.serve())
        loop = asyncio.get_running_loop()
        profiler = None
        if profile_out is not None:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0002, async_mode="disabled")
            profiler.start()
        await loop.run_in_executor(None, sys.stdin.read)  # the parent closed our stdin: stop
        if profiler is not None:
            profiler.stop()
        server.skillrt.begin_shutdown()
        server.should_exit = True
        await serving
        return profiler

    profiler = _run(main())
    if profiler is not None and profile_out is not None and profiler.last_session is not None:
        from benchmarks.bench_profile import summarise

        summary = summarise(profiler.last_session)
        profile_out.write_text(json.dumps(summary), encoding="utf-8")
        profile_out.with_suffix(".html").write_text(profiler.output_html(), encoding="utf-8")
        every = bool(os.environ.get("SKILLRT_PROFILE_ALL"))  # library frames too
        text = profiler.output_text(unicode=True, show_all=every)
        profile_out.with_suffix(".txt").write_text(text, encoding="utf-8")


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


def _writes(pid: int) -> int | None:
    """A process's write system calls so far (every thread: its sockets' writes, SQLite's, the
    loop's wake-ups), from ``/proc``; None elsewhere. A count no load on the machine moves."""
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("syscw:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _cpu_s(pid: int) -> float | None:
    """A process's user + system CPU seconds (every thread), from ``/proc``; None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _rate_client(port: int, until: float, latencies: list[float], token: bool) -> int:
    """Requests back to back on one keep-alive connection until ``until``; how many."""
    body = json.dumps({"params": {"topic": "bench"}}).encode()
    request = (
        b"POST /v1/skills/Nothing/run HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + (b"Authorization: Bearer " + _TOKEN.encode() + b"\r\n" if token else b"")
        + b"Content-Type: application/json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    done = 0
    try:
        while time.perf_counter() < until:
            t0 = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(head.decode("latin-1"))
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            reply = await reader.readexactly(length)
            if b"COMPLETED" not in reply:
                raise RuntimeError(reply.decode())
            latencies.append(time.perf_counter() - t0)
            done += 1
    finally:
        writer.close()
    return done


async def _rate(port: int, pid: int, clients: int, seconds: float, token: bool) -> dict[str, Any]:
    warm: list[float] = []
    await asyncio.gather(
        *(_rate_client(port, time.perf_counter() + 0.5, warm, token) for _ in range(clients))
    )
    latencies: list[float] = []
    writes0, cpu0, t0 = _writes(pid), _cpu_s(pid), time.perf_counter()
    counts = await asyncio.gather(
        *(_rate_client(port, t0 + seconds, latencies, token) for _ in range(clients))
    )
    wall, cpu1, writes1 = time.perf_counter() - t0, _cpu_s(pid), _writes(pid)
    requests = sum(counts)
    cpu = None if cpu0 is None or cpu1 is None else cpu1 - cpu0
    writes = None if writes0 is None or writes1 is None else writes1 - writes0
    ms = [x * 1000 for x in latencies]
    return {
        "requests": requests,
        "rps": requests / wall,
        "cpu_ms_per_request": None if cpu is None else cpu * 1000 / max(1, requests),
        "server_cpu_share": None if cpu is None else cpu / wall,
        "writes_per_request": None if writes is None else writes / max(1, requests),
        "p50_ms": percentile(ms, 0.5),
        "p99_ms": percentile(ms, 0.99),
    }


def _one_side(
    kind: str, clients: int, seconds: float, profile_out: Path | None = None
) -> dict[str, Any]:
    """One round of one side: a fresh server process, loaded for ``seconds``."""
    with temp_dir("serve-rate") as root:
        args = ["--serve-bare"] if kind == "fastapi" else ["--serve", str(root), "0"]
        if profile_out is not None:
            args += ["--profile-out", str(profile_out)]
        with _server(args) as (port, pid):
            return asyncio.run(_rate(port, pid, clients, seconds, kind == "skillrt"))


@contextlib.contextmanager
def _server(args: list[str]) -> Iterator[tuple[int, int]]:
    """This module's server (``--serve ...`` or ``--serve-bare``) in a process of its own:
    its port and pid while it runs; stopped on the way out."""
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_serve", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert server.stdout is not None
        yield int(server.stdout.readline().strip()), server.pid
    finally:
        _stop(server)


def _stop(server: subprocess.Popen[str]) -> None:
    if server.stdin is not None:
        server.stdin.close()
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    if server.stdout is not None:
        server.stdout.close()


SATURATED = 0.75
"""The share of a core the bare server must use in ``serve_rate`` for its ratio to count."""


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def serve_rate(
    rate_clients: int = 50, seconds: float = 10.0, rounds: int = 2, quick: bool = False
) -> dict[str, Any]:
    """A skill with no steps against a bare FastAPI endpoint: requests/s and server CPU per
    request, ``rounds`` alternating rounds of ``seconds`` each side, medians."""
    if quick:
        seconds, rounds = min(seconds, 3.0), 1
    runs: dict[str, list[dict[str, Any]]] = {"fastapi": [], "skillrt": []}
    for _ in range(rounds):
        for kind in ("fastapi", "skillrt"):
            runs[kind].append(_one_side(kind, rate_clients, seconds))
    med = {
        kind: {key: _median([r[key] for r in got]) for key in got[0]} for kind, got in runs.items()
    }
    bare, ours = med["fastapi"], med["skillrt"]
    calls = calls_per_request()
    ratio = (ours["rps"] or 0) / (bare["rps"] or 1)
    cpu = ours["cpu_ms_per_request"]
    title = (
        f"{rate_clients} keep-alive clients x {seconds:g} s, {rounds} round(s) each,"
        f" {loop_name()} loop on both sides"
    )

    # The ratio compares the servers' rates only when the bare one had the core it can use:
    # on a loaded machine the clients (same process for both sides) set both rates, and the
    # ratio reads high for no reason of the server's (0.64-0.77x at load 5-9, 0.42x at 1.5).
    share = bare["server_cpu_share"]
    starved = (
        None
        if share is None or share >= SATURATED
        else f"not decided: the bare server was busy {share * 100:.0f}% of a core (under"
        f" {SATURATED * 100:.0f}%), so the clients or the machine's load set both rates"
    )

    def note(side: dict[str, Any]) -> str:
        share, writes = side["server_cpu_share"], side.get("writes_per_request")
        busy = "" if share is None else f"; server busy {share * 100:.0f}% of a core"
        wrote = "" if writes is None else f"; {writes:.2f} write syscalls per request"
        return f"p50 {side['p50_ms']:.1f} ms, p99 {side['p99_ms']:.1f} ms{busy}{wrote}"

    rows = [
        row(f"bare FastAPI endpoint ({title})", bare["rps"], "req/s", note=note(bare)),
        row("skillrt serve, a skill with no steps", ours["rps"], "req/s", note=note(ours)),
        row(
            "skillrt / bare FastAPI, requests/s",
            ratio,
            "x",
            target=">= 0.5x",
            met=None if starved else ratio >= 0.5,
            note=starved,
        ),
        row("server CPU per request, bare FastAPI", bare["cpu_ms_per_request"], "ms"),
        row(
            "server CPU per request, skillrt",
            cpu,
            "ms",
            target="<= 0.3 ms",
            met=None if cpu is None else cpu <= 0.3,
            note=None
            if cpu is None or not bare["cpu_ms_per_request"]
            else f"x{cpu / bare['cpu_ms_per_request']:.1f} the bare endpoint's",
        ),
        row(
            "Python function calls per request, in process (bare / skillrt)",
            calls["skillrt"],
            "calls",
            note=f"bare FastAPI {calls['fastapi']} (x{calls['skillrt'] / calls['fastapi']:.1f});"
            " cProfile's count, the ASGI app called directly: no noise",
        ),
    ]
    return {
        "name": "serve_rate",
        "title": "skillrt serve: a skill with no steps against a bare FastAPI endpoint",
        "params": {
            "clients": rate_clients,
            "seconds": seconds,
            "rounds": rounds,
            "loop": loop_name(),
        },
        "rows": rows,
        "details": {"rounds": runs, "medians": med, "ratio": ratio, "calls": calls},
    }


async def _asgi_calls(app: Any, token: bool, requests: int) -> int:
    """Python function calls (cProfile's count) for ``requests`` POSTs to the skill with no
    steps, the ASGI app called directly (10 at a time): no socket, no uvicorn, no noise."""
    import cProfile
    import pstats

    body = json.dumps({"params": {"topic": "bench"}}).encode()
    headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]  # fmt: skip
    if token:
        headers.append((b"authorization", b"Bearer " + _TOKEN.encode()))
    path = "/v1/skills/Nothing/run"

    async def one() -> None:
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
                 "query_string": b"", "root_path": "", "headers": headers,
                 "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80), "state": {}}  # fmt: skip
        await app(scope, receive, send)
        if sent[0]["status"] != 200:
            raise RuntimeError(f"status {sent[0]['status']}")

    for _ in range(50):  # warm: first-use costs aside
        await one()
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(requests // 10):
        await asyncio.gather(*(one() for _ in range(10)))
    profile.disable()
    total: int = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    return total // requests


async def _calls_both(requests: int) -> dict[str, int]:
    from benchmarks._bare_app import app as bare
    from skillrt.server.app import create_app
    from skillrt.testing import FunctionModel

    out = {"fastapi": await _asgi_calls(bare, False, requests)}
    with temp_dir("serve-calls") as root:
        runtime = _runtime(root, FunctionModel(lambda messages, options: "unused"))
        app = create_app(runtime, token=_TOKEN, hosts=["127.0.0.1"])
        state = app.state.skillrt
        await state.start()
        try:
            out["skillrt"] = await _asgi_calls(app, True, requests)
        finally:
            await state.stop()
    return out


def calls_per_request(requests: int = 500) -> dict[str, int]:
    """Python function calls per request of each side, in process (see ``_asgi_calls``)."""
    return _run(_calls_both(requests))


def profile_served(clients: int = 50, seconds: float = 5.0) -> dict[str, Any]:
    """The skillrt server's loop thread sampled while ``clients`` keep-alive clients run the
    skill with no steps for ``seconds``: ``bench_profile.summarise``'s summary, plus the load's
    figures (the profiler slows the server: they are not the benchmark's)."""
    with temp_dir("serve-profile") as out:
        target = out / "profile.json"
        load = _one_side("skillrt", clients, seconds, target)
        summary: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
        html = target.with_suffix(".html").read_text(encoding="utf-8")
        text = target.with_suffix(".txt").read_text(encoding="utf-8")
    return {**summary, "load": load, "html": html, "text": text}


def serve_concurrency(
    clients: int = 200,
    steps: int = 3,
    delay_s: float = 0.1,
    requests: int = 2000,
    quick: bool = False,
    rate_clients: int = 50,
    rate_seconds: float = 10.0,
    rate_rounds: int = 2,
) -> dict[str, Any]:
    """``clients`` SSE clients at once, each a ``steps``-step task of ``delay_s`` model calls;
    then ``serve_rate`` (``rate_rounds`` of 0 leaves it out)."""
    if quick:
        clients, requests = min(clients, 20), min(requests, 200)
    with temp_dir("serve") as root, _server(["--serve", str(root), str(delay_s)]) as (port, _):
        out = asyncio.run(_load(port, clients, steps, requests))
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
    rate = serve_rate(rate_clients, rate_seconds, rate_rounds, quick=quick) if rate_rounds else None
    if rate is not None:
        rows += rate["rows"]
    return {
        "name": "serve",
        "title": "skillrt serve",
        "params": {"clients": clients, "steps": steps, "delay_s": delay_s},
        "rows": rows,
        "details": {
            "rate": None if rate is None else rate["details"],
            "completed": completed,
            "clients": clients,
            "wall_s": wall,
            "ideal_s": ideal,
            "first_event_ms": {"p50": percentile(firsts, 0.5), "p99": percentile(firsts, 0.99)},
            "tasks_list_rps": rps,
        },
    }


# --- cancel_on_disconnect against runtime.abort() ------------------------------------------

_TASK_ID = re.compile(rb'"task_id": ?"([0-9a-f]+)"')


def _drop_once(
    live: LiveServer, upstream: OpenAIServer, cancelled: dict[str, float]
) -> tuple[float, float]:
    """One served run: read the SSE stream to the first token, close the socket; returns
    (close -> model stream closed, close -> CANCELLED), in seconds."""
    body = json.dumps({"params": {"topic": "served"}}).encode()
    sock = socket.create_connection(("127.0.0.1", live.port))
    try:
        sock.sendall(
            b"POST /v1/skills/Steps/run?cancel_on_disconnect=true HTTP/1.1\r\n"
            b"Host: 127.0.0.1\r\nAuthorization: Bearer " + live.token.encode() + b"\r\n"
            b"Accept: text/event-stream\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        seen = b""
        while b"event: task:stream" not in seen:
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError(f"the stream ended before a token: {seen[:300]!r}")
            seen += chunk
    finally:
        dropped_at = time.perf_counter()
        sock.close()
    found = _TASK_ID.search(seen)
    if found is None:
        raise RuntimeError(f"no task id in {seen[:300]!r}")
    return _settled(upstream, cancelled, found.group(1).decode(), dropped_at)


def _settled(
    upstream: OpenAIServer, cancelled: dict[str, float], task_id: str, since: float
) -> tuple[float, float]:
    """Waits until the model server saw its stream close and the task is CANCELLED; returns
    both moments less ``since``, in seconds."""
    request = upstream.chat_requests[-1]
    upstream.wait_for(lambda: request.disconnected_at is not None, 10)
    closed_at = request.disconnected_at
    if closed_at is None:
        raise RuntimeError("the model server never saw its stream close")
    deadline = time.monotonic() + 10
    while task_id not in cancelled:
        if time.monotonic() > deadline:
            raise RuntimeError(f"task {task_id} was not cancelled")
        time.sleep(0.001)
    if len(upstream.chat_requests) != 1:
        raise RuntimeError("a step after the first one ran")
    upstream.reset()
    return closed_at - since, cancelled[task_id] - since


async def _abort_in_process(runtime: AgentRuntime) -> tuple[str, float]:
    """Start the task, ``runtime.abort()`` it at its first token: (task id, abort time)."""
    task_ids: list[str] = []
    first_token = asyncio.Event()

    def on_stream(event: Any) -> None:
        if task_ids and event.task_id == task_ids[0]:
            first_token.set()

    unsubscribe = runtime.on("task:stream", on_stream)
    try:
        call = asyncio.ensure_future(
            runtime.run_skill("Steps", {"topic": "local"}, on_task=task_ids.append)
        )
        await first_token.wait()
        aborted_at = time.perf_counter()
        runtime.abort(task_ids[0])
        message = await call
    finally:
        unsubscribe()
    if message.state != "CANCELLED":
        raise RuntimeError(f"the task ended {message.state}")
    return task_ids[0], aborted_at


def _latencies(runs: int, chunk_delay: float) -> dict[str, list[float]]:
    from skillrt.llm.openai_provider import OpenAIProvider
    from tests.openai_server import OpenAIServer, Reply
    from tests.server_support import LiveServer

    out: dict[str, list[float]] = {
        "served": [],
        "served_cancel": [],
        "local": [],
        "local_cancel": [],
    }
    cancelled: dict[str, float] = {}

    def on_state(event: Any) -> None:
        if event.data.get("to") == "CANCELLED" and event.task_id:
            cancelled[event.task_id] = time.perf_counter()

    with temp_dir("disconnect") as root, OpenAIServer() as upstream:
        upstream.default = Reply(" ".join(f"w{i}" for i in range(5000)), chunk_delay=chunk_delay)
        provider = OpenAIProvider(
            base_url=upstream.base_url, api_key="bench", model="gpt-4o-mini", max_retries=0
        )
        runtime = _runtime(root, provider)
        runtime.on("state:changed", on_state)
        live = LiveServer(runtime, token=_TOKEN)
        try:
            for _ in range(runs):
                closed, done = _drop_once(live, upstream, cancelled)
                out["served"].append(closed)
                out["served_cancel"].append(done)
                task_id, aborted_at = live.call(_abort_in_process(runtime))
                closed, done = _settled(upstream, cancelled, task_id, aborted_at)
                out["local"].append(closed)
                out["local_cancel"].append(done)
        finally:
            live.call(provider.aclose())
            live.stop()
    return out


def disconnect_abort(
    runs: int = 100, chunk_delay: float = 0.005, quick: bool = False
) -> dict[str, Any]:
    """``runs`` served drops (``cancel_on_disconnect``) and ``runs`` in-process aborts, each
    at the first token of a model that streams a token every ``chunk_delay`` seconds."""
    if quick:
        runs = min(runs, 20)
    out = _latencies(runs, chunk_delay)
    ms = {k: [v * 1000 for v in values] for k, values in out.items()}
    stats = {
        k: {"p50": percentile(v, 0.5), "p99": percentile(v, 0.99), "max": max(v)}
        for k, v in ms.items()
    }

    def line(start: str, end: str, key: str) -> dict[str, Any]:
        got = stats[key]
        note = f"p99 {got['p99']:.2f}, max {got['max']:.2f}"
        return row(f"{start} -> {end} (p50, {runs} runs)", got["p50"], "ms", note=note)

    served, local = "client drops its SSE stream", "runtime.abort() in process"
    rows = [
        line(served, "model stream closed", "served"),
        line(local, "model stream closed", "local"),
        line(served, "task CANCELLED", "served_cancel"),
        line(local, "task CANCELLED", "local_cancel"),
    ]
    return {
        "name": "serve_disconnect",
        "title": "skillrt serve: cancel_on_disconnect against an in-process abort",
        "params": {"runs": runs, "chunk_delay_s": chunk_delay},
        "rows": rows,
        "details": {"runs": runs, "ms": stats},
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_serve")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--disconnect", action="store_true", help="only disconnect_abort")
    parser.add_argument("--rate", action="store_true", help="only serve_rate")
    parser.add_argument("--serve", nargs=2, metavar=("ROOT", "DELAY_S"), help=argparse.SUPPRESS)
    parser.add_argument("--serve-bare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        _serve_bare()
        return
    if args.rate:
        print(json.dumps({"machine": machine(), **serve_rate(quick=args.quick)}, default=str))
        return
    if args.serve:
        _serve(Path(args.serve[0]), float(args.serve[1]), args.profile_out)
        return
    result = (disconnect_abort if args.disconnect else serve_concurrency)(quick=args.quick)
    print(json.dumps({"machine": machine(), **result}, default=str))


if __name__ == "__main__":
    main()
