"""The command line: ``skillrt chat`` (the default), ``run``, ``tasks``, ``resume``,
``abandon``, ``doctor`` and ``index``. ``main`` is the console script; ``app`` the Typer app,
loaded when first asked for (``skillrt tasks`` and ``skillrt doctor`` run without it:
cli/quick.py)."""

from typing import TYPE_CHECKING, Any

from skillrt.cli.quick import main

if TYPE_CHECKING:
    from skillrt.cli.commands import app

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name == "app":
        from skillrt.cli.commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
