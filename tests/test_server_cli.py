"""``skillrt serve`` as a real process: the token file (0600) and the printed URL, the bind
refusal, SIGTERM leaving a running task resumable and its stream ending with the reply; and
``skillrt.client`` against a live server."""

from __future__ import annotations

import json
import re
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi")

from skillrt.client import SkillrtClient
from skillrt.exceptions import ServerError, UnknownSkill
from skillrt.testing import FunctionModel
from tests.cli_support import (
    cli_env,
    make_blog,
    outline,
    skillrt,
    start_skillrt,
    write_script,
)
from tests.server_support import TOKEN, LiveServer, StepModel, make_runtime, parse_sse


def test_serve_creates_a_private_token_prints_the_url_and_sigterm_keeps_tasks(
    tmp_path: Path,
) -> None:
    root = make_blog(tmp_path)
    # The outline call waits 60 s: the task is mid-step when SIGTERM comes.
    script = write_script(tmp_path / "s.json", [{"$answer": outline("Frogs", ["A"]), "$delay": 60}])
    env = cli_env(root, script)
    proc = start_skillrt("serve", "--port", "0", env=env, cwd=root)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        m = re.match(r"skillrt serve: (http://127\.0\.0\.1:\d+/)#token=(\S+)", banner)
        assert m is not None, (
            banner + proc.stdout.readline() + (proc.stderr.read() if proc.stderr else "")
        )
        url, token = m.groups()
        token_file = root / ".skillrt" / "serve-token"
        assert f"created in {token_file.absolute()};" in proc.stdout.readline()  # named whole
        assert token_file.read_text().strip() == token
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        auth = {"Authorization": f"Bearer {token}"}
        assert httpx.get(url + "v1/info", headers=auth).json()["model"] == "scripted"
        assert httpx.get(url + "v1/info").status_code == 401

        events: list = []

        def follow() -> None:
            with httpx.stream(
                "POST",
                url + "v1/input",
                json={"text": "write an article about frogs"},
                headers={**auth, "Accept": "text/event-stream"},
                timeout=30,
            ) as r:
                events.extend(parse_sse(r.iter_lines()))

        follower = threading.Thread(target=follow)
        follower.start()
        for _ in range(200):
            tasks = httpx.get(url + "v1/tasks", headers=auth).json()
            if tasks and tasks[0]["state"] == "EXECUTING":
                break
            threading.Event().wait(0.05)
        else:
            raise AssertionError(f"no running task: {tasks}")
        task_id = tasks[0]["id"]
        proc.send_signal(signal.SIGTERM)
        follower.join(20)
        assert not follower.is_alive()
        proc.wait(20)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    # The stream ended with the runtime's reply: interrupted, resumable.
    assert events[-1].event == "message", events[-3:]
    assert events[-1].data["data"]["outcome"] == "interrupted"
    listed = skillrt("tasks", "--json", env=env, cwd=root)
    assert task_id in [t["id"] for t in json.loads(listed.stdout)], listed.stderr

    # The second start reuses the token.
    again = start_skillrt("serve", "--port", "0", env=env, cwd=root)
    try:
        assert again.stdout is not None
        assert f"#token={token}" in again.stdout.readline()
        assert "created" not in again.stdout.readline()
    finally:
        again.send_signal(signal.SIGTERM)
        again.communicate(timeout=20)


def test_serve_refuses_a_port_out_of_range_as_bad_usage(tmp_path: Path) -> None:
    # --port -5 reached uvicorn: "[Errno -8] Servname not supported", exit 3 (resumable).
    root = make_blog(tmp_path)
    env = cli_env(root, write_script(tmp_path / "s.json", []))
    for port in ("-5", "65536"):
        out = skillrt("serve", "--port", port, env=env, cwd=root, timeout=30)
        assert out.returncode == 2, out.stderr
        assert "'--port'" in out.stderr and "Errno" not in out.stderr


def test_serve_refuses_a_remote_bind_and_a_readable_token(tmp_path: Path) -> None:
    root = make_blog(tmp_path)
    env = cli_env(root, write_script(tmp_path / "s.json", []))
    out = skillrt("serve", "--host", "0.0.0.0", "--port", "0", env=env, cwd=root)
    assert out.returncode == 2
    assert "--allow-remote" in out.stderr
    loose = tmp_path / "token"
    loose.write_text("x" * 40)
    loose.chmod(0o644)
    out = skillrt("serve", "--port", "0", "--token-file", str(loose), env=env, cwd=root)
    assert out.returncode == 2 and "chmod 600" in out.stderr
    short = {**env, "SKILLRT_SERVE__TOKEN": "short"}
    out = skillrt("serve", "--port", "0", env=short, cwd=root)
    assert out.returncode == 2 and "at least 16" in out.stderr
    # a folder given as the token file: said so (it blamed the state folder, exit 74)
    folder = tmp_path / "tokens"
    folder.mkdir()
    out = skillrt("serve", "--port", "0", "--token-file", str(folder), env=env, cwd=root)
    assert out.returncode == 2 and "is not a file" in out.stderr, out.stderr


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(make_runtime(tmp_path, FunctionModel(StepModel(), chunk_delay=0.01)))
    try:
        yield server
    finally:
        server.stop()


async def test_client_mirrors_the_runtime_calls(live: LiveServer) -> None:
    async with SkillrtClient(live.url, token=TOKEN, session_id="py") as c:
        msg = await c.process_input("steps client")
        assert msg.state == "COMPLETED" and msg.content.startswith("client part 1")
        ran = await c.run_skill("Steps", {"topic": "direct", "steps": 2})
        assert ran.data["parts"][1].startswith("direct part 2")
        names = [s["name"] for s in await c.skills()]
        assert "Steps" in names
        assert (await c.info())["model"] == "function"

        events = [e async for e in c.stream_input("steps streamed")]
        assert events[-1].type == "message"
        final = events[-1].message
        assert final is not None and final.state == "COMPLETED"
        assert [e.data["data"]["step"] for e in events if e.type == "task:progress"] == [1, 2, 3]
        replay = [e async for e in c.events(final.task_id or "", last_event_id=events[2].id)]
        assert [e.id for e in replay] == [e.id for e in events[3:]]

        asked = await c.run_skill("Ask", {"question": "Why?"})
        assert asked.state == "WAITING_INPUT"
        waiting = await c.list_tasks(session_id="py")
        assert [t.question for t in waiting] == ["Why?"]
        done = await c.answer_task(asked.task_id or "", "because")
        assert done is not None and done.content == "you said because"

        assert await c.abort("nope") is False
        assert await c.pause("nope") is False
        assert await c.resume_task("nope") is None
        assert await c.abandon_task("nope") is False
        assert await c.get_task("nope") is None
        assert await c.get_resumable_tasks() == []
        with pytest.raises(UnknownSkill):
            await c.run_skill("Nope", {})
    async with SkillrtClient(live.url, token="wrong-token-0123456789") as bad:
        with pytest.raises(ServerError) as err:
            await bad.list_tasks()
        assert err.value.status == 401 and err.value.code == "unauthorized"


def test_without_the_server_extra_the_error_names_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from skillrt.exceptions import MissingDependency
    from skillrt.server import require_server

    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if not installed
    with pytest.raises(MissingDependency) as err:
        require_server()
    assert "pip install 'skillrt[server]'" in str(err.value)
