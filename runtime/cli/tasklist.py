"""The resumable tasks as a table (``skillrt tasks``, the chat's ``/tasks``): Rich's table and
text only, so listing loads none of the live display (cli/display.py)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from skillrt.messages import TaskSummary

__all__ = ["age", "task_status", "tasks_table"]


def age(timestamp: float, now: float | None = None) -> str:
    """``42 s ago``, ``5 min ago``, ``3 h ago``, ``2 d ago``."""
    seconds = max(0.0, (time.time() if now is None else now) - timestamp)
    if seconds < 60:
        return f"{seconds:.0f} s ago"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 86400:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} d ago"


_STOPPED_BECAUSE = {
    "CRASH": "interrupted",
    "WATCHDOG_TIMEOUT": "timed out",
    "PROVIDER_UNAVAILABLE": "model down",
}


def task_status(task: TaskSummary) -> str:
    """Why a resumable task stopped, in a word or two."""
    if task.error_reason:
        return _STOPPED_BECAUSE.get(task.error_reason, task.error_reason.lower())
    return task.state.lower().replace("_", " ")


def tasks_table(tasks: Sequence[TaskSummary]) -> Table:
    """Resumable tasks: id, why it stopped, skill, where it got to, when, the request."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    table.add_column(Text("id"), no_wrap=True, min_width=16)
    table.add_column(Text("status"), no_wrap=True)
    table.add_column(Text("skill"), no_wrap=True)
    table.add_column(Text("done"), no_wrap=True)
    table.add_column(Text("updated"), no_wrap=True)
    table.add_column(Text("request"), overflow="fold", ratio=1)
    for task in tasks:
        progress = task.progress or {}
        done = f"{task.steps_done} steps"
        if progress:
            done = f"{progress.get('step')}/{progress.get('total_steps')}, " + done
        # Every cell is Text, shown as written: as a str, a request such as "fix the [/b]
        # tag" was read as Rich markup (and `skillrt tasks` died on it), and a str is parsed
        # for markup and :emoji: codes (loading rich's emoji table) for nothing.
        table.add_row(
            Text(task.id),
            Text(task_status(task)),
            Text(task.skill or "-"),
            Text(done),
            Text(age(task.updated_at)),
            Text(task.description[:120]),
        )
    return table
