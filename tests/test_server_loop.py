"""``serve.loop``: ``skillrt serve`` runs on uvloop's event loop when it is installed (``auto``),
on asyncio's when asked (``asyncio``), and says how to get uvloop when it is asked for by name
and missing. A real server answers on each loop, SSE included."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from skillrt import load_config
from skillrt.exceptions import ConfigError, UserError
from skillrt.server.run import new_event_loop
from skillrt.testing import FunctionModel
from tests.server_support import LiveServer, StepModel, make_runtime, stream


def _kind(loop: asyncio.AbstractEventLoop) -> str:
    try:
        return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
    finally:
        loop.close()


def test_auto_is_uvloop_when_installed_and_asyncio_when_asked() -> None:
    pytest.importorskip("uvloop")
    assert _kind(new_event_loop()) == "uvloop"
    assert _kind(new_event_loop("uvloop")) == "uvloop"
    assert _kind(new_event_loop("asyncio")) == "asyncio"


def test_without_uvloop_auto_falls_back_and_uvloop_by_name_says_how(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # ``import uvloop`` raises ImportError
    assert _kind(new_event_loop("auto")) == "asyncio"
    with pytest.raises(UserError, match="pip install uvloop"):
        new_event_loop("uvloop")


def test_an_unknown_loop_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLRT_SERVE__LOOP", "trio")
    with pytest.raises(ConfigError, match="loop"):
        load_config(content_root=tmp_path, state_dir=tmp_path / "state")


@pytest.mark.parametrize("choice", ["asyncio", "uvloop"])
def test_a_server_answers_on_either_loop(
    choice: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if choice == "uvloop":
        pytest.importorskip("uvloop")
    monkeypatch.setenv("SKILLRT_SERVE__LOOP", choice)
    runtime = make_runtime(tmp_path, FunctionModel(StepModel(), chunk_delay=0.001))
    assert runtime.config.serve.loop == choice
    server = LiveServer(runtime)
    try:
        assert type(server.loop).__module__.startswith(choice)
        with server.client() as c:
            r = c.post("/v1/skills/Steps/run", json={"params": {"topic": "go", "steps": 2}})
            assert r.status_code == 200, r.text
            assert r.json()["state"] == "COMPLETED"
            assert r.json()["content"].startswith("go part 1")
            events = stream(c, "POST", "/v1/skills/Steps/run", json={"params": {"topic": "s"}})
            assert events[0].event == "state:changed"
            assert events[-1].event == "message" and events[-1].data["state"] == "COMPLETED"
            task_id = events[-1].data["task_id"]
            again = stream(c, "GET", f"/v1/tasks/{task_id}/events")  # replayed from the journal
            assert [e.id for e in again] == [e.id for e in events]
    finally:
        server.stop()
