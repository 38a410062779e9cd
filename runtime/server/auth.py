"""The server's guards: the bearer token, the Host allow-list and the body size limit.

The token lives in ``<state>/serve-token`` (mode 0600, created at first start) unless
``--token-file`` or ``SKILLRT_SERVE__TOKEN`` gives one; it is compared in constant time. The
Host check stops a web page from reaching the loopback server through DNS rebinding: its
requests carry the attacker's host name, which is not on the list.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from skillrt.exceptions import UserError

__all__ = [
    "BearerGuard",
    "BodyLimit",
    "HostGuard",
    "host_allowed",
    "is_loopback",
    "load_token",
    "token_matches",
]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
_MIN_TOKEN = 16


def load_token(path: Path, *, given: str | None = None) -> tuple[str, bool]:
    """The token and whether it was created now: ``given`` if set, else read from ``path``,
    else a new one written there with mode 0600 (never readable by other users)."""
    if given:
        if len(given) < _MIN_TOKEN:
            raise UserError(f"the serve token must have at least {_MIN_TOKEN} characters")
        return given, False
    if path.exists() and not path.is_file():
        raise UserError(f"{path} is not a file: give the file that holds the serve token")
    if path.is_file():
        if path.stat().st_mode & 0o077:
            raise UserError(f"{path} is readable by other users; run: chmod 600 {path}")
        token = path.read_text(encoding="utf-8").strip()
        if len(token) < _MIN_TOKEN:
            raise UserError(f"{path} holds no usable token (at least {_MIN_TOKEN} characters)")
        return token, False
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    return token, True


def token_matches(header: str | None, token: str) -> bool:
    """``Authorization: Bearer <token>``, compared in constant time."""
    if not header:
        return False
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode(), token.encode())


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_name(header: str) -> str | None:
    """The host of a Host header without its port; None if malformed."""
    header = header.strip().lower()
    if not header or any(c in header for c in "/@ \\"):
        return None
    if header.startswith("["):
        end = header.find("]")
        if end < 0:
            return None
        rest = header[end + 1 :]
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return None
        return header[1:end]
    name, sep, port = header.rpartition(":")
    if sep and port.isdigit():
        return name
    if sep:
        return None
    return header


def host_allowed(header: str | None, allowed: frozenset[str]) -> bool | None:
    """True if allowed, False if not on the list, None if missing or malformed."""
    if header is None:
        return None
    name = _host_name(header)
    if name is None:
        return None
    return name in allowed


Scope = dict[str, Any]


_PASSED_KEPT = 64  # allowed Host values remembered (an allowed name with any port is allowed)


class HostGuard:
    """ASGI middleware: 400 for a missing, repeated or malformed Host, 421 for one not on the
    list."""

    def __init__(self, app: Any, *, hosts: Iterable[str], problem: Any) -> None:
        self.app = app
        self.allowed = frozenset(h.lower().strip("[]") for h in hosts) | LOOPBACK_HOSTS
        self.problem = problem
        # Host values seen allowed (a few: the served names), parsed once, not at every request;
        # the fast routes, in front of this guard, look here first (``allows``).
        self.passed: set[bytes] = set()

    def allows(self, value: bytes) -> bool:
        """Whether a request whose only Host header is ``value`` passes."""
        if value in self.passed:
            return True
        if host_allowed(value.decode("latin-1"), self.allowed) is not True:
            return False
        if len(self.passed) < _PASSED_KEPT:
            self.passed.add(value)
        return True

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        found = [v for k, v in scope.get("headers", ()) if k == b"host"]
        if len(found) == 1 and self.allows(found[0]):
            await self.app(scope, receive, send)
            return
        header = found[0].decode("latin-1") if len(found) == 1 else None
        verdict = host_allowed(header, self.allowed)  # two Host headers: no valid one
        if verdict is None:
            response = self.problem(400, "bad-host", "the request has no valid Host header")
        else:
            response = self.problem(
                421,
                "bad-host",
                f"Host {header!r} is not served here; add it to serve.allowed_hosts",
            )
        await response(scope, receive, send)


class BearerGuard:
    """ASGI middleware: 401 unless ``Authorization: Bearer <token>`` (for an app mounted
    beside the routes, such as ``/mcp``, which the routes' token check does not reach)."""

    def __init__(self, app: Any, *, token: Any, problem: Any) -> None:
        self.app = app
        self.token = token  # a callable giving the token (the server's, read when asked)
        self.problem = problem

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        header = None
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                header = value.decode("latin-1")
                break
        if scope["type"] == "http" and not token_matches(header, self.token()):
            response = self.problem(
                401,
                "unauthorized",
                "send Authorization: Bearer <token>",
                {"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


class BodyLimit:
    """ASGI middleware: 413 for a body above ``limit`` bytes, declared or streamed. The body
    is read first (it is small), then replayed to the app; later ``receive`` calls (an SSE
    stream waiting for the client to go) pass through."""

    def __init__(self, app: Any, *, limit: int, problem: Any) -> None:
        self.app = app
        self.limit = limit
        self.problem = problem

    def _too_large(self) -> Any:
        return self.problem(413, "too-large", f"the request body is larger than {self.limit} bytes")

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", ()):
            if key == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = self.limit + 1
                if declared > self.limit:
                    await self._too_large()(scope, receive, send)
                    return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left before sending it all
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._too_large()(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
