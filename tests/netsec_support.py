"""Small loopback HTTP servers for the network-security tests.

``Server(routes, host=...)`` serves a dict of path -> (status, headers, body) on a loopback
address, in a thread, and records every request (method, path, Host header) in
``server.requests``, and the ``Cookie`` header each request carried in ``server.cookies``.
Headers may be a dict, or a list of pairs to send one name twice (two ``Set-Cookie``). A body
may be a ``Trickle`` (sent a byte at a time, slowly). With
``lax=True`` the server reads paths as lax real servers do: percent-decoded, backslashes as
slashes, ``;`` parameters dropped, then dot-segments removed (so ``/app/%2e%2e/secret`` serves
``/secret``); the path it served is recorded. POST bodies are recorded in ``server.posts``.
Nothing here listens beyond the loopback network.
"""

from __future__ import annotations

import posixpath
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

__all__ = ["ESCAPES", "Server", "Trickle"]

# Spellings of "/app/<dots>/secret" that a lax server serves as /secret.
ESCAPES = [
    "/app/%2e%2e/secret",
    "/app/%2E%2E/secret",
    "/app/.%2e/secret",
    "/app/%2e./secret",
    "/app/..%2fsecret",
    "/app/..%2Fsecret",
    "/app/%2e%2e%2fsecret",
    "/app/%2E%2E%2Fsecret",
    "/app%2f..%2fsecret",
    "/app/x/%2e%2e/%2e%2e/secret",
    "/app/..%5csecret",
    "/app/%2e%2e%5csecret",
    "/app/..\\secret",
    "/app\\..\\secret",
    "/app/..;/secret",
    "/app/%2e%2e;x/secret",
    "/app/%2e/%2e%2e/secret",
    "/app/./%2e%2e/secret",
    "/app/x/../../secret",
    "/app/%252e%252e/secret",
    "/app/%252e%252e%252fsecret",
    "/app/..%252fsecret",
]


@dataclass(frozen=True)
class Trickle:
    """A body sent one byte every ``every_s`` seconds (a slow-loris response)."""

    body: bytes
    every_s: float = 0.2


Route = tuple[int, dict[str, str] | list[tuple[str, str]], bytes | Trickle]


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(size) if size else b""
        with self.server.owner.lock:
            self.server.owner.posts.append((self.path, data))
        self.do_GET("POST")

    def do_GET(self, method: str = "GET") -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0]
        if owner.lax:
            path = lax_path(path)
        with owner.lock:
            seen = path if owner.lax else self.path
            owner.requests.append((method, seen, self.headers.get("Host", "")))
            owner.cookies.append((seen, self.headers.get("Cookie", "")))
        status, headers, body = owner.routes.get(path, (404, {}, b"not found"))
        self.send_response(status)
        size = len(body.body) if isinstance(body, Trickle) else len(body)
        self.send_header("Content-Length", str(size))
        pairs = list(headers.items()) if isinstance(headers, dict) else headers
        if not any(key.lower() == "content-type" for key, _ in pairs):
            pairs = [("Content-Type", "text/html; charset=utf-8"), *pairs]
        for key, value in pairs:
            self.send_header(key, value)
        self.end_headers()
        try:
            if isinstance(body, Trickle):
                for i in range(len(body.body)):
                    if owner.stopping.is_set():
                        return
                    self.wfile.write(body.body[i : i + 1])
                    self.wfile.flush()
                    time.sleep(body.every_s)
            else:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def lax_path(raw: str) -> str:
    """The path as a lax server reads it: decoded, ``\\`` as ``/``, no ``;`` parameters,
    no dot-segments."""
    path = unquote(raw).replace("\\", "/")
    path = "/".join(segment.split(";", 1)[0] for segment in path.split("/"))
    normal = posixpath.normpath(path)
    return "/" + normal.lstrip("/") if normal != "." else "/"


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: Server


class Server:
    """A loopback HTTP server for one test; a context manager."""

    __test__ = False

    def __init__(
        self,
        routes: dict[str, Route],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        lax: bool = False,
    ):
        self.routes = routes
        self.lax = lax
        self.requests: list[tuple[str, str, str]] = []
        self.cookies: list[tuple[str, str]] = []  # (path, Cookie header) of each request
        self.posts: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self._server = _HTTPServer((host, port), _Handler)
        self._server.owner = self
        self.host = host
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str = "/") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def __enter__(self) -> Server:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
