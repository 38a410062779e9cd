"""An OpenAI-compatible chat server for tests and benchmarks, on 127.0.0.1, in a thread.

It answers ``POST /v1/chat/completions`` from a script of behaviours (``Reply``, ``Fail``,
``Stall``, ``Garbage``), one per request, then ``server.default``. It streams slowly when asked
(SSE over chunked HTTP/1.1, or a ``Connection: close`` body), can cut a stream short, can
refuse ``response_format``, records every request, and notices when a client goes away: a
read on the connection runs while it streams, so ``disconnected_at`` (``time.perf_counter()``)
is when the client closed the socket, not when a later write happened to fail.

    with OpenAIServer() as server:
        server.push(Fail(429, headers={"Retry-After": "0"}), Reply("hello"))
        ... AsyncOpenAI(base_url=server.base_url, api_key="k") ...
        assert len(server.requests) == 2

It runs its own event loop in a thread, so the code under test can block or be slow
without delaying the server's view of the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "Behaviour",
    "Fail",
    "Garbage",
    "OpenAIServer",
    "RecordedRequest",
    "Reply",
    "Stall",
]


@dataclass
class Reply:
    """A completion. Streamed when the request asks for it, in ``chunks`` (default: words)."""

    text: str = "Hello from the test server."
    chunks: list[str] | None = None
    chunk_delay: float = 0.0
    model: str | None = None  # reported model; default: the one requested
    usage: bool = True  # send usage (in the stream only when include_usage is asked)
    prompt_tokens: int = 11
    completion_tokens: int | None = None  # default: the number of chunks
    truncate_after: int | None = None  # close the connection after this many chunks
    framing: Literal["chunked", "close"] = "chunked"

    def pieces(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        words = self.text.split(" ")
        return [w + " " for w in words[:-1]] + [words[-1]] if self.text else []


@dataclass
class Fail:
    """An error answer: ``status`` with an OpenAI-style error body and extra headers."""

    status: int
    message: str = "simulated failure"
    headers: dict[str, str] = field(default_factory=dict)
    code: str | None = None
    param: str | None = None


@dataclass
class Stall:
    """Say nothing for ``seconds`` (after the 200 headers when ``after_headers``)."""

    seconds: float = 30.0
    after_headers: bool = False


@dataclass
class Garbage:
    """A 200 event stream whose data is not JSON."""

    data: str = "{this is not json"


Behaviour: TypeAlias = Reply | Fail | Stall | Garbage


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float
    behaviour: Behaviour | None = None
    chunks_sent: int = 0
    finished_at: float | None = None  # the whole answer was written
    disconnected_at: float | None = None  # the client closed the connection mid-answer

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))


class _Disconnected(Exception):
    pass


class OpenAIServer:
    """See the module docstring. ``start()``/``stop()`` or use it as a context manager."""

    def __init__(
        self,
        *,
        reject_response_format: bool = False,
        refuse_format_types: tuple[str, ...] = (),
        refuse_status: int = 500,
        streams: Literal["sse", "json", "refuse"] = "sse",
    ) -> None:
        """``reject_response_format``: a 400 for any ``response_format``;
        ``refuse_format_types``: ``refuse_status`` with llama-cpp-python's validation message
        for those ``response_format`` types; ``streams``: ``json`` ignores ``stream`` and
        answers with one JSON body, ``refuse`` answers 400 to ``stream: true``."""
        self.reject_response_format = reject_response_format
        self.refuse_format_types = refuse_format_types
        self.refuse_status = refuse_status
        self.streams = streams
        self.default: Behaviour | Callable[[RecordedRequest], Behaviour] = Reply()
        self.requests: list[RecordedRequest] = []
        self.connections = 0
        self._script: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._ready = threading.Event()
        self._changed = threading.Condition(self._lock)
        self.port = 0

    # --- control, from any thread --------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._script.extend(behaviours)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Wait until ``predicate()`` holds (checked whenever a request changes state)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    def start(self) -> OpenAIServer:
        self._thread = threading.Thread(target=self._run, name="openai-test-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("test server did not start")
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is not None and self._server is not None:
            loop.call_soon_threadsafe(self._server.close)
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the server thread ----------------------------------------------------------------

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            for task in asyncio.all_tasks(loop):
                task.cancel()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _next_behaviour(self, request: RecordedRequest) -> Behaviour:
        with self._lock:
            if self._script:
                return self._script.popleft()
            default = self.default
        return default(request) if callable(default) else default

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    break
                if not await self._serve(request, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, _Disconnected):
            pass
        except asyncio.CancelledError:
            # The server stopping: end quietly. A handler left cancelled makes Python 3.11's
            # StreamReaderProtocol log "Exception in callback … CancelledError" (it asks the
            # task for its exception), as one benchmark run printed.
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()

    async def _read_request(self, reader: asyncio.StreamReader) -> RecordedRequest | None:
        line = await reader.readline()
        if not line.strip():
            return None
        method, path, _ = line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while True:
            header = (await reader.readline()).decode("latin-1").rstrip("\r\n")
            if not header:
                break
            name, _, value = header.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        raw = await reader.readexactly(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        request = RecordedRequest(method, path, headers, body, time.perf_counter())
        with self._lock:
            self.requests.append(request)
        self._notify()
        return request

    @staticmethod
    def _head(status: int, headers: dict[str, str]) -> bytes:
        reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}
        lines = [f"HTTP/1.1 {status} {reason.get(status, 'Status')}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _send_json(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: object,
        extra: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode()
        headers = {"content-type": "application/json", "content-length": str(len(data))}
        writer.write(self._head(status, {**headers, **(extra or {})}) + data)
        await writer.drain()

    async def _serve(
        self, request: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection must not be reused."""
        if request.method != "POST" or not request.path.endswith("/chat/completions"):
            await self._send_json(writer, 404, {"error": {"message": f"no route {request.path}"}})
            return True
        if self.reject_response_format and "response_format" in request.body:
            behaviour: Behaviour = Fail(
                400,
                "Invalid parameter: 'response_format' of type 'json_schema' is not supported "
                "by this server",
                param="response_format",
                code="invalid_request_error",
            )
        elif (request.body.get("response_format") or {}).get("type") in self.refuse_format_types:
            behaviour = Fail(
                self.refuse_status,
                "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}",
            )
        elif self.streams == "refuse" and request.body.get("stream"):
            behaviour = Fail(400, "stream is not supported by this server", param="stream")
        else:
            behaviour = self._next_behaviour(request)
        request.behaviour = behaviour
        try:
            keep = await self._answer(request, behaviour, reader, writer)
        except _Disconnected:
            request.disconnected_at = time.perf_counter()
            self._notify()
            return False
        except ConnectionError:
            request.disconnected_at = time.perf_counter()
            self._notify()
            return False
        request.finished_at = time.perf_counter()
        self._notify()
        return keep

    async def _answer(
        self,
        request: RecordedRequest,
        behaviour: Behaviour,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        if isinstance(behaviour, Fail):
            error = {
                "message": behaviour.message,
                "type": "error",
                "code": behaviour.code,
                "param": behaviour.param,
            }
            await self._send_json(writer, behaviour.status, {"error": error}, behaviour.headers)
            return True
        if isinstance(behaviour, Stall):
            if behaviour.after_headers:
                writer.write(self._head(200, {"content-type": "text/event-stream"}))
                await writer.drain()
            await self._pause(reader, behaviour.seconds)
            return False
        model = str(request.body.get("model", "test-model"))
        if isinstance(behaviour, Garbage):
            data = f"data: {behaviour.data}\n\ndata: [DONE]\n\n".encode()
            headers = {"content-type": "text/event-stream", "content-length": str(len(data))}
            writer.write(self._head(200, headers) + data)
            await writer.drain()
            return True
        if not request.body.get("stream") or self.streams == "json":
            await self._send_json(writer, 200, self._completion(request, behaviour, model))
            return True
        return await self._stream(request, behaviour, model, reader, writer)

    async def _pause(self, reader: asyncio.StreamReader, seconds: float) -> None:
        """Sleep, but raise ``_Disconnected`` the moment the client closes the connection."""
        watch = asyncio.ensure_future(reader.read(1))
        try:
            done, _ = await asyncio.wait({watch}, timeout=seconds)
            if watch in done:
                raise _Disconnected
        finally:
            watch.cancel()

    @staticmethod
    def _completion(request: RecordedRequest, reply: Reply, model: str) -> dict[str, Any]:
        completion_tokens = reply.completion_tokens or len(reply.pieces())
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": reply.prompt_tokens + completion_tokens,
            },
        }

    async def _stream(
        self,
        request: RecordedRequest,
        reply: Reply,
        model: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        chunked = reply.framing == "chunked"
        head = {"content-type": "text/event-stream", "cache-control": "no-cache"}
        head.update({"transfer-encoding": "chunked"} if chunked else {"connection": "close"})
        writer.write(self._head(200, head))

        def frame(event: dict[str, Any] | str) -> bytes:
            data = event if isinstance(event, str) else json.dumps(event)
            payload = f"data: {data}\n\n".encode()
            return f"{len(payload):x}\r\n".encode() + payload + b"\r\n" if chunked else payload

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": reply.model or model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        writer.write(frame(chunk({"role": "assistant", "content": ""})))
        await writer.drain()
        # While streaming, a pending read tells the moment the client closes the connection.
        watch = asyncio.ensure_future(reader.read(1))
        try:
            for i, piece in enumerate(reply.pieces()):
                if reply.truncate_after is not None and i >= reply.truncate_after:
                    return False  # the connection is closed with no end of stream
                if watch.done():
                    raise _Disconnected
                writer.write(frame(chunk({"content": piece})))
                await writer.drain()
                request.chunks_sent += 1
                if reply.chunk_delay:
                    done, _ = await asyncio.wait({watch}, timeout=reply.chunk_delay)
                    if done:
                        raise _Disconnected
            if reply.truncate_after is not None:
                return False
            if watch.done():
                raise _Disconnected
        finally:
            watch.cancel()
        tail = frame(chunk({}, "stop"))
        options = request.body.get("stream_options") or {}
        if reply.usage and options.get("include_usage"):
            completion_tokens = reply.completion_tokens or request.chunks_sent
            usage = {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": reply.prompt_tokens + completion_tokens,
            }
            tail += frame({**chunk({}), "choices": [], "usage": usage})
        tail += frame("[DONE]")
        if chunked:
            tail += b"0\r\n\r\n"
        writer.write(tail)
        await writer.drain()
        return chunked
