"""Log outputs that never raise: a line that cannot be written is dropped, and counted.

Apart from ``logs.py`` so the command line, which opens the log file before it knows whether
it will log anything, does not load structlog for it.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TextIO

__all__ = ["QuietFileHandler", "QuietStream"]


class QuietStream:
    """A log stream whose ``write`` and ``flush`` never raise: a line that cannot be written
    (a full disk, a file-size limit, a closed file) is dropped and counted (``dropped``).
    The log file sits in the state folder, on the disk that fills: a log line written where
    a failed commit was being settled raised there, the commit's waiters were never woken,
    and ``skillrt run`` hung, printing tracebacks."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.dropped = 0

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except (OSError, ValueError):
            self.dropped += 1
            return 0

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stream.flush()

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stream.close()


class QuietFileHandler(logging.FileHandler):
    """A log file handler that drops a line it cannot write, where the stdlib prints a
    "--- Logging error ---" traceback on stderr for each (a full disk printed them between
    the chat's lines)."""

    dropped = 0

    def handleError(self, record: logging.LogRecord) -> None:
        self.dropped += 1
