"""Reading chat lines: prompt_toolkit on a terminal, plain lines from a pipe.

Both raise ``EOFError`` at the end of input (Ctrl-D) and ``KeyboardInterrupt`` for Ctrl-C at
the prompt; ``interrupt()`` makes a pending read raise ``KeyboardInterrupt`` (SIGINT arriving
while no task runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

__all__ = ["LineReader", "PlainReader", "PromptReader", "make_reader"]


class LineReader(Protocol):
    async def read(self, prompt: str) -> str: ...

    def interrupt(self) -> None: ...


class _KeptHistory(FileHistory):
    """The input history file, used while it can be: one that cannot be read or written (a
    folder in its place, no permission, a full disk) leaves the chat with this session's
    history alone, and a warning, where prompt_toolkit printed a traceback and "Press ENTER
    to continue..." at each line."""

    def __init__(self, filename: Path) -> None:
        super().__init__(str(filename))
        self.path = filename
        self.broken = False
        if filename.exists() and not filename.is_file():  # (said before the first prompt)
            self._warn(IsADirectoryError(21, "not a file"))

    def _warn(self, error: OSError) -> None:
        if not self.broken:
            self.broken = True
            print(
                f"skillrt: warning: the input history {self.path} cannot be used "
                f"({error.strerror or error}); this session's lines are not kept",
                file=sys.stderr,
            )

    def load_history_strings(self) -> Iterable[str]:
        if self.broken:
            return []
        try:
            return list(super().load_history_strings())
        except OSError as error:
            self._warn(error)
            return []

    def store_string(self, string: str) -> None:
        if self.broken:
            return
        try:
            super().store_string(string)
        except OSError as error:
            self._warn(error)


class PromptReader:
    """prompt_toolkit, with the input history kept in a file between runs."""

    def __init__(self, history_file: Path) -> None:
        with contextlib.suppress(OSError):  # (a history that cannot be kept: _KeptHistory)
            history_file.parent.mkdir(parents=True, exist_ok=True)
        self.session: PromptSession[str] = PromptSession(
            history=_KeptHistory(history_file), key_bindings=_clear_line_on_ctrl_c()
        )
        self._reading: asyncio.Task[str | None] | None = None
        self._interrupted = False

    async def read(self, prompt: str) -> str:
        if self._take_interrupt():  # a SIGINT came while no prompt was up (model loading)
            raise KeyboardInterrupt
        reading = asyncio.ensure_future(self._prompt(prompt))
        self._reading = reading
        try:
            line = await reading
        except asyncio.CancelledError:
            if not (reading.cancelled() and self._take_interrupt()):
                raise
            line = None
        finally:
            self._reading = None
        if line is None:
            raise KeyboardInterrupt
        return line

    def _take_interrupt(self) -> bool:
        interrupted, self._interrupted = self._interrupted, False
        return interrupted

    async def _prompt(self, prompt: str) -> str | None:
        """The prompt in its own task (so ``interrupt`` can cancel it); None for Ctrl-C. A
        KeyboardInterrupt must not leave a task: asyncio would re-raise it out of the loop."""
        try:
            # The REPL owns SIGINT (it cancels tasks); at the prompt Ctrl-C is a key anyway.
            return await self.session.prompt_async(prompt, handle_sigint=False)
        except KeyboardInterrupt:
            return None

    def interrupt(self) -> None:
        """A SIGINT while no task runs: the terminal was not in raw mode yet (a dumb terminal
        prints the prompt first), or someone ran ``kill -INT``. The prompt ends as for Ctrl-C."""
        self._interrupted = True
        if self._reading is not None and not self._reading.done():
            self._reading.cancel()


def _clear_line_on_ctrl_c() -> KeyBindings:
    """Ctrl-C on a typed line clears it, as shells do; on an empty line it ends the prompt
    (prompt_toolkit's own binding). Eager, so it also wins in a dumb terminal's prompt."""
    bindings = KeyBindings()
    has_text = Condition(lambda: bool(get_app().current_buffer.text))

    @bindings.add("c-c", eager=True, filter=has_text)
    def _clear(event: KeyPressEvent) -> None:
        event.current_buffer.reset()

    return bindings


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
