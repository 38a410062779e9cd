"""The DBOS side of the per-task comparison (needs ``pip install 'skillrt[bench]'``).

A DBOS workflow of three steps (context -> outline -> content) that do no work, on DBOS's own
SQLite system database in a file, as DBOS ships it (its default journal and
``synchronous=FULL``): each step's output is committed before the next step starts, and the
workflow's status before it returns, the same promises as a skillrt task's journal. Each run
gets its own workflow id, as each skillrt task is a new task.

DBOS is a process-wide singleton: one runner per process, torn down (``DBOS.destroy``) at the
end of the block.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["available", "dbos_runner", "dbos_version"]


def available() -> bool:
    """True when DBOS can be imported."""
    return importlib.util.find_spec("dbos") is not None


def dbos_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dbos")
    except PackageNotFoundError:
        return "not installed"


@contextmanager
def dbos_runner(directory: Path) -> Iterator[Callable[[int], float]]:
    """Yield ``run(i) -> seconds``: one three-step workflow ``task-i``, timed, to completion."""
    from dbos import DBOS, SetWorkflowID

    config: Any = {
        "name": "skillrt-bench",
        "system_database_url": f"sqlite:///{directory / 'dbos.sqlite'}",
        "run_admin_server": False,
    }
    DBOS(config=config)

    @DBOS.step()
    def context(topic: str) -> dict[str, str]:
        return {"topic": topic}

    @DBOS.step()
    def outline() -> str:
        return "outline"

    @DBOS.step()
    def content() -> str:
        return "content"

    @DBOS.workflow()
    def three_steps(topic: str) -> str:
        context(topic)
        outline()
        return content()

    DBOS.launch()
    try:

        def run(i: int) -> float:
            started = time.perf_counter()
            with SetWorkflowID(f"task-{i}"):
                out = three_steps(f"topic {i}")
            elapsed = time.perf_counter() - started
            if out != "content":
                raise RuntimeError(f"DBOS workflow {i} did not finish: {out!r}")
            return elapsed

        yield run
    finally:
        DBOS.destroy(destroy_registry=True)
