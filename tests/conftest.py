"""Shared fixtures: every test runs in its own folder, with no user config and no API keys."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillrt import AgentRuntime

# A throwaway PostgreSQL cluster, and each task store in turn, for every module that asks.
from .pg_support import pg_cluster, pg_url
from .stores import store_kind

__all__ = ["isolated", "pg_cluster", "pg_url", "store_kind"]


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
