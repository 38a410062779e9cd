"""Running the app with uvicorn: the bind checks, the token, the banner, a clean SIGTERM."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TextIO

import uvicorn

from skillrt.agent import AgentRuntime
from skillrt.exceptions import UserError
from skillrt.server.app import ServerState, create_app
from skillrt.server.auth import is_loopback, load_token
from skillrt.settings import RuntimeConfig, make_state_dir

__all__ = ["Server", "check_bind", "serve", "server_token"]


def check_bind(host: str, allow_remote: bool) -> None:
    """A non-loopback address serves the blog to the network: only when asked to."""
    if not is_loopback(host) and not allow_remote:
        raise UserError(
            f"refusing to listen on {host}: only loopback addresses by default;"
            " pass --allow-remote to serve other machines (keep the token secret)"
        )


def server_token(config: RuntimeConfig, token_file: Path | None) -> tuple[str, Path | None, bool]:
    """The token, the file it is in (None when from the environment), whether it is new."""
    given = config.serve.token.get_secret_value() if config.serve.token else None
    if given:
        return load_token(Path(), given=given)[0], None, False
    path = token_file or make_state_dir(config.state_path) / "serve-token"
    token, created = load_token(path.expanduser())
    return token, path, created


class Server(uvicorn.Server):
    """uvicorn's server, which tells the app first when asked to stop (SIGTERM, Ctrl-C): new
    calls get 503, running tasks stop resumable and their streams end with the reply."""

    def __init__(self, config: uvicorn.Config, state: ServerState) -> None:
        super().__init__(config)
        self.skillrt = state
        self.on_started: Callable[[int], None] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
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


def make_server(
    runtime: AgentRuntime,
    *,
    token: str,
    host: str,
    port: int,
    close_runtime: bool = True,
    log_level: str = "warning",
) -> Server:
    app = create_app(runtime, token=token, hosts=[host], close_runtime=close_runtime)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=10,
        server_header=False,
        access_log=False,
    )
    return Server(config, app.state.skillrt)


def serve(
    config: RuntimeConfig,
    *,
    host: str | None = None,
    port: int | None = None,
    token_file: Path | None = None,
    allow_remote: bool = False,
    runtime: AgentRuntime | None = None,
    out: TextIO = sys.stdout,
) -> None:
    """Serve until SIGTERM or Ctrl-C. Prints the URL (with the token for the page)."""
    host = host or config.serve.host
    port = config.serve.port if port is None else port
    check_bind(host, allow_remote)
    token, path, created = server_token(config, token_file)
    rt = runtime or AgentRuntime(config)
    server = make_server(rt, token=token, host=host, port=port)

    def started(port: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{port}/"
        where = "from $SKILLRT_SERVE__TOKEN" if path is None else f"in {path}"
        print(f"skillrt serve: {url}#token={token}", file=out)
        print(
            f"  token {'created ' if created else ''}{where}; API at {url}v1/"
            " (Authorization: Bearer <token>); Ctrl-C to stop",
            file=out,
            flush=True,
        )

    server.on_started = started
    asyncio.run(server.serve())
