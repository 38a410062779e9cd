"""Running the app with uvicorn: the bind checks, the token, the banner, a clean SIGTERM."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import uvicorn

from skillrt.agent import AgentRuntime
from skillrt.exceptions import UserError
from skillrt.server.app import ServerState, create_app
from skillrt.server.auth import is_loopback, load_token
from skillrt.server.fastroutes import FastRoutes
from skillrt.server.headlimit import head_limited_protocol
from skillrt.settings import RuntimeConfig, make_state_dir

__all__ = ["Server", "check_bind", "new_event_loop", "serve", "server_token", "tls_files"]


def new_event_loop(choice: str = "auto") -> asyncio.AbstractEventLoop:
    """The event loop ``skillrt serve`` runs on (``serve.loop``): uvloop's when installed and
    ``choice`` is ``auto`` or ``uvloop``, else asyncio's. uvloop does the loop's own work in C
    (scheduling a callback, starting a task, polling): for a skill with no steps that was a
    seventh of the server's instructions per request, and uvicorn's transports are faster on
    it too. Everything the server does runs the same on both (the server tests run on the
    one this picks)."""
    if choice != "asyncio":
        try:
            import uvloop
        except ImportError:
            if choice == "uvloop":
                raise UserError(
                    "serve.loop = 'uvloop' but uvloop is not installed: pip install uvloop"
                ) from None
        else:
            loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
            return loop
    return asyncio.new_event_loop()


def check_bind(
    host: str, allow_remote: bool, *, tls: tuple[Path, Path] | None = None, insecure: bool = False
) -> None:
    """A non-loopback address serves the blog to the network: only when asked to, and over
    TLS (``tls``: the certificate and key files) unless plain HTTP is asked for by name."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise UserError(
            f"refusing to listen on {host}: only loopback addresses by default;"
            " pass --allow-remote to serve other machines (keep the token secret)"
        )
    if tls is None and not insecure:
        raise UserError(
            f"refusing to serve {host} over plain HTTP: the token would cross the network in"
            " clear; give --tls-cert and --tls-key (serve.tls_cert, serve.tls_key), or pass"
            " --insecure if a proxy in front adds TLS"
        )


def tls_files(
    config: RuntimeConfig, cert: Path | None = None, key: Path | None = None
) -> tuple[Path, Path] | None:
    """The certificate and key files (options first, then settings); both or neither, and
    both readable files."""
    cert = cert or config.serve.tls_cert
    key = key or config.serve.tls_key
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise UserError("give both --tls-cert and --tls-key (serve.tls_cert, serve.tls_key)")
    for path in (cert, key):
        if not path.expanduser().is_file():
            raise UserError(f"TLS file {path} does not exist or is not a file")
    return cert.expanduser(), key.expanduser()


def server_token(config: RuntimeConfig, token_file: Path | None) -> tuple[str, Path | None, bool]:
    """The token, the file it is in (None when from the environment), whether it is new."""
    given = config.serve.token.get_secret_value() if config.serve.token else None
    if given:
        return load_token(Path(), given=given)[0], None, False
    path = (token_file or make_state_dir(config.state_path) / "serve-token").expanduser()
    token, created = load_token(path)
    return token, path.absolute(), created  # (named whole: a relative one is under --root)


class Server(uvicorn.Server):
    """uvicorn's server, which tells the app first when asked to stop (SIGTERM, Ctrl-C): new
    calls get 503, running tasks stop resumable and their streams end with the reply."""

    def __init__(self, config: uvicorn.Config, state: ServerState) -> None:
        super().__init__(config)
        self.skillrt = state
        self.on_started: Callable[[int], None] | None = None

    tune_gc = False
    """``skillrt serve``'s own process: once started, the garbage collector is tuned for a
    server (see ``_tune_gc``). Off for a server inside another program (a test, an app)."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.tune_gc and not self.should_exit:
            _tune_gc()
        if not self.should_exit and self.on_started is not None:
            self.on_started(self.port)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            loop.call_soon(self.skillrt.begin_shutdown)
        super().handle_exit(sig, frame)

    @property
    def port(self) -> int:
        """The port it listens on (the real one when started with port 0)."""
        for server in self.servers:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        raise RuntimeError("the server is not listening")


GC_GEN0 = 20_000
"""The young generation's threshold in ``skillrt serve`` (CPython's default is 700)."""


def _tune_gc() -> None:
    """What is alive once the server has started (modules, the runtime, the app) is frozen out
    of the collector's scans, and the young generation collected every ``GC_GEN0`` new
    objects instead of every 700. A request allocates a few hundred objects that live until its
    reply, nearly none in a cycle: the default collected at every few requests and, every so
    often, walked the whole heap (a sixth of the server's CPU in the serve benchmark)."""
    import gc

    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0, gen1, gen2)


def make_server(
    runtime: AgentRuntime,
    *,
    token: str,
    host: str,
    port: int,
    close_runtime: bool = True,
    log_level: str = "warning",
    tls: tuple[Path, Path] | None = None,
) -> Server:
    app = create_app(runtime, token=token, hosts=[host], close_runtime=close_runtime)
    head_limit = runtime.config.serve.max_header_bytes
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=head_limited_protocol(head_limit),
        h11_max_incomplete_event_size=head_limit,
        ssl_certfile=None if tls is None else str(tls[0]),
        ssl_keyfile=None if tls is None else str(tls[1]),
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=10,
        server_header=False,
        access_log=False,
        proxy_headers=False,  # put in below, behind the fast routes
    )
    state = app.state.skillrt
    config.app = _proxied(app, config.forwarded_allow_ips)
    return Server(config, state)


def _proxied(app: Any, trusted: list[str] | str) -> Any:
    """uvicorn's proxy headers middleware (``X-Forwarded-For`` and ``-Proto`` from the trusted
    addresses: ``--forwarded-allow-ips``, ``$FORWARDED_ALLOW_IPS``), which uvicorn puts in front
    of the app, put behind the fast routes instead: they read neither the client's address
    nor the scheme, and it cost 7,000 instructions a call. Everything they hand to the app
    passes through it as before."""
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    if isinstance(app, FastRoutes):
        app.app = ProxyHeadersMiddleware(app.app, trusted_hosts=trusted)
        return app
    return ProxyHeadersMiddleware(app, trusted_hosts=trusted)


def serve(
    config: RuntimeConfig,
    *,
    host: str | None = None,
    port: int | None = None,
    token_file: Path | None = None,
    allow_remote: bool = False,
    runtime: AgentRuntime | None = None,
    out: TextIO = sys.stdout,
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
    insecure: bool = False,
) -> None:
    """Serve until SIGTERM or Ctrl-C. Prints the URL (with the token for the page when the
    address is a loopback one: a remote one's URL may end up in shared logs)."""
    host = host or config.serve.host
    port = config.serve.port if port is None else port
    tls = tls_files(config, tls_cert, tls_key)
    check_bind(host, allow_remote, tls=tls, insecure=insecure)
    token, path, created = server_token(config, token_file)
    rt = runtime or AgentRuntime(config)
    server = make_server(rt, token=token, host=host, port=port, tls=tls)

    def started(port: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        url = f"{'http' if tls is None else 'https'}://{shown}:{port}/"
        where = "from $SKILLRT_SERVE__TOKEN" if path is None else f"in {path}"
        tail = f"#token={token}" if is_loopback(host) else " (open it with #token=<token>)"
        print(f"skillrt serve: {url}{tail}", file=out)
        print(
            f"  token {'created ' if created else ''}{where}; API at {url}v1/"
            " (Authorization: Bearer <token>); Ctrl-C to stop",
            file=out,
            flush=True,
        )

    server.on_started = started
    server.tune_gc = True
    with asyncio.Runner(loop_factory=lambda: new_event_loop(config.serve.loop)) as runner:
        runner.run(server.serve())
