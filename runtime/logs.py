"""Structured logging: the seed's log events, console output for people, JSON lines on request.

The runtime builds its own logger from its config (no global ``structlog.configure``), and a
``Redactor`` removes API keys and configured secrets from every log line and checkpoint.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterable, MutableMapping
from pathlib import Path
from typing import Any, TextIO

import structlog

from skillrt.settings import RuntimeConfig

__all__ = ["LOG_EVENTS", "Redactor", "make_logger", "open_log_file"]

LOG_EVENTS = (
    "agent.input.received",
    "agent.intent.parsed",
    "agent.state.changed",
    "agent.skill.started",
    "agent.llm.called",
    "agent.file.saved",
    "agent.task.completed",
    "agent.task.cancelled",
    "agent.error",
)

REDACTED = "***"
_SECRET_KEYS = re.compile(r"(api[_-]?key|authorization|password|secret|token)$", re.IGNORECASE)
# Key shapes worth catching even when nobody configured them (OpenAI-style, bearer tokens).
_KEY_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{16,}|Bearer\s+[A-Za-z0-9._\-]{16,})")
_ENV_SECRETS = ("OPENAI_API_KEY", "SKILLRT_LLM__API_KEY", "SKILLRT_BROWSER__SEARCH__API_KEY")


class Redactor:
    """Replaces secret values (configured, from the environment, or key-shaped) with ``***``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = {s for s in secrets if s and len(s) >= 4}
        values.update(v for name in _ENV_SECRETS if len(v := os.environ.get(name, "")) >= 4)
        self._secrets = sorted(values, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        if "sk-" in value or "Bearer" in value:
            value = _KEY_SHAPES.sub(REDACTED, value)
        return value

    def __call__(self, value: Any) -> Any:
        """Redact a JSON-like value (strings inside dicts and lists, keys named like secrets)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                k: REDACTED
                if isinstance(k, str) and _SECRET_KEYS.search(k) and isinstance(v, str) and v
                else self(v)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        return value

    def processor(
        self, _logger: Any, _name: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        redacted: MutableMapping[str, Any] = self(dict(event_dict))
        return redacted


def open_log_file(config: RuntimeConfig) -> TextIO | None:
    """The JSON-lines log file of ``config.log_file`` (appended), or None. The caller closes it."""
    if config.log_file is None:
        return None
    path = Path(config.log_file).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("a", encoding="utf-8", buffering=1)


def make_logger(
    config: RuntimeConfig, redactor: Redactor, stream: TextIO | None = None
) -> structlog.stdlib.BoundLogger:
    """A logger for one runtime: console lines on stderr, or JSON lines (always in a file)."""
    level = getattr(logging, config.log_level.upper())
    renderer: Any = (
        structlog.processors.JSONRenderer(ensure_ascii=False)
        if config.log_format == "json" or config.log_file is not None
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    logger: structlog.stdlib.BoundLogger = structlog.wrap_logger(
        structlog.PrintLogger(stream or sys.stderr),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            redactor.processor,
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
    )
    return logger
