"""Local OpenAI-compatible model servers on their usual ports, on 127.0.0.1 only.

``skillrt chat`` and ``skillrt doctor`` look for them when the embedded model is in use, so
a newcomer who already runs Ollama, LM Studio or a llama.cpp server is offered it: each found
server is shown with its models and the settings that select it. Only ``GET /v1/models`` is
sent, to the loopback address, with a short timeout; nothing leaves the machine.

The request goes through the standard library's ``http.client``: plain HTTP to 127.0.0.1
needs no TLS context and no proxy, and ``httpx`` took longer to import and to set up (a
client builds an SSL context even for ``http://``) than the three requests take;
``skillrt doctor`` paid for it on every run. The connection is made first, as ``http.client``
makes it (a TCP socket with the timeout, no delay), with the address as bytes: a ``str`` host
is encoded with the IDNA codec, whose import (``stringprep``, ``unicodedata``) cost more than
the connection. The ports are connected to all at once without threads (non-blocking, then
waited for together); ``http.client`` is imported, and a thread started per server, only once
a port accepts: where nothing listens (most machines) neither is.
"""

from __future__ import annotations

import errno
import json
import selectors
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import http.client

__all__ = ["KNOWN_SERVERS", "LocalServer", "find_local_servers"]

KNOWN_SERVERS: tuple[tuple[str, int], ...] = (
    ("Ollama", 11434),
    ("LM Studio", 1234),
    ("llama.cpp server", 8080),
)
_HOST = "127.0.0.1"
_HOST_BYTES = b"127.0.0.1"  # connected as bytes: no IDNA codec (see above)
_TIMEOUT_S = 0.5
_MAX_MODELS = 20
# A model list is a few KB. Whatever listens on these ports is read no further than this, and
# for no longer than the timeout in all (a server dripping a byte at a time is not waited on).
_MAX_BODY = 1 << 20
# What a non-blocking connect answers while the connection is being made (Windows: WSA's).
_IN_PROGRESS = frozenset(
    {errno.EINPROGRESS, errno.EAGAIN, errno.EWOULDBLOCK, getattr(errno, "WSAEWOULDBLOCK", 0)}
) - {0}


@dataclass(frozen=True, slots=True)
class LocalServer:
    name: str
    base_url: str
    models: tuple[str, ...]

    @property
    def settings(self) -> str:
        """The variables that point skillrt at this server (its first model)."""
        model = f" SKILLRT_LLM__MODEL={self.models[0]}" if self.models else ""
        return f"SKILLRT_LLM__BASE_URL={self.base_url}{model}"

    def describe(self) -> str:
        models = ", ".join(self.models[:3]) + (" …" if len(self.models) > 3 else "")
        return f"{self.name} at {self.base_url}" + (f" ({models})" if models else "")


def _probe(name: str, port: int, sock: socket.socket, timeout_s: float) -> LocalServer | None:
    """``GET /v1/models`` on a connection made by ``_connect_all``: the server it found."""
    base_url = f"http://{_HOST}:{port}/v1"
    import http.client

    connection = http.client.HTTPConnection(_HOST, port, timeout=timeout_s)
    connection.sock = sock  # the request goes on this connection (no second one)
    try:
        connection.request("GET", "/v1/models")
        answer = connection.getresponse()
        body = _read_capped(answer, time.monotonic() + timeout_s) if answer.status == 200 else None
    except (OSError, http.client.HTTPException):  # refused, timed out, not HTTP
        return None
    finally:
        connection.close()
    if body is None:  # not 200, too long, or too slow
        return None
    try:
        data = json.loads(body)
    except ValueError:  # not JSON (UnicodeDecodeError is a ValueError too)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None  # something else listens there
    models = tuple(
        str(item["id"])[:100]
        for item in data["data"][:_MAX_MODELS]
        if isinstance(item, dict) and item.get("id")
    )
    return LocalServer(name, base_url, models)


def _connect_all(ports: list[int], timeout_s: float) -> list[socket.socket | None]:
    """A TCP connection to each port on 127.0.0.1, all attempted at once, each made as
    ``http.client`` makes it (within the timeout, then no delay), or None where refused or
    timed out. Connected here without a thread each: where nothing listens (most machines),
    loopback refuses at once and no thread is started."""
    socks: list[socket.socket | None] = []
    pending: dict[socket.socket, int] = {}  # connecting: socket -> index
    for index, port in enumerate(ports):
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        except OSError:  # no descriptor left...
            socks.append(None)
            continue
        sock.setblocking(False)
        code = sock.connect_ex((_HOST_BYTES, port))
        if code in _IN_PROGRESS:
            pending[sock] = index
        elif code != 0:  # refused
            sock.close()
            socks.append(None)
            continue
        socks.append(sock)
    if pending:
        _wait_connected(pending, socks, time.monotonic() + timeout_s)
    return [sock if sock is None else _ready(sock, timeout_s) for sock in socks]


def _wait_connected(
    pending: dict[socket.socket, int], socks: list[socket.socket | None], deadline: float
) -> None:
    """Each pending connection's outcome, until ``deadline``: a refused or timed-out one is
    closed and its entry of ``socks`` set to None."""
    with selectors.DefaultSelector() as selector:
        for sock in pending:
            selector.register(sock, selectors.EVENT_WRITE)
        while pending and (left := deadline - time.monotonic()) > 0:
            for key, _events in selector.select(left):
                sock = cast("socket.socket", key.fileobj)
                selector.unregister(sock)
                index = pending.pop(sock)
                if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                    sock.close()
                    socks[index] = None
    for sock, index in pending.items():  # timed out
        sock.close()
        socks[index] = None


def _ready(sock: socket.socket, timeout_s: float) -> socket.socket | None:
    """A connected socket set as ``http.client`` sets its own: the timeout, no delay."""
    sock.settimeout(timeout_s)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError as exc:
        if exc.errno != errno.ENOPROTOOPT:  # as http.client: no such option is no error
            sock.close()
            return None
    return sock


def _read_capped(answer: http.client.HTTPResponse, deadline: float) -> bytes | None:
    """The body, or None once it passes ``_MAX_BODY`` or ``deadline``."""
    chunks: list[bytes] = []
    size = 0
    while chunk := answer.read1(65536):
        size += len(chunk)
        if size > _MAX_BODY or time.monotonic() > deadline:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def find_local_servers(
    known: tuple[tuple[str, int], ...] = KNOWN_SERVERS, *, timeout_s: float = _TIMEOUT_S
) -> list[LocalServer]:
    """The servers in ``known`` (name, port) that answer ``GET /v1/models`` on 127.0.0.1 with
    a model list, in that order; all are asked at once."""
    socks = _connect_all([port for _name, port in known], timeout_s)
    accepted = [(name, port, sock) for (name, port), sock in zip(known, socks, strict=True) if sock]
    if not accepted:
        return []
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(accepted)) as pool:
        found = list(pool.map(lambda a: _probe(a[0], a[1], a[2], timeout_s), accepted))
    return [server for server in found if server is not None]
