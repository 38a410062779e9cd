"""The shared PostgreSQL store: tasks per second with 1, 2 and 4 worker processes on one
database, the per-task overhead against the embedded SQLite store in the same run, where the
CPU goes, and what each store call the runtime makes outside its committer thread costs.

Issue 29's PostgreSQL targets are measured here too: a task's median time one at a time over
the floor of the same run (4 commits, each one record's group commit: one statement that waits
for its WAL flush), and 1,000 concurrent tasks x 3 model calls of 100 ms against the ideal
0.3 s, in a subprocess of their own (its peak RSS is theirs alone).

A throwaway cluster (Debian's ``postgresql``: initdb and pg_ctl on a temp folder, a free
loopback port, ``fsync`` and ``synchronous_commit`` on, as in production) is started for the
run. Each task is the three-step durable skill of ``bench_runtime`` (no model wait), so the
figures are the runtime's and the store's cost. Workers are separate processes started
together; each runs its share of the tasks ``concurrency`` at a time. The CPU per task is
measured on both sides: the workers' own CPU time, and the database server's (every process
of the cluster, read from ``/proc``) over the same window.
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._common import current_rss_mb, peak_rss_mb, percentile, row

__all__ = ["postgres_store"]

WORKER_COUNTS = (1, 2, 4)
WARMUP = 24  # tasks each worker runs before the timed ones
FLOOR_COMMITS = 4  # a three-step task: each step's commit and its ending's (issue 29)


@dataclass(frozen=True)
class _Cluster:
    url: str
    data: Path

    def server_cpu_s(self) -> float:
        """CPU seconds used so far by the cluster's live processes (postmaster and children)."""
        try:
            postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return 0.0
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                text = Path(stat).read_text()
            except OSError:  # the process ended meanwhile
                continue
            fields = text.rsplit(")", 1)[1].split()
            pid, ppid = int(stat.split("/")[2]), int(fields[1])
            if postmaster in (pid, ppid):
                total += int(fields[11]) + int(fields[12])  # utime + stime
        return total / tick


@contextlib.contextmanager
def _cluster() -> Iterator[_Cluster]:
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
    initdb = [str(bindir / "initdb"), "-D", str(data), "-U", "bench", "--auth=trust"]
    subprocess.run([*run_as, *initdb], check=True, capture_output=True)
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c max_connections=200"
    log = str(base / "server.log")
    pg_ctl = [str(bindir / "pg_ctl"), "-D", str(data)]
    subprocess.run(
        [*run_as, *pg_ctl, "-o", options, "-l", log, "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield _Cluster(f"postgresql://bench@127.0.0.1:{port}/postgres", data)
    finally:
        subprocess.run([*run_as, *pg_ctl, "-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _runtime(
    root: Path,
    state_url: str | None,
    *,
    queued: bool = False,
    delay_s: float = 0.0,
    history_limit: int = 1000,
) -> Any:
    """The three-step skill; with ``delay_s``, each step is a model call of that long."""
    from benchmarks.bench_runtime import three_step_skill
    from skillrt import AgentRuntime, load_config
    from skillrt.testing import FunctionModel, ModelOptions

    async def answer(messages: list[Any], options: ModelOptions) -> str:
        await asyncio.sleep(delay_s)
        return "ok"

    config = load_config(
        content_root=root,
        state_dir=root / ".skillrt",
        state_url=state_url,
        failover=False,
        queue={"enabled": queued},
        history_limit=history_limit,
        log_level="warning",
    )
    if delay_s > 0:
        model = FunctionModel(answer, model="bench")
    else:
        model = FunctionModel(lambda messages, options: "ok", model="bench")
    skill = three_step_skill(model_calls=delay_s > 0)
    return AgentRuntime(config, llm=model, skills=[skill])


def _fresh_database(url: str, name: str) -> str:
    """A new empty database beside ``url``'s, after a checkpoint; its URL."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
        conn.execute("CHECKPOINT")
    return url.rsplit("/", 1)[0] + "/" + name


# The raw commit: a plain psycopg connection (autocommit), one upsert of the record's row.
_RAW_COMMIT = (
    "INSERT INTO skillrt_tasks (task_id, state, updated_at, record) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT (task_id) DO UPDATE SET state = EXCLUDED.state, "
    "updated_at = EXCLUDED.updated_at, record = EXCLUDED.record"
)


class _CommitProbe:
    """Commits on this server, each ``commit()`` timing two, in turn first: a raw one (a plain
    psycopg connection in autocommit, one upsert of a record's row into ``skillrt_tasks``: one
    round trip, one WAL flush; the floor's) and one as the runtime makes it (one record's
    group commit, ``PgTaskStore.apply``: the lease's fencing, the pool, the statement's code)."""

    def __init__(self, url: str) -> None:
        import psycopg

        from skillrt._state.postgres import PgDatabase, PgTaskStore

        self.conn = psycopg.connect(url, autocommit=True)
        self.database = PgDatabase(url)
        self.store = PgTaskStore(self.database)
        self.times: list[float] = []  # raw
        self.runtime_times: list[float] = []

    def commit(self) -> None:
        from skillrt._state.records import TaskRecord, dump_record

        record = TaskRecord(id="probe", session_id="s", state="COMPLETED", created_at=0,
                            updated_at=len(self.times), steps={"outline": "outline"})  # fmt: skip
        row = ("probe", record.state, float(record.updated_at), dump_record(record))
        # In turn first and second: on a slow disk the first of two commits waits longer.
        raw_first = len(self.times) % 2 == 0
        started = time.perf_counter()
        if raw_first:
            self.conn.execute(_RAW_COMMIT, row)
        else:
            self.store.apply([record], [])
        middle = time.perf_counter()
        if raw_first:
            self.store.apply([record], [])
        else:
            self.conn.execute(_RAW_COMMIT, row)
        ended = time.perf_counter()
        self.times.append(middle - started if raw_first else ended - middle)
        self.runtime_times.append(ended - middle if raw_first else middle - started)

    def median_us(self) -> float:
        """The raw commit's median."""
        return statistics.median(self.times) * 1e6

    def runtime_median_us(self) -> float:
        return statistics.median(self.runtime_times) * 1e6

    def close(self) -> None:
        try:
            self.store.apply([], ["probe"])
        finally:
            self.conn.close()
            self.database.close()


def commit_floor_us(url: str, samples: int = 300) -> float:
    """One raw commit on this server (median of ``samples``, µs; see ``_CommitProbe``)."""
    probe = _CommitProbe(url)
    try:
        for _ in range(samples):
            probe.commit()
        return probe.median_us()
    finally:
        probe.close()


def _concurrency_child(url: str | None, data: str | None, tasks: int, delay_s: float) -> None:
    """In a subprocess: ``tasks`` tasks at once on the database (None: on SQLite), each 3
    model calls of ``delay_s``; prints a JSON line (wall, CPU, commits, peak RSS). The server's
    CPU is read here, before the runtime closes: a session's process ends with it."""
    import json

    from benchmarks.bench_runtime import PROMPT

    async def main() -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="skillrt-bench-pgconc-") as tmp:
            rt = _runtime(Path(tmp), url, delay_s=delay_s, history_limit=max(1000, 2 * tasks))
            await rt.initialize()
            warm = await rt.process_input(PROMPT.format(i="warm-up"))
            if warm.state != "COMPLETED":
                raise RuntimeError(f"the warm-up task did not complete: {warm.content!r}")
            committer = rt._services.state.committer
            rounds_before = committer.rounds
            rss_before = current_rss_mb() or peak_rss_mb()
            cluster = _Cluster(url or "", Path(data)) if data else None
            server = cluster.server_cpu_s() if cluster else 0.0
            started, cpu = time.perf_counter(), time.process_time()
            messages = await asyncio.gather(
                *(rt.process_input(PROMPT.format(i=i)) for i in range(tasks))
            )
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            server = (cluster.server_cpu_s() - server) if cluster else 0.0
            rounds = committer.rounds - rounds_before
            completed = sum(1 for m in messages if m.state == "COMPLETED")
            await rt.close()
        return {"wall_s": wall, "cpu_s": cpu, "server_cpu_s": server, "completed": completed,
                "rounds": rounds, "rss_before_mb": rss_before,
                "peak_rss_mb": peak_rss_mb()}  # fmt: skip

    print(json.dumps(asyncio.run(main())), flush=True)


def _concurrency(cluster: _Cluster | None, tasks: int, delay_s: float) -> dict[str, Any]:
    """The concurrency run in a subprocess, on the cluster's database (None: on SQLite)."""
    import json

    url, data = (cluster.url, str(cluster.data)) if cluster else (None, None)
    code = (
        "from benchmarks.bench_postgres import _concurrency_child; "
        f"_concurrency_child({url!r}, {data!r}, {tasks}, {delay_s})"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=900, check=False,
        cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"concurrency on PostgreSQL failed:\n{done.stderr[-4000:]}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


class _Waits:
    """How long a runtime's tasks wait for their lease (``hold``, or ``hold_soon``'s future:
    from the ask to the answer, routing's work done meanwhile) and for their commits
    (``Committer.waiter``), timed around those calls; the rest of a task's time is the event
    loop's own work (and, with the queue, its round trips)."""

    def __init__(self, rt: Any) -> None:
        self.lease: list[float] = []
        self.commits: list[float] = []
        state = rt._services.state
        hold, hold_soon, waiter = state.hold, state.hold_soon, state.committer.waiter

        async def timed_hold(task_id: str) -> bool:
            started = time.perf_counter()
            try:
                return bool(await hold(task_id))
            finally:
                self.lease.append(time.perf_counter() - started)

        def timed_hold_soon(task_id: str) -> Any:
            started = time.perf_counter()
            found = hold_soon(task_id)
            if found is not None:
                found.add_done_callback(lambda _: self.lease.append(time.perf_counter() - started))
            return found

        def timed_waiter() -> Any:
            # A step and an ending await the committer's future itself (``durable`` asks for
            # it too): timed from the ask (it may hand the round over at once) to its end.
            started = time.perf_counter()
            found = waiter()
            if found is not None:
                found.add_done_callback(
                    lambda _: self.commits.append(time.perf_counter() - started)
                )
            return found

        state.hold, state.hold_soon = timed_hold, timed_hold_soon
        state.committer.waiter = timed_waiter

    def per_task_us(self, times: list[float], tasks: int) -> dict[str, float]:
        task, lease, commits = (sum(found) / tasks * 1e6 for found in (times, self.lease,
                                                                       self.commits))  # fmt: skip
        return {"task": task, "lease": lease, "commits": commits,
                "commit_waits": len(self.commits) / tasks,
                "rest": task - lease - commits}  # fmt: skip


async def _run_tasks(
    rt: Any, first: int, count: int, concurrency: int, after: Callable[[], None] | None = None
) -> list[float]:
    """Run ``count`` tasks, ``concurrency`` at a time; each one's time. ``after``: called
    after each task, untimed (a floor's probe commit, so that both see the same disk)."""
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
            if after is not None:
                after()

    await asyncio.gather(*(lane() for _ in range(concurrency)))
    return times


def _worker(url: str | None, root: str, first: int, count: int, concurrency: int) -> None:
    """A worker process: initialise and warm up (first-use imports, pools), say ready, run its
    tasks on "go", print its wall and CPU seconds, close on "close"."""

    async def main() -> None:
        rt = _runtime(Path(root), url)
        await rt.initialize()
        await _run_tasks(rt, first + count, WARMUP, concurrency)
        print("ready", flush=True)
        sys.stdin.readline()
        started, cpu = time.perf_counter(), time.process_time()
        await _run_tasks(rt, first, count, concurrency)
        print(f"{time.perf_counter() - started:.6f} {time.process_time() - cpu:.6f}", flush=True)
        sys.stdin.readline()
        await rt.close()

    asyncio.run(main())


@dataclass(frozen=True)
class _Run:
    rate: float  # tasks per second, all workers together, from "go" to the last one done
    worker_cpu_us: float  # the workers' CPU per task
    server_cpu_us: float  # the database server's CPU per task (0 without one)


def _median_run(runs: list[_Run]) -> _Run:
    """The run of median rate (its CPU figures with it)."""
    return sorted(runs, key=lambda run: run.rate)[len(runs) // 2]


def _say(procs: list[subprocess.Popen[str]], line: str) -> None:
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(line + "\n")
        proc.stdin.flush()


def _workers_run(
    cluster: _Cluster | None, base: Path, workers: int, tasks: int, concurrency: int
) -> _Run:
    """``workers`` processes on the cluster's database (None: each on its own SQLite)."""
    share = tasks // workers
    url = cluster.url if cluster is not None else None
    procs = []
    for n in range(workers):
        root = Path(tempfile.mkdtemp(prefix=f"{'pg' if url else 'sqlite'}-w{workers}-", dir=base))
        first = n * (share + WARMUP)  # task numbers unique across the run's workers
        code = (
            "from benchmarks.bench_postgres import _worker; "
            f"_worker({url!r}, {str(root)!r}, {first}, {share}, {concurrency})"
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
        server_before = cluster.server_cpu_s() if cluster is not None else 0.0
        started = time.perf_counter()
        _say(procs, "go")
        worker_cpu = 0.0
        for proc in procs:
            assert proc.stdout is not None
            fields = proc.stdout.readline().split()
            if len(fields) != 2:
                raise RuntimeError("a worker failed (see its error above)")
            worker_cpu += float(fields[1])
        elapsed = time.perf_counter() - started
        server_cpu = (cluster.server_cpu_s() - server_before) if cluster is not None else 0.0
        _say(procs, "close")
        for proc in procs:
            proc.communicate(timeout=600)
            if proc.returncode != 0:
                raise RuntimeError(f"a worker failed with exit status {proc.returncode}")
        done = share * workers
        return _Run(done / elapsed, worker_cpu / done * 1e6, server_cpu / done * 1e6)
    finally:
        for proc in procs:
            proc.kill()


def _calls_us(url: str, base: Path, repeats: int) -> dict[str, tuple[float, float]]:
    """p50 and p99 (µs) of each store call the runtime makes outside its committer thread,
    against a table of 100 paused tasks; and one asyncio.to_thread round trip for scale."""
    from skillrt._state.postgres import (
        PgDatabase,
        PgFileLocks,
        PgHistory,
        PgRunLocks,
        PgTaskStore,
    )
    from skillrt._state.records import TaskRecord

    backend = PgDatabase(url)
    store, leases = PgTaskStore(backend), PgRunLocks(backend, lease_s=30)
    history = PgHistory(backend)
    files = PgFileLocks(backend, base / "calls-blog")
    now = time.time()
    paused = [
        TaskRecord(
            id=f"t{i}",
            session_id="s",
            state="PAUSED",
            raw_input="write " * 40,
            skill="Bench3",
            steps={"outline": "o" * 400},
            created_at=now - i - 1,
            updated_at=now - i,
        )
        for i in range(100)
    ]
    store.apply(paused, [])
    ids = [f"t{i}" for i in range(100)]

    def hold_then_release() -> Callable[[], None]:
        leases.hold("x")
        return lambda: leases.release("x")

    def lock_then_release() -> Callable[[], None]:
        files.acquire("posts/a.md", "task")
        return lambda: files.release_task_locks("task")

    from skillrt._state.postgres.control import PgControl
    from skillrt._state.postgres.queue import PgQueue

    queue = PgQueue(backend, PgControl(backend), stale_s=30)

    async def queue_round() -> tuple[float, float, float]:
        started = time.perf_counter()
        request_id = await queue.put(f"q{time.perf_counter_ns()}", "{}", 10)
        put = time.perf_counter()
        queue.control.forget(-request_id)  # nobody waits for its reply here
        [entry] = queue.take_sync(1, ["model:bench"], {"model:bench": 100})
        took = time.perf_counter()
        await queue.done(entry.id, "{}")
        return put - started, took - put, time.perf_counter() - took

    async def queue_rounds() -> list[tuple[float, float, float]]:
        return [await queue_round() for _ in range(repeats)]

    parts = asyncio.run(queue_rounds())
    calls: dict[str, Callable[[], Any]] = {
        "runlocks.running_elsewhere (one task)": lambda: leases.running_elsewhere("t0"),
        "runlocks.held_elsewhere (100 tasks, batched)": lambda: leases.held_elsewhere(ids),
        "store.get (resume: one record)": lambda: store.get("t0"),
        "store.load_recent (listing: 100 records)": lambda: store.load_recent(
            max_age_s=86_400, now=time.time()
        ),
        "history.add_task (task end)": lambda: history.add_task(
            {"task_id": "h", "session_id": "s", "state": "COMPLETED", "message": "done " * 60}
        ),
        "history.add_message (a chat message)": lambda: history.add_message(
            "s", {"role": "user", "content": "write an article about topic 1"}
        ),
    }
    results = {
        "runlocks.hold (task start)": _timed_half(hold_then_release, repeats, first=True),
        "runlocks.release (task end)": _timed_half(hold_then_release, repeats),
        **{name: _timed(call, repeats) for name, call in calls.items()},
        "file lock acquire (a write; warm connection)": _timed_half(
            lock_then_release, repeats, first=True
        ),
        "file lock release_task_locks (task end, 1 lock)": _timed_half(lock_then_release, repeats),
    }

    async def hops() -> tuple[float, float]:
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            await asyncio.to_thread(lambda: None)
            times.append(time.perf_counter() - started)
        return _p50_p99(times)

    results["asyncio.to_thread round trip (for scale)"] = asyncio.run(hops())
    for n, name in enumerate(("put (queue a task)", "take (one, under a limit)", "done")):
        results[f"queue.{name}"] = _p50_p99([p[n] for p in parts])
    files.close()
    leases.close()
    backend.close()
    return results


def _p50_p99(times: list[float]) -> tuple[float, float]:
    return statistics.median(times) * 1e6, percentile(times, 0.99) * 1e6


def _timed(call: Callable[[], Any], repeats: int) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return _p50_p99(times)


def _timed_half(
    setup: Callable[[], Callable[[], None]], repeats: int, *, first: bool = False
) -> tuple[float, float]:
    """Time ``setup`` itself (``first``) or the call it returns; the other half untimed."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        second = setup()
        middle = time.perf_counter()
        second()
        ended = time.perf_counter()
        times.append(middle - started if first else ended - middle)
    return _p50_p99(times)


def _rate_rows(
    runs: dict[int, _Run], sqlite: _Run, concurrency: int, rounds: int
) -> list[dict[str, Any]]:
    rows = []
    for workers, run in runs.items():
        rows.append(
            row(
                f"postgres: tasks/s, {workers} worker process(es) x {concurrency} at a time",
                round(run.rate, 1),
                "tasks/s",
                note=(
                    f"median of {rounds}; x{run.rate / runs[1].rate:.2f} of one worker; "
                    "3 durable steps per task; "
                    f"CPU per task: workers {run.worker_cpu_us:.0f} µs, "
                    f"server {run.server_cpu_us:.0f} µs"
                ),
            )
        )
    rows.append(
        row(
            f"sqlite: tasks/s, 1 worker process x {concurrency} at a time, same run",
            round(sqlite.rate, 1),
            "tasks/s",
            note=(
                f"median of {rounds}; postgres with 1 worker: x{runs[1].rate / sqlite.rate:.2f}; "
                f"CPU per task: worker {sqlite.worker_cpu_us:.0f} µs"
            ),
        )
    )
    return rows


def postgres_store(
    tasks: int = 2000,
    concurrency: int = 8,
    sequential: int = 200,
    repeats: int = 300,
    rounds: int = 3,
    concurrent: int = 1000,
    delay_s: float = 0.1,
) -> dict[str, Any]:
    """Rows: tasks/s for 1, 2 and 4 workers on PostgreSQL and for 1 on SQLite (the median of
    ``rounds``, taken in turn so that a busy spell of the machine hits every setting alike);
    sequential per-task time on both; the cost of each store call made outside the
    committer thread."""
    rows: list[dict[str, Any]] = []
    with _cluster() as cluster, tempfile.TemporaryDirectory(prefix="skillrt-bench-") as tmp:
        base = Path(tmp)
        settings: list[tuple[_Cluster | None, int]] = [(cluster, w) for w in WORKER_COUNTS]
        settings.append((None, 1))
        taken: dict[tuple[bool, int], list[_Run]] = {}
        for _ in range(rounds):
            for db, workers in settings:
                run = _workers_run(db, base, workers, tasks, concurrency)
                taken.setdefault((db is not None, workers), []).append(run)
        median = {key: _median_run(found) for key, found in taken.items()}
        runs = {w: median[(True, w)] for w in WORKER_COUNTS}
        sqlite = median[(False, 1)]
        rows += _rate_rows(runs, sqlite, concurrency, rounds)

        cpu: dict[str, tuple[float, float]] = {}  # name -> (worker, server) CPU µs per task
        parts: dict[str, dict[str, float]] = {}  # name -> where a task's time went (µs, mean)

        async def sequential_us(
            state_url: str | None,
            name: str,
            queued: bool = False,
            probe: _CommitProbe | None = None,
        ) -> float:
            root = base / name
            root.mkdir()
            rt = _runtime(root, state_url, queued=queued)
            await rt.initialize()
            await _run_tasks(rt, 0, 20, 1)  # warm-up
            waits = _Waits(rt)
            server, worker = cluster.server_cpu_s(), time.process_time()
            after = probe.commit if probe is not None else None
            times = await _run_tasks(rt, 1000, sequential, 1, after)
            worker = time.process_time() - worker
            server = cluster.server_cpu_s() - server if state_url else 0.0
            cpu[name] = (worker / sequential * 1e6, server / sequential * 1e6)
            parts[name] = waits.per_task_us(times, sequential)
            await rt.close()
            return statistics.median(times) * 1e6

        # The floor is taken in the run it is compared with, so both see the same disk: one
        # probe commit after each task (untimed for the task), the floor's commit their median;
        # blocks of 300 before and after are shown beside it (a disk's slow spell in one of
        # them once made the floor 18x its commit). On a database of their own, as SQLite's
        # run gets a folder of its own, once the server has written out what the runs above
        # left (a checkpoint): not the aftermath of 12,000 tasks' autovacuum and dirty pages.
        fresh = _fresh_database(cluster.url, "skillrt_sequential")
        commit_us = [commit_floor_us(fresh)]
        probe = _CommitProbe(fresh)
        try:
            pg_us = asyncio.run(sequential_us(fresh, "seq-pg", probe=probe))
            between_us = probe.median_us()
            runtime_commit_us = probe.runtime_median_us()
        finally:
            probe.close()
        commit_us.append(commit_floor_us(fresh))
        queue_us = asyncio.run(sequential_us(fresh, "seq-queue", queued=True))
        sqlite_us = asyncio.run(sequential_us(None, "seq-sqlite"))
        floor_us = FLOOR_COMMITS * between_us
        rows.append(
            row(
                f"postgres: per-task time, one at a time (p50 of {sequential})",
                round(pg_us),
                "µs",
                note=f"CPU per task: worker {cpu['seq-pg'][0]:.0f} µs, "
                f"server {cpu['seq-pg'][1]:.0f} µs",
            )
        )
        pg_parts = parts["seq-pg"]
        rows.append(
            row(
                "postgres: where a task's time goes, one at a time (mean per task)",
                round(pg_parts["task"]),
                "µs",
                note=f"its lease's round trip {pg_parts['lease']:.0f} µs (routing worked out "
                "meanwhile); waiting for its "
                f"{pg_parts['commit_waits']:.1f} commits {pg_parts['commits']:.0f} µs (of which "
                f"{FLOOR_COMMITS} raw commits are the floor); the rest, the event loop's own work "
                f"(routing, the task's life cycle, the reply) {pg_parts['rest']:.0f} µs",
            )
        )
        rows.append(
            row(
                "postgres: one raw commit (a plain psycopg upsert of the record, autocommit)",
                round(between_us),
                "µs",
                note=f"median of {sequential}, one after each task of the run above; blocks of "
                "300 before and after it: " + ", ".join(f"{c:.0f}" for c in commit_us) + " µs",
            )
        )
        rows.append(
            row(
                "postgres: one commit as the runtime makes it (one record's group commit)",
                round(runtime_commit_us),
                "µs",
                note=f"median of {sequential}, right after each raw one; "
                f"x{runtime_commit_us / between_us:.2f} of it (the lease's fencing, the pool)",
            )
        )
        note = "raw; ctx.step and a task's end each wait for their commit"
        rows.append(row(f"postgres floor: {FLOOR_COMMITS} commits", round(floor_us), "µs/task",
                        note=note))  # fmt: skip
        floor_ratio = pg_us / floor_us
        rows.append(
            row(
                "postgres p50 / floor",
                round(floor_ratio, 2),
                "x",
                target="≤ 2",
                met=floor_ratio <= 2,
                note="issue 29: a task's median time over the commits its promises need; "
                f"over {FLOOR_COMMITS} of the runtime's own commits: "
                f"{pg_us / (FLOOR_COMMITS * runtime_commit_us):.2f}x",
            )
        )
        rows.append(
            row(
                "sqlite: per-task time, one at a time (p50), same run",
                round(sqlite_us),
                "µs",
                note=f"postgres - sqlite = {pg_us - sqlite_us:+.0f} µs per task "
                f"(x{pg_us / sqlite_us:.2f})",
            )
        )
        queued_parts = parts["seq-queue"]
        rows.append(
            row(
                "postgres with the work queue: per-task time, one at a time (p50)",
                round(queue_us),
                "µs",
                note=f"the queue's cost: {queue_us - pg_us:+.0f} µs per task (put, NOTIFY, take,"
                f" done, NOTIFY back to the caller); mean per task {queued_parts['task']:.0f} µs:"
                f" lease {queued_parts['lease']:.0f}, commits {queued_parts['commits']:.0f}, "
                f"the rest (the queue's round trips and wake-ups, the loop) "
                f"{queued_parts['rest']:.0f} µs",
            )
        )
        # SQLite's run right after, the same way: the machine's share of the ratio.
        fresh_cluster = _Cluster(_fresh_database(cluster.url, "skillrt_concurrency"), cluster.data)
        conc = _concurrency(fresh_cluster, concurrent, delay_s)
        conc_sqlite = _concurrency(None, concurrent, delay_s)
        ideal = 3 * delay_s
        conc_ratio = conc["wall_s"] / ideal
        rows.append(
            row(
                f"postgres: wall time, {concurrent} tasks x 3 calls of {delay_s * 1000:g} ms "
                "(checkpoints on)",
                round(conc["wall_s"], 3),
                "s",
                note=f"{conc['completed']}/{concurrent} completed; {conc['rounds']} commit "
                f"rounds ({3 * concurrent + concurrent} task commits: "
                f"{4 * concurrent / max(1, conc['rounds']):.0f} per round); CPU: worker "
                f"{conc['cpu_s']:.2f} s, server {conc['server_cpu_s']:.2f} s",
            )
        )
        rows.append(
            row(
                "postgres: wall time / ideal",
                round(conc_ratio, 2),
                "x",
                target="≤ 2",
                met=conc_ratio <= 2 and conc["completed"] == concurrent,
                note=f"ideal {ideal:g} s; SQLite right after: "
                f"{conc_sqlite['wall_s'] / ideal:.2f}x ({conc_sqlite['rounds']} commit rounds, "
                f"CPU {conc_sqlite['cpu_s']:.2f} s); postgres / sqlite "
                f"x{conc['wall_s'] / conc_sqlite['wall_s']:.2f}",
            )
        )
        rows.append(
            row(
                "postgres: peak RSS (subprocess)",
                round(conc["peak_rss_mb"], 1),
                "MiB",
                target="≤ 100",
                met=conc["peak_rss_mb"] <= 100,
                note=f"{conc['rss_before_mb']:.0f} MiB just before the tasks",
            )
        )
        calls = _calls_us(cluster.url, base, repeats)
        for name, (p50, p99) in calls.items():
            rows.append(
                row(f"postgres call: {name} (p50)", round(p50), "µs", note=f"p99 {p99:.0f} µs")
            )
    return {
        "name": "postgres",
        "title": "Shared PostgreSQL store",
        "rows": rows,
        "rates": {w: run.rate for w, run in runs.items()},
        "sqlite_rate": sqlite.rate,
        "cpu_us": {w: (run.worker_cpu_us, run.server_cpu_us) for w, run in runs.items()},
        "pg_us": pg_us,
        "floor_us": floor_us,
        "commit_us": {
            "between": between_us,
            "before": commit_us[0],
            "after": commit_us[1],
            "runtime": runtime_commit_us,
        },
        "floor_ratio": floor_ratio,
        "sequential_cpu_us": cpu,
        "concurrency": conc,
        "concurrency_sqlite": conc_sqlite,
        "queue_us": queue_us,
        "parts_us": parts,
        "sqlite_us": sqlite_us,
        "calls_us": calls,
    }
