"""The llama.cpp side of the embedded model: load a GGUF in one mode, and generate.

It runs inside the model's worker process (``llama_worker``), never in the runtime's own
process: native code that faults takes only the worker down. ``benchmarks/local_worker.py``
also drives it in-process, to measure what the worker costs.

A generation streams its text pieces to ``emit`` and stops between tokens, or inside a long
prompt evaluation (llama.cpp's abort callback), once ``stop`` is set. The token loop is our
own (``Llama.generate``, each token's bytes made text by ``llama_stream.TextStream``): the
library's streaming stalls for hours on bytes that are not UTF-8. Structured calls pass a
JSON schema, which becomes a grammar that constrains sampling.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.llm.base import LLMMessage, bound_messages
from skillrt.llm.llama_modes import Mode, loader_options
from skillrt.llm.llama_stream import TextStream

__all__ = ["EngineError", "Generated", "LlamaEngine", "model_params_for"]


@contextlib.contextmanager
def model_params_for(mode: Mode) -> Iterator[None]:
    """Within this block, llama-cpp-python's ``Llama`` loads with ``mode``'s
    ``use_extra_bufts``.

    ``Llama`` takes no argument for it: it fills ``llama_model_params`` from
    ``llama_model_default_params()`` and loads at once, so that function is wrapped for the
    block. Not thread-safe: for a process that loads its model on one thread (the worker; a
    test's ``llama_cpp.server``).
    """
    low: Any = importlib.import_module("llama_cpp.llama_cpp")
    defaults = low.llama_model_default_params
    extra = loader_options(mode)["use_extra_bufts"]

    def model_params() -> Any:
        params = defaults()
        params.use_extra_bufts = extra
        return params

    low.llama_model_default_params = model_params
    try:
        yield
    finally:
        low.llama_model_default_params = defaults


class EngineError(Exception):
    """llama.cpp refused: ``kind`` is ``config`` (the model cannot be loaded), ``request``
    (a bad request) or ``runtime`` (a failure while generating)."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(message)


@dataclass(slots=True)
class Generated:
    content: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None


class LlamaEngine:
    """One loaded ``Llama`` (not thread-safe: one generation at a time)."""

    def __init__(
        self,
        model_path: Path,
        *,
        mode: Mode,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = 0,
    ) -> None:
        self.model_path = model_path
        self.mode = mode
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.seed = seed
        self._llama: Any = None
        self._abort_callback: Any = None  # kept alive while llama.cpp holds a pointer to it
        self._stop: threading.Event | None = None

    def load(self) -> dict[str, Any]:
        """Load the model; returns the loader's parameters as llama.cpp got them."""
        llama_cpp: Any = importlib.import_module("llama_cpp")
        low: Any = importlib.import_module("llama_cpp.llama_cpp")
        options = loader_options(self.mode)
        try:
            with model_params_for(self.mode):
                llama = llama_cpp.Llama(
                    model_path=str(self.model_path),
                    n_ctx=self.n_ctx,
                    n_batch=options["n_batch"],
                    n_threads=self.n_threads,
                    seed=self.seed,
                    verbose=False,
                )
        except (ValueError, RuntimeError) as exc:
            raise EngineError("config", f"a GGUF model llama.cpp can load ({exc})") from exc
        # verbose=False still lets llama.cpp print errors, such as the note on an aborted
        # evaluation; aborts are expected here, and real failures surface as exceptions.
        logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)
        self._install_abort_callback(low, llama)
        self._llama = llama
        return {
            "use_extra_bufts": bool(llama.model_params.use_extra_bufts),
            "n_batch": int(llama.context_params.n_batch),
            "n_ubatch": int(llama.context_params.n_ubatch),
        }

    def _install_abort_callback(self, low: Any, llama: Any) -> None:
        """Let a stop interrupt a long prompt evaluation inside llama.cpp, not only between
        tokens. The C function ``llama_set_abort_callback`` has no Python wrapper, so it is
        called through the loaded library; without it, stops still act between tokens."""
        setter = getattr(getattr(low, "_lib", None), "llama_set_abort_callback", None)
        callback_type = getattr(low, "ggml_abort_callback", None)
        if setter is None or callback_type is None:
            return

        def should_abort(_data: object) -> bool:
            stop = self._stop
            return stop is not None and stop.is_set()

        callback = callback_type(should_abort)
        setter.argtypes = [ctypes.c_void_p, callback_type, ctypes.c_void_p]
        setter.restype = None
        setter(llama.ctx, callback, None)
        self._abort_callback = callback

    def close(self) -> None:
        llama, self._llama = self._llama, None
        if llama is not None:
            llama.close()

    def _fit(self, messages: list[LLMMessage], max_tokens: int) -> tuple[list[LLMMessage], int]:
        """Cut the conversation from the middle until it fits the context with the answer.
        Returns the messages and their length in tokens (without the chat template's own)."""
        llama = self._llama
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

    def generate(
        self,
        messages: list[LLMMessage],
        *,
        max_tokens: int,
        temperature: float,
        repeat_penalty: float,
        schema: dict[str, Any] | None,
        emit: Callable[[str], None],
        stop: threading.Event,
    ) -> Generated:
        """One chat completion, its text pieces passed to ``emit`` as they come."""
        if self._llama is None:
            self.load()
        llama = self._llama
        max_tokens = min(max_tokens, self.n_ctx // 2)
        messages, prompt_tokens = self._fit(messages, max_tokens)
        grammar = self._grammar(schema) if schema is not None else None
        request = self._completion_request(llama, messages, temperature, repeat_penalty, grammar)
        prompt: list[int] = request["prompt"]
        if len(prompt) >= self.n_ctx:
            raise EngineError(
                "request", f"llama.cpp: the prompt ({len(prompt)} tokens) fills the context"
            )
        budget = min(max_tokens, self.n_ctx - len(prompt))
        text = TextStream(request["stop"])
        parts: list[str] = []
        count = 0
        finish: str | None = "stop"  # the chat format's stopping criteria ended it
        is_end = _end_test(llama)
        self._stop = stop
        llama.set_seed(self.seed)
        try:
            tokens = llama.generate(prompt, **_sampling(request))
            try:
                for token in tokens:
                    if stop.is_set():
                        finish = None
                        break
                    if is_end(token):
                        break
                    count += 1
                    piece = text.feed(llama.detokenize([token]))
                    if piece:
                        parts.append(piece)
                        emit(piece)
                    if text.stopped:
                        break
                    if count >= budget:
                        finish = "length"
                        break
            finally:
                tokens.close()
        except (RuntimeError, ValueError) as exc:
            if not stop.is_set():
                kind = "request" if isinstance(exc, ValueError) else "runtime"
                raise EngineError(kind, f"llama.cpp: {exc}") from exc
            finish = None  # the abort callback cut an evaluation short
        finally:
            self._stop = None
        if rest := text.finish():
            parts.append(rest)
            emit(rest)
        return Generated("".join(parts), prompt_tokens + 4 * len(messages), count, finish)

    @staticmethod
    def _completion_request(
        llama: Any,
        messages: list[LLMMessage],
        temperature: float,
        repeat_penalty: float,
        grammar: Any,
    ) -> dict[str, Any]:
        """What llama-cpp-python's chat handler for this model would ask ``create_completion``
        for (the prompt's tokens in the model's chat format, its stop strings and criteria,
        the sampling settings), taken from the handler without running it: the engine runs
        the token loop itself (see ``llama_stream``)."""
        chat_format: Any = importlib.import_module("llama_cpp.llama_chat_format")
        handler = (
            llama.chat_handler
            or getattr(llama, "_chat_handlers", {}).get(llama.chat_format)
            or chat_format.get_chat_completion_handler(llama.chat_format)
        )
        taken = _Taken(llama)
        handler(
            llama=taken,
            messages=messages,
            stream=True,
            temperature=temperature,
            repeat_penalty=repeat_penalty,
            grammar=grammar,
        )
        if taken.request is None:
            raise EngineError("config", f"chat format {llama.chat_format!r} made no completion")
        request = dict(taken.request)
        stop = request.get("stop") or []
        request["stop"] = [stop] if isinstance(stop, str) else list(stop)
        return request

    def _grammar(self, schema: dict[str, Any]) -> Any:
        llama_cpp: Any = importlib.import_module("llama_cpp")

        try:
            return llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        except Exception:
            # A schema feature the converter lacks: any JSON, then validation decides.
            return llama_cpp.LlamaGrammar.from_string(
                llama_cpp.llama_grammar.JSON_GBNF, verbose=False
            )


def _end_test(llama: Any) -> Callable[[int], bool]:
    """Whether a token ends the generation: llama.cpp's own test where the library has it."""
    low: Any = importlib.import_module("llama_cpp.llama_cpp")
    is_eog = getattr(low, "llama_vocab_is_eog", None)
    get_vocab = getattr(low, "llama_model_get_vocab", None)
    if is_eog is None or get_vocab is None:
        eos = llama.token_eos()
        return lambda token: bool(token == eos)
    vocab = get_vocab(llama.model)
    return lambda token: bool(is_eog(vocab, token))


_SAMPLING = (
    "top_k", "top_p", "min_p", "typical_p", "tfs_z", "mirostat_mode", "mirostat_tau",
    "mirostat_eta", "frequency_penalty", "presence_penalty", "repeat_penalty",
    "logits_processor", "stopping_criteria", "grammar",
)  # fmt: skip


def _sampling(request: dict[str, Any]) -> dict[str, Any]:
    """``Llama.generate``'s arguments from a completion request, as ``create_completion``
    passes them on."""
    chosen = {name: request[name] for name in _SAMPLING if name in request}
    chosen["temp"] = request["temperature"]
    return chosen


class _Taken:
    """Stands in for the ``Llama`` a chat handler is given: everything is the model's own,
    except ``create_completion``, which keeps its arguments and generates nothing."""

    def __init__(self, llama: Any) -> None:
        self._llama = llama
        self.request: dict[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llama, name)

    def create_completion(self, **request: Any) -> Iterator[Any]:
        self.request = request
        return iter(())
