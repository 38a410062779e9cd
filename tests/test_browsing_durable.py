"""Durable browsing: every turn of the Browse loop is a journal entry, so a killed or paused
task resumes at the turn it reached without paying again for the model calls of finished
turns; and replay runs a recorded task again without a model, finding elements by signature."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillrt.skills.browsing.skills import close_pending_browsers
from skillrt.testing import FunctionModel
from tests.browsing_support import PageView, agent_model, make_runtime
from tests.site import TARGET_CODE, TestSite
from tests.test_browsing_agent import search_policy

HERE = Path(__file__).parent
TASK = "Find out from the Atlas Wiki what the capital of Atlantis is"


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    with TestSite() as running:
        yield running


def _calls(work: Path) -> list[tuple[str, str, str]]:
    lines = (work / "calls.log").read_text(encoding="utf-8").splitlines()
    return [tuple(line.split()) for line in lines]  # type: ignore[misc]


def test_browse_killed_at_step_3_resumes_without_redoing_steps_1_and_2(
    site: TestSite, tmp_path: Path
) -> None:
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
        first.kill()  # SIGKILL in the navigator call of step 3
    finally:
        first.kill()
        first.wait()
    before = _calls(work)
    assert [c[:2] for c in before if c[0] == "NavigatorOutput"] == [
        ("NavigatorOutput", "/"),
        ("NavigatorOutput", "/search"),
        ("NavigatorOutput", "/results"),
    ]
    out = subprocess.run(
        [*child, "resume", *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["state"] == "COMPLETED" and "Poseidonia" in report["answer"]
    resumed = [c[:2] for c in _calls(work) if c[2] == "resume"]
    assert resumed[0] == ("NavigatorOutput", "/results")  # reopened where it had got to
    assert ("NavigatorOutput", "/") not in resumed and ("NavigatorOutput", "/search") not in resumed
    assert ("PlannerOutput", "/") not in resumed  # the first plan is not paid for again


async def test_pause_takes_effect_between_browser_steps(site: TestSite, tmp_path: Path) -> None:
    calls: list[str] = []
    gate = asyncio.Event()
    model = agent_model(search_policy, calls=calls)
    inner = model.fn

    async def held(messages: list[Any], options: Any) -> Any:
        if len(calls) == 2:  # the navigator of step 1 waits until the pause is asked for
            await gate.wait()
        return inner(messages, options)

    rt = make_runtime(tmp_path, FunctionModel(held), {"checkpoints": True})
    job = asyncio.create_task(rt.run_skill("Browse", {"task": TASK, "url": site.url("/")}))
    while len(calls) < 2:
        await asyncio.sleep(0.01)
    task_id = rt.current_task_id
    assert task_id is not None and rt.pause() is True
    gate.set()
    paused = await job
    assert paused.state == "PAUSED"  # not run on to COMPLETED
    paid = len(calls)
    assert paid == 2  # the plan and the navigator of step 1: step 2 never started
    done = await rt.resume_task(task_id)
    assert done is not None and done.state == "COMPLETED"
    assert "Poseidonia" in done.data["answer"]
    assert calls[paid] == "NavigatorOutput"  # resumed at step 2: no second plan for step 1
    await rt.close()
    await close_pending_browsers()


def reorder_policy(page: PageView, prompt: str) -> list[dict[str, Any]]:
    if page.path.startswith("/reorder/target"):
        return [{"action": "done", "answer": f"the code is {TARGET_CODE}"}]
    return [{"action": "click", "index": page.find("link", "Target")}]


def _no_model(messages: list[Any], options: Any) -> Any:
    raise AssertionError("replay must not call the model")


async def test_replay_runs_a_recorded_task_on_a_reordered_page(
    site: TestSite, tmp_path: Path
) -> None:
    rt = make_runtime(tmp_path, agent_model(reorder_policy), {"checkpoints": True})
    recorded = await rt.run_skill(
        "Browse", {"task": "find the target", "url": site.url("/reorder")}
    )
    await rt.close()
    assert recorded.state == "COMPLETED"
    recording = json.loads(Path(recorded.data["recording"]).read_text(encoding="utf-8"))
    [click] = recording["actions"]
    assert click["signature"]["text"] == "Target" and click["action"]["action"] == "click"
    first_index = click["action"]["index"]

    again = make_runtime(tmp_path, FunctionModel(_no_model), {"checkpoints": True})
    replayed = await again.run_skill("Browse", {"replay": recorded.task_id})
    assert replayed.state == "COMPLETED", replayed.content
    assert replayed.data["url"].endswith("/reorder/target")
    await again.close()
    # The list rotated between the two visits: the recorded index now points at another link,
    # and the element was found by its signature instead.
    [line] = replayed.data["actions"]
    assert line.startswith("1. click [") and f"[{first_index}]" not in line

    # A page where the element is gone: replay stops at that step, saying so.
    path = Path(recorded.data["recording"])
    broken = json.loads(path.read_text(encoding="utf-8"))
    broken["actions"][0]["signature"].update(text="Nowhere", href="/reorder/nowhere")
    path.write_text(json.dumps(broken), encoding="utf-8")
    third = make_runtime(tmp_path, FunctionModel(_no_model), {"checkpoints": True})
    failed = await third.run_skill("Browse", {"replay": recorded.task_id})
    await third.close()
    await close_pending_browsers()
    assert failed.state == "ERROR"
    assert "replay stopped at step 1" in failed.content and "Nowhere" in failed.content


async def test_replay_of_an_unknown_task_is_a_clear_error(tmp_path: Path) -> None:
    rt = make_runtime(tmp_path, FunctionModel(_no_model), {"checkpoints": True})
    msg = await rt.run_skill("Browse", {"replay": "0123456789abcdef"})
    await rt.close()
    assert msg.state == "ERROR" and "no recorded browsing task" in msg.content


def test_skillrt_replay_runs_a_recording_from_the_command_line(
    site: TestSite, tmp_path: Path
) -> None:
    async def record() -> str:
        rt = make_runtime(tmp_path, agent_model(reorder_policy), {"checkpoints": True})
        msg = await rt.run_skill("Browse", {"task": "find it", "url": site.url("/reorder")})
        await rt.close()
        await close_pending_browsers()
        assert msg.state == "COMPLETED" and msg.task_id is not None
        return msg.task_id

    task_id = asyncio.run(record())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        SKILLRT_CONTENT_ROOT=str(tmp_path),
        SKILLRT_BROWSER__ALLOW_PRIVATE='["127.0.0.1"]',
    )
    out = subprocess.run(
        [sys.executable, "-m", "skillrt", "replay", task_id, "--json"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    reply = json.loads(out.stdout)
    assert reply["state"] == "COMPLETED" and reply["data"]["url"].endswith("/reorder/target")
    missing = subprocess.run(
        [sys.executable, "-m", "skillrt", "replay", "feedfacefeedface"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert "no recorded browsing task" in missing.stdout + missing.stderr


async def test_a_follow_up_in_the_session_continues_from_the_last_page(
    site: TestSite, tmp_path: Path
) -> None:
    pages: list[str] = []

    def policy(page: PageView, prompt: str) -> list[dict[str, Any]]:
        pages.append(page.path)
        if page.path.startswith("/results"):
            if "Atlantis" in prompt and "open the Atlantis result" in prompt:
                return [{"action": "click", "index": page.find("link", "Atlantis")}]
            return [{"action": "done", "answer": "on the results page"}]
        if page.path.startswith("/articles/atlantis"):
            return [{"action": "done", "answer": "opened the Atlantis article"}]
        return [{"action": "done", "answer": "nothing here"}]

    rt = make_runtime(tmp_path, agent_model(policy), {"checkpoints": True})
    context = {"session_id": "browsing-session"}
    first = await rt.run_skill(
        "Browse", {"task": "search for capital", "url": site.url("/results?q=capital")}, context
    )
    assert first.state == "COMPLETED" and "/results" in first.data["url"]
    pages.clear()
    follow = await rt.run_skill("Browse", {"task": "now open the Atlantis result"}, context)
    assert follow.state == "COMPLETED", follow.content
    assert pages[0].startswith("/results")  # it began on the page the last task ended on
    assert follow.data["url"].endswith("/articles/atlantis")
    pages.clear()
    other = await rt.run_skill("Browse", {"task": "now open the Atlantis result"},
                               {"session_id": "another-session"})  # fmt: skip
    assert not any(p.startswith("/results") for p in pages)  # no follow-up across sessions
    assert other.state in ("COMPLETED", "ERROR")
    await rt.close()
    await close_pending_browsers()


async def test_a_follow_up_window_of_zero_starts_afresh(site: TestSite, tmp_path: Path) -> None:
    seen: list[str] = []

    def policy(page: PageView, prompt: str) -> list[dict[str, Any]]:
        seen.append(page.path)
        return [{"action": "done", "answer": "ok"}]

    rt = make_runtime(tmp_path, agent_model(policy), {"checkpoints": True}, follow_up_s=0)
    await rt.run_skill("Browse", {"task": "look", "url": site.url("/results?q=x")})
    seen.clear()
    await rt.run_skill("Browse", {"task": "and then?"})
    assert not any(p.startswith("/results") for p in seen)
    await rt.close()
    await close_pending_browsers()


async def test_a_resumed_task_judges_its_answer_by_the_pages_seen_before_the_pause(
    site: TestSite, tmp_path: Path
) -> None:
    """The final answer is judged by the pages the model was shown (``figures``): those of
    the turns before a pause come back from the journal, or a resumed task would refuse an
    answer from the page it saw first ("Link 42" is on /many, not on the article)."""
    calls: list[str] = []
    gate = asyncio.Event()

    def policy(page: PageView, prompt: str) -> list[dict[str, Any]]:
        if page.path == "/many":
            return [{"action": "goto", "url": site.url("/articles/atlantis")}]
        return [{"action": "done", "answer": "Poseidonia; the list shows it as Link 42."}]

    inner = agent_model(policy, calls=calls).fn

    async def held(messages: list[Any], options: Any) -> Any:
        if len(calls) == 2:  # the navigator of step 1 waits until the pause is asked for
            await gate.wait()
        return inner(messages, options)

    rt = make_runtime(tmp_path, FunctionModel(held), {"checkpoints": True})
    task = "Find the capital of Atlantis and its link number"
    job = asyncio.create_task(rt.run_skill("Browse", {"task": task, "url": site.url("/many")}))
    while len(calls) < 2:
        await asyncio.sleep(0.01)
    task_id = rt.current_task_id
    assert task_id is not None and rt.pause() is True
    gate.set()
    assert (await job).state == "PAUSED"
    done = await rt.resume_task(task_id)
    await rt.close()
    await close_pending_browsers()
    assert done is not None and done.state == "COMPLETED", done and done.content
    assert "Link 42" in done.data["answer"]
