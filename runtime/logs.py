"""Structured logging: the ``agent.*`` log events, console output for people, JSON lines on request.

The runtime builds its own logger from its config (no global ``structlog.configure``) and
passes it to every part it owns (router, committer, event bus, skills, the task's model); a
``Redactor`` removes API keys and configured secrets from every line. A part made on its own
(an ``IntentRouter`` in a host's script, a provider, an abort callback) logs through the
stdlib logger ``skillrt.<part>`` (``library_logger``), redacted, and silent until the host
configures logging: ``skillrt`` carries a ``NullHandler``, as libraries should, so nothing
reaches Python's last-resort handler. Redaction is for what people see: logs, history and
events; what a step returns to a skill is never redacted (see ``checkpointing``).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, MutableMapping
from functools import lru_cache
from pathlib import Path
from typing import Any, TextIO

import structlog

from skillrt.settings import RuntimeConfig

__all__ = [
    "LOG_EVENTS",
    "RedactingFilter",
    "Redactor",
    "library_logger",
    "make_logger",
    "open_log_file",
]

logging.getLogger("skillrt").addHandler(logging.NullHandler())

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


@lru_cache(maxsize=4096)
def _is_secret_key(key: str) -> bool:
    # Cached: the same few keys (a task record's, a log event's) come back at every save and
    # log line, and without the cache the regex search per key is most of the cost of
    # redacting a record.
    return _SECRET_KEYS.search(key) is not None


# What _SECRET_KEYS matches, as plain lowercase words: in ASCII text, re.IGNORECASE is plain
# ASCII case folding, so finding these in the lowercased text is the same test.
_SECRET_KEY_WORDS = ("apikey", "api_key", "api-key", "authorization", "password", "secret", "token")


def _names_a_secret_key(lowered_json: str) -> bool:
    """True when lowercased ASCII JSON text may have a key _SECRET_KEYS matches: one of the
    words right before a closing quote (or before an escaped final newline, which ``$`` allows)."""
    for word in _SECRET_KEY_WORDS:
        at = lowered_json.find(word)
        while at != -1:
            end = at + len(word)
            if lowered_json.startswith('"', end) or lowered_json.startswith('\\n"', end):
                return True
            at = lowered_json.find(word, end)
    return False


# Key shapes worth catching even when nobody configured them (OpenAI-style, bearer tokens).
_KEY_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{16,}|Bearer\s+[A-Za-z0-9._\-]{16,})")
_ENV_SECRETS = ("OPENAI_API_KEY", "SKILLRT_LLM__API_KEY", "SKILLRT_BROWSER__SEARCH__API_KEY")


class Redactor:
    """Replaces secret values (configured, from the environment, or key-shaped) with ``***``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = {s for s in secrets if s and len(s) >= 4}
        values.update(v for name in _ENV_SECRETS if len(v := os.environ.get(name, "")) >= 4)
        self._secrets = sorted(values, key=len, reverse=True)
        # A secret JSON would escape (quotes, backslashes, control characters) might not be
        # found in JSON text as it is: then ``is_clean`` always says no.
        self._json_scan = all(s.isprintable() and '"' not in s and "\\" not in s for s in values)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        if "sk-" in value or "Bearer" in value:
            value = _KEY_SHAPES.sub(REDACTED, value)
        return value

    def is_clean(self, json_text: str) -> bool:
        """True when JSON text certainly holds nothing to redact: no secret value, nothing
        key-shaped, no key named like a secret. A cheap scan that lets a caller skip the walk
        of ``__call__``; False may be a false alarm (then walk). Text that is not all ASCII is
        never called clean (Unicode case folding is left to the walk)."""
        if not self._json_scan or not json_text.isascii():
            return False
        if "sk-" in json_text or "Bearer" in json_text:
            return False
        if any(secret in json_text for secret in self._secrets):
            return False
        return not _names_a_secret_key(json_text.lower())

    def __call__(self, value: Any) -> Any:
        """Redact a JSON-like value (strings inside dicts and lists, keys named like secrets)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                k: REDACTED
                if isinstance(v, str) and v and isinstance(k, str) and _is_secret_key(k)
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
    """A logger for one runtime: JSON lines in ``stream`` (the log file), else lines handed to
    the stdlib logger ``skillrt.runtime``, which prints only where the host set logging up (the
    CLI's ``--verbose`` does, on stderr). Filtered at ``config.log_level``, always redacted."""
    level = getattr(logging, config.log_level.upper())
    renderer: Any = (
        structlog.processors.JSONRenderer(ensure_ascii=False)
        if config.log_format == "json" or config.log_file is not None
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    logger: structlog.stdlib.BoundLogger = structlog.wrap_logger(
        structlog.PrintLogger(stream)
        if stream is not None
        else logging.getLogger("skillrt.runtime"),
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


def library_logger(name: str, secrets: Iterable[str] = ()) -> structlog.stdlib.BoundLogger:
    """The logger of a part that no runtime handed one: the stdlib logger ``name`` (under
    ``skillrt``), so the host's logging configuration decides whether and where it prints
    (nowhere by default). Lines are redacted (``secrets``, the environment's API keys, anything
    key-shaped) before any handler sees them."""
    values = tuple(secrets)
    made: list[Redactor] = []

    def redact(
        logger: Any, method: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        if not made:  # built at the first line: the environment is read then, not at import
            made.append(Redactor(values))
        return made[0].processor(logger, method, event_dict)

    logger: structlog.stdlib.BoundLogger = structlog.wrap_logger(
        logging.getLogger(name),
        processors=[
            structlog.stdlib.filter_by_level,
            structlog.processors.format_exc_info,
            redact,
            structlog.processors.KeyValueRenderer(key_order=["event"], drop_missing=True),
        ],
        # Hands the stdlib logger only the rendered line (a traceback is in it, redacted).
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
    )
    return logger


class RedactingFilter(logging.Filter):
    """A stdlib handler filter that redacts each record's message and traceback (the CLI puts
    one on its handler, so other libraries' log lines are redacted too)."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redactor.text(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.text(record.stack_info)
        return True
