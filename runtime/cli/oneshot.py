"""``skillrt run`` and ``skillrt resume``: one task, no chat; the reply on stdout, progress on
stderr, the outcome in the exit status (see ``common.exit_code``)."""

from __future__ import annotations

import asyncio
import functools
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from skillrt.agent import AgentRuntime
from skillrt.cli.common import (
    EXIT_CANCELLED,
    EXIT_UNFINISHED,
    exit_code,
    fail,
    find_task,
)
from skillrt.cli.display import Display, redacted
from skillrt.cli.readers import PromptReader
from skillrt.messages import ChatMessage

__all__ = ["OneShot"]


@dataclass
class OneShot:
    """Runs one task to its end; answers questions from ``answers``, else from a terminal."""

    runtime: AgentRuntime
    as_json: bool = False
    answers: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.err = Console(stderr=True)
        self.out = Console()
        self.display = Display(self.err)
        self._interrupts = 0
        self._opening: asyncio.Future[None] | None = None  # ``runtime.initialize()``, running
        self._open_stopped = False  # Ctrl-C cancelled it

    async def run(self, text: str, context: dict[str, str | bool]) -> int:
        return await self._main(lambda: self.runtime.process_input(text, context))

    async def skill(self, name: str, params: dict[str, Any]) -> int:
        return await self._main(lambda: self.runtime.run_skill(name, params))

    async def undo(self, path: str | None) -> int:
        return await self._main(lambda: self.runtime.undo(path))

    async def resume(self, task_id: str, budget: dict[str, Any] | None = None) -> int:
        async def start() -> ChatMessage:
            task = find_task(task_id, self.runtime.get_resumable_tasks())
            message = await self.runtime.resume_task(task.id, budget=budget)
            if message is None:
                raise fail(f"task {task.id} cannot be resumed now")
            return message

        return await self._main(start)

    async def _main(self, first: Callable[[], Awaitable[ChatMessage]]) -> int:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        detach = self.display.attach(self.runtime)
        try:
            if not await self._initialized():
                self.err.print()
                await self.runtime.close()
                return EXIT_CANCELLED
            message = await self._step(first)
            while message.state == "WAITING_INPUT":
                answer = await self._answer(message)
                if answer is None:
                    break
                message = await self._step(functools.partial(self.runtime.process_input, answer))
        finally:
            detach()
            loop.remove_signal_handler(signal.SIGINT)
        status = exit_code(message)
        self._print(message)
        await self.runtime.close()  # a task still waiting for an answer stays resumable
        return status

    async def _initialized(self) -> bool:
        """``runtime.initialize()``, unless Ctrl-C stops it (False). Ctrl-C while the runtime
        opened (the blog's index, the stores, the MCP servers of ``[mcp.servers]``) aborted
        no task, since none ran yet: the task then started, and ran to its end."""
        opening = self._opening = asyncio.ensure_future(self.runtime.initialize())
        try:
            await opening
        except asyncio.CancelledError:
            if not (opening.cancelled() and self._open_stopped):
                raise
            return False
        finally:
            self._opening = None
        return True

    async def _step(self, work: Callable[[], Awaitable[ChatMessage]]) -> ChatMessage:
        self._interrupts = 0
        self.display.start()
        try:
            return await work()
        finally:
            self.display.stop()

    async def _answer(self, message: ChatMessage) -> str | None:
        question = self.runtime.redactor.text(str(message.data.get("question") or message.content))
        if self.answers:
            answer = self.answers.pop(0)
            self.err.print(f"? {question}\n  {answer}", markup=False, highlight=False)
            return answer
        if not sys.stdin.isatty() or self.as_json:
            return None
        reader = PromptReader(self.runtime.config.state_path / "input-history")
        try:
            return await reader.read(f"{question} › ")
        except (EOFError, KeyboardInterrupt):
            return None

    def _on_sigint(self) -> None:
        opening = self._opening
        if opening is not None and not opening.done():  # no task yet: none starts
            self._open_stopped = True
            opening.cancel()
            return
        self._interrupts += 1
        self.runtime.abort()
        if self._interrupts == 1:
            self.display.note("Cancelling the task…")

    def _print(self, message: ChatMessage) -> None:
        if self.as_json:
            sys.stdout.write(redacted(self.runtime.redactor, message).model_dump_json() + "\n")
            sys.stdout.flush()
        else:
            unpriced = bool(message.task_id) and (
                self.runtime.costs.task(message.task_id or "").unpriced_calls > 0
            )
            self.display.reply(message, self.out, unpriced=unpriced)
        if exit_code(message) == EXIT_UNFINISHED and message.task_id:
            self.err.print(
                f"The task is unfinished; continue it with: skillrt resume {message.task_id}"
                + (" --answer TEXT" if message.state == "WAITING_INPUT" else ""),
                markup=False,
                highlight=False,
            )
