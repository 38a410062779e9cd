"""Connections pinned to the addresses the firewall approved (no DNS rebinding).

``URLFirewall.approve(url)`` resolves the host once and returns the approved addresses;
``SafeFetcher`` (the HTTP backend) and ``RouteFetcher`` (Chromium's route, ``route_fetch.py``)
send each request (each redirect hop too) inside ``pinned(approval)``, and
``PinnedTransport`` connects only to those addresses: its network backend never resolves a
name. The URL, and so the ``Host`` header, the TLS SNI and the certificate check, keep the
original host name. A connection for a host and port nobody approved is refused (fail closed).

A keep-alive connection may be reused for a later request to the same scheme, host and port;
it leads to an address the firewall approved for that origin earlier, and every request is
checked again before it is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpcore
import httpx

from skillrt.skills.browsing.firewall import Approval, normalize_host

__all__ = ["PinnedTransport", "pinned"]

_CURRENT: ContextVar[Approval | None] = ContextVar("skillrt_pinned_approval", default=None)


@contextmanager
def pinned(approval: Approval) -> Iterator[None]:
    """Connections opened inside the block (in this task) go to ``approval``'s addresses."""
    token = _CURRENT.set(approval)
    try:
        yield
    finally:
        _CURRENT.reset(token)


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects to the approved addresses of the current request, never to a resolved name."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self._inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        approval = _CURRENT.get()
        if approval is None or (normalize_host(host), port) != (approval.host, approval.port):
            raise httpcore.ConnectError(f"no address was approved for {host}:{port}")
        error: Exception | None = None
        for address in approval.addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        raise error or httpcore.ConnectError(f"no address to connect to for {host}:{port}")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by the browsing skills")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport, whose connections go only where ``pinned()`` says (no proxy)."""

    def __init__(self) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=100,  # httpx's default limits
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=_PinnedBackend(httpcore.AnyIOBackend()),
        )
