"""How a task looks on a terminal: progress, status, streamed text, the reply, its cost.

Two ways to draw, picked from the console:

- live (an interactive terminal): one ``rich.live.Live`` region holding a status line with a
  spinner, a progress bar and the tail of the streamed model text (dim); it is cleared when
  the task ends and the reply is printed as Markdown in its place;
- lines (a dumb terminal, a pipe, a log file): one plain line per progress step or status,
  the streamed text written as it comes (terminals only), then the reply.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from skillrt._io.redaction import Redactor
from skillrt.cli.lines import line as say_line
from skillrt.cli.tasklist import age, task_status, tasks_table
from skillrt.messages import ChatMessage
from skillrt.outcomes import Outcome

if TYPE_CHECKING:
    from skillrt.agent import AgentRuntime
    from skillrt.events import Event

__all__ = [
    "Display",
    "age",
    "cost_line",
    "redacted",
    "renders_faithfully",
    "task_status",
    "tasks_table",
]

_STREAM_TAIL_LINES = 6
_THINKING = "the model is thinking"
_THINKING_LINE_EVERY_S = 5  # without a live region, a thinking line this often
_QUIET_STATES = frozenset({"IDLE", "WAITING_INPUT"})  # no cost line for these replies


def redacted(redactor: Redactor, message: ChatMessage) -> ChatMessage:
    """``message`` with every text in it redacted (as printed or written out as JSON)."""
    dumped = message.model_dump(mode="json")
    clean = redactor(dumped)
    return message if clean == dumped else ChatMessage.model_validate(clean)


def _markdown(text: str) -> RenderableType:
    from rich.markdown import Markdown  # markdown-it: only once a reply is shown

    return Markdown(text)


# What Markdown may legitimately hide: link targets, markup characters, spaces.
_MARKUP = re.compile(r"\]\([^)\s]*\)|[\s#*_`>\-\[\]|~=+.:()]")
_MIN_SHOWN = 0.5  # a rendering showing less than half the text's visible characters is wrong


def _visible(text: str) -> int:
    return len(_MARKUP.sub("", text))


def renders_faithfully(content: str, width: int = 100) -> bool:
    """Whether rich's Markdown shows at least about half of ``content``'s visible text.

    Degenerate model output can render to nothing (``1. 1. 1. …`` is a deeply nested list
    that rich draws as zero visible characters); such a reply is printed as plain text.
    """
    expected = _visible(content)
    if expected == 0:
        return True
    sink = io.StringIO()
    Console(file=sink, width=width, color_system=None, force_terminal=False).print(
        _markdown(content)
    )
    return _visible(sink.getvalue()) >= expected * _MIN_SHOWN


def cost_line(
    tokens: int, cost: float, seconds: float | None = None, unpriced: bool = False
) -> str:
    """``1,234 tokens · $0.0012 · 3.4 s`` (``unpriced`` when the model has no price)."""
    parts = [f"{tokens:,} tokens", "unpriced" if unpriced else f"${cost:.4f}"]
    if seconds is not None:
        parts.append(f"{seconds:.1f} s")
    return " · ".join(parts)


class Display:
    """Renders one runtime's task events on ``console`` (see the module docstring)."""

    def __init__(self, console: Console, *, show_stream: bool | None = None) -> None:
        self.console = console
        self.redactor = Redactor()  # the runtime's once attached: its secrets and token too
        self.live_mode = console.is_terminal and not console.is_dumb_terminal
        self.show_stream = console.is_terminal if show_stream is None else show_stream
        self._live: Live | None = None
        self._spinner = Spinner("dots")
        self._started = 0.0
        self._reset()

    def _reset(self) -> None:
        self._status = ""
        self._progress: dict[str, Any] | None = None
        self._last_line = ""
        self._stream = ""
        self._mid_line = False

    # --- events ------------------------------------------------------------------------

    def attach(self, runtime: AgentRuntime) -> Callable[[], None]:
        """Subscribe to the runtime's events; returns the function that unsubscribes."""
        self.redactor = runtime.redactor
        offs = [
            runtime.on("task:progress", self._on_progress),
            runtime.on("agent:status", self._on_status),
            runtime.on("task:stream", self._on_stream),
            runtime.on("ai:generation", self._on_generation),
            runtime.on("ai:thinking", self._on_thinking),
        ]

        def detach() -> None:
            for off in offs:
                off()

        return detach

    def _on_progress(self, event: Event) -> None:
        self._progress = dict(event.data)
        self._status = ""
        if not self.live_mode:
            data = event.data
            line = f"[{data.get('step')}/{data.get('total_steps')}] {data.get('message', '')}"
            if data.get("detail"):
                line += f" ({data['detail']})"
            self._line(line)
        self._refresh()

    def _on_status(self, event: Event) -> None:
        message = str(event.data.get("message") or "")
        self._status = message
        if not self.live_mode and message:
            self._line(f"… {message}")
        self._refresh()

    def _on_thinking(self, event: Event) -> None:
        """A structured call (an outline, a plan) is under way: tokens so far, time elapsed.
        Without a live region, a line at the first second, then one every few seconds."""
        tokens = int(event.data.get("tokens") or 0)
        elapsed = float(event.data.get("elapsed_s") or 0.0)
        message = f"{_THINKING} · {tokens} tokens · {elapsed:.0f} s"
        if self.live_mode:
            self._status = message
            self._refresh()
        elif int(elapsed) == 1 or int(elapsed) % _THINKING_LINE_EVERY_S == 0:
            self._line(f"… {message}")

    def _on_stream(self, event: Event) -> None:
        delta = str(event.data.get("delta") or "")
        if not delta or not self.show_stream:
            return
        if self.live_mode:
            self._stream = (self._stream + delta)[-4000:]
            self._refresh()
            return
        self.console.print(Text(delta, style="dim"), end="", soft_wrap=True, highlight=False)
        self._mid_line = not delta.endswith("\n")

    def _on_generation(self, _event: Event) -> None:
        """A model call ended: the next call's streamed text starts on a new line."""
        if self._status.startswith(_THINKING):
            self._status = ""
        if self._stream and not self._stream.endswith("\n"):
            self._stream += "\n"
        self._end_stream_line()

    def _line(self, line: str) -> None:
        if line == self._last_line:
            return
        self._last_line = line
        self._end_stream_line()
        self.console.print(Text(line, style="dim"), soft_wrap=True, highlight=False)

    def _end_stream_line(self) -> None:
        if self._mid_line:
            self.console.print()
            self._mid_line = False

    # --- the live region -----------------------------------------------------------------

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.refresh()

    def _render(self) -> RenderableType:
        rows: list[RenderableType] = []
        progress = self._progress
        headline = self._status or (str(progress.get("message", "")) if progress else "")
        self._spinner.update(text=Text(headline or "working…", style="dim"))
        rows.append(self._spinner)
        if progress is not None:
            bar = Table.grid(padding=(0, 1))
            bar.add_row(
                ProgressBar(total=100, completed=float(progress.get("percent") or 0), width=30),
                Text(
                    f"{progress.get('step')}/{progress.get('total_steps')}"
                    f" {progress.get('message', '')}",
                    style="dim",
                    overflow="ellipsis",
                    no_wrap=True,
                ),
            )
            rows.append(bar)
        if self._stream:
            width = max(20, self.console.width)
            lines = self._stream.splitlines()[-_STREAM_TAIL_LINES:]
            tail = "\n".join(line[: width - 1] for line in lines)
            rows.append(Text(tail, style="dim", no_wrap=True, overflow="ellipsis"))
        return Group(*rows)

    # --- a task's life -------------------------------------------------------------------

    def start(self) -> None:
        """A task starts: draw the live region (live mode)."""
        self._reset()
        self._started = time.monotonic()
        if self.live_mode:
            self._live = Live(
                get_renderable=self._render,
                console=self.console,
                transient=True,
                refresh_per_second=8,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()

    def stop(self) -> None:
        """The task ended: clear the live region, end a streamed line."""
        if self._live is not None:
            self._live.stop()
            self._live = None
        self._end_stream_line()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started if self._started else 0.0

    def note(self, text: str) -> None:
        """A short dim remark (``Cancelling…``), above the live region if there is one."""
        if self._live is not None:
            self._live.console.print(Text(text, style="dim"), highlight=False)
        else:
            self._end_stream_line()
            self.console.print(Text(text, style="dim"), highlight=False)

    def reply(
        self,
        message: ChatMessage,
        out: Console | None = None,
        *,
        unpriced: bool = False,
        markdown: bool | None = None,
        language: str = "en",
    ) -> None:
        """Print the reply (Markdown), its saved path and next steps on ``out`` (the display's
        console by default), then one dim cost line on the display's console. Redacted: an
        echoing model or a choice menu naming a secret-bearing path never prints a secret."""
        out = out or self.console
        message = redacted(self.redactor, message)
        if markdown is None:
            markdown = out.is_terminal
        if markdown and renders_faithfully(message.content, out.width):
            out.print(_markdown(message.content))
        else:
            out.print(message.content, markup=False, highlight=False, soft_wrap=True)
        data = message.data
        path = data.get("path")
        # Only a task that did its work saved anything: a refusal's data names the post it
        # left alone (an edit whose text failed its checks), and so does an edit that changed
        # nothing or was declined (``changed``/``written``/``saved`` false), never "saved".
        done = message.state == "COMPLETED" and data.get("outcome") == Outcome.DONE
        kept = any(data.get(key) is False for key in ("changed", "written", "saved"))
        if done and not kept and isinstance(path, str) and path not in message.content:
            out.print(Text(say_line("saved", language, path=path), style="dim"), highlight=False)
        steps = data.get("next_steps")
        if isinstance(steps, list) and steps:
            joined = " · ".join(str(s) for s in steps)
            out.print(Text(say_line("next", language, steps=joined), style="dim"))
        if message.task_id and (message.tokens or message.state not in _QUIET_STATES):
            line = cost_line(message.tokens, message.cost, self.elapsed or None, unpriced)
            line += f" · {message.state.lower()}"
            if message.state == "COMPLETED" and data.get("outcome") == Outcome.REFUSED:
                # The task ran to its end, but its work was refused (a check failed twice, a
                # request it could not do): the line must not read as the work being done.
                line += " · " + say_line("refused_tail", language)
            self.console.print(Text(line, style="dim"))
