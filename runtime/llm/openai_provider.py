"""The ``openai`` provider: any OpenAI-compatible chat endpoint through the ``openai`` SDK.

OpenAI, DeepSeek, Qwen, Ollama, vLLM, LM Studio, a llama.cpp server: anything that speaks
``POST /chat/completions``. Every call streams (so an abort closes the connection at once and
``timeout_s`` bounds each wait for data, not the length of a long answer); a server that does
not stream (it refuses ``stream`` or answers with one JSON body) is asked without it from then
on. Every chunk received is reported to ``note_activity`` (the stall watchdog). The SDK's own
retries are off; this module retries 429, 5xx, timeouts and connection errors with
exponential backoff and jitter, honouring ``Retry-After``, and maps every failure to the
``ProviderError`` tree in ``skillrt.exceptions``.

Structured output (``structured_output``): ``json_schema`` sends OpenAI's JSON-schema
``response_format``; ``json_object`` sends ``{"type": "json_object", "schema": …}`` (how
llama-cpp-python's server takes a schema: it constrains sampling with a grammar) with the schema
in the system message too; ``prompt`` only puts the schema in the system message. ``auto`` tries
them in that order, moving on when the server answers any 4xx or 5xx whose body names
``response_format``, ``json_schema`` or ``format``, and remembers what worked for the life of
the provider. In every mode the answer goes through ``ask_structured``: parsed, repaired, asked
again, every request (a refused one too) counted toward one bound.
"""

from __future__ import annotations

import asyncio
import copy
import email.utils
import json
import random
import re
import time
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import httpx2
import openai
from pydantic import BaseModel

from skillrt._io.logs import library_logger
from skillrt.abort import AbortSignal
from skillrt.exceptions import (
    AuthenticationError,
    BadRequest,
    PermissionDenied,
    ProviderError,
    ProviderUnavailable,
    RateLimited,
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
    estimate_usage,
    note_activity,
    truncate_middle,
    with_system_text,
)
from skillrt.llm.prices import PriceTable
from skillrt.llm.select import DEFAULT_OPENAI_MODEL, OPENAI_BASE_URL
from skillrt.llm.structured import Attempt, Reply, ask_structured

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

__all__ = ["DEFAULT_OPENAI_MODEL", "OpenAIProvider", "StructuredMode"]

T = TypeVar("T")


StructuredMode = Literal["auto", "json_schema", "json_object", "prompt"]
"""``auto``: ``json_schema``, then ``json_object``, then ``prompt``, each time the server refuses
the format; the others: only that way (see the module docstring)."""
_FixedMode = Literal["json_schema", "json_object", "prompt"]
_AUTO_ORDER: tuple[_FixedMode, ...] = ("json_schema", "json_object", "prompt")


_SCHEMA_INSTRUCTIONS = (
    "Answer with one JSON object and nothing else: no prose before or after it, no Markdown "
    "code fences. The object must match this JSON schema:\n{schema}"
)
_FORMAT_WORDS = ("response_format", "json_schema", "format")
_NO_STREAM_WORDS = ("not supported", "unsupported", "not allowed", "does not support")


@dataclass(slots=True)
class _Exchange:
    """One completed HTTP exchange."""

    content: str
    usage: Usage
    model: str


@dataclass(slots=True)
class _Progress:
    """Whether any text of this call has reached the caller (then it cannot be retried)."""

    streamed: bool = False


@dataclass(slots=True)
class _StreamReader:
    """What the chunks of one streamed answer have said so far."""

    parts: list[str] = field(default_factory=list)
    usage: Usage | None = None
    model: str = ""
    finished: bool = False

    def take(self, chunk: Any) -> str:
        """Read one chunk; returns its text (of the first choice), or ""."""
        self.model = getattr(chunk, "model", None) or self.model
        reported = getattr(chunk, "usage", None)
        if reported is not None:
            self.usage = Usage(
                getattr(reported, "prompt_tokens", 0) or 0,
                getattr(reported, "completion_tokens", 0) or 0,
            )
        text = ""
        for choice in getattr(chunk, "choices", None) or ():
            if getattr(choice, "index", 0) != 0:
                continue
            delta = getattr(choice, "delta", None)
            text = (getattr(delta, "content", None) if delta is not None else None) or ""
            if text:
                self.parts.append(text)
            if getattr(choice, "finish_reason", None):
                self.finished = True
        return text


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _error_detail(exc: openai.APIStatusError) -> tuple[str, str]:
    """``(message, code)`` from an error response body, bounded."""
    body: object = exc.body
    code = ""
    message = ""
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            message = str(error.get("message") or "")
            code = str(error.get("code") or error.get("type") or "")
            param = error.get("param")
            if param:
                message = f"{message} (param: {param})"
        elif isinstance(error, str):
            message = error
    if not message:
        message = exc.message
    return truncate_middle(message, 500), code


def _strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of ``schema`` in OpenAI's strict form, or None if it cannot be strict.

    Strict needs every object closed (``additionalProperties: false``) with every property
    required; a free-form ``dict`` field cannot be expressed, so such schemas go non-strict.
    """
    strict = copy.deepcopy(schema)

    def visit(node: Any) -> bool:
        if isinstance(node, list):
            return all(visit(item) for item in node)
        if not isinstance(node, dict):
            return True
        if "$ref" in node:
            for key in [k for k in node if k != "$ref"]:
                del node[key]
            return True
        node.pop("default", None)
        if node.get("type") == "object" or "properties" in node:
            extra = node.get("additionalProperties")
            if not node.get("properties") or extra not in (None, False):
                return False
            node["additionalProperties"] = False
            node["required"] = list(node["properties"])
        return all(visit(value) for value in node.values())

    return strict if visit(strict) else None


def _response_format(response_model: type[BaseModel], schema: dict[str, Any]) -> dict[str, Any]:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", response_model.__name__)[:64] or "answer"
    strict = _strict_schema(schema)
    return {
        "type": "json_schema",
        "json_schema": {
            "name": name,
            "schema": strict if strict is not None else schema,
            "strict": strict is not None,
        },
    }


def _format_for(
    mode: _FixedMode, response_model: type[BaseModel], schema: dict[str, Any]
) -> dict[str, Any] | None:
    """The ``response_format`` a structured-output mode sends (``prompt``: none)."""
    if mode == "json_schema":
        return _response_format(response_model, schema)
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def _format_refused(exc: ProviderError) -> bool:
    """A 4xx or 5xx (not 429) whose body names the response format: the server refuses it."""
    status = exc.status
    if status is None or status == 429 or not 400 <= status < 600:
        return False
    cause = exc.__cause__
    body: object = cause.body if isinstance(cause, openai.APIStatusError) else None
    text = json.dumps(body, default=str) if body is not None else str(exc)
    return any(word in text.lower() for word in _FORMAT_WORDS)


def _with_schema_instructions(
    messages: Sequence[LLMMessage], schema: dict[str, Any]
) -> list[LLMMessage]:
    instructions = _SCHEMA_INSTRUCTIONS.format(schema=json.dumps(schema, ensure_ascii=False))
    return with_system_text(messages, instructions)


class OpenAIProvider(BaseLLM):
    """An OpenAI-compatible chat endpoint.

    ``timeout_s`` bounds every wait on the network (connecting, sending, the response headers,
    each streamed chunk): a stalled server fails after it, a stream that keeps flowing is not
    cut. ``max_retries`` counts retries after the first attempt. ``max_prompt_chars`` bounds
    the text sent per call (``bound_messages``). ``max_tokens`` and ``temperature`` are
    defaults for calls that do not give their own.
    """

    provider = "openai"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str = DEFAULT_OPENAI_MODEL,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        prices: PriceTable | None = None,
        structured_output: StructuredMode = "auto",
        structured_retries: int = 2,
        max_prompt_chars: int = 200_000,
        max_tokens: int | None = None,
        temperature: float | None = None,
        retry_base_s: float = 0.5,
        retry_max_s: float = 8.0,
        retry_after_cap_s: float = 30.0,
        stream: bool = True,
    ) -> None:
        self.base_url = (base_url or OPENAI_BASE_URL).rstrip("/")
        self._api_key = api_key
        # stdlib logging: silent unless the host set it up; the key itself is redacted
        self._log = library_logger("skillrt.llm", [api_key] if api_key else [])
        self._model = model or DEFAULT_OPENAI_MODEL
        self.timeout_s = timeout_s
        self.max_retries = max(0, max_retries)
        self.prices = prices if prices is not None else PriceTable.load()
        self.structured_output: StructuredMode = structured_output
        self.structured_retries = max(0, structured_retries)
        self.max_prompt_chars = max_prompt_chars
        self.default_max_tokens = max_tokens
        self.default_temperature = temperature
        self.retry_base_s = retry_base_s
        self.retry_max_s = retry_max_s
        self.retry_after_cap_s = retry_after_cap_s
        # How structured calls are asked now; in auto, learnt from the server's refusals.
        self.structured_mode: _FixedMode = (
            "json_schema" if structured_output == "auto" else structured_output
        )
        self.stream = stream  # False once the server turned out not to stream
        self._stream_usage = True
        self._max_tokens_key = "max_tokens"
        self._send_temperature = True
        self._client: openai.AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"OpenAIProvider(base_url={self.base_url!r}, model={self._model!r})"

    @property
    def model(self) -> str:
        return self._model

    # --- the protocol ------------------------------------------------------------------------

    async def _generate(self, request: LLMRequest) -> LLMResult:
        bounded = bound_messages(request.messages, self.max_prompt_chars)
        work = self._complete(bounded, request, request.stream_cb)
        exchange = await self._abortable(work, request.signal)
        return LLMResult(
            content=exchange.content,
            usage=exchange.usage,
            cost=self._cost(exchange.model, exchange.usage),
            model=exchange.model,
        )

    async def _generate_structured(self, request: LLMRequest) -> LLMResult:
        return await self._abortable(self._structured(request), request.signal)

    async def aclose(self) -> None:
        """Close the HTTP connections (of the client made on the running event loop)."""
        client, self._client = self._client, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await client.close()

    # --- cancellation ------------------------------------------------------------------------

    async def _abortable(self, work: Coroutine[Any, Any, T], signal: AbortSignal | None) -> T:
        """Run ``work`` in a task that the abort signal cancels, closing any open stream."""
        if signal is None:
            return await work
        loop = asyncio.get_running_loop()
        task = loop.create_task(work)

        def on_abort(_reason: str) -> None:
            try:
                same_loop = asyncio.get_running_loop() is loop
            except RuntimeError:
                same_loop = False
            if same_loop:
                task.cancel()
            else:
                loop.call_soon_threadsafe(task.cancel)

        remove = signal.add_callback(on_abort)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            caller_cancelled = current is not None and current.cancelling() > 0
            if signal.aborted and task.cancelled() and not caller_cancelled:
                raise TaskCancelled(signal.reason or "cancelled") from None
            raise
        finally:
            remove()

    # --- one completion, with retries --------------------------------------------------------

    def _client_for_loop(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            # Pooled connections belong to one event loop; a new loop gets a new client.
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key or "no-key",
                base_url=self.base_url,
                timeout=httpx2.Timeout(self.timeout_s, connect=min(self.timeout_s, 10.0)),
                max_retries=0,
            )
            self._client_loop = loop
        return self._client

    def _options(
        self, request: LLMRequest, response_format: dict[str, Any] | None
    ) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if self._stream_usage and self.stream:
            options["stream_options"] = {"include_usage": True}
        if request.max_tokens is not None:
            options[self._max_tokens_key] = request.max_tokens
        if request.temperature is not None and self._send_temperature:
            options["temperature"] = request.temperature
        if response_format is not None:
            options["response_format"] = response_format
        return options

    def _adapt(self, exc: BadRequest, options: Mapping[str, Any]) -> bool:
        """Learn from a 400 that names a parameter this server refuses; True to try again."""
        text = str(exc).lower()
        if "stream_options" in options and ("stream_options" in text or "include_usage" in text):
            self._stream_usage = False
        elif "max_tokens" in options and "max_completion_tokens" in text:
            self._max_tokens_key = "max_completion_tokens"
        elif "temperature" in options and "temperature" in text and "support" in text:
            self._send_temperature = False
        elif self.stream and "stream" in text and any(w in text for w in _NO_STREAM_WORDS):
            self.stream = False
        else:
            return False
        self._log.info("llm.adapted", provider=self.provider, model=self._model, error=str(exc))
        return True

    def _retry_delay(self, attempt: int, exc: ProviderError) -> float:
        if isinstance(exc, RateLimited) and exc.retry_after is not None:
            return min(exc.retry_after, self.retry_after_cap_s) + random.uniform(
                0, self.retry_base_s / 2
            )
        ceiling = min(self.retry_max_s, self.retry_base_s * 2.0**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    async def _complete(
        self,
        messages: Sequence[LLMMessage],
        request: LLMRequest,
        stream_cb: StreamCallback | None,
        response_format: dict[str, Any] | None = None,
    ) -> _Exchange:
        """One answer to ``messages`` with ``request``'s options, retried as the module says."""
        progress = _Progress()
        attempt = 0
        while True:
            options = self._options(request, response_format)
            try:
                if not self.stream:
                    return await self._whole(messages, options, stream_cb)
                return await self._exchange(messages, options, stream_cb, progress)
            except BadRequest as exc:
                if self._adapt(exc, options):
                    continue
                raise
            except (RateLimited, ProviderUnavailable) as exc:
                if response_format is not None and _format_refused(exc):
                    raise  # a server that refuses the format refuses it again: no retry
                if progress.streamed or attempt >= self.max_retries:
                    raise
                delay = self._retry_delay(attempt, exc)
                attempt += 1
                self._log.info(
                    "llm.retry",
                    provider=self.provider,
                    model=self._model,
                    attempt=attempt,
                    delay_s=round(delay, 3),
                    error=str(exc),
                )
                await asyncio.sleep(delay)

    async def _exchange(
        self,
        messages: Sequence[LLMMessage],
        options: dict[str, Any],
        stream_cb: StreamCallback | None,
        progress: _Progress,
    ) -> _Exchange:
        client = self._client_for_loop()
        try:
            stream = await client.chat.completions.create(
                model=self._model,
                messages=cast("list[ChatCompletionMessageParam]", list(messages)),
                stream=True,
                **options,
            )
        except openai.OpenAIError as exc:
            raise self._map_error(exc) from exc
        content_type = stream.response.headers.get("content-type", "")
        if "json" in content_type and "event-stream" not in content_type:
            return await self._unstreamed(stream, messages, stream_cb)
        reader = _StreamReader()
        try:
            async for chunk in stream:
                note_activity()  # model bytes: the stall watchdog is pushed back
                text = reader.take(chunk)
                if text and stream_cb is not None:
                    progress.streamed = True
                    await call_stream_cb(stream_cb, text)
        except openai.APIConnectionError as exc:
            if isinstance(exc, openai.APITimeoutError):
                raise self._map_error(exc) from exc
            raise self._truncated(len("".join(reader.parts)), exc.__cause__ or exc) from exc
        except openai.OpenAIError as exc:
            raise self._map_error(exc) from exc
        except json.JSONDecodeError as exc:
            raise ProviderUnavailable(
                f"{self.base_url}: malformed data in the response stream: {exc}",
                provider=self.provider,
                model=self._model,
            ) from exc
        finally:
            await stream.close()
        content = "".join(reader.parts)
        if not reader.finished:
            raise self._truncated(len(content), None)
        usage = reader.usage or estimate_usage(messages, content)
        return _Exchange(content=content, usage=usage, model=reader.model or self._model)

    async def _unstreamed(
        self, stream: Any, messages: Sequence[LLMMessage], stream_cb: StreamCallback | None
    ) -> _Exchange:
        """The server ignored ``stream=true`` and sent the whole answer: read it, and stop
        asking it to stream."""
        self.stream = False
        self._log.info("llm.adapted", provider=self.provider, model=self._model, stream=False)
        try:
            raw = await stream.response.aread()
        except httpx2.HTTPError as exc:
            raise self._truncated(0, exc) from exc
        finally:
            await stream.close()
        return await self._whole_answer(raw, messages, stream_cb)

    async def _whole(
        self,
        messages: Sequence[LLMMessage],
        options: dict[str, Any],
        stream_cb: StreamCallback | None,
    ) -> _Exchange:
        """One exchange without streaming (a server that does not stream)."""
        client = self._client_for_loop()
        try:
            response = await client.chat.completions.with_raw_response.create(
                model=self._model,
                messages=cast("list[ChatCompletionMessageParam]", list(messages)),
                stream=False,
                **options,
            )
            raw = await response.http_response.aread()
        except openai.OpenAIError as exc:
            raise self._map_error(exc) from exc
        except httpx2.HTTPError as exc:
            raise self._truncated(0, exc) from exc
        return await self._whole_answer(raw, messages, stream_cb)

    async def _whole_answer(
        self, raw: bytes, messages: Sequence[LLMMessage], stream_cb: StreamCallback | None
    ) -> _Exchange:
        """An answer sent as one JSON body; its text goes to ``stream_cb`` in one piece."""
        note_activity()
        try:
            body = json.loads(raw)
            choice = next(c for c in body["choices"] if c.get("index", 0) == 0)
            content = str((choice.get("message") or {}).get("content") or "")
        except (ValueError, KeyError, TypeError, StopIteration, AttributeError) as exc:
            raise ProviderUnavailable(
                f"{self.base_url}: malformed answer (not a chat completion): {exc}",
                provider=self.provider,
                model=self._model,
            ) from exc
        reported = body.get("usage") if isinstance(body, dict) else None
        if isinstance(reported, dict):
            usage = Usage(
                int(reported.get("prompt_tokens") or 0), int(reported.get("completion_tokens") or 0)
            )
        else:
            usage = estimate_usage(messages, content)
        await call_stream_cb(stream_cb, content)
        return _Exchange(content=content, usage=usage, model=str(body.get("model") or self._model))

    def _truncated(self, received: int, cause: BaseException | None) -> ProviderUnavailable:
        why = f": {cause!r}" if cause is not None else ""
        return ProviderUnavailable(
            f"{self.base_url}: the response stream of model {self._model} ended before the model "
            f"finished (truncated after {received} characters){why}",
            provider=self.provider,
            model=self._model,
        )

    def _map_error(self, exc: openai.OpenAIError) -> ProviderError:
        p, m = self.provider, self._model
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail, code = _error_detail(exc)
            message = f"{self.base_url}: HTTP {status} for model {self._model}: {detail}"
            if status == 401:
                return AuthenticationError(
                    f"{message} (check the key: SKILLRT_LLM__API_KEY or OPENAI_API_KEY)",
                    status=status,
                    provider=p,
                    model=m,
                )
            if status == 403:
                return PermissionDenied(message, status=status, provider=p, model=m)
            if status == 429 and code == "insufficient_quota":
                return PermissionDenied(
                    f"{message} (quota exhausted)", status=status, provider=p, model=m
                )
            if status == 429:
                retry_after = parse_retry_after(exc.response.headers)
                return RateLimited(
                    message, retry_after=retry_after, status=status, provider=p, model=m
                )
            if status in (408, 409) or status >= 500:
                return ProviderUnavailable(message, status=status, provider=p, model=m)
            return BadRequest(message, status=status, provider=p, model=m)
        if isinstance(exc, openai.APITimeoutError):
            return ProviderUnavailable(
                f"{self.base_url}: no answer within {self.timeout_s:g} s (model {self._model})",
                provider=p,
                model=m,
            )
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return ProviderUnavailable(
                f"{self.base_url}: connection failed (model {self._model}): {cause!r}",
                provider=p,
                model=m,
            )
        return ProviderUnavailable(
            f"{self.base_url}: {exc} (model {self._model})", provider=p, model=m
        )

    def price_of(self, usage: Usage) -> float | None:
        return self._cost(self.model, usage)

    def _cost(self, model: str, usage: Usage) -> float | None:
        cost = self.prices.cost(model, usage)
        return self.prices.cost(self._model, usage) if cost is None else cost

    # --- structured output -------------------------------------------------------------------

    async def _structured(self, request: LLMRequest) -> LLMResult:
        """Ask for JSON matching ``request.response_model`` the way ``structured_mode`` says,
        through ``ask_structured``: at most two requests (an answer and its repair) per round,
        ``1 + structured_retries`` rounds, plus one request for each format ``auto`` can still
        fall back from. A request the server refused counts too."""
        response_model = request.output_model
        schema = response_model.model_json_schema()
        bounded = bound_messages(request.messages, self.max_prompt_chars)

        async def ask(attempt: Attempt) -> Reply | None:
            mode = self.structured_mode
            messages = (
                bounded if mode == "json_schema" else _with_schema_instructions(bounded, schema)
            )
            convo = attempt.conversation(messages, self.max_prompt_chars)
            fmt = _format_for(mode, response_model, schema)
            try:
                exchange = await self._complete(convo, request, None, fmt)
            except ProviderError as exc:
                if fmt is None or not self._fall_back(mode, exc):
                    raise
                return None
            return Reply(exchange.content, exchange.usage, exchange.model)

        fallbacks = 0
        if self.structured_output == "auto":
            fallbacks = len(_AUTO_ORDER) - 1 - _AUTO_ORDER.index(self.structured_mode)
        return await ask_structured(
            request,
            ask,
            attempts=2 * (1 + self.structured_retries) + fallbacks,
            price=self._cost,
            provider=self.provider,
            model=self._model,
            where=f"{self.base_url}: model {self._model}",
        )

    def _fall_back(self, mode: _FixedMode, exc: ProviderError) -> bool:
        """In ``auto``, when the server refused ``mode``'s format: move on to the next mode for
        the life of the provider, and say so (True)."""
        if self.structured_output != "auto" or not _format_refused(exc):
            return False
        self.structured_mode = _AUTO_ORDER[_AUTO_ORDER.index(mode) + 1]
        self._log.info(
            "llm.structured_fallback", model=self._model, mode=self.structured_mode, error=str(exc)
        )
        return True
