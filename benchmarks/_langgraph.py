"""The LangGraph side of the per-task comparison (needs ``pip install 'skillrt[bench]'``).

A ``StateGraph`` of three nodes (context -> outline -> content) that do no work, compiled with
``SqliteSaver`` on a file and run with ``durability="sync"``: the checkpoint of every step is
committed before the next step starts. The connection is set to WAL with ``synchronous=FULL``,
the same durability as skillrt's ``CheckpointStore`` (SQLite's default for a fresh connection
is FULL too; it is set explicitly so the comparison does not rest on a build option).
"""

from __future__ import annotations

import importlib.util
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict

__all__ = ["available", "langgraph_runner", "langgraph_version"]


def available() -> bool:
    """True when langgraph and its SQLite checkpointer can be imported."""
    try:
        return all(
            importlib.util.find_spec(name) is not None
            for name in ("langgraph.graph", "langgraph.checkpoint.sqlite")
        )
    except ModuleNotFoundError:  # a parent package is missing
        return False


def langgraph_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("langgraph")
    except PackageNotFoundError:
        return "not installed"


class _State(TypedDict, total=False):
    topic: str
    context: dict[str, Any]
    outline: str
    content: str


def _context(state: _State) -> dict[str, Any]:
    return {"context": {"topic": state["topic"]}}


def _outline(state: _State) -> dict[str, Any]:
    return {"outline": "outline"}


def _content(state: _State) -> dict[str, Any]:
    return {"content": "content"}


@contextmanager
def langgraph_runner(
    directory: Path, *, synchronous: str = "FULL"
) -> Iterator[Callable[[int], float]]:
    """Yield ``run(i) -> seconds``: one task on thread ``task-i``, timed, to completion.

    ``synchronous="OFF"`` keeps every write but drops the fsyncs: LangGraph's CPU cost alone.
    """
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    conn = sqlite3.connect(str(directory / "langgraph.sqlite"), check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()  # WAL, tables
        if synchronous not in ("FULL", "NORMAL", "OFF"):
            raise ValueError(f"synchronous must be FULL, NORMAL or OFF, not {synchronous!r}")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        builder = StateGraph(_State)
        builder.add_node("context", _context)
        builder.add_node("outline", _outline)
        builder.add_node("content", _content)
        builder.add_edge(START, "context")
        builder.add_edge("context", "outline")
        builder.add_edge("outline", "content")
        builder.add_edge("content", END)
        graph = builder.compile(checkpointer=saver)

        def run(i: int) -> float:
            config: Any = {"configurable": {"thread_id": f"task-{i}"}}
            started = time.perf_counter()
            out = graph.invoke({"topic": f"topic {i}"}, config, durability="sync")
            elapsed = time.perf_counter() - started
            if out.get("content") != "content":
                raise RuntimeError(f"LangGraph task {i} did not finish: {out!r}")
            return elapsed

        yield run
    finally:
        conn.close()


def checkpoint_rows(directory: Path) -> tuple[int, int]:
    """(checkpoints, writes) rows in the LangGraph database: its durable writes per run."""
    with sqlite3.connect(str(directory / "langgraph.sqlite")) as conn:
        checkpoints = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
        writes = conn.execute("SELECT COUNT(*) FROM writes").fetchone()[0]
    return int(checkpoints), int(writes)
