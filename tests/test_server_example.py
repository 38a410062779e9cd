"""``examples/blog-tool`` run by the system ``node`` against a real ``skillrt serve``: it writes
an article with progress, cancels one task and pauses then resumes another."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import frontmatter
import pytest

pytest.importorskip("fastapi")

from skillrt.llm.base import LLMMessage
from skillrt.testing import Answer, FunctionModel, ModelOptions
from tests.server_support import LiveServer, make_runtime
from tests.writing_support import WritingModelFn, prompt_kind

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "blog-tool" / "blog-tool.mjs"


class Sections(WritingModelFn):
    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Answer:
        if prompt_kind(messages) == "section":
            return "Ownership moves values between owners; borrowing lends them for a while."
        return super().__call__(messages, options)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    llm = FunctionModel(Sections(), chunk_delay=0.02)
    server = LiveServer(make_runtime(tmp_path, llm))
    try:
        yield server
    finally:
        server.stop()


def node() -> str:
    found = shutil.which("node") or shutil.which("nodejs")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("node is missing (apt-get install nodejs)")
        pytest.skip("node is not installed")
    return found


def test_blog_tool_example(live: LiveServer, tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    (blog / ".skillrt").mkdir(exist_ok=True)
    token_file = blog / ".skillrt" / "serve-token"
    token_file.write_text(live.token + "\n")  # the example reads it from the blog folder
    out = subprocess.run(
        [node(), str(EXAMPLE)],
        cwd=blog,
        env={"PATH": os.environ.get("PATH", ""), "SKILLRT_URL": live.url},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    summary = json.loads(next(line for line in lines if line.startswith("SUMMARY "))[8:])
    written = summary["written"]
    assert written["state"] == "COMPLETED" and written["streamed"] > 100
    assert frontmatter.load(blog / written["path"])["title"]
    assert any(line.strip().startswith("[") and "%]" in line for line in lines)  # progress
    assert summary["cancelled"] == {"state": "CANCELLED"}
    resumed = summary["resumed"]
    assert resumed["paused"] == "PAUSED" and resumed["state"] == "COMPLETED"
    assert (blog / resumed["path"]).is_file()
    assert "abort sent: true" in out.stdout
    assert "resumable:" in out.stdout and "steps done" in out.stdout
    with live.client() as c:
        assert c.get("/v1/tasks").json() == []
