"""``open_state``: the state backend a config asks for, chosen once at start-up.

``state_url = "postgresql://…"`` opens the shared PostgreSQL backend (unless checkpoints are off
or the host lent its own store); anything else the embedded one in the state folder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import structlog

from skillrt._state.embedded.backend import EmbeddedBackend
from skillrt._state.protocol import StateBackend, TaskStore
from skillrt.settings import RuntimeConfig, ensure_state

__all__ = ["open_state"]


class _Closable(Protocol):
    def close(self) -> None: ...


def open_state(
    cfg: RuntimeConfig,
    *,
    given: TaskStore | None,
    logger: structlog.stdlib.BoundLogger,
    on_reset: Callable[[], None],
    opened: list[_Closable],
) -> StateBackend:
    """Open the backend (blocking: run it off the event loop). Each part it opens is appended to
    ``opened`` first, so that a caller whose later step fails can close them."""
    state = ensure_state(cfg.state_path)
    if cfg.state_url is not None and cfg.checkpoints and given is None:
        from skillrt._state.postgres.backend import PostgresBackend  # psycopg only when asked

        return PostgresBackend.open(cfg, logger=logger, on_reset=on_reset, opened=opened)
    return EmbeddedBackend.open(
        cfg, state, given=given, logger=logger, on_reset=on_reset, opened=opened
    )
