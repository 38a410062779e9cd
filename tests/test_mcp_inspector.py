"""A real third-party client: ``@modelcontextprotocol/inspector --cli`` (npm, installed in
``tests/node`` by ``.ci/run``) lists the tools of ``skillrt mcp`` and calls one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'skillrt[mcp]'")

from .blog import copy_blog
from .mcp_support import node_package, server_env

pytestmark = pytest.mark.slow


def inspector(blog: Path, state: Path, *args: str) -> Any:
    cli = node_package("@modelcontextprotocol/inspector", "cli/build/cli.js")
    command = ["node", str(cli), "--cli", sys.executable, "-m", "skillrt", "mcp", *args]
    done = subprocess.run(
        command,
        env=server_env(blog, state),
        cwd=blog,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_inspector_lists_the_tools_and_calls_one(tmp_path: Path) -> None:
    blog, state = copy_blog(tmp_path / "blog"), tmp_path / "state"
    listed = inspector(blog, state, "--method", "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}
    assert {"WriteArticle", "Summarize", "ask", "answer"} <= set(tools)
    assert "topic" in tools["WriteArticle"]["inputSchema"]["properties"]

    called = inspector(
        blog,
        state,
        "--method",
        "tools/call",
        "--tool-name",
        "WriteArticle",
        "--tool-arg",
        "topic=Rust ownership",
    )
    assert called.get("isError") in (None, False), called
    assert called["structuredContent"]["path"] == "posts/rust-ownership.md"
    assert "posts/rust-ownership.md" in called["content"][0]["text"]
    assert "Understanding Rust Ownership" in (blog / "posts" / "rust-ownership.md").read_text(
        encoding="utf-8"
    )

    resources = inspector(blog, state, "--method", "resources/list")
    uris = {r["uri"] for r in resources["resources"]}
    assert "post://posts/rust-ownership.md" in uris
