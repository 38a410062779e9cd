"""The command line: ``skillrt chat`` (the default), ``run``, ``tasks``, ``resume``,
``abandon``, ``doctor`` and ``index``. ``main`` is the console script."""

from skillrt.cli.app import app, main

__all__ = ["app", "main"]
