"""Reading chat lines: prompt_toolkit on a terminal, plain lines from a pipe.

Both raise ``EOFError`` at the end of input (Ctrl-D) and ``KeyboardInterrupt`` for Ctrl-C at
the prompt; ``interrupt()`` makes a pending read raise ``KeyboardInterrupt`` (SIGINT arriving
while no task runs).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Protocol

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory

__all__ = ["LineReader", "PlainReader", "PromptReader", "make_reader"]


class LineReader(Protocol):
    async def read(self, prompt: str) -> str: ...

    def interrupt(self) -> None: ...


class PromptReader:
    """prompt_toolkit, with the input history kept in a file between runs."""

    def __init__(self, history_file: Path) -> None:
        history_file.parent.mkdir(parents=True, exist_ok=True)
        self.session: PromptSession[str] = PromptSession(history=FileHistory(str(history_file)))
        self._interrupted = False

    async def read(self, prompt: str) -> str:
        while True:
            try:
                # The REPL owns SIGINT (it cancels tasks); at the prompt Ctrl-C is a key anyway.
                return await self.session.prompt_async(
                    prompt, handle_sigint=False, pre_run=self._check_interrupted
                )
            except KeyboardInterrupt:
                if self.session.default_buffer.text.strip():
                    continue  # Ctrl-C on a typed line clears it, as shells do
                raise

    def _check_interrupted(self) -> None:
        if self._interrupted:
            self._interrupted = False
            self.session.app.exit(exception=KeyboardInterrupt())

    def interrupt(self) -> None:
        """SIGINT while the terminal was not in raw mode yet: end the prompt that is starting."""
        app = self.session.app
        if app.is_running and not _future_done(app):
            app.exit(exception=KeyboardInterrupt())
        else:
            self._interrupted = True


def _future_done(app: object) -> bool:
    future = getattr(app, "future", None)
    return future is None or bool(future.done())


class PlainReader:
    """Lines from stdin (a pipe or a file), read by a daemon thread so exit never waits on it."""

    def __init__(self, echo: bool = True) -> None:
        self.echo = echo
        self._queue: asyncio.Queue[str | BaseException | None] | None = None
        self._thread: threading.Thread | None = None

    def _start(self) -> asyncio.Queue[str | BaseException | None]:
        if self._queue is None:
            queue: asyncio.Queue[str | BaseException | None] = asyncio.Queue()
            loop = asyncio.get_running_loop()

            def pump() -> None:
                for line in sys.stdin:
                    loop.call_soon_threadsafe(queue.put_nowait, line.rstrip("\r\n"))
                loop.call_soon_threadsafe(queue.put_nowait, None)

            self._queue = queue
            self._thread = threading.Thread(target=pump, name="skillrt-stdin", daemon=True)
            self._thread.start()
        return self._queue

    async def read(self, prompt: str) -> str:
        queue = self._start()
        sys.stdout.write(prompt)
        sys.stdout.flush()
        item = await queue.get()
        if item is None:
            queue.put_nowait(None)  # stay at the end for later reads
            sys.stdout.write("\n")
            raise EOFError
        if isinstance(item, BaseException):
            sys.stdout.write("\n")
            raise item
        sys.stdout.write((item if self.echo else "") + "\n")
        sys.stdout.flush()
        return item

    def interrupt(self) -> None:
        if self._queue is not None:
            self._queue.put_nowait(KeyboardInterrupt())


def make_reader(history_file: Path) -> LineReader:
    """prompt_toolkit when stdin is a terminal, else plain lines."""
    if sys.stdin.isatty():
        return PromptReader(history_file)
    return PlainReader()
