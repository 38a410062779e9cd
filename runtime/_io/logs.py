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
from collections.abc import Iterable, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

import structlog

from skillrt._io.quiet import QuietFileHandler, QuietStream
from skillrt._io.redaction import REDACTED, RedactingFilter, Redactor

if TYPE_CHECKING:
    from skillrt.settings import RuntimeConfig

__all__ = [
    "LOG_EVENTS",
    "REDACTED",
    "QuietFileHandler",
    "QuietStream",
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


def open_log_file(config: RuntimeConfig) -> QuietStream | None:
    """The JSON-lines log file of ``config.log_file`` (appended), or None. The caller closes it.
    Writing to it never raises (``QuietStream``)."""
    if config.log_file is None:
        return None
    path = Path(config.log_file).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # logs hold the inputs
    return QuietStream(os.fdopen(fd, "a", encoding="utf-8", buffering=1))


def make_logger(
    config: RuntimeConfig, redactor: Redactor, stream: TextIO | QuietStream | None = None
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
        structlog.PrintLogger(_quiet(stream))
        if stream is not None
        else logging.getLogger("skillrt.runtime"),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,  # a traceback is text: redacted next
            redactor.processor,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
    )
    return logger


def _quiet(stream: TextIO | QuietStream) -> TextIO:
    """``stream`` as one whose writes never raise (a ``QuietStream``), typed as the file
    structlog's ``PrintLogger`` takes (it calls ``write`` and ``flush``)."""
    return cast("TextIO", stream if isinstance(stream, QuietStream) else QuietStream(stream))


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
