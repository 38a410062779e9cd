"""Issue 3's crash test: real processes killed with SIGKILL, then resumed by a new process.

A child process (``crash_child.py``) runs a runtime with a four-step skill (context ->
outline -> content -> save) against a ScriptedModel, with its state in a temp folder. The test
kills it at each step boundary and in the middle of the file write; a new process initialises
the runtime, finds the task in ``get_resumable_tasks()`` and resumes it. Completed steps must
not run again (each step logs its runs, so model calls are counted), and the saved article is
either absent or complete, never torn. The five scenarios run side by side to keep it quick.
It runs on both task stores (``store_kind``); on PostgreSQL each scenario has a database of
its own, and the new process starts once the killed one's lease has expired.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .crash_child import TARGET, article_text
from .pg_support import database_beside
from .stores import StoreKind

CHILD = Path(__file__).with_name("crash_child.py")
OUTLINE, CONTENT = "Rust 所有权", "所有权规则：每个值都有一个所有者。"
STEPS = ["context", "outline", "content", "save"]


@dataclass
class Scenario:
    crash_at: str
    base: Path
    big: bool = False
    store_env: dict[str, str] = field(default_factory=dict)  # the task store's settings
    proc: subprocess.Popen[str] | None = None
    saw_temp_file: bool = False
    log: list[str] = field(default_factory=list)

    @property
    def blog(self) -> Path:
        return self.base / "blog"

    @property
    def work(self) -> Path:
        return self.base / "work"

    @property
    def article(self) -> Path:
        return self.blog / TARGET

    def env(self, script: list[str], crash_at: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
        env.update(self.store_env)
        env.update(
            XDG_CONFIG_HOME=str(self.base / "xdg"),
            CRASH_AT=crash_at,
            CRASH_SCRIPT=json.dumps(script),
            CRASH_BIG="1" if self.big else "0",
        )
        return env

    def spawn(self, mode: str, script: list[str], crash_at: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, str(CHILD), mode, str(self.blog), str(self.work)],
            cwd=self.work,
            env=self.env(script, crash_at),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def steps_run(self) -> list[str]:
        log = self.work / "steps.log"
        return log.read_text().split() if log.exists() else []

    def expected(self) -> bytes:
        return article_text(OUTLINE, CONTENT, big=self.big).encode()


def make(tmp_path: Path, crash_at: str, kind: StoreKind, *, first: bool) -> Scenario:
    """A scenario with a blog of its own (on PostgreSQL also a database of its own: the
    scenarios run side by side, and each resume finds exactly its own task)."""
    store_env = kind.env()
    if kind.state_url is not None and not first:
        store_env["SKILLRT_STATE_URL"] = database_beside(kind.state_url)
    scenario = Scenario(
        crash_at,
        tmp_path / crash_at.replace(":", "-"),
        big=crash_at == "in:save",
        store_env=store_env,
    )
    (scenario.blog / "posts").mkdir(parents=True)
    (scenario.blog / "posts" / "hello.md").write_text("---\ntitle: Hello\n---\n\nHi.\n")
    scenario.work.mkdir()
    return scenario


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.0005)
    raise AssertionError(f"timed out waiting for {what}")


def kill_at_its_point(scenario: Scenario) -> None:
    proc = scenario.proc
    assert proc is not None
    marker = scenario.work / "paused"

    def paused_or_dead() -> bool:
        return marker.exists() or proc.poll() is not None

    wait_for(paused_or_dead, 60, f"{scenario.crash_at} to be reached")
    if proc.poll() is not None:
        _, err = proc.communicate()
        raise AssertionError(f"child ended before {scenario.crash_at}:\n{err}")
    if scenario.crash_at == "in:save":
        posts = scenario.blog / "posts"

        def temp_file_exists() -> bool:
            with os.scandir(posts) as entries:
                return any(e.name.endswith(".tmp") for e in entries)

        (scenario.work / "go").touch()
        wait_for(temp_file_exists, 30, "the temp file of the save")
        scenario.saw_temp_file = True
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def test_killed_tasks_resume_from_their_last_completed_step(
    tmp_path: Path, store_kind: StoreKind
) -> None:
    points = ["after:context", "after:outline", "after:content", "in:save", "after:save"]
    scenarios = [make(tmp_path, p, store_kind, first=n == 0) for n, p in enumerate(points)]

    # 1. Start every scenario, kill each where it asked to stop.
    for s in scenarios:
        s.proc = s.spawn("start", [OUTLINE, CONTENT], s.crash_at)
    try:
        for s in scenarios:
            kill_at_its_point(s)
    finally:
        for s in scenarios:
            if s.proc is not None and s.proc.poll() is None:
                s.proc.kill()
                s.proc.communicate()

    done_before: dict[str, list[str]] = {}
    for s in scenarios:
        done_before[s.crash_at] = s.steps_run()
        expected_steps = STEPS[: STEPS.index(s.crash_at.split(":")[1]) + 1]
        assert done_before[s.crash_at] == expected_steps, s.crash_at
        # Never torn: absent, or the complete article.
        if s.crash_at == "after:save":
            assert s.article.read_bytes() == s.expected()
        else:
            assert not s.article.exists(), s.crash_at
    assert next(s for s in scenarios if s.crash_at == "in:save").saw_temp_file

    # 2. A new process per scenario: find the task, resume it. Its model gets only the
    #    answers of the steps not yet done, so a re-run completed step would run out of them.
    for s in scenarios:
        store_kind.wait_for_dead_leases(s.store_env.get("SKILLRT_STATE_URL"))
        remaining = [
            a
            for a, step in ((OUTLINE, "outline"), (CONTENT, "content"))
            if step not in done_before[s.crash_at]
        ]
        s.proc = s.spawn("resume", remaining, "")
    for s in scenarios:
        assert s.proc is not None
        out, err = s.proc.communicate(timeout=60)
        assert s.proc.returncode == 0, f"{s.crash_at}:\n{err}"
        report = json.loads(out.strip().splitlines()[-1])
        task_id = (s.work / "task_id").read_text()
        assert report["resumable"] == [task_id], s.crash_at
        assert report["state"] == "COMPLETED", (s.crash_at, report["content"])
        assert report["left"] == []

        steps = s.steps_run()
        for step in STEPS:
            # every step ran once, except a save cut off mid-write, which ran again
            runs = 2 if (step == "save" and s.crash_at == "in:save") else 1
            assert steps.count(step) == runs, (s.crash_at, steps)
        assert steps.count("outline") + steps.count("content") == 2  # model calls in total
        assert s.article.read_bytes() == s.expected(), s.crash_at
