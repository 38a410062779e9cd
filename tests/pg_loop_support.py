"""What the tests of the event loop's own PostgreSQL sessions share: a backend over the test
server, the loop's durable session once it has connected, and a checkpoint as another
session reads it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg


def open_backend(pg_url: str, tmp_path: Path) -> Iterator[Any]:
    """A ``PostgresBackend`` over ``pg_url``, closed after (a fixture's body)."""
    import structlog

    from skillrt import load_config
    from skillrt._state.postgres.backend import PostgresBackend

    cfg = load_config(content_root=tmp_path, state_dir=tmp_path / ".skillrt", state_url=pg_url)
    opened = PostgresBackend.open(cfg, logger=structlog.get_logger(), on_reset=lambda: None,
                                  opened=[])  # fmt: skip
    yield opened
    opened.close()


async def commit_session(backend: Any) -> Any:
    """The loop's durable session, once connected (in the background, on first use)."""
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + 10
    while (conn := backend.database.commit_session(loop)) is None:
        assert time.monotonic() < deadline, "the loop's session never connected"
        await asyncio.sleep(0.01)
    return conn


def stored(url: str, task_id: str) -> float | None:
    """The checkpoint's updated_at as another session reads it (None: no checkpoint)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT updated_at FROM skillrt_tasks WHERE task_id = %s", (task_id,)
        ).fetchone()
    return None if row is None else float(row[0])
