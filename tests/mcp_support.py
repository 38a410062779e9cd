"""Shared pieces of the MCP tests: the writing model as ``llm.factory`` loads it, a gate that
holds it in the middle of an article, and the official SDK's client over stdio and HTTP."""

from __future__ import annotations

import asyncio
import os
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from skillrt import LLM
from skillrt.llm.base import LLMMessage
from skillrt.testing import Answer, FunctionModel, ModelOptions

from .writing_support import WritingModelFn

REPO = Path(__file__).resolve().parent.parent
FACTORY = "tests.mcp_support:mcp_model"
GATE_ENV = "MCP_TEST_GATE"  # a file: the second section waits until it exists


class GatedWritingModel(WritingModelFn):
    """The writing model; with ``MCP_TEST_GATE`` set, section 2 first writes ``GATE.reached``
    and then waits until the file ``GATE`` exists (a test cancels or kills it meanwhile)."""

    async def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Answer:  # type: ignore[override]
        answer = super().__call__(messages, options)
        gate = os.environ.get(GATE_ENV)
        if gate and self.kinds[-1] == "section" and "Write section 2" in messages[-1]["content"]:
            Path(gate + ".reached").write_text("yes", encoding="utf-8")
            while not Path(gate).exists():
                await asyncio.sleep(0.02)
        return answer


def mcp_model() -> LLM:
    """``llm.provider = "python"``, ``llm.factory = "tests.mcp_support:mcp_model"``."""
    return FunctionModel(GatedWritingModel(), chunk_delay=0.005)


def server_env(blog: Path, state: Path, **extra: str) -> dict[str, str]:
    """The environment of a ``skillrt mcp`` child over ``blog`` with the test model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env.update(
        SKILLRT_CONTENT_ROOT=str(blog),
        SKILLRT_STATE_DIR=str(state),
        SKILLRT_LLM__PROVIDER="python",
        SKILLRT_LLM__FACTORY=FACTORY,
        PYTHONPATH=str(REPO),
        **extra,
    )
    return env


def stdio_params(blog: Path, state: Path, **extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillrt", "mcp"],
        env=server_env(blog, state, **extra),
        cwd=str(blog),
    )


@asynccontextmanager
async def stdio_session(blog: Path, state: Path, **extra: str) -> AsyncIterator[ClientSession]:
    """The SDK's client, initialised, on a ``skillrt mcp`` child process."""
    async with (
        stdio_client(stdio_params(blog, state, **extra)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(url: str, token: str, **kwargs: Any) -> AsyncIterator[ClientSession]:
    """The SDK's client, initialised, on ``url`` (``…/mcp``) with the bearer token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30, read=60)) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write, **kwargs) as session,
    ):
        await session.initialize()
        yield session


def experimental(session: ClientSession) -> Any:
    """``session.experimental`` (the SDK warns that its task API is experimental)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return session.experimental


async def wait_for(path: Path, seconds: float = 30.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if path.exists():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} did not appear within {seconds} s")


TOKEN = "mcp-test-token-0123456789"


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """``skillrt serve`` as a child process on a free port, with the test model."""

    def __init__(self, blog: Path, state: Path, log: Path, **extra: str) -> None:
        import subprocess
        import time

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = server_env(blog, state, SKILLRT_SERVE__TOKEN=TOKEN, **extra)
        args = [sys.executable, "-m", "skillrt", "serve", "--port", str(self.port)]
        self.log = log.open("ab")
        self.proc = subprocess.Popen(
            args, env=env, cwd=blog, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"skillrt serve exited: {log.read_text(errors='replace')}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("skillrt serve did not start")

    @property
    def mcp_url(self) -> str:
        return self.url + "/mcp"

    def stop(self, *, kill: bool = False) -> None:
        if self.proc.poll() is None:
            if kill:
                self.proc.kill()
            else:
                self.proc.terminate()
            self.proc.wait(30)
        self.log.close()


NODE_DIR = Path(__file__).resolve().parent / "node" / "node_modules"
# CI sets one of these: a missing npm package then fails the test instead of skipping it.
REQUIRE_NODE = ("SKILLRT_REQUIRE_MCP_INSPECTOR", "SKILLRT_REQUIRE_MCP_NODE")
REQUIRED_NODE = any(os.environ.get(name) == "1" for name in REQUIRE_NODE)  # read at import


def node_package(name: str, entry: str) -> Path:
    """A file of an npm package installed in ``tests/node`` (``npm ci --prefix tests/node``),
    or a skip when it is missing (a failure with ``SKILLRT_REQUIRE_MCP_INSPECTOR=1``)."""
    import shutil

    import pytest

    path = NODE_DIR / name / entry
    if path.is_file() and shutil.which("node"):
        return path
    reason = f"{name} is not installed in tests/node (run: npm ci --prefix tests/node)"
    if REQUIRED_NODE:
        pytest.fail(reason + " (SKILLRT_REQUIRE_MCP_INSPECTOR=1)")
    pytest.skip(reason)


def everything_server() -> dict[str, Any]:
    """``[mcp.servers.everything]`` for ``@modelcontextprotocol/server-everything`` (stdio)."""
    entry = node_package("@modelcontextprotocol/server-everything", "dist/index.js")
    return {"command": "node", "args": [str(entry), "stdio"], "timeout_s": 30}
