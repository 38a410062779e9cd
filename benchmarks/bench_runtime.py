"""Runtime benchmarks: per-task overhead against LangGraph, 1,000 concurrent tasks, resume.

Each public function returns a result dict (``name``, ``title``, ``params``, ``rows``,
``details``); ``python -m benchmarks`` prints them. The concurrency benchmark runs in a
subprocess (``python -m benchmarks.bench_runtime concurrency ...``) so that its peak RSS is
its own; the start-up runs in fresh processes (``... resume ROOT``), as a start-up does.

Equivalent work on both sides of the per-task comparison: three steps that do no work (they
return a small constant; ``context`` echoes the topic), each made durable before the next one
starts. LangGraph's nodes call no model, so neither do skillrt's steps in the headline row;
routing is a regex hit (each task has its own topic, so the router cache cannot answer). A
second skillrt row has every step call ``ctx.llm.chat`` once on a ``FunctionModel`` that
answers at once, to show what the model path (budget, usage, events) adds; it has no
LangGraph counterpart. Two more rows split the cost: skillrt with ``checkpoints = false``
(in-memory store and history) and LangGraph with SQLite ``synchronous=OFF`` (every write
made, no fsync), i.e. each framework's CPU cost without the disk.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchmarks._common import current_rss_mb, peak_rss_mb, percentile, row, temp_dir

__all__ = [
    "concurrency",
    "make_runtime",
    "per_task_overhead",
    "resume_startup",
    "three_step_skill",
]

PROMPT = "write an article about topic {i}"
"""The input of task ``i``: a regex hit for WRITE_ARTICLE with its own topic."""


class TopicParams(BaseModel):
    topic: str


def three_step_skill(*, model_calls: bool) -> Any:
    """The benchmark task: context -> outline -> content, each a durable ``ctx.step``.

    With ``model_calls`` every step asks the model once (``ctx.llm.chat``) and keeps its
    answer; without, the steps return constants.
    """
    from skillrt import SkillContext, SkillResult, skill

    @skill(name="Bench3", params=TopicParams, intents=["WRITE_ARTICLE"], description="bench")
    async def bench3(ctx: SkillContext, params: TopicParams) -> SkillResult:
        async def ask(what: str) -> str:
            return (await ctx.llm.chat([{"role": "user", "content": what}])).content

        async def const(value: Any) -> Any:
            return value

        # Async step functions run on the loop; a sync one would run in a thread (file I/O).
        if model_calls:
            await ctx.step("context", partial(ask, f"context {params.topic}"))
            await ctx.step("outline", partial(ask, f"outline {params.topic}"))
            await ctx.step("content", partial(ask, f"write {params.topic}"))
        else:
            await ctx.step("context", partial(const, {"topic": params.topic}))
            await ctx.step("outline", partial(const, "outline"))
            await ctx.step("content", partial(const, "content"))
        return SkillResult(message="done", data={"topic": params.topic})

    return bench3


def make_runtime(
    root: Path,
    *,
    model_calls: bool = False,
    delay_s: float = 0.0,
    checkpoints: bool = True,
    history_limit: int = 1000,
    commit_on_loop: bool | None = None,
    calls: list[tuple[float, str]] | None = None,
) -> Any:
    """A runtime over an empty blog in ``root`` with the three-step skill and a FunctionModel.

    The model answers "ok" at once, or after ``delay_s`` (an ``asyncio.sleep``); with
    ``calls``, each call appends when it started (``time.perf_counter()``) and its prompt.
    """
    from skillrt import AgentRuntime, load_config
    from skillrt.testing import FunctionModel, ModelOptions

    async def answer(messages: list[Any], options: ModelOptions) -> str:
        if calls is not None:
            last = messages[-1]
            calls.append(
                (time.perf_counter(), str(last["content"] if isinstance(last, dict) else last))
            )
        if delay_s > 0:
            await asyncio.sleep(delay_s)
        return "ok"

    config = load_config(
        content_root=root,
        state_dir=root / ".skillrt",
        checkpoints=checkpoints,
        history_limit=history_limit,
        log_level="warning",
        commit_on_loop=commit_on_loop,
    )
    model = FunctionModel(answer, model="bench")
    return AgentRuntime(config, llm=model, skills=[three_step_skill(model_calls=model_calls)])


def concurrency_runtime(
    root: Path,
    tasks: int,
    delay_s: float,
    checkpoints: bool,
    calls: list[tuple[float, str]] | None = None,
) -> Any:
    """The runtime the concurrency benchmark (and its profile) runs ``tasks`` tasks at once on
    (``calls``: see ``make_runtime``)."""
    return make_runtime(
        root,
        model_calls=True,
        delay_s=delay_s,
        checkpoints=checkpoints,
        history_limit=max(1000, tasks * 2),
        calls=calls,
    )


# --- 1. per-task overhead ---------------------------------------------------------------------


async def _skillrt_task(rt: Any, i: int) -> float:
    return await _timed(rt.process_input(PROMPT.format(i=i)), i)


async def _direct_task(rt: Any, i: int) -> float:
    """Task ``i`` as a blog tool's button runs it: ``run_skill``, no routing (what LangGraph's
    and DBOS's sides do too: they are handed the topic)."""
    return await _timed(rt.run_skill("Bench3", {"topic": f"topic {i}"}), i)


async def _timed(call: Any, i: int) -> float:
    """Seconds ``call`` (task ``i``'s reply) took; an error when the task did not complete."""
    started = time.perf_counter()
    msg = await call
    elapsed = time.perf_counter() - started
    if msg.state != "COMPLETED" or msg.data.get("topic") != f"topic {i}":
        raise RuntimeError(f"skillrt task {i} did not complete: {msg.state} {msg.content!r}")
    return elapsed


def _stats(seconds: list[float]) -> dict[str, float]:
    return {
        "mean_us": statistics.fmean(seconds) * 1e6,
        "p50_us": percentile(seconds, 0.5) * 1e6,
        "p95_us": percentile(seconds, 0.95) * 1e6,
        "n": len(seconds),
    }


def _p50_ratio(stats: dict[str, dict[str, float]], a: str, b: str) -> float:
    return stats[a]["p50_us"] / stats[b]["p50_us"]


async def _count_writes(root: Path) -> dict[str, float]:
    """Durable writes of one skillrt task: checkpoint saves/deletes and history commits."""
    from skillrt._state.embedded.checkpoints import CheckpointStore

    counts = {
        "checkpoint_commits": 0,
        "checkpoint_saves": 0,
        "checkpoint_deletes": 0,
        "history_commits": 0,
    }

    class CountingStore(CheckpointStore):
        def apply(self, saves: list[Any], deletes: list[str]) -> None:  # the group commit
            counts["checkpoint_commits"] += 1
            counts["checkpoint_saves"] += len(saves)
            counts["checkpoint_deletes"] += len(deletes)
            super().apply(saves, deletes)

    rt = make_runtime(root)
    rt._store = CountingStore(root / ".skillrt" / "checkpoints")
    await rt.initialize()
    history = rt.history

    def counting(fn: Callable[..., None]) -> Callable[..., None]:
        def wrapper(*args: Any, **kwargs: Any) -> None:
            counts["history_commits"] += 1
            fn(*args, **kwargs)

        return wrapper

    history.add_batch = counting(history.add_batch)
    tasks = 10
    for i in range(tasks):
        await _skillrt_task(rt, i)
    await rt.close()
    return {key: value / tasks for key, value in counts.items()}


def disk_probes(directory: Path, samples: int) -> dict[str, list[float]]:
    """What the disk costs alone, in ``directory`` (seconds per sample): ``fdatasync`` after a
    1 KiB overwrite in a preallocated file (what SQLite's WAL does); ``bare``, the floor's
    commit: a SQLite transaction (WAL, synchronous=FULL) upserting one record's JSON text into
    a one-table database, as plain as a durable write of a record can be; ``store``, the
    store's own group commit of one record (``CheckpointStore.apply``: the same transaction
    with the store's table, indexes and triggers)."""
    from skillrt._state.embedded.checkpoints import CheckpointStore
    from skillrt._state.records import TaskRecord, dump_record

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "fsync-probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    syncs = []
    try:
        os.pwrite(fd, b"\0" * 65536, 0)
        os.fsync(fd)
        for i in range(samples):
            os.pwrite(fd, b"x" * 1024, (i % 16) * 4096)
            started = time.perf_counter()
            os.fdatasync(fd)
            syncs.append(time.perf_counter() - started)
    finally:
        os.close(fd)
        path.unlink()

    def probe(i: int) -> TaskRecord:
        return TaskRecord(
            id="probe",
            session_id="s",
            state="EXECUTING",
            created_at=0,
            updated_at=i,
            steps={"outline": "outline"},
        )

    store = CheckpointStore(directory / "probe-store")
    commits = []
    try:
        for i in range(samples):
            record = probe(i)
            started = time.perf_counter()
            store.apply([record], [])
            commits.append(time.perf_counter() - started)
    finally:
        store.close()

    bare = []
    db = sqlite3.connect(directory / "probe-bare.db", isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("CREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, record TEXT)")
        upsert = "INSERT OR REPLACE INTO records VALUES (?, ?)"
        cpu_started = time.thread_time()  # this thread's CPU: SQLite's and the fsyncs' own
        for i in range(samples):
            text = dump_record(probe(i))
            started = time.perf_counter()
            db.execute("BEGIN IMMEDIATE")
            db.execute(upsert, ("probe", text))
            db.execute("COMMIT")
            bare.append(time.perf_counter() - started)
        bare_cpu = [(time.thread_time() - cpu_started) / samples]
    finally:
        db.close()
    return {"fdatasync": syncs, "bare": bare, "store": commits, "bare_cpu": bare_cpu}


def fsync_floor(probes: dict[str, list[float]]) -> dict[str, float]:
    """Medians of ``disk_probes`` samples (µs), and an ``asyncio.to_thread`` round trip doing
    nothing."""

    async def handoff() -> list[float]:
        out = []
        for _ in range(200):
            started = time.perf_counter()
            await asyncio.to_thread(lambda: None)
            out.append(time.perf_counter() - started)
        return out

    hops = asyncio.run(handoff())
    return {
        "fdatasync_us": statistics.median(probes["fdatasync"]) * 1e6,
        "commit_us": statistics.median(probes["bare"]) * 1e6,
        "store_commit_us": statistics.median(probes["store"]) * 1e6,
        "commit_cpu_us": statistics.median(probes["bare_cpu"]) * 1e6,
        "handoff_us": statistics.median(hops) * 1e6,
    }


def per_task_overhead(tasks: int = 600, rounds: int = 3, warmup: int = 30) -> dict[str, Any]:
    """µs per three-step durable task: skillrt against LangGraph + SqliteSaver, same run.

    The sides alternate in ``rounds`` blocks of ``tasks / rounds`` tasks each, so that drift
    on the machine (other load, disk cache) falls on all of them alike.
    """
    result = asyncio.run(_per_task(tasks, rounds, warmup))
    probes = result["details"].pop("disk_probes")
    floor = fsync_floor({k: [x for r in probes for x in r[k]] for k in probes[0]})
    commits = result["details"]["skillrt_writes_per_task"]["checkpoint_commits"]
    stats = result["details"]["stats"]
    rows = result["rows"]
    floor_us = commits * floor["commit_us"]
    rows.append(
        row(
            "floor's commit: a bare SQLite transaction of 1 record (WAL, FULL)",
            floor["commit_us"],
            "µs",
            note=f"median; fdatasync alone {floor['fdatasync_us']:,.0f} µs;"
            f" an asyncio.to_thread round trip {floor['handoff_us']:.0f} µs",
        )
    )
    rows.append(
        row(
            "the store's group commit of 1 record (CheckpointStore.apply)",
            floor["store_commit_us"],
            "µs",
            note="median; the same transaction with the store's table, indexes and triggers",
        )
    )
    note = "ctx.step and a task's end each wait for their commit: no fewer keep both promises"
    rows.append(row(f"floor: {commits:g} commits x one commit", floor_us, "µs/task", note=note))

    def floor_ratios(side: str) -> list[float]:
        """Each round's p50 of ``side`` against the floor probed right after it: the disk's
        speed drifts (and a slow spell flatters the ratio), so each compares like with like."""
        return [
            statistics.median(p50s) / (commits * statistics.median(r["bare"]) * 1e6)
            for p50s, r in zip(result["details"][side], probes, strict=True)
        ]

    def ratio_row(metric: str, side: str, note: str, target: bool) -> dict[str, Any]:
        """``side``'s p50 over the floor: the median of its rounds' ratios, each listed."""
        ratios = floor_ratios(side)
        ratio = statistics.median(ratios)
        return row(
            metric,
            ratio,
            "x",
            target="≤ 1.5" if target else None,
            met=ratio <= 1.5 if target else None,
            note=note + ", ".join(f"{r:.2f}" for r in ratios),
        )

    rows += [
        ratio_row(
            "skillrt p50 / floor",
            "round_times",
            "a task's median time over the fsynced commits its promises need, median of"
            " the rounds' ratios, the floor probed after each round: ",
            target=True,
        ),
        ratio_row(
            "  run_skill (no routing) p50 / floor",
            "direct_round_times",
            "the same ratio for the durable path alone: ",
            target=False,
        ),
        ratio_row(
            "  commit_on_loop (the CLI's way) p50 / floor",
            "onloop_round_times",
            "the same ratio through process_input, a task alone committing on the loop: ",
            target=True,
        ),
    ]
    # The CPU a task cannot go below here: the work it does with checkpoints off, and the
    # CPU of the commits its promises need (SQLite's and the kernel's, in one thread).
    timed = result["params"]["tasks_per_side"]
    cpu_off_us = result["details"]["skillrt_cpu_s"]["skillrt_memory"] / timed * 1e6
    floor_cpu_us = commits * floor["commit_cpu_us"]
    rows.append(
        row(
            f"floor's CPU: {commits:g} bare commits",
            floor_cpu_us,
            "µs/task",
            note=f"{floor['commit_cpu_us']:,.0f} µs of CPU a commit (its thread's, fsync's"
            " kernel time included), median of the probes",
        )
    )
    rows.append(
        row(
            "  with the task's own work (checkpoints-off CPU)",
            floor_cpu_us + cpu_off_us,
            "µs/task",
            note="the least CPU a durable task could take on this machine, against the ≤ 600"
            " target; work run between fsyncs costs more than this on a VM (cold caches)",
        )
    )
    if "langgraph" in stats:
        rows.append(
            row(
                "floor / LangGraph (durable)",
                floor_us / stats["langgraph"]["mean_us"],
                "x",
                note="the best ratio skillrt could show in this run with these commits",
            )
        )
    result["details"]["fsync_floor"] = floor
    return result


async def _per_task(tasks: int, rounds: int, warmup: int) -> dict[str, Any]:
    from benchmarks import _dbos, _langgraph

    have_langgraph = _langgraph.available()
    have_dbos = _dbos.available()
    per_round = max(1, tasks // rounds)
    times: dict[str, list[float]] = {}
    with temp_dir("pertask") as base, contextlib.ExitStack() as stack:
        # Every side is a callable running task i; the LangGraph ones are plain functions.
        lg: dict[str, Callable[[int], float]] = {}
        if have_langgraph:
            for name, sync in (("langgraph", "FULL"), ("langgraph_nofsync", "OFF")):
                (base / name).mkdir()
                runner = _langgraph.langgraph_runner(base / name, synchronous=sync)
                lg[name] = stack.enter_context(runner)
        if have_dbos:
            (base / "dbos").mkdir()
            lg["dbos"] = stack.enter_context(_dbos.dbos_runner(base / "dbos"))
        sides: dict[str, Any] = {}
        for name, kwargs in (
            ("skillrt", {}),
            ("skillrt_memory", {"checkpoints": False}),
            ("skillrt_model", {"model_calls": True}),
            ("skillrt_direct", {}),
            ("skillrt_onloop", {"commit_on_loop": True}),  # as the CLI runs tasks
        ):
            (base / name).mkdir()
            sides[name] = make_runtime(base / name, **kwargs)
            await sides[name].initialize()
        times = {name: [] for name in (*lg, *sides)}
        task_of = {
            name: _direct_task if name == "skillrt_direct" else _skillrt_task for name in sides
        }
        cpu: dict[str, float] = {}  # process CPU seconds per skillrt side (all threads)
        loop_cpu: dict[str, float] = {}  # of which the event loop's thread
        round_times: list[list[float]] = []  # skillrt's task times, per round
        direct_round_times: list[list[float]] = []  # the same through run_skill
        onloop_round_times: list[list[float]] = []  # and with commit_on_loop
        probes: list[dict[str, list[float]]] = []  # the floor probed after each round
        try:
            counter = 0
            for _ in range(warmup):
                counter += 1
                for run in lg.values():
                    run(counter)
                for name, rt in sides.items():
                    await task_of[name](rt, counter)
            for _ in range(rounds):
                for name, run in lg.items():
                    for _ in range(per_round):
                        counter += 1
                        times[name].append(run(counter))
                for name, rt in sides.items():
                    cpu_started, loop_started = time.process_time(), time.thread_time()
                    for _ in range(per_round):
                        counter += 1
                        times[name].append(await task_of[name](rt, counter))
                    cpu[name] = cpu.get(name, 0.0) + time.process_time() - cpu_started
                    # The event loop runs in this thread: the rest is the commit thread's
                    loop_cpu[name] = loop_cpu.get(name, 0.0) + time.thread_time() - loop_started
                round_times.append(times["skillrt"][-per_round:])
                direct_round_times.append(times["skillrt_direct"][-per_round:])
                onloop_round_times.append(times["skillrt_onloop"][-per_round:])
                # The floor, probed now (nothing else runs): the disk as these tasks had it.
                probes.append(disk_probes(base / f"floor-{len(probes)}", 60))
            recorded = len(sides["skillrt"].history.tasks(limit=10**6))
        finally:
            for rt in sides.values():
                await rt.close()
        lg_rows = _langgraph.checkpoint_rows(base / "langgraph") if have_langgraph else (0, 0)
        (base / "count").mkdir()
        writes = await _count_writes(base / "count")

    stats = {name: _stats(values) for name, values in times.items()}
    on_us = stats["skillrt"]["mean_us"]
    off_us = stats["skillrt_memory"]["mean_us"]
    lg_us = stats["langgraph"]["mean_us"] if have_langgraph else None

    def _p(name: str) -> str:
        st = stats[name]
        return f"mean; p50 {st['p50_us']:,.0f}, p95 {st['p95_us']:,.0f}"

    rows = []
    if lg_us is not None:
        rows.append(
            row(
                "LangGraph StateGraph + SqliteSaver, durability=sync",
                lg_us,
                "µs/task",
                note=_p("langgraph"),
            )
        )
    rows.append(row("skillrt process_input, checkpoints on", on_us, "µs/task", note=_p("skillrt")))
    if lg_us is not None:
        rows.append(
            row(
                "skillrt / LangGraph (durable)",
                on_us / lg_us,
                "x",
                target="< 1",
                met=on_us < lg_us,
                note=f"ratio of medians {_p50_ratio(stats, 'skillrt', 'langgraph'):.2f}",
            )
        )
    else:
        rows.append(
            row(
                "skillrt / LangGraph",
                None,
                note="langgraph not installed: pip install -e '.[bench]'",
            )
        )
    if have_dbos:
        dbos_us = stats["dbos"]["mean_us"]
        rows.append(row("DBOS workflow of 3 steps, SQLite", dbos_us, "µs/task", note=_p("dbos")))
        rows.append(
            row(
                "skillrt / DBOS (durable)",
                on_us / dbos_us,
                "x",
                target="< 1",
                met=on_us < dbos_us,
                note=f"ratio of medians {_p50_ratio(stats, 'skillrt', 'dbos'):.2f}",
            )
        )
    else:
        missing = "dbos not installed: pip install -e '.[bench]'"
        rows.append(row("skillrt / DBOS", None, note=missing))
    rows.append(
        row(
            "skillrt, checkpoints on, each step calls the model",
            stats["skillrt_model"]["mean_us"],
            "µs/task",
            note="a FunctionModel answering at once; no LangGraph counterpart",
        )
    )
    commits, saves, deletes, history = (
        writes["checkpoint_commits"],
        writes["checkpoint_saves"],
        writes["checkpoint_deletes"],
        writes["history_commits"],
    )
    rows.append(
        row(
            "skillrt fsynced commits per task",
            commits,
            "",
            note=f"group commits carrying {saves:g} checkpoint saves and {deletes:g} delete;"
            f" {history:g} history writes (synchronous=NORMAL, no fsync, in the commit thread)",
        )
    )
    if have_langgraph:
        n_lg = len(times["langgraph"]) + warmup
        rows.append(
            row(
                "LangGraph fsynced commits per task",
                (lg_rows[0] + lg_rows[1]) / n_lg,
                "",
                note=f"{lg_rows[0] / n_lg:g} checkpoints, {lg_rows[1] / n_lg:g} writes",
            )
        )
    rows.append(
        row("skillrt process_input, checkpoints off", off_us, "µs/task", note=_p("skillrt_memory"))
    )

    def per_task_us(seconds: dict[str, float], name: str) -> float:
        return seconds[name] / len(times[name]) * 1e6

    cpu_off_us, cpu_on_us = per_task_us(cpu, "skillrt_memory"), per_task_us(cpu, "skillrt")
    rows.append(
        row(
            "skillrt CPU per task, checkpoints on",
            cpu_on_us,
            "µs/task",
            target="≤ 600",
            met=cpu_on_us <= 600,
            note="process CPU time (every thread, the commit thread's fsyncs included)",
        )
    )
    loop_on_us = per_task_us(loop_cpu, "skillrt")
    loop_off_us = per_task_us(loop_cpu, "skillrt_memory")
    rows.append(
        row(
            "  of which on the event loop's thread, checkpoints on",
            loop_on_us,
            "µs/task",
            note=f"{loop_off_us:,.0f} with checkpoints off; the rest"
            f" ({cpu_on_us - loop_on_us:,.0f}) is the commit thread's: SQLite, fsyncs, history",
        )
    )
    rows.append(
        row(
            "skillrt CPU per task, checkpoints off",
            cpu_off_us,
            "µs/task",
            target="≤ 250",
            met=cpu_off_us <= 250,
            note="process CPU time (every thread) over the timed tasks",
        )
    )
    direct_cpu_us = per_task_us(cpu, "skillrt_direct")
    direct_loop_us = per_task_us(loop_cpu, "skillrt_direct")
    rows.append(
        row(
            "skillrt run_skill (no routing), checkpoints on",
            stats["skillrt_direct"]["mean_us"],
            "µs/task",
            note=_p("skillrt_direct") + "; the durable path without routing, as the peers run",
        )
    )
    rows.append(
        row(
            "  its CPU per task",
            direct_cpu_us,
            "µs/task",
            note=f"{direct_loop_us:,.0f} on the event loop's thread; against"
            f" {cpu_on_us:,.0f} through process_input: routing and the chat turn cost the rest",
        )
    )
    onloop_cpu_us = per_task_us(cpu, "skillrt_onloop")
    rows.append(
        row(
            "skillrt process_input, commit_on_loop (the CLI's way)",
            stats["skillrt_onloop"]["mean_us"],
            "µs/task",
            note=_p("skillrt_onloop") + "; a task alone commits on the event loop, no"
            " hand-over to the commit thread (off in the Python API, never in serve)",
        )
    )
    rows.append(
        row(
            "  its CPU per task",
            onloop_cpu_us,
            "µs/task",
            target="≤ 600",
            met=onloop_cpu_us <= 600,
            note=f"process CPU time; against {cpu_on_us:,.0f} with the commit thread",
        )
    )
    if lg_us is not None:
        rows.append(
            row(
                "skillrt run_skill / LangGraph (durable)",
                stats["skillrt_direct"]["mean_us"] / lg_us,
                "x",
                note=f"ratio of medians {_p50_ratio(stats, 'skillrt_direct', 'langgraph'):.2f}",
            )
        )
    if have_langgraph:
        nofsync_us = stats["langgraph_nofsync"]["mean_us"]
        rows.append(
            row(
                "LangGraph, SQLite synchronous=OFF (no fsync)",
                nofsync_us,
                "µs/task",
                note=_p("langgraph_nofsync"),
            )
        )
        rows.append(
            row(
                "skillrt (checkpoints off) / LangGraph (no fsync)",
                off_us / nofsync_us,
                "x",
                note=(
                    "each framework's CPU cost without the disk; ratio of medians"
                    f" {_p50_ratio(stats, 'skillrt_memory', 'langgraph_nofsync'):.2f}"
                ),
            )
        )
    return {
        "name": "per_task",
        "title": "1. Per-task overhead: 3 empty durable steps",
        "params": {"tasks_per_side": per_round * rounds, "rounds": rounds, "warmup": warmup},
        "rows": rows,
        "details": {
            "stats": stats,
            "skillrt_writes_per_task": writes,
            "skillrt_history_entries": recorded,
            "skillrt_cpu_s": cpu,
            "skillrt_loop_cpu_s": loop_cpu,
            "round_times": [[t * 1e6 for t in r] for r in round_times],
            "direct_round_times": [[t * 1e6 for t in r] for r in direct_round_times],
            "onloop_round_times": [[t * 1e6 for t in r] for r in onloop_round_times],
            "disk_probes": probes,
            "langgraph_version": _langgraph.langgraph_version() if have_langgraph else None,
            "dbos_version": _dbos.dbos_version() if have_dbos else None,
        },
    }


# --- 2. concurrency ----------------------------------------------------------------------------


async def _concurrency_child(tasks: int, delay_s: float, checkpoints: bool) -> dict[str, Any]:
    with temp_dir("concurrency") as root:
        calls: list[tuple[float, str]] = []
        rt = concurrency_runtime(root, tasks, delay_s, checkpoints, calls)
        await rt.initialize()
        # One task first, untimed: what happens once per process (the router compiling its
        # table for the first input, the first checkpoint commit) is not concurrency.
        warm = await rt.process_input(PROMPT.format(i="warm-up"))
        if warm.state != "COMPLETED":
            raise RuntimeError(f"the warm-up task did not complete: {warm.content!r}")
        calls_before = rt.llm.call_count
        rss_before = current_rss_mb() or peak_rss_mb()
        calls.clear()
        loop_cpu = time.thread_time()  # the event loop's thread: what bounds this run
        started = time.perf_counter()
        messages = await asyncio.gather(
            *(rt.process_input(PROMPT.format(i=i)) for i in range(tasks))
        )
        wall = time.perf_counter() - started
        loop_cpu = time.thread_time() - loop_cpu
        # Where the wall time goes: each task's three calls start in turn ("context",
        # "outline", "write"); the last of the first calls starts once every input has been
        # routed and its task started, one after the other on the loop.
        starts = {
            kind: sorted(t - started for t, prompt in calls if prompt.startswith(kind))
            for kind in ("context", "outline", "write")
        }
        routing_us = _routing_us(rt, tasks)
        completed = sum(1 for m in messages if m.state == "COMPLETED")
        recorded = rt.history.tasks(limit=tasks + 10)
        recorded_ok = sum(
            1 for e in recorded if e.get("state") == "COMPLETED" and "warm-up" not in e["input"]
        )
        left = rt.store.all_ids()
        calls = rt.llm.call_count - calls_before
        await rt.close()
    return {
        "tasks": tasks,
        "wall_s": wall,
        "completed": completed,
        "recorded": recorded_ok,
        "model_calls": calls,
        "records_left": len(left),
        "rss_before_mb": rss_before,
        "peak_rss_mb": peak_rss_mb(),
        "loop_cpu_s": loop_cpu,
        "calls_started_s": {k: [v[0], v[-1]] if v else None for k, v in starts.items()},
        "routing_us": routing_us,
    }


def _routing_us(rt: Any, tasks: int) -> float:
    """µs of routing per input, as the runtime routes (the table and the classifier, no
    model), over ``tasks`` inputs of the benchmark's kind that its cache has not seen."""
    router = rt.router
    texts = [PROMPT.format(i=f"again {i}") for i in range(tasks)]
    started = time.perf_counter()
    for text in texts:
        router.decide(text)
    return (time.perf_counter() - started) / tasks * 1e6


def concurrency(
    tasks: int = 1000, delay_s: float = 0.1, checkpoints: bool = True
) -> dict[str, Any]:
    """``tasks`` tasks at once, each three model calls of ``delay_s``: wall time, RSS, records.

    Runs in a subprocess so that the peak RSS is this benchmark's alone (read as ``VmHWM``:
    Linux carries ``ru_maxrss`` over fork and exec, so it would show the parent's peak).
    """
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.bench_runtime",
        "concurrency",
        "--tasks",
        str(tasks),
        "--delay",
        str(delay_s),
        "--checkpoints" if checkpoints else "--no-checkpoints",
    ]
    root = str(Path(__file__).resolve().parent.parent)  # so the child finds `benchmarks`
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900, env=env)
    if done.returncode != 0:
        raise RuntimeError(
            f"concurrency subprocess failed ({done.returncode}):\n{done.stderr[-4000:]}"
        )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    ideal = 3 * delay_s
    ratio = out["wall_s"] / ideal
    all_ok = (
        out["completed"] == tasks and out["recorded"] == tasks and out["model_calls"] == 3 * tasks
    )
    label = "on" if checkpoints else "off"
    first = out["calls_started_s"]["context"]
    rows = [
        row(
            f"wall time, {tasks} tasks x 3 calls of {delay_s * 1000:g} ms (checkpoints {label})",
            out["wall_s"],
            "s",
        ),
        row(
            "  the event loop's CPU over it",
            out["loop_cpu_s"],
            "s",
            note=f"{out['loop_cpu_s'] / tasks * 1e6:.0f} µs a task: the loop runs every task's "
            "Python, so this bounds the run",
        ),
        row(
            "  the last task's first model call started after",
            first[1] * 1000 if first else None,
            "ms",
            note="every input routed and its task started, one after another on the loop, "
            f"before it (the first one's after {first[0] * 1000:.0f} ms); the router's "
            f"table and classifier alone {out['routing_us']:.0f} µs an input (after the run)",
        ),
        row(
            "wall time / ideal",
            ratio,
            "x",
            # issue 29: 1.5x with checkpoints on, on SQLite (2x is PostgreSQL's, its benchmark)
            target="≤ 1.5",
            met=ratio <= 1.5,
            note=f"ideal {ideal:g} s",
        ),
        row(
            "peak RSS (subprocess)",
            out["peak_rss_mb"],
            "MiB",
            target="≤ 100",
            met=out["peak_rss_mb"] <= 100,
            note=f"{out['rss_before_mb']:.0f} MiB just before the tasks (imports, runtime)",
        ),
        row(
            "tasks completed / recorded in history",
            f"{out['completed']}/{out['recorded']} of {tasks}",
            "",
            met=all_ok,
            note=f"{out['model_calls']} model calls, {out['records_left']} checkpoint records left",
        ),
    ]
    return {
        "name": f"concurrency_checkpoints_{label}",
        "title": f"2. Concurrency: {tasks} tasks at once (checkpoints {label})",
        "params": {"tasks": tasks, "delay_s": delay_s, "checkpoints": checkpoints},
        "rows": rows,
        "details": out,
    }


# --- 4. resume at start-up -------------------------------------------------------------------


def resume_startup(records: int = 10_000, runs: int = 5) -> dict[str, Any]:
    """Time ``initialize()`` plus ``get_resumable_tasks()`` over ``records`` unfinished tasks,
    each of ``runs`` times in a fresh process (``python -m benchmarks.bench_runtime resume``).

    A start-up is a process starting: each child imports skillrt, opens a runtime on an empty
    folder (untimed: what any first use costs), times its restart there (no tasks), then the
    start-up over the store, and holds the listing it got until the clock stops. The
    store is as a restart finds it: the checkpoints, and the history database the first run
    made. In this process, the benchmark's own objects (the 10,000 records parsed for the
    comparison rows) would be in the heap the collector walks during the timed window.
    """
    return asyncio.run(_resume(records, runs))


async def _resume(records: int, runs: int) -> dict[str, Any]:
    from skillrt._state.embedded.checkpoints import CheckpointStore
    from skillrt._state.embedded.history import History
    from skillrt._state.records import TaskRecord

    with temp_dir("resume") as root:
        now = time.time()
        store = CheckpointStore(root / ".skillrt" / "checkpoints")
        write_started = time.perf_counter()
        for i in range(records):
            store.save(
                TaskRecord(
                    id=f"task{i:06d}",
                    session_id="bench",
                    state="EXECUTING",
                    intent={
                        "type": "WRITE_ARTICLE",
                        "confidence": 0.95,
                        "parameters": {"topic": f"topic {i}"},
                    },
                    raw_input=PROMPT.format(i=i),
                    skill="Bench3",
                    params={"topic": f"topic {i}"},
                    steps={"context": {"topic": f"topic {i}"}, "outline": "outline"},
                    progress={"step": 2, "total_steps": 3, "message": "outline", "percent": 66.7},
                    created_at=now - 60,
                    updated_at=now - 30 + i * 1e-3,
                )
            )
        write_s = time.perf_counter() - write_started
        store.close()
        History(root / ".skillrt" / "history", limit=1000).close()  # as the first run left it

        children = [_resume_in_child(root, records) for _ in range(runs)]

        load_store = CheckpointStore(root / ".skillrt" / "checkpoints")
        started = time.perf_counter()
        loaded = load_store.load_recent(max_age_s=24 * 3600, now=time.time())
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        lazy = load_store.load_lazy(max_age_s=24 * 3600, now=time.time())
        lazy_s = time.perf_counter() - started
        load_store.close()

    def median(key: str) -> float:
        return statistics.median(child[key] for child in children)

    both_s, both_cpu_s, init_s, empty_s = (
        median(key) for key in ("both_s", "both_cpu_s", "init_s", "empty_s")
    )
    walls = " / ".join(f"{child['both_s'] * 1000:.0f}" for child in children)
    resumable = min(child["resumable"] for child in children)
    rows = [
        row(
            f"initialize() + get_resumable_tasks() with {records} unfinished tasks",
            both_s * 1000,
            "ms",
            target="≤ 150",
            met=both_s <= 0.15,
            note=f"timed together, median of {runs} processes ({walls} ms); {resumable} offered",
        ),
        row(
            "  CPU time of it (the process's, every thread)",
            both_cpu_s * 1000,
            "ms",
            note="what the wall time is on an idle machine, less its waits on the disk",
        ),
        row("  of which initialize()", init_s * 1000, "ms"),
        row(
            "  (CheckpointStore.load_lazy, alone)",
            lazy_s * 1000,
            "ms",
            note=f"{len(lazy.records)} summaries read by SQLite; a Task is built on resume",
        ),
        row(
            "  (CheckpointStore.load_recent, every record parsed)",
            load_s * 1000,
            "ms",
            note=f"{len(loaded.records)} records; what initialize() did before",
        ),
        row("initialize() with no tasks (a restart)", empty_s * 1000, "ms"),
        row("per restored task", (init_s - empty_s) / records * 1e6, "µs"),
    ]
    return {
        "name": "resume",
        "title": f"4. Resume at start-up: {records} unfinished task records",
        "params": {"records": records, "runs": runs},
        "rows": rows,
        "details": {
            "initialize_s": init_s,
            "initialize_and_list_s": both_s,
            "initialize_and_list_cpu_s": both_cpu_s,
            "runs": children,
            "load_recent_s": load_s,
            "load_lazy_s": lazy_s,
            "empty_initialize_s": empty_s,
            "resumable": resumable,
            "write_s": write_s,
            "write_us_per_record": write_s / records * 1e6,
        },
    }


def _resume_in_child(root: Path, records: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks.bench_runtime", "resume", str(root)]
    here = str(Path(__file__).resolve().parent.parent)  # so the child finds `benchmarks`
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"resume subprocess failed ({done.returncode}):\n{done.stderr[-4000:]}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if out["resumable"] != records:
        raise RuntimeError(f"{out['resumable']} tasks offered for resume, not {records}")
    return out


async def _resume_child(root: Path) -> dict[str, Any]:
    """One start-up over the store in ``root``, in this fresh process (see ``resume_startup``)."""
    with temp_dir("resume-warm") as spare:
        rt = make_runtime(spare)  # first-use costs (imports on first use), untimed
        await rt.initialize()
        await rt.close()
        rt = make_runtime(spare)  # a restart with no tasks: what the 10,000 add to it
        started = time.perf_counter()
        await rt.initialize()
        empty_s = time.perf_counter() - started
        await rt.close()

    rt = make_runtime(root)
    cpu_started = time.process_time()  # every thread's: initialize() opens in one
    started = time.perf_counter()
    await rt.initialize()
    init_s = time.perf_counter() - started
    listed = rt.get_resumable_tasks()  # held until the clock stops, as a caller holds it
    both_s = time.perf_counter() - started
    both_cpu_s = time.process_time() - cpu_started
    await rt.close()
    return {
        "both_s": both_s,
        "both_cpu_s": both_cpu_s,
        "init_s": init_s,
        "empty_s": empty_s,
        "resumable": len(listed),
    }


# --- subprocess entry point ------------------------------------------------------------------


def _main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_runtime")
    sub = parser.add_subparsers(dest="command", required=True)
    conc = sub.add_parser("concurrency", help="run the concurrency benchmark in this process")
    conc.add_argument("--tasks", type=int, default=1000)
    conc.add_argument("--delay", type=float, default=0.1)
    conc.add_argument("--checkpoints", action=argparse.BooleanOptionalAction, default=True)
    resume = sub.add_parser("resume", help="one start-up over a store (see resume_startup)")
    resume.add_argument("root", type=Path)
    args = parser.parse_args(argv)
    if args.command == "resume":
        result = asyncio.run(_resume_child(args.root))
    else:
        result = asyncio.run(_concurrency_child(args.tasks, args.delay, args.checkpoints))
    print(json.dumps(result))


if __name__ == "__main__":
    _main()
