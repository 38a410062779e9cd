"""``skillrt chat``: the chat REPL.

One task at a time. While a task runs, the REPL owns SIGINT and SIGTSTP: Ctrl-C cancels the
task (it ends CANCELLED and the REPL prompts again), Ctrl-Z pauses it at its next step. At the
prompt, Ctrl-C or Ctrl-D on an empty line quits. When a skill asks a question, the prompt shows
it and the next line answers it (``process_input`` routes it to the waiting task).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.table import Table
from rich.text import Text

from skillrt import __version__
from skillrt._tasks.machine import State
from skillrt.agent import AgentRuntime
from skillrt.cli.common import EXIT_CANCELLED, find_task
from skillrt.cli.display import Display, age, cost_line, tasks_table
from skillrt.cli.lines import line
from skillrt.cli.readers import LineReader
from skillrt.cli.sessions import remember_session
from skillrt.exceptions import UserError
from skillrt.messages import ChatMessage
from skillrt.skill.context import detect_language

if TYPE_CHECKING:
    from skillrt.events import Event
    from skillrt.llm.discover import LocalServer

__all__ = ["Repl"]


def _asked(question: str) -> str:
    """A question's first sentence that asks, short enough for one line."""
    first = question.strip().split("\n", 1)[0]
    for mark in ("?", "？"):
        if mark in first:
            first = first[: first.index(mark) + 1]
            break
    return first if len(first) <= 80 else first[:79].rstrip() + "…"


_PROMPT = "› "
_QUIT = object()


@dataclass(frozen=True, slots=True)
class _Command:
    usage: str
    help: str  # the key of its description in ``skillrt.cli.lines.LINES``
    run: Callable[[Repl, str], Awaitable[object]]
    listed: bool = True


class Repl:
    """The chat loop over one runtime (see the module docstring)."""

    def __init__(
        self,
        runtime: AgentRuntime,
        console: Console,
        reader: LineReader,
        *,
        continuing: bool = False,
        confirm: bool | None = None,
    ) -> None:
        self.rt = runtime
        # Edits show their diff and ask before writing (edit.confirm; --yes turns it off).
        edit_confirm = runtime.config.edit.confirm
        self.confirm = confirm if confirm is not None else edit_confirm is not False
        self.console = console
        self.reader = reader
        self.display = Display(console)
        self._running: asyncio.Future[ChatMessage | None] | None = None
        self._interrupts = 0
        self._question: str | None = None
        self.language = "en"  # the session's: that of the last request typed
        self._no_last_session = continuing  # --continue found no earlier session
        self._servers: list[LocalServer] = []  # local model servers found at the start
        self._starting: asyncio.Future[None] | None = None  # ``_start``, while it runs
        self._start_stopped = False  # Ctrl-C cancelled ``_start``

    # --- the loop ------------------------------------------------------------------------

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        # Installed until the very end: a Ctrl-C pressed again while quitting changes nothing.
        loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        detach = self.display.attach(self.rt)
        try:
            if not await self._started():
                await self.rt.close()
                return EXIT_CANCELLED
            await self._loop()
            await self._shutdown()
        finally:
            detach()
            loop.remove_signal_handler(signal.SIGINT)
        return 0

    async def _started(self) -> bool:
        """``_start``, unless Ctrl-C stops it (False). Ctrl-C while the model loaded was kept
        for the first prompt: the load went on, the banner came, and then the chat quit at
        its first prompt, a while after the key."""
        starting = self._starting = asyncio.ensure_future(self._start())
        try:
            await starting
        except asyncio.CancelledError:
            if not (starting.cancelled() and self._start_stopped):
                raise  # the chat itself was cancelled, not the start by Ctrl-C
            return False
        finally:
            self._starting = None
        return True

    async def _loop(self) -> None:
        while True:
            try:
                line = await self.reader.read(self._prompt())
            except EOFError:
                return
            except KeyboardInterrupt:
                if self._pending_question() is not None:
                    await self._cancel_waiting()
                    continue
                return
            line = line.strip()
            if not line:
                continue
            if (bare := _BARE.get(line.rstrip(".!。！").casefold())) is not None:
                line = bare  # "exit", "undo", "退出": the command (the Chat skill answered)
            if line.startswith("/") and self._is_command(line):
                if await self._command(line) is _QUIT:
                    return
                continue
            question = self._pending_question()
            if question is None:  # an answer ("y", "2") keeps the language
                self.language = detect_language(line)
            work = self.rt.process_input(line, {"confirm": self.confirm})
            await self._task(work if question is None else self._answering(work, question))

    async def _answering(self, work: Awaitable[ChatMessage], question: str) -> ChatMessage:
        """``work``: a line typed at a skill's question. When it is no answer but a new
        request, the task that asked ends there (nothing more done) and a line says so before
        the new request runs: a change shown for a yes or no was not written, though no reply
        said so."""
        asking = self.rt.current_task_id

        def left(event: Event) -> None:
            if event.task_id == asking and event.data.get("superseded"):
                self.display.note(self._say("question_left", question=_asked(question)))

        off = self.rt.on("task:aborted", left)
        try:
            return await work
        finally:
            off()

    async def _start(self) -> None:
        with self._status(self._say("loading_model")):
            await self.rt.initialize()
        config = self.rt.config
        model = self.rt.llm.model
        self.console.print(f"skillrt {__version__} · model [bold]{escape(model)}[/]")
        self._info(f"  {self.rt.llm_reason or 'configured'}")
        await self._embedded_banner()
        self._info(f"blog: {config.root}")
        layout = config.layout
        self._info(f"posts: {layout.describe()}")
        if (hint := layout.hint()) is not None:
            self.console.print(Text(f"hint: {hint}", style="yellow"), highlight=False)
        self._session_banner()
        resumable = self.rt.get_resumable_tasks()
        if resumable:
            n = len(resumable)
            said = self._say("resumable_at_start", n=n, s="s" if n > 1 else "")
            self.console.print(Text(said, style="bold"), highlight=False)
            self.console.print(tasks_table(resumable))
        self._info(self._say("type_a_request"))
        self.rt.warm_up()  # routing's tables, built while the user types

    async def _embedded_banner(self) -> None:
        """On the embedded model: start it (saying so when it cannot run), say once that it
        is tiny, and offer a local server."""
        if getattr(self.rt.llm, "provider", None) != "local":
            return
        from skillrt.cli.embedded import first_time, local_servers, start_worker

        with self._status(self._say("loading_model")):
            problem = await start_worker(self.rt.llm)
        if problem is not None:
            said = self._say("embedded_unusable", error=problem)
            self.console.print(Text(said, style="red"), highlight=False)
        if first_time(self.rt.config.state_path):
            note = self._say("embedded_note", model=self.rt.llm.model)
            self.console.print(Text(note, style="yellow"), highlight=False)
        self._servers = await local_servers()
        for server in self._servers:
            found = self._say("local_server_found", server=server.describe(),
                              settings=server.settings)  # fmt: skip
            self.console.print(Text(found, style="yellow"), highlight=False)

    async def _shutdown(self) -> None:
        waiting = self.rt.current_task_id
        if waiting is not None:  # close() stops it and keeps its checkpoint, as a crash would
            self._info(self._say("waiting_at_exit", task=waiting))
        await self.rt.close()

    def _session_banner(self) -> None:
        """Say which session this is (continued: how much it holds, and its focus)."""
        remember_session(self.rt.config.state_path, self.rt.session_id)
        conversation = self.rt.conversation()
        last_user = next((t for t in reversed(conversation.turns) if t.role == "user"), None)
        if last_user is not None:  # the session's language is that of its last request
            self.language = detect_language(last_user.content)
        if self._no_last_session:
            self._info(self._say("no_last_session"))
        if conversation.turns:
            n = len(self.rt.sessions.turns(self.rt.session_id))
            focus = conversation.focus
            shown = self._say("continuing_focus", focus=focus) if focus else ""
            self._info(self._say("continuing", session=self.rt.session_id, count=n, focus=shown))

    def _prompt(self) -> str:
        question = self._pending_question()
        if question is None:
            focus = self.rt.conversation().focus
            return f"{PurePosixPath(focus).name} {_PROMPT}" if focus else _PROMPT
        first = question.strip().splitlines()[0] if question.strip() else "answer"
        if len(first) <= max(20, self.console.width - 10):
            return f"{first} {_PROMPT}"
        return f"answer {_PROMPT}"

    def _pending_question(self) -> str | None:
        if self._question is not None and self.rt.state is not State.WAITING_INPUT:
            self._question = None
        return self._question

    # --- running a task ----------------------------------------------------------------------

    async def _task(self, work: Awaitable[ChatMessage | None]) -> ChatMessage | None:
        """Run one task (new, answered or resumed) with Ctrl-C cancelling it."""
        loop = asyncio.get_running_loop()
        self._interrupts = 0
        crashes = len(getattr(self.rt.llm, "crashes", ()))
        self.display.start()
        running: asyncio.Future[ChatMessage | None] = asyncio.ensure_future(work)
        self._running = running
        has_tstp = hasattr(signal, "SIGTSTP")
        if has_tstp:
            loop.add_signal_handler(signal.SIGTSTP, self._on_sigtstp)
        message: ChatMessage | None = None
        try:
            message = await running
        except asyncio.CancelledError:
            if not running.cancelled():
                raise
            self.display.note(self._say("stopped_waiting"))
        except UserError as exc:
            self.display.stop()
            self.console.print(Text(self._say("error", error=exc), style="red"), highlight=False)
        finally:
            self._running = None
            if has_tstp:
                loop.remove_signal_handler(signal.SIGTSTP)
            self.display.stop()
        if message is not None:
            self._show(message)
        self._crash_note(crashes, message)
        return message

    def _crash_note(self, before: int, message: ChatMessage | None) -> None:
        """Say that the embedded model's worker died during the task (and the mode it runs in
        now), unless the reply said so. "hi" answered by a worker killed mid-stream showed the
        Chat skill's own greeting, "completed", and nothing said the model had crashed; a
        crash stepped around in a safer mode went unsaid too."""
        crashes = list(getattr(self.rt.llm, "crashes", ()))[before:]
        if not crashes or (message is not None and str(crashes[-1]) in message.content):
            return
        mode = getattr(self.rt.llm, "mode", None)
        said = self._say("model_crashed", error=crashes[-1], mode=mode or "?")
        self.console.print(Text(said, style="yellow"), highlight=False)

    def _show(self, message: ChatMessage) -> None:
        if message.state == State.WAITING_INPUT.value:
            question = str(message.data.get("question") or message.content)
            self._question = self.rt.redactor.text(question)  # shown in the prompt
            multiline = "\n" in self._question.strip()  # numbered choices: show them all
            if (
                multiline
                or self._prompt() == f"answer {_PROMPT}"
                or message.content != self._question
            ):
                self.display.reply(message, language=self.language)
            return
        self._question = None
        unpriced = (
            bool(message.task_id) and self.rt.costs.task(message.task_id or "").unpriced_calls > 0
        )
        self.display.reply(message, unpriced=unpriced, language=self.language)

    def _on_sigint(self) -> None:
        starting = self._starting
        if starting is not None and not starting.done():  # Ctrl-C while the chat starts
            self._start_stopped = True  # (how ``_started`` tells it from another cancel)
            starting.cancel()
            return
        if self._running is None:
            self.reader.interrupt()  # SIGINT at the prompt (a plain reader, or kill -INT)
            return
        self._interrupts += 1
        if self._interrupts == 1:
            self.rt.abort()
            self.display.note(self._say("cancelling"))
        elif self._interrupts == 2:
            self.rt.abort()
            self.display.note(self._say("still_stopping"))
        else:
            self._running.cancel()

    def _on_sigtstp(self) -> None:
        if self.rt.pause():
            self.display.note(self._say("pausing"))

    async def _cancel_waiting(self) -> None:
        task_id = self.rt.current_task_id
        if task_id is not None and self.rt.abort(task_id):
            await asyncio.sleep(0)  # let the task record its end
            self._info(self._say("cancelled_task", task=task_id))
        self._question = None

    # --- slash commands ------------------------------------------------------------------

    def _is_command(self, line: str) -> bool:
        """A known /command; anything else starting with / answers a question if one waits."""
        name = line[1:].split(maxsplit=1)[0].lower() if len(line) > 1 else ""
        return name in COMMANDS or self._pending_question() is None

    async def _command(self, line: str) -> object:
        name, _, arg = line[1:].partition(" ")
        command = COMMANDS.get(name.lower())
        if command is None:
            self._print(self._say("unknown_command", name=name))
            return None
        try:
            return await command.run(self, arg.strip())
        except UserError as exc:
            self.console.print(Text(self._say("error", error=exc), style="red"), highlight=False)
            return None

    async def cmd_help(self, _arg: str) -> None:
        table = Table(box=None, show_header=False, pad_edge=False)
        table.add_column(no_wrap=True)
        table.add_column()
        for command in COMMANDS.values():
            if command.listed:
                table.add_row(Text(command.usage), Text(self._say(command.help)))
        self.console.print(table)
        self._info(self._say("keys"))

    async def cmd_tasks(self, _arg: str) -> None:
        question = self._pending_question()
        if question is not None:
            task = self.rt.current_task_id
            self._print(self._say("task_waits", task=task, question=question))
        tasks = self.rt.get_resumable_tasks()
        if not tasks:
            self._print(self._say("no_resumable"))
            return
        self.console.print(tasks_table(tasks))

    async def cmd_resume(self, arg: str) -> None:
        task = find_task(arg, self.rt.get_resumable_tasks())
        self._info(self._say("resuming", task=task.id, what=task.description[:60]))
        message = await self._task(self.rt.resume_task(task.id))
        if message is None and not self._interrupts:
            self.console.print(self._say("cannot_resume", task=task.id))

    async def cmd_abandon(self, arg: str) -> None:
        task = find_task(arg, self.rt.get_resumable_tasks())
        if await self.rt.abandon_task(task.id):
            self.console.print(self._say("abandoned", task=task.id))
        else:
            self.console.print(self._say("cannot_abandon", task=task.id))

    async def cmd_cancel(self, arg: str) -> None:
        if not arg:
            if self._pending_question() is None:
                self.console.print(self._say("nothing_waiting"))
                return
            await self._cancel_waiting()
            return
        task = find_task(arg, self.rt.get_resumable_tasks())
        if await self.rt.abort_task(task.id):  # (as the store holds it now)
            self.console.print(self._say("cancelled_task", task=task.id))
        else:
            self.console.print(self._say("cannot_cancel", task=task.id))

    async def cmd_pause(self, _arg: str) -> None:
        if self.rt.pause():
            self.console.print(self._say("pause_requested"))
            return
        if self._pending_question() is not None:
            self.console.print(self._say("pause_waiting"))
        else:
            self.console.print(self._say("pause_idle"))

    async def cmd_cost(self, _arg: str) -> None:
        totals = self.rt.costs.session(self.rt.session_id)
        n = totals.unpriced_calls
        unpriced = self._say("unpriced_calls", n=n) if n else ""
        calls = self._say("model_calls", n=totals.calls, s="" if totals.calls == 1 else "s")
        cost = cost_line(totals.tokens, totals.cost)
        self._print(self._say("session_cost", calls=calls, unpriced=unpriced, cost=cost))

    async def cmd_history(self, arg: str) -> None:
        history = self.rt.history
        if history is None:
            self._print(self._say("no_history"))
            return
        every = arg.strip().lower() == "all"
        entries = history.tasks(None if every else self.rt.session_id, limit=20)
        if not entries:
            self._print(self._say("no_tasks_yet" if every else "no_tasks_in_session"))
            return
        table = Table(box=None, pad_edge=False, header_style="bold")
        *columns, last = self._say("history_columns").split("|")
        for column in columns:
            table.add_column(column, no_wrap=True)
        table.add_column(last, overflow="fold")
        for entry in reversed(entries):
            table.add_row(
                age(float(entry.get("finished_at") or entry.get("started_at") or 0)),
                str(entry.get("state", "")),
                str(entry.get("skill") or "-"),
                f"{int(entry.get('tokens') or 0):,}",
                str(entry.get("input", ""))[:80],
            )
        self.console.print(table)

    async def cmd_model(self, _arg: str) -> None:
        rows = [("model_name", self.rt.llm.model)]
        if self.rt.llm_reason == "injected":
            rows.append(("model_provider", self._say("model_injected")))
        else:
            from skillrt.llm.select import describe_llm

            info = describe_llm(self.rt.config)
            rows.append(("model_provider", str(info["provider"])))
            if info.get("model_path"):
                rows.append(("model_file", str(info["model_path"])))
            elif info["provider"] == "openai":
                state = self._say("key_set" if info["api_key"] == "set" else "key_not_set")
                url = str(info["base_url"])
                rows.append(("model_endpoint", self._say("endpoint_key", url=url, state=state)))
            rows.append(("model_why", str(info["reason"])))
        if getattr(self.rt.llm, "provider", None) == "local":
            from skillrt.cli.embedded import local_servers

            if mode := getattr(self.rt.llm, "mode", None):  # the AMX-safe one, or not
                why = getattr(self.rt.llm, "mode_reason", "")
                rows.append(("model_mode", f"{mode} ({why})" if why else str(mode)))
            self._servers = await local_servers()
            for server in self._servers:
                value = f"{server.describe()}: {server.settings}"
                rows.append(("model_local_server", value))
            if not self._servers:
                rows.append(("model_local_server", self._say("model_no_local_server")))
        for name, value in rows:
            self._print(self._say(name, value=value))

    async def cmd_new(self, _arg: str) -> None:
        if self._pending_question() is not None:
            self.console.print(self._say("answer_first"))
            return
        session = self.rt.new_session()
        remember_session(self.rt.config.state_path, session)
        self.console.print(self._say("new_session", session=session))

    async def cmd_open(self, arg: str) -> None:
        if not arg:
            raise UserError(self._say("open_usage"))
        path = await self.rt.set_focus(arg)
        self.console.print(self._say("focus_set", focus=path))

    async def cmd_publish(self, arg: str) -> None:
        done = await self.rt.publish(arg.strip() or None)
        if not done.changed:
            self.console.print(self._say("not_a_draft", path=done.path))
            return
        moved = self._say("published_moved", source=done.moved_from) if done.moved_from else ""
        self.console.print(self._say("published", path=done.path, moved=moved))
        # (a draft dated 2027 was "published" here, and Hugo held it back: as `skillrt publish`)
        generator = self.rt.config.layout.kind.capitalize()
        if done.scheduled:
            self.console.print(
                self._say("published_scheduled", day=done.scheduled, generator=generator)
            )
        elif done.expired:
            self.console.print(
                self._say("published_expired", day=done.expired, generator=generator)
            )

    async def cmd_undo(self, arg: str) -> None:
        message = await self.rt.undo(arg.strip() or None, language=self.language)
        self.display.reply(message, language=self.language)

    async def cmd_focus(self, _arg: str) -> None:
        focus = self.rt.conversation().focus
        if focus is None:
            self.console.print(self._say("no_focus"))
        else:
            self.console.print(self._say("focus_is", focus=focus))

    async def cmd_quit(self, _arg: str) -> object:
        return _QUIT

    # --- output helpers ------------------------------------------------------------------

    def _say(self, key: str, **values: object) -> str:
        return line(key, self.language, **values)

    def _print(self, text: str) -> None:
        """A line as it is: no markup read in it, nothing highlighted."""
        self.console.print(Text(text), highlight=False)

    def _info(self, text: str) -> None:
        self.console.print(Text(text, style="dim"), highlight=False)

    def _status(self, text: str) -> _Status:
        return _Status(self.console, text, live=self.display.live_mode)


class _Status:
    """A spinner on interactive terminals, nothing elsewhere."""

    def __init__(self, console: Console, text: str, *, live: bool) -> None:
        self.console = console
        self.text = text
        self.live = live
        self._status: Status | None = None

    def __enter__(self) -> None:
        if self.live:
            self._status = self.console.status(self.text)
            self._status.start()

    def __exit__(self, *_exc: object) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None


COMMANDS: dict[str, _Command] = {
    "help": _Command("/help", "cmd_help", Repl.cmd_help),
    "tasks": _Command("/tasks", "cmd_tasks", Repl.cmd_tasks),
    "resume": _Command("/resume ID", "cmd_resume", Repl.cmd_resume),
    "abandon": _Command("/abandon ID", "cmd_abandon", Repl.cmd_abandon),
    "cancel": _Command("/cancel [ID]", "cmd_cancel", Repl.cmd_cancel),
    "pause": _Command("/pause", "cmd_pause", Repl.cmd_pause),
    "cost": _Command("/cost", "cmd_cost", Repl.cmd_cost),
    "history": _Command("/history [all]", "cmd_history", Repl.cmd_history),
    "model": _Command("/model", "cmd_model", Repl.cmd_model),
    "open": _Command("/open PATH", "cmd_open", Repl.cmd_open),
    "focus": _Command("/focus", "cmd_focus", Repl.cmd_focus),
    "publish": _Command("/publish [PATH]", "cmd_publish", Repl.cmd_publish),
    "undo": _Command("/undo [PATH]", "cmd_undo", Repl.cmd_undo),
    "new": _Command("/new", "cmd_new", Repl.cmd_new),
    "quit": _Command("/quit", "cmd_quit", Repl.cmd_quit),
    "exit": _Command("/exit", "cmd_exit", Repl.cmd_quit, listed=False),
}
"""The slash commands; an ID may be a unique prefix."""

# A command typed without its slash, alone on the line: "undo" went to the Chat skill, which
# answered "I'm here. Tell me what to do…", and "exit" did not quit. Only words no request is
# made of alone, and no question's answer: typed where "which post?" was asked, "undo" was read
# as a post's name (a question waiting stays waiting; "exit" leaves it to resume).
_BARE = {
    "quit": "/quit",
    "exit": "/quit",
    "退出": "/quit",
    "help": "/help",
    "帮助": "/help",
    "undo": "/undo",
    "撤销": "/undo",
    "撤回": "/undo",
}
