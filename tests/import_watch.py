"""Which thread imports a module: for the tests that check an import is made off the event
loop, each in a process of its own (a module is imported once per process).

``watch(names)`` returns a dict that fills in as the modules are imported, module name to the
importing thread's name; ``already`` lists those imported before the watch began.
``in_fresh_process(case, *args)`` runs a test's script in a new interpreter and returns the
JSON its last line prints."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "in_fresh_process", "watch"]

ROOT = Path(__file__).resolve().parent.parent  # the repository: ``tests`` imports from it


class _Watch:
    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)
        self.importers: dict[str, str] = {}

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if name in self.names and name not in self.importers:
            self.importers[name] = threading.current_thread().name
        return None  # the usual finders import it


def watch(names: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Start watching ``names``: (module -> importing thread, the ones imported already)."""
    already = [name for name in names if name in sys.modules]
    found = _Watch(names)
    sys.meta_path.insert(0, found)
    return found.importers, already


def in_fresh_process(case: str, *args: str, timeout: float = 120) -> dict[str, Any]:
    """Run the script ``case`` (``python -c``, in the repository, with ``args``) and return
    the JSON object its last line prints; it must exit 0."""
    done = subprocess.run(
        [sys.executable, "-c", case, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
