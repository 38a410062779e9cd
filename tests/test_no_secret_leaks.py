"""No secret, whole or any 12-character window of it, reaches the log, the history, the events,
a task summary or stdout/stderr: texts are redacted before they are cut, every history field
(the error too) goes through the redactor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillrt import Event, SkillContext, SkillResult, skill
from skillrt.skills.writing import writing_skills
from skillrt.storage.history import History
from skillrt.testing import FunctionModel

from .helpers import TopicParams, make_runtime
from .leaks import leaks

KEY = "sk-proj-abcdefghijklmnopqrstuvwx1234"
CONFIGURED = "cfg-secret-value-42-zyxwvu"


def everything(rt: Any, log: Path, events: list[Event], out: str) -> str:
    """Every output of a closed runtime, as one text."""
    store = History(rt.config.state_path / "history")
    history = store.tasks() + store.messages(rt.session_id)
    store.close()
    assert len(history) >= 2
    return "\n".join(
        [
            log.read_text(encoding="utf-8"),
            json.dumps(history, ensure_ascii=False),
            json.dumps([e.to_dict() for e in events], ensure_ascii=False, default=str),
            json.dumps([t.model_dump() for t in rt.get_resumable_tasks()], ensure_ascii=False),
            out,
        ]
    )


async def test_a_failing_task_with_secrets_at_every_cut_leaks_nothing(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    @skill(name="Leaky", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def leaky(ctx: SkillContext, params: TopicParams) -> SkillResult:
        ctx.progress(1, 2, f"using {KEY}", detail=CONFIGURED)
        ctx.events.emit("agent:status", message=f"status {CONFIGURED} {KEY}")
        ctx.logger.warning("agent.note", note=f"{KEY} {CONFIGURED}")
        raise RuntimeError(f"boom {CONFIGURED} {KEY}")

    log = isolated / "log.jsonl"
    rt = make_runtime(
        isolated,
        FunctionModel(lambda m, o: "x"),
        [leaky],
        secrets=[CONFIGURED],
        log_file=log,
        log_level="debug",
    )
    events: list[Event] = []
    rt.on("*", events.append)
    # Each secret straddles a cut: the log's input (100), the history's input (500).
    text = "write an article about " + "a" * 60 + " " + KEY + " " + "b" * 370 + " " + CONFIGURED
    assert text.index(KEY) < 100 < text.index(KEY) + len(KEY)
    assert text.index(CONFIGURED) < 500 < text.index(CONFIGURED) + len(CONFIGURED)
    reply = await rt.process_input(text)
    assert reply.state == "ERROR"
    await rt.close()
    captured = capsys.readouterr()
    seen = everything(rt, log, events, captured.out + captured.err)
    assert "agent.note" in seen and "boom" in seen  # the outputs were written
    assert leaks(seen, KEY, CONFIGURED) == []


async def test_a_secret_given_as_a_path_stays_out_of_the_history_error(isolated: Path) -> None:
    (isolated / "posts").mkdir()
    log = isolated / "log.jsonl"
    rt = make_runtime(
        isolated,
        FunctionModel(lambda m, o: "x"),
        writing_skills(),
        secrets=[CONFIGURED],
        log_file=log,
        log_level="debug",
    )
    events: list[Event] = []
    rt.on("*", events.append)
    for secret in (KEY, CONFIGURED):
        await rt.run_skill("Summarize", {"path": secret})
    await rt.close()
    seen = everything(rt, log, events, "")
    assert leaks(seen, KEY, CONFIGURED) == []
