"""A cap on a request's head (request line and headers), before any parsing work.

uvicorn's httptools protocol has no limit on the head: a client with no token could send one
128 MB header and the server spent 25 s (quadratic time) and 250 MB of memory on it before
answering 401. The protocol classes here count the head's bytes as they arrive, before they
reach the parser, and answer ``431 Request Header Fields Too Large`` (problem JSON) and close
the connection as soon as the count passes ``limit``. A chunk is scanned once for the blank
line that ends the head; the count starts again after each message, so keep-alive and
pipelined requests are each held to the cap.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from skillrt.server.coalesce import Coalescing
from skillrt.server.problems import problem_body

__all__ = ["MAX_HEADER_BYTES", "head_limited_protocol"]

MAX_HEADER_BYTES = 64 * 1024
_END = b"\r\n\r\n"


class _HeadLimit(asyncio.Protocol):
    """Counts the bytes of the head being read; 431 and close beyond ``head_limit``."""

    head_limit = MAX_HEADER_BYTES
    transport: Any
    _in_head = True
    _head_bytes = 0
    _tail = b""

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        # Every write of the connection (its responses', uvicorn's own) through one
        # ``Coalescing``: a response's head and body leave in one write, in order.
        self.transport = Coalescing(transport, asyncio.get_running_loop())

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            window = self._tail + data
            end = window.find(_END)
            used = self._head_bytes + (len(data) if end < 0 else end + len(_END) - len(self._tail))
            if used > self.head_limit:
                self._refuse()
                return
            if end < 0:
                self._head_bytes = used
                self._tail = window[-(len(_END) - 1) :]
            else:
                self._in_head = False  # the body, if any, until the message ends
        super().data_received(data)

    def _head_done(self) -> None:
        """The message ended: the next bytes are the next request's head."""
        self._in_head = True
        self._head_bytes = 0
        self._tail = b""

    def _refuse(self) -> None:
        self._in_head = False
        body = json.dumps(
            problem_body(
                431,
                "headers-too-large",
                f"the request line and headers are larger than {self.head_limit} bytes",
            )
        ).encode()
        head = (
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: application/problem+json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n"
            b"connection: close\r\n\r\n"
        )
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(head + body)
            self.transport.close()


def head_limited_protocol(
    limit: int = MAX_HEADER_BYTES, parser: Literal["auto", "httptools", "h11"] = "auto"
) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class (``auto``: httptools if installed, else h11) with the
    head capped at ``limit`` bytes; pass it as ``uvicorn.Config(http=...)``."""
    try:
        if parser == "h11":
            raise ImportError("h11 asked for")
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools is not installed: h11, uvicorn's pure-Python parser
        if parser == "httptools":
            raise
        from uvicorn.protocols.http.h11_impl import H11Protocol

        class H11HeadLimit(_HeadLimit, H11Protocol):
            head_limit = limit

            def on_response_complete(self) -> None:
                super().on_response_complete()
                self._head_done()

        return H11HeadLimit

    class HttpToolsHeadLimit(_HeadLimit, HttpToolsProtocol):
        head_limit = limit

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._head_done()

    return HttpToolsHeadLimit
