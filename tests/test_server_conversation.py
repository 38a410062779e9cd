"""Over ``skillrt serve``, ``session_id`` carries the conversation: follow-ups act on that
session's focus, and another session has its own."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from skillrt.testing import FunctionModel
from tests.server_support import LiveServer, make_runtime
from tests.writing_support import WritingModelFn


def test_session_id_carries_the_focus_over_http(tmp_path: Path) -> None:
    live = LiveServer(make_runtime(tmp_path, FunctionModel(WritingModelFn())))
    try:
        with live.client() as c:
            first = {"text": "summarize posts/git-workflow.md", "session_id": "editor-1"}
            r = c.post("/v1/input", json=first)
            assert r.status_code == 200, r.text
            assert r.json()["data"]["source"] == "posts/git-workflow.md"
            r = c.post("/v1/input", json={"text": "summarize it", "session_id": "editor-1"})
            assert r.json()["state"] == "COMPLETED", r.text
            assert r.json()["data"]["source"] == "posts/git-workflow.md"
            # Another session has no focus: it is asked which post.
            r = c.post("/v1/input", json={"text": "summarize it", "session_id": "editor-2"})
            assert r.json()["state"] == "WAITING_INPUT", r.text
            assert "Which post should I summarise?" in r.json()["content"]
            r = c.post("/v1/input", json={"text": "hello", "session_id": "editor-1"})
            assert r.json()["state"] == "COMPLETED" and r.json()["data"]["chat"] is True
    finally:
        live.stop()
