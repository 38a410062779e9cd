"""No secret, whole or any 12-character window of it, reaches the log, the history, the events,
a task summary or stdout/stderr: texts are redacted before they are cut, every history field
(the error too) goes through the redactor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillrt import Event, SkillContext, SkillResult, skill
from skillrt._state.embedded.history import History
from skillrt.skills.writing import writing_skills
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
    seen = everything(rt, log, events, captured.out + captured.err + reply.content)
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


HOST = Path(__file__).with_name("leaky_host.py")
BOOM = "sk-SECRETKEY123"


def _host_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env.update(LEAK_SECRET=BOOM, PYTHONPATH=str(HOST.parent.parent), **extra)
    return env


@pytest.mark.parametrize("mode", ["unconfigured", "configured"])
def test_a_host_program_sees_no_secret_whether_or_not_it_set_up_logging(
    tmp_path: Path, mode: str
) -> None:
    # A configured host knows the key as an application does: from OPENAI_API_KEY.
    extra = {"OPENAI_API_KEY": BOOM} if mode == "configured" else {}
    done = subprocess.run(
        [sys.executable, str(HOST), mode, str(tmp_path)],
        env=_host_env(**extra),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "routed: UNKNOWN" in done.stdout and "commit failed" in done.stdout
    assert "runtime:" in done.stdout
    output = done.stdout + done.stderr
    assert leaks(output, BOOM) == []
    if mode == "configured":  # the library's lines reached the host's handler, redacted
        assert "intent_router.llm" in done.stderr and "event subscriber" in done.stderr
        assert "abort callback" in done.stderr and "checkpoint commit" in done.stderr
    else:  # nothing printed: the host configured no logging
        assert done.stderr == ""


@pytest.mark.parametrize("verbose", [False, True], ids=["log-file", "verbose"])
def test_the_cli_leaks_no_configured_secret(tmp_path: Path, verbose: bool) -> None:
    from .cli_support import cli_env, make_blog, skillrt, write_script

    blog = make_blog(tmp_path)
    script = write_script(tmp_path / "s.json", [])  # the model has nothing to say: it fails
    env = cli_env(blog, script, SKILLRT_SECRETS=json.dumps([CONFIGURED]), SKILLRT_LOG_LEVEL="debug")
    text = f"write an article about {'x' * 70} {CONFIGURED} and {KEY}"
    args = ["run", "--json", *(["--verbose"] if verbose else []), text]
    done = skillrt(*args, env=env, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    state = blog / ".skillrt"
    log = state / "logs" / "skillrt.log"
    logged = log.read_text(encoding="utf-8") if log.exists() else ""
    assert (done.stderr if verbose else logged).count("agent.") >= 2  # lines were written
    stored = b"".join(p.read_bytes() for p in state.rglob("*") if p.is_file())
    seen = done.stdout + done.stderr + logged + stored.decode("utf-8", "replace")
    assert leaks(seen, KEY, CONFIGURED) == []


async def test_a_failed_general_answer_logs_no_secret_cut_in_two(isolated: Path) -> None:
    # The model's error names a secret across character 300, where a log line used to be cut
    # before the logger redacted it: the prefix left of the cut was no longer the secret.
    error = "x" * 280 + CONFIGURED + " and more"
    assert error.index(CONFIGURED) < 300 - 12 < 300 < error.index(CONFIGURED) + len(CONFIGURED)

    def failing(messages: Any, options: Any) -> str:
        raise RuntimeError(error)

    (isolated / "posts").mkdir()
    log = isolated / "log.jsonl"
    rt = make_runtime(
        isolated,
        FunctionModel(failing),
        writing_skills(),
        secrets=[CONFIGURED],
        log_file=log,
        log_level="debug",
    )
    msg = await rt.run_skill("AnswerQuestion", {"question": "What is a monad?"})
    await rt.close()
    assert msg.state == "COMPLETED" and msg.data["found"] is False  # "nothing on this" stands
    logged = log.read_text(encoding="utf-8")
    assert "general_answer" in logged and "xxxx" in logged  # the failure was logged
    assert leaks(logged + msg.content, CONFIGURED) == []


@pytest.mark.parametrize("secret", [KEY, CONFIGURED])
async def test_a_routing_model_error_with_a_secret_at_the_cut_leaks_nothing(
    isolated: Path, secret: str
) -> None:
    """The router logs a failing model's error: redacted whole, so a secret straddling where a
    cut would fall (character 300) leaks no prefix."""
    message = "m" * 282 + " " + secret + " " + "z" * 400
    # 17 characters before the cut: too few after "sk-" for the key shape to be recognised.
    assert message.index(secret) + 17 == 300

    def failing(messages: Any, options: Any) -> str:
        raise RuntimeError(message)

    log = isolated / "log.jsonl"
    rt = make_runtime(
        isolated,
        FunctionModel(failing),
        [],
        secrets=[CONFIGURED],
        log_file=log,
        log_level="debug",
    )
    await rt.initialize()
    intent = await rt.router.parse("blorp the flux capacitor")  # no pattern: the model is asked
    assert intent.type == "UNKNOWN"
    await rt.close()
    logged = log.read_text(encoding="utf-8")
    assert "intent_router.llm" in logged and "mmmm" in logged  # the error was logged
    assert leaks(logged, secret) == []
