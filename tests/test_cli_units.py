"""CLI pieces that need no process: exit codes, task id prefixes, slow scripted answers."""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path
from typing import Any

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
from skillrt.testing import Delayed, FunctionModel, ScriptedModel


@pytest.mark.parametrize(
    ("state", "data", "code"),
    [
        ("COMPLETED", {"outcome": "done"}, EXIT_OK),
        ("ERROR", {"outcome": "refused"}, EXIT_FAILED),  # the skill returned success=False
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


# --- the REPL's lines follow the session's language ---------------------------------------------


class ListReader:
    """Reads the given lines, then ends the input (Ctrl-D)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)

    async def read(self, prompt: str) -> str:
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)

    def interrupt(self) -> None:
        pass


async def repl_output(tmp_path: Path, lines: list[str], *, injected: bool = False) -> str:
    """What the chat REPL prints for ``lines`` (the scripted model, an empty blog)."""
    from rich.console import Console

    from skillrt import AgentRuntime, load_config
    from skillrt.cli.repl import Repl

    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"answers": []}), encoding="utf-8")
    config = load_config(
        content_root=blog, llm={"provider": "scripted", "script_path": str(script)}
    )
    rt = AgentRuntime(config, llm=ScriptedModel([]) if injected else None, skills=[])
    console = Console(file=io.StringIO(), width=200, color_system=None, force_terminal=False)
    await Repl(rt, console, ListReader(lines)).run()
    output = console.file.getvalue()
    assert isinstance(output, str)
    return " ".join(output.split())  # one line: rich wraps and pads as it likes


COMMAND_LINES = ["/help", "/tasks", "/cost", "/history", "/history all", "/model", "/nonsense"]


@pytest.mark.parametrize(
    ("first", "expected", "other_language"),
    [
        (
            "好的",
            [
                "/help 本列表",
                "/resume ID 从最后完成的一步继续任务",
                "Ctrl-C 取消正在运行的任务，Ctrl-Z 暂停它；Ctrl-C 或 Ctrl-D 退出。",
                "没有可恢复的任务。",
                "本会话：0 次模型调用，0 tokens · $0.0000",
                "本会话还没有任务（/history all 查看全部）。",
                "还没有任务。",
                "模型：scripted",
                "提供方：scripted",
                "原因：",
                "未知命令 /nonsense；/help 列出所有命令。",
            ],
            ["this list", "No resumable tasks", "This session", "Unknown command", "model:"],
        ),
        (
            "ok",
            [
                "/help this list",
                "/resume ID continue a task from its last completed step",
                "Ctrl-C cancels a running task, Ctrl-Z pauses it; Ctrl-C or Ctrl-D quits.",
                "No resumable tasks.",
                "This session: 0 model calls, 0 tokens · $0.0000",
                "No tasks yet in this session (/history all).",
                "No tasks yet.",
                "model: scripted",
                "provider: scripted",
                "why: ",
                "Unknown command /nonsense; /help lists the commands.",
            ],
            ["本列表", "没有可恢复", "本会话", "未知命令", "模型："],
        ),
    ],
    ids=["zh", "en"],
)
async def test_every_repl_line_follows_the_sessions_language(
    tmp_path: Path, first: str, expected: list[str], other_language: list[str]
) -> None:
    out = await repl_output(tmp_path, [first, *COMMAND_LINES])
    for text in expected:
        assert text in out, (text, out)
    for text in other_language:  # nothing of the other language after the banner
        assert text not in out, (text, out)


async def test_model_given_by_the_host_is_said_in_the_sessions_language(tmp_path: Path) -> None:
    zh = await repl_output(tmp_path / "zh", ["你好", "/model"], injected=True)
    assert "提供方：由宿主程序提供" in zh
    en = await repl_output(tmp_path / "en", ["hello", "/model"], injected=True)
    assert "provider: given by the host program" in en


async def test_the_repl_warms_routing_up_before_its_first_prompt(tmp_path: Path) -> None:
    """By the time the REPL asks for the first line, routing's tables are being built in a
    thread (``AgentRuntime.warm_up``): the first request does not pay for them on the loop."""
    from rich.console import Console

    from skillrt import AgentRuntime, load_config
    from skillrt.cli.repl import Repl

    (tmp_path / "posts").mkdir()
    rt = AgentRuntime(load_config(content_root=tmp_path), llm=ScriptedModel([]), skills=[])
    seen: list[bool] = []

    class FirstPrompt(ListReader):
        async def read(self, prompt: str) -> str:
            seen.append(rt._warming is not None)
            return await super().read(prompt)

    console = Console(file=io.StringIO(), width=200, color_system=None, force_terminal=False)
    await Repl(rt, console, FirstPrompt([])).run()
    assert seen == [True]


def test_the_tasks_table_shows_every_cell_as_written() -> None:
    from rich.console import Console

    from skillrt.cli.tasklist import tasks_table

    now = time.time()
    task = TaskSummary(
        id="task0001",
        state="PAUSED",
        skill="WriteArticle",
        intent=None,
        description="fix [b]bold[/b] :smile:",
        created_at=now - 100,
        updated_at=now - 90,
        steps_done=1,
        progress={"step": "[red]2", "total_steps": 5},
        error_reason="CRASH",
    )
    console = Console(file=io.StringIO(), width=120, force_terminal=True, color_system="standard")
    console.print(tasks_table([task]))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    # Neither markup nor :emoji: codes are read; the header is still bold.
    assert "fix [b]bold[/b] :smile:" in out and "\N{SMILING FACE WITH OPEN MOUTH}" not in out
    assert "[red]2/5, 1 steps" in out and "2 min ago" in out and "interrupted" in out
    assert "\x1b[1mid" in out


def test_tasks_that_stopped_on_a_question_are_named_with_how_to_answer() -> None:
    """Their status says "interrupted" (the process that asked ended): a note under the
    table names them and says how to give the answer."""
    from skillrt.cli.tasklist import asked_note

    waiting = _summary("abc123").model_copy(
        update={"question": "Which post should I edit?", "error_reason": "INTERRUPTED"}
    )
    assert asked_note([_summary("def456")]) is None
    note = asked_note([_summary("def456"), waiting])
    assert note is not None and note.startswith("Waiting for an answer: abc123.")
    assert "skillrt resume ID --answer TEXT" in note


@pytest.mark.parametrize("item", [42, None, ["a", "b"], {"$answer": None, "$delay": 1}])
def test_a_script_item_that_is_no_answer_is_refused_when_read(tmp_path: Path, item: Any) -> None:
    """``{"answers": [42]}`` was read, and failed the task that reached it with "TypeError:
    expected string or bytes-like object, got 'int'"."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"answers": ["fine", item]}), encoding="utf-8")
    with pytest.raises(UserError, match=r"script\.json: answer 2 is .*; expected text or a JSON"):
        ScriptedModel.from_file(script)


async def test_an_answer_of_no_answer_type_is_a_type_error_naming_it() -> None:
    for model in (ScriptedModel([42]), FunctionModel(lambda messages, options: None)):
        with pytest.raises(TypeError, match=r"an answer is text, a dict, .*not (int|NoneType)"):
            await model.chat([{"role": "user", "content": "x"}])
