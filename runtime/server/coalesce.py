"""One write for a response's head and body: the connection's transport as uvicorn sees it.

uvicorn writes a response's status line and headers when the app sends
``http.response.start``, and its body at ``http.response.body``: two socket writes, two TCP
segments, and two wake-ups of the client, for a reply that is ready all at once (a call
answered with JSON: the app sends both in one go). ``Coalescing`` holds a head back until the
next write, which it joins, or until the event loop's next turn, whichever comes first: a
JSON reply leaves in one write; a head whose body comes later (an SSE stream waiting for its
first event) still leaves at once, a loop turn later. Every other write goes straight through,
in order (anything held goes first); closing sends what is held, then closes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

__all__ = ["Coalescing"]

_HEAD = b"HTTP/1."  # how a response's head starts (uvicorn writes it in one piece)


class Coalescing(asyncio.Transport):
    """``transport`` with a response's head held until its body (see above)."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if held is not None:  # the body (or whatever comes next) joins its head
            self._held = None
            self._transport.write(held + bytes(data))
        elif data[:7] == _HEAD:
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
        else:
            self._transport.write(data)

    def flush(self) -> None:
        """Send what is held (the loop's next turn came before the body)."""
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._transport.write(held)

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        self.write(b"".join(list_of_data))

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + len(self._held or b"")

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()
