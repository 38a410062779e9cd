"""What a Browse task leaves behind: a journal entry per planner/navigator step, and a replay
recording however the task ends (completed, failed, cancelled, resumed after a crash); secret
typed text (a password field's, a key-shaped string) rests in neither."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from skillrt import AgentRuntime, load_config
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.records import TaskRecord
from skillrt.exceptions import AuthenticationError
from skillrt.llm.base import LLMMessage
from skillrt.skills.browsing import browsing_skills
from skillrt.skills.browsing.schemas import NavigatorOutput
from skillrt.skills.browsing.skills import close_pending_browsers
from skillrt.skills.browsing.typed_secrets import SECRET_TEXT
from skillrt.testing import FunctionModel, ModelOptions
from tests.browsing_support import PageView, agent_model, make_runtime, page_in
from tests.site import SECRET_NUMBER, TestSite
from tests.test_browsing_agent import search_policy

HERE = Path(__file__).parent
TASK = "Find out from the Atlas Wiki what the capital of Atlantis is"
PASSWORD = "wonderland"  # tests/site.py's password for alice
KEY = "sk-live-0a1b2c3d4e5f6g7h8i9j"


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    with TestSite() as running:
        yield running


Hook = Callable[[int, PageView], Any]


def hooked(inner: FunctionModel, hook: Hook) -> FunctionModel:
    """``inner``, with ``await hook(n, page)`` before the n-th navigator call."""
    navigated = 0

    async def fn(messages: list[LLMMessage], options: ModelOptions) -> Any:
        nonlocal navigated
        if options.response_model is NavigatorOutput:
            navigated += 1
            await hook(navigated, page_in(messages))
        answer = inner.fn(messages, options)
        if options.response_model is NavigatorOutput:  # a memory worth journalling
            answer["current_state"]["memory"] = f"visited {page_in(messages).path.split('?')[0]}"
        return answer

    return FunctionModel(fn)


def _no_model(messages: list[Any], options: Any) -> Any:
    raise AssertionError("replay must not call the model")


def recording_of(rt: AgentRuntime, task_id: str) -> dict[str, Any]:
    path = rt.config.state_path / "replays" / f"{task_id}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


async def replayed(tmp_path: Path, task_id: str, **config: Any) -> Any:
    rt = make_runtime(tmp_path, FunctionModel(_no_model), {"checkpoints": True, **config})
    try:
        return await rt.run_skill("Browse", {"replay": task_id})
    finally:
        await rt.close()
        await close_pending_browsers()


def actions_of(recording: dict[str, Any]) -> list[tuple[int, str, str]]:
    """(agent step, action, element text) of each recorded action."""
    return [
        (a["step"], a["action"]["action"], (a["signature"] or {}).get("text", ""))
        for a in recording["actions"]
    ]


STEPS_1_AND_2 = [(1, "click", "Search"), (2, "type", "Query"), (2, "click", "Search")]


# --- a recording however the task ends -------------------------------------------------------


async def test_a_browse_that_fails_at_step_3_leaves_a_recording_of_steps_1_and_2_that_replays(
    site: TestSite, tmp_path: Path
) -> None:
    async def hook(n: int, page: PageView) -> None:
        if n == 3:
            raise AuthenticationError("the key was revoked", status=401)

    model = hooked(agent_model(search_policy), hook)
    rt = make_runtime(tmp_path, model, {"checkpoints": True})
    try:
        msg = await rt.run_skill("Browse", {"task": TASK, "url": site.url("/")})
        assert msg.state == "ERROR" and msg.task_id is not None
        recording = recording_of(rt, msg.task_id)
    finally:
        await rt.close()
        await close_pending_browsers()
    assert recording["status"] == "failed"
    assert "AuthenticationError" in recording["detail"]
    assert actions_of(recording) == STEPS_1_AND_2

    again = await replayed(tmp_path, msg.task_id)
    assert again.state == "COMPLETED", again.content
    assert again.data["url"].startswith(site.url("/results?q=capital&"))  # step 3 began there
    assert len(again.data["actions"]) == 3


async def test_a_cancelled_browse_is_recorded_as_cancelled(site: TestSite, tmp_path: Path) -> None:
    blocked = asyncio.Event()

    async def hook(n: int, page: PageView) -> None:
        if n == 3:
            blocked.set()
            await asyncio.sleep(60)  # the abort ends this

    rt = make_runtime(tmp_path, hooked(agent_model(search_policy), hook), {"checkpoints": True})
    try:
        job = asyncio.create_task(rt.run_skill("Browse", {"task": TASK, "url": site.url("/")}))
        await asyncio.wait_for(blocked.wait(), 30)
        task_id = rt.current_task_id
        assert task_id is not None and rt.abort(task_id)
        msg = await asyncio.wait_for(job, 30)
        assert msg.state == "CANCELLED"
        recording = recording_of(rt, task_id)
    finally:
        await rt.close()
        await close_pending_browsers()
    assert recording["status"] == "cancelled"
    assert actions_of(recording) == STEPS_1_AND_2


async def test_a_paused_browse_is_recorded_as_paused_then_whole_once_resumed(
    site: TestSite, tmp_path: Path
) -> None:
    reached, gate = asyncio.Event(), asyncio.Event()

    async def hook(n: int, page: PageView) -> None:
        if n == 2:  # step 2's navigator waits until the pause is asked for
            reached.set()
            await gate.wait()

    rt = make_runtime(tmp_path, hooked(agent_model(search_policy), hook), {"checkpoints": True})
    try:
        job = asyncio.create_task(rt.run_skill("Browse", {"task": TASK, "url": site.url("/")}))
        await asyncio.wait_for(reached.wait(), 30)
        task_id = rt.current_task_id
        assert task_id is not None and rt.pause(task_id)
        gate.set()
        paused = await asyncio.wait_for(job, 30)
        assert paused.state == "PAUSED"
        halfway = recording_of(rt, task_id)
        done = await rt.resume_task(task_id)
        assert done is not None and done.state == "COMPLETED"
        whole = recording_of(rt, task_id)
    finally:
        await rt.close()
        await close_pending_browsers()
    assert halfway["status"] == "paused"
    assert actions_of(halfway) == STEPS_1_AND_2
    assert whole["status"] == "completed"
    assert actions_of(whole) == [*STEPS_1_AND_2, (3, "click", "Atlantis")]


def test_a_resumed_browse_records_the_steps_from_before_the_crash(
    site: TestSite, tmp_path: Path
) -> None:
    """Killed in step 3, resumed in a new process: the recording has steps 1 to 5 and replays."""
    state, work = tmp_path / "state", tmp_path / "run"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    child = [sys.executable, str(HERE / "browse_crash_child.py")]
    args = [str(state), str(work), site.url("/")]
    first = subprocess.Popen([*child, "start", *args], env={**env, "HANG_ON": "/results"})
    try:
        deadline = time.monotonic() + 60
        while not (work / "hanging").exists():
            assert first.poll() is None, "the child ended before reaching step 3"
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        first.kill()
        first.wait()
    assert not (state / "replays").exists()  # SIGKILL: no finally ran
    out = subprocess.run(
        [*child, "resume", *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    [path] = (state / "replays").glob("*.json")
    recording = json.loads(path.read_text(encoding="utf-8"))
    assert recording["status"] == "completed"
    assert actions_of(recording) == [*STEPS_1_AND_2, (3, "click", "Atlantis")]

    async def replay() -> Any:
        config = load_config(
            content_root=work, state_dir=state, browser={"allow_private": ["127.0.0.1"]}
        )
        rt = AgentRuntime(config, llm=FunctionModel(_no_model), skills=browsing_skills())
        try:
            return await rt.run_skill("Browse", {"replay": path.stem})
        finally:
            await rt.close()
            await close_pending_browsers()

    again = asyncio.run(replay())
    assert again.state == "COMPLETED", again.content
    assert again.data["url"] == site.url("/articles/atlantis")


# --- the journal: one entry per step ---------------------------------------------------------


async def test_each_browser_step_is_its_own_journal_entry(site: TestSite, tmp_path: Path) -> None:
    seen: dict[str, TaskRecord | None] = {}

    async def hook(n: int, page: PageView) -> None:
        if n == 4:  # steps 1 to 3 are done: read what the checkpoint holds of them
            task_id = rt.current_task_id
            assert task_id is not None
            store = CheckpointStore(tmp_path / ".skillrt" / "checkpoints")
            try:
                seen["record"] = store.get(task_id)
            finally:
                store.close()

    rt = make_runtime(tmp_path, hooked(agent_model(search_policy), hook), {"checkpoints": True})
    try:
        msg = await rt.run_skill("Browse", {"task": TASK, "url": site.url("/")})
    finally:
        await rt.close()
        await close_pending_browsers()
    assert msg.state == "COMPLETED", msg.content
    record = seen["record"]
    assert record is not None
    entries = {name: value for name, value in record.steps.items() if name.startswith("browser")}
    assert sorted(entries) == ["browser-step-1", "browser-step-2", "browser-step-3"]
    first, second, third = (entries[f"browser-step-{n}"] for n in (1, 2, 3))
    # The URL each step ended on, and the step itself: where it began, what it did, how it went.
    assert first["url"] == site.url("/search")
    assert second["url"].startswith(site.url("/results?q=capital&"))
    assert third["url"] == site.url("/articles/atlantis")
    assert first["step"]["url"] == site.url("/") and first["step"]["number"] == 1
    typed, clicked = second["step"]["actions"]
    assert typed.startswith("type [") and typed.endswith("] 'capital'")
    assert clicked.startswith("click [")
    assert len(second["step"]["results"]) == 2 and second["step"]["error"] is None
    assert second["summary"].startswith(f"Step 2 at {site.url('/search')}: type [")
    # The navigator's memory and the planner's plan, as they stood after each step.
    assert [e["memory"] for e in (first, second, third)] == [
        "visited /",
        "visited /search",
        "visited /results",
    ]
    assert first["plan"]["proposed_actions"] == ["find the answer"]
    assert first["step"]["plan"] is not None and second["step"]["plan"] is None  # planned at 1
    assert first["outcome"] is None and first["failures"] == 0


# --- secrets -------------------------------------------------------------------------------


def login_policy(page: PageView, prompt: str) -> list[dict[str, Any]]:
    if page.path.startswith("/login"):
        return [
            {"action": "type", "index": page.find("textbox", "Username"), "text": "alice"},
            {"action": "type", "index": page.find("textbox", "Password"), "text": PASSWORD},
            {"action": "click", "index": page.find("button", "Log in")},
        ]
    if page.path.startswith("/account") and SECRET_NUMBER in page.text:
        return [{"action": "done", "answer": f"your secret number is {SECRET_NUMBER}"}]
    return [{"action": "goto", "url": "/login"}]


async def test_a_typed_password_rests_neither_in_the_journal_nor_in_the_recording(
    site: TestSite, tmp_path: Path
) -> None:
    journal: dict[str, Any] = {}

    async def hook(n: int, page: PageView) -> None:
        if n == 2:  # the login step is done
            task_id = rt.current_task_id
            assert task_id is not None
            store = CheckpointStore(tmp_path / ".skillrt" / "checkpoints")
            try:
                record = store.get(task_id)
            finally:
                store.close()
            assert record is not None
            journal.update(record.steps)

    rt = make_runtime(tmp_path, hooked(agent_model(login_policy), hook), {"checkpoints": True})
    task = f"Log in as alice with the password {PASSWORD} and tell me my secret number"
    try:
        msg = await rt.run_skill("Browse", {"task": task, "url": site.url("/login")})
    finally:
        await rt.close()
        await close_pending_browsers()
    assert msg.state == "COMPLETED", msg.content
    assert SECRET_NUMBER in msg.data["answer"]  # the real password was typed

    login = journal["browser-step-1"]  # journalled, not cut: a resume does not pay for it again
    assert PASSWORD not in json.dumps(journal)
    assert login["step"]["actions"][1].endswith(f"'{SECRET_TEXT}'")
    assert [r["secret"] for r in login["step"]["recorded"]] == [False, True, False]

    assert msg.task_id is not None
    text = (tmp_path / ".skillrt" / "replays" / f"{msg.task_id}.json").read_text("utf-8")
    assert PASSWORD not in text
    recording = json.loads(text)
    assert recording["status"] == "completed" and SECRET_TEXT in recording["task"]
    for sessions in (tmp_path / ".skillrt" / "browsing").glob("*.json"):
        assert PASSWORD not in sessions.read_text("utf-8")  # the follow-up note neither

    again = await replayed(tmp_path, msg.task_id)
    assert again.state == "ERROR"
    assert "cannot be replayed: its step 2 typed a secret into a password field" in again.content
    assert "recordings keep no secrets" in again.content


async def test_a_key_shaped_text_is_kept_off_the_disk(site: TestSite, tmp_path: Path) -> None:
    """Typed into an ordinary text field; the request holding it is not checkpointed at all,
    and nothing under the state folder holds the key afterwards."""

    def policy(page: PageView, prompt: str) -> list[dict[str, Any]]:
        if "typed into" in prompt:
            return [{"action": "done", "answer": "pasted it"}]
        if page.path == "/search":
            return [{"action": "type", "index": page.find("textbox", "Query"), "text": KEY}]
        return [{"action": "click", "index": page.find("link", "Search")}]

    rt = make_runtime(tmp_path, agent_model(policy), {"checkpoints": True})
    try:
        msg = await rt.run_skill("Browse", {"task": f"paste {KEY} into the search box",
                                            "url": site.url("/")})  # fmt: skip
    finally:
        await rt.close()
        await close_pending_browsers()
    assert msg.state == "COMPLETED", msg.content
    assert msg.task_id is not None
    recording = recording_of(rt, msg.task_id)
    assert [a["secret"] for a in recording["actions"]] == [False, True]
    state = tmp_path / ".skillrt"
    holding = [p for p in state.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert holding == []
    again = await replayed(tmp_path, msg.task_id)
    assert again.state == "ERROR" and "its step 2 typed a secret into a text field" in again.content
