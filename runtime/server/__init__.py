"""``skillrt serve``: the HTTP API and web chat page over one ``AgentRuntime`` (extra ``server``).

``create_app(runtime, token=...)`` gives the ASGI app; ``serve(config, ...)`` runs it with
uvicorn, as the ``skillrt serve`` command does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillrt.exceptions import MissingDependency

if TYPE_CHECKING:
    from skillrt.server.app import ServerState, create_app
    from skillrt.server.run import serve

__all__ = ["ServerState", "create_app", "require_server", "serve"]


def require_server() -> None:
    """Fail with the install command when the server stack is missing."""
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingDependency("skillrt serve", "server") from exc


def __getattr__(name: str) -> Any:
    if name in ("create_app", "ServerState"):
        require_server()
        from skillrt.server import app

        return getattr(app, name)
    if name == "serve":
        require_server()
        from skillrt.server.run import serve

        return serve
    raise AttributeError(name)
