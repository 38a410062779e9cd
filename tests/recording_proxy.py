"""A recording reverse proxy on 127.0.0.1, in a thread, for tests against a real model server.

Every request is passed on to the server as it came and its answer passed back as it arrives
(a stream stays a stream), and both are recorded: what a client really sent and received.

    with RecordingProxy(llama.base_url) as proxy:
        ... OpenAIProvider(base_url=proxy.base_url) ...
        assert "response_format" not in proxy.exchanges[0].request
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import httpx

__all__ = ["Exchange", "RecordingProxy", "streamed_text"]

_PASSED_ON = ("content-type", "authorization", "accept")
_NOT_COPIED = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive"})


@dataclass
class Exchange:
    """One request as the client sent it (its JSON body) and the server's answer (raw bytes)."""

    path: str
    request: dict[str, Any]
    status: int = 0
    response: bytes = b""


def streamed_text(response: bytes) -> str:
    """The text of the first choice in a chat completion: an SSE stream or one JSON body."""
    if not response.lstrip().startswith(b"data:"):
        body = json.loads(response)
        return str(body["choices"][0]["message"]["content"] or "")
    parts: list[str] = []
    for line in response.decode("utf-8").splitlines():
        data = line.removeprefix("data:").strip()
        if not line.startswith("data:") or data == "[DONE]":
            continue
        for choice in json.loads(data).get("choices") or ():
            if choice.get("index", 0) == 0:
                parts.append((choice.get("delta") or {}).get("content") or "")
    return "".join(parts)


class RecordingProxy:
    def __init__(self, upstream: str) -> None:
        split = urlsplit(upstream)
        self._origin = f"{split.scheme}://{split.netloc}"
        self._prefix = split.path.rstrip("/")
        self.exchanges: list[Exchange] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self._prefix}"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                exchange = Exchange(self.path, json.loads(body) if body else {})
                proxy.exchanges.append(exchange)
                headers = {k: v for k, v in self.headers.items() if k.lower() in _PASSED_ON}
                headers["accept-encoding"] = "identity"  # recorded as the client reads it
                with (
                    httpx.Client(timeout=120) as client,
                    client.stream(
                        "POST", proxy._origin + self.path, content=body, headers=headers
                    ) as answer,
                ):
                    exchange.status = answer.status_code
                    self.send_response(answer.status_code)
                    for name, value in answer.headers.items():
                        if name.lower() not in _NOT_COPIED:
                            self.send_header(name, value)
                    self.send_header("Connection", "close")  # the body ends when it closes
                    self.end_headers()
                    for chunk in answer.iter_raw():
                        exchange.response += chunk
                        self.wfile.write(chunk)
                        self.wfile.flush()
                self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the exchanges are the record

        return Handler
