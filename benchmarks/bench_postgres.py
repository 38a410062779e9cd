"""The shared PostgreSQL store: tasks per second with 1, 2 and 4 worker processes on one
database, and the per-task overhead against the embedded SQLite store in the same run.

A throwaway cluster (Debian's ``postgresql``: initdb and pg_ctl on a temp folder, a free
loopback port, ``fsync`` and ``synchronous_commit`` on, as in production) is started for the
run. Each task is the three-step durable skill of ``bench_runtime`` (no model wait), so the
figures are the store's cost. Workers are separate processes started together; each runs its
share of the tasks ``concurrency`` at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks._common import row

__all__ = ["postgres_store"]


@contextlib.contextmanager
def _cluster() -> Iterator[str]:
    bindirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    if not bindirs:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
    bindir = Path(bindirs[0])
    run_as: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="skillrt-bench-pg-"))
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
        os.chown(base, pw.pw_uid, pw.pw_gid)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = base / "data"
    subprocess.run(
        [*run_as, str(bindir / "initdb"), "-D", str(data), "-U", "bench", "--auth=trust"],
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c max_connections=200"
    subprocess.run(
        [
            *run_as,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(base / "server.log"),
            "-w",
            "start",
        ],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://bench@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"],
            capture_output=True,
        )
        shutil.rmtree(base, ignore_errors=True)


def _runtime(root: Path, state_url: str | None) -> Any:
    from benchmarks.bench_runtime import three_step_skill
    from skillrt import AgentRuntime, load_config
    from skillrt.testing import FunctionModel

    config = load_config(
        content_root=root, state_dir=root / ".skillrt", state_url=state_url, failover=False
    )
    model = FunctionModel(lambda messages, options: "ok", model="bench")
    return AgentRuntime(config, llm=model, skills=[three_step_skill(model_calls=False)])


async def _run_tasks(rt: Any, first: int, count: int, concurrency: int) -> list[float]:
    from benchmarks.bench_runtime import PROMPT

    times: list[float] = []
    queue = iter(range(first, first + count))

    async def lane() -> None:
        for i in queue:
            started = time.perf_counter()
            msg = await rt.process_input(PROMPT.format(i=i))
            times.append(time.perf_counter() - started)
            if msg.state != "COMPLETED":
                raise RuntimeError(f"task {i}: {msg.state} {msg.content!r}")

    await asyncio.gather(*(lane() for _ in range(concurrency)))
    return times


def _worker(url: str, root: str, first: int, count: int, concurrency: int) -> None:
    """A worker process: initialise, wait for the go line, run its tasks, print the time."""

    async def main() -> None:
        rt = _runtime(Path(root), url)
        await rt.initialize()
        print("ready", flush=True)
        sys.stdin.readline()
        started = time.perf_counter()
        await _run_tasks(rt, first, count, concurrency)
        print(f"{time.perf_counter() - started:.6f}", flush=True)
        await rt.close()

    asyncio.run(main())


def _workers_rate(url: str, base: Path, workers: int, tasks: int, concurrency: int) -> float:
    """Tasks per second, all workers together, from "go" to the last one done."""
    share = tasks // workers
    procs = []
    for n in range(workers):
        root = base / f"w{workers}-{n}"
        root.mkdir()
        code = (
            "from benchmarks.bench_postgres import _worker; "
            f"_worker({url!r}, {str(root)!r}, {n * share}, {share}, {concurrency})"
        )
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", code],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                cwd=Path(__file__).resolve().parent.parent,
            )
        )
    try:
        for proc in procs:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError("a worker did not start")
        started = time.perf_counter()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            proc.communicate(timeout=600)
            if proc.returncode != 0:
                raise RuntimeError(f"a worker failed with exit status {proc.returncode}")
        return share * workers / (time.perf_counter() - started)
    finally:
        for proc in procs:
            proc.kill()


def postgres_store(tasks: int = 400, concurrency: int = 8, sequential: int = 150) -> dict[str, Any]:
    """Rows: tasks/s for 1, 2 and 4 workers; sequential per-task µs on PostgreSQL and SQLite."""
    rows: list[dict[str, Any]] = []
    with _cluster() as url, tempfile.TemporaryDirectory(prefix="skillrt-bench-") as tmp:
        base = Path(tmp)
        rates = {w: _workers_rate(url, base, w, tasks, concurrency) for w in (1, 2, 4)}
        for workers, rate in rates.items():
            rows.append(
                row(
                    f"postgres: tasks/s, {workers} worker process(es) x {concurrency} at a time",
                    round(rate, 1),
                    "tasks/s",
                    note=f"x{rate / rates[1]:.2f} of one worker; 3 durable steps per task",
                )
            )

        async def sequential_us(state_url: str | None, name: str) -> float:
            root = base / name
            root.mkdir()
            rt = _runtime(root, state_url)
            await rt.initialize()
            await _run_tasks(rt, 0, 20, 1)  # warm-up
            times = await _run_tasks(rt, 1000, sequential, 1)
            await rt.close()
            return statistics.median(times) * 1e6

        pg_us = asyncio.run(sequential_us(url, "seq-pg"))
        sqlite_us = asyncio.run(sequential_us(None, "seq-sqlite"))
        rows.append(row("postgres: per-task time, one at a time (p50)", round(pg_us), "µs"))
        rows.append(
            row(
                "sqlite: per-task time, one at a time (p50), same run",
                round(sqlite_us),
                "µs",
                note=f"postgres / sqlite = {pg_us / sqlite_us:.2f}",
            )
        )
    return {"rows": rows, "rates": rates, "pg_us": pg_us, "sqlite_us": sqlite_us}
