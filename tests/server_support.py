"""A real ``skillrt serve`` for tests: uvicorn on 127.0.0.1 with an ephemeral port, in its own
thread and event loop, over a runtime with a test model and a few test skills."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from skillrt import AgentRuntime, Skill, SkillContext, SkillResult, load_config, skill
from skillrt.llm.base import LLMMessage
from skillrt.server.run import Server, make_server, new_event_loop
from skillrt.skills import builtin_skills
from skillrt.testing import Answer, ModelOptions

TOKEN = "test-token-0123456789abcdef"
T = TypeVar("T")


class StepsParams(BaseModel):
    topic: str
    steps: int = 3


@skill(
    name="Steps",
    params=StepsParams,
    intents=["STEPS"],
    pattern=r"^steps (?P<topic>.+)$",
    description="Three model calls, one per step",
)
async def steps_skill(ctx: SkillContext, params: StepsParams) -> SkillResult:
    parts: list[str] = []
    for i in range(1, params.steps + 1):
        ctx.progress(i, params.steps, f"step {i}")

        async def call(i: int = i) -> str:
            result = await ctx.llm.chat(
                [{"role": "user", "content": f"step {i} of {params.topic}"}]
            )
            return result.content

        parts.append(await ctx.step(f"part{i}", call))
    return SkillResult(message=" | ".join(parts), data={"parts": parts})


class AskParams(BaseModel):
    question: str = "Which colour?"


@skill(name="Ask", params=AskParams, intents=["ASK"], pattern=r"^ask me$", description="Asks")
async def ask_skill(ctx: SkillContext, params: AskParams) -> SkillResult:
    answer = await ctx.ask(params.question)
    return SkillResult(message=f"you said {answer}", data={"answer": answer})


@dataclass
class StepModel:
    """Answers ``step N of TOPIC`` with ``TOPIC part N …`` streamed in words; routing calls get
    UNKNOWN (the skills' own patterns route)."""

    words: int = 4
    calls: list[str] = field(default_factory=list)
    open_streams: int = 0

    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Answer:
        if options.response_model is not None:
            return {"type": "UNKNOWN", "confidence": 0.0}
        prompt = messages[-1]["content"]
        self.calls.append(prompt)
        topic = prompt.split(" of ", 1)[-1]
        step = prompt.split(" ")[1]
        return f"{topic} part {step} " + " ".join(f"w{i}" for i in range(self.words))


def make_runtime(
    tmp: Path,
    llm: Any,
    *,
    blog: Path | None = None,
    extra_skills: Sequence[Skill[Any]] = (),
    **overrides: Any,
) -> AgentRuntime:
    """A runtime over a copy of the fixture blog (``tmp/blog`` unless ``blog`` is given) with
    the built-in skills, ``Steps``, ``Ask`` and ``extra_skills``."""
    blog = blog or tmp / "blog"
    if not blog.exists():
        from tests.blog import copy_blog

        copy_blog(blog)
    overrides.setdefault("state_dir", tmp / "state")
    config = load_config(content_root=blog, **overrides)
    skills = [*builtin_skills(), steps_skill, ask_skill, *extra_skills]
    return AgentRuntime(config, llm=llm, skills=skills)


class LiveServer:
    """uvicorn serving ``runtime`` in a thread; ``url``, ``client()``, ``stop()``."""

    def __init__(self, runtime: AgentRuntime, *, token: str = TOKEN) -> None:
        self.runtime = runtime
        self.token = token
        self.loop = new_event_loop(runtime.config.serve.loop)  # the loop skillrt serve runs on
        self.server: Server = make_server(runtime, token=token, host="127.0.0.1", port=0)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        for _ in range(400):
            if self.server.started:
                break
            if not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            threading.Event().wait(0.025)
        else:
            raise RuntimeError("the server did not start in time")
        self.port = self.server.port
        self.url = f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.server.serve())

    @property
    def state(self) -> Any:
        return self.server.skillrt

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine in the server's loop (to look at the runtime from a test)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def headers(self, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", **extra}

    def client(self, **kwargs: Any) -> httpx.Client:
        kwargs.setdefault("timeout", 10)
        return httpx.Client(base_url=self.url, headers=self.headers(), **kwargs)

    def stop(self) -> None:
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.state.begin_shutdown)
            self.server.should_exit = True
            self.thread.join(20)
        if not self.loop.is_closed():
            self.loop.close()


@dataclass
class SSE:
    id: int | None
    event: str
    data: Any


def parse_sse(lines: Iterator[str]) -> Iterator[SSE]:
    """Events from SSE lines (comments skipped), as a client would parse them."""
    fields: dict[str, str] = {}
    for line in lines:
        if line == "":
            if "data" in fields or "event" in fields:
                ident = fields.get("id")
                yield SSE(
                    int(ident) if ident else None,
                    fields.get("event", "message"),
                    json.loads(fields.get("data", "null")),
                )
            fields = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value


def stream(
    client: httpx.Client, method: str, path: str, *, stop_after: int | None = None, **kwargs: Any
) -> list[SSE]:
    """The events of one SSE response (all, or the first ``stop_after``, then disconnect)."""
    headers = {"Accept": "text/event-stream", **kwargs.pop("headers", {})}
    events: list[SSE] = []
    with client.stream(method, path, headers=headers, **kwargs) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        for event in parse_sse(response.iter_lines()):
            events.append(event)
            if stop_after is not None and len(events) >= stop_after:
                break
    return events
