"""CLI pieces that need no process: exit codes, task id prefixes, slow scripted answers."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from skillrt import ChatMessage, TaskSummary, UserError
from skillrt.abort import AbortController
from skillrt.cli.common import (
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNFINISHED,
    EXIT_USAGE,
    exit_code,
    find_task,
)
from skillrt.exceptions import TaskCancelled
from skillrt.testing import Delayed, ScriptedModel


@pytest.mark.parametrize(
    ("state", "data", "code"),
    [
        ("COMPLETED", {"outcome": "done"}, EXIT_OK),
        ("ERROR", {"outcome": "done"}, EXIT_FAILED),  # the skill returned success=False
        ("ERROR", {"outcome": "failed"}, EXIT_FAILED),
        ("ERROR", {"outcome": "watchdog"}, EXIT_FAILED),
        ("ERROR", {"outcome": "budget"}, EXIT_FAILED),
        ("CANCELLED", {"outcome": "cancelled"}, EXIT_CANCELLED),
        ("PAUSED", {"outcome": "paused"}, EXIT_UNFINISHED),
        ("WAITING_INPUT", {"question": "Which title?"}, EXIT_UNFINISHED),
        ("IDLE", {"outcome": "rephrase"}, EXIT_USAGE),
        ("IDLE", {"outcome": "no_skill"}, EXIT_USAGE),
        ("IDLE", {"outcome": "bad_params"}, EXIT_USAGE),
        ("IDLE", {"error": "empty_input"}, EXIT_USAGE),
    ],
)
def test_exit_codes(state: str, data: dict[str, str], code: int) -> None:
    assert exit_code(ChatMessage(content="x", state=state, data=data)) == code


def _summary(task_id: str) -> TaskSummary:
    return TaskSummary(
        id=task_id,
        state="PAUSED",
        skill="WriteArticle",
        intent="WRITE_ARTICLE",
        description="write",
        created_at=0,
        updated_at=0,
        steps_done=1,
    )


def test_a_unique_prefix_finds_the_task() -> None:
    tasks = [_summary("abc123"), _summary("abd456"), _summary("ab")]
    assert find_task("abc", tasks).id == "abc123"
    assert find_task("ab", tasks).id == "ab"  # an exact id wins over prefixes
    with pytest.raises(UserError, match="ambiguous"):
        find_task("abd4", [*tasks, _summary("abd499")])
    with pytest.raises(UserError, match="no resumable task 'zz'"):
        find_task("zz", tasks)
    with pytest.raises(UserError, match="give a task id"):
        find_task("  ", tasks)


async def test_one_scripted_answer_can_be_slow(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "answers": [
                    "fast",
                    {"$answer": "slow", "$delay": 0.3},
                    {"$answer": {"type": "SUMMARIZE"}, "$chunk_delay": 0},
                    {"content": "a JSON answer with ordinary keys stays as it is"},
                ]
            }
        )
    )
    model = ScriptedModel.from_file(script)
    started = time.perf_counter()
    assert (await model.chat([{"role": "user", "content": "a"}])).content == "fast"
    assert time.perf_counter() - started < 0.2
    assert (await model.chat([{"role": "user", "content": "b"}])).content == "slow"
    assert time.perf_counter() - started >= 0.3
    assert json.loads((await model.chat([{"role": "user", "content": "c"}])).content) == {
        "type": "SUMMARIZE"
    }
    last = await model.chat([{"role": "user", "content": "d"}])
    assert json.loads(last.content)["content"].startswith("a JSON answer")


async def test_a_slow_answer_is_cut_short_by_the_abort_signal() -> None:
    model = ScriptedModel([Delayed("never", delay=30)])
    controller = AbortController()
    started = time.perf_counter()
    asyncio.get_running_loop().call_later(0.05, controller.abort, "cancelled")
    with pytest.raises(TaskCancelled):
        await model.chat([{"role": "user", "content": "x"}], signal=controller.signal)
    assert time.perf_counter() - started < 1
