"""The resumable tasks as a table (``skillrt tasks``, the chat's ``/tasks``): Rich's table and
text only, so listing loads none of the live display (cli/display.py).

``tasks_command`` is the whole ``skillrt tasks``, free of Typer: the Typer command and the
quick path (cli/quick.py) both call it."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from skillrt.cli.common import EXIT_OK, make_runtime, open_store_config, user_errors
from skillrt.messages import TaskSummary

if TYPE_CHECKING:
    from skillrt.cli.storeconfig import StoreConfig
    from skillrt.settings import RuntimeConfig

__all__ = ["age", "asked_note", "task_status", "tasks_command", "tasks_table"]


def tasks_command(
    *, as_json: bool, root: Path | None, verbose: bool, posts_dir: str | None = None
) -> int:
    """``skillrt tasks``: the resumable tasks as a table or JSON on stdout; the exit status
    (a config or state folder error exits through ``user_errors``)."""
    with user_errors():
        config = open_store_config(root, verbose=verbose, posts_dir=posts_dir)
        found = _resumable(config)
    if as_json:
        print(json.dumps([t.model_dump(mode="json") for t in found], ensure_ascii=False))
        return EXIT_OK
    console = Console()
    if not found:
        console.print("No resumable tasks.")
        return EXIT_OK
    console.print(tasks_table(found))
    if (note := asked_note(found)) is not None:
        console.print(Text(note), highlight=False)
    return EXIT_OK


def asked_note(tasks: Sequence[TaskSummary]) -> str | None:
    """Which of ``tasks`` stopped on a question, and how to answer it; None when none did.
    (Their status says "interrupted": the process that asked ended before the answer.)"""
    asked = [task.id for task in tasks if task.question]
    if not asked:
        return None
    which = asked[0] if len(asked) == 1 else ", ".join(asked)
    return (
        f"Waiting for an answer: {which}. Continue with `skillrt resume ID --answer TEXT` "
        "(`skillrt resume ID` shows the question)."
    )


def _resumable(config: RuntimeConfig | StoreConfig) -> list[TaskSummary]:
    from skillrt.cli.storeconfig import StoreConfig

    if isinstance(config, StoreConfig) or config.state_url is None:
        # the embedded store: read it, no runtime needed
        from skillrt._state.embedded.offline import resumable_on_disk

        found, quarantined = resumable_on_disk(config)
        for note in quarantined:  # as a runtime's start would report them
            print(f"skillrt: warning: {note}", file=sys.stderr, flush=True)
        return found

    import asyncio

    return asyncio.run(_resumable_from(config))


async def _resumable_from(config: RuntimeConfig) -> list[TaskSummary]:
    runtime = make_runtime(config, with_model=False, with_skills=False)
    await runtime.initialize()
    try:
        return runtime.get_resumable_tasks()
    finally:
        await runtime.close()


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
