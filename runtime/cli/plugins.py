"""pydantic's plug-in lookup, skipped in ``skillrt tasks`` and ``skillrt doctor`` when no
installed distribution can declare a plug-in.

pydantic makes each model's validator through ``pydantic.plugin._schema_validator``, which at
the first model imports ``pydantic.plugin._loader`` (and with it ``importlib.metadata``, which
loads ``email``, ``csv`` and ``socket``) and reads the entry points of every installed
distribution for the group ``pydantic``: ~70 M of the ~910 M instructions of ``skillrt tasks``
(callgrind; ``doctor`` reads versions with ``importlib.metadata`` anyway: there the lookup
itself, ~20 M).

``skip_pydantic_plugin_lookup`` first reads the same files the lookup would read: the
``entry_points.txt`` of every ``*.dist-info`` and ``*.egg-info`` folder of each ``sys.path``
folder, as ``importlib.metadata``'s path finder lists them (``skillrt._io.distributions``,
which keeps them for doctor's ``skillrt.settings`` entry points). Only when none of them holds the
bytes ``pydantic`` (so none declares the group ``pydantic``, whatever else it declares) and
all of them are UTF-8 (as the lookup reads them), the lookup could find no plug-in: then
``pydantic.plugin._loader`` is a module whose ``get_plugins`` returns no plug-in, as
pydantic's own returns for none, and whose other names (``_plugins``...) load pydantic's
module and give its own. When the files cannot be read that way (a zip file or an egg on
``sys.path``, another finder on ``sys.meta_path`` that lists distributions, pydantic's module
already loaded), nothing is changed. So a user with a pydantic plug-in installed has it
loaded by pydantic, exactly as before; ``tests/test_cli_plugins.py`` installs one.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from skillrt._io import distributions

__all__ = ["plugins_possible", "skip_pydantic_plugin_lookup"]

_LOADER = "pydantic.plugin._loader"
_GROUP = b"pydantic"


def plugins_possible() -> bool:
    """Whether an installed distribution may declare an entry point in the group
    ``pydantic`` (True also whenever that cannot be told from the folders alone)."""
    try:
        texts = distributions.entry_point_texts()
    except distributions.Undecided:
        return True
    return any(_GROUP in text for text in texts)


class _NoPlugins(types.ModuleType):
    """``pydantic.plugin._loader`` when no distribution declares a plug-in: ``get_plugins``
    returns none, as pydantic's would; any other public or private name loads pydantic's
    module (replacing this one) and gives its value."""

    @staticmethod
    def get_plugins() -> tuple[()]:
        return ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # the import system's probes (__path__...): not found
            raise AttributeError(name)
        if sys.modules.get(_LOADER) is self:
            del sys.modules[_LOADER]
        return getattr(importlib.import_module(_LOADER), name)


def skip_pydantic_plugin_lookup() -> bool:
    """Stand in for pydantic's plug-in loader when it could find no plug-in (see the module's
    text); whether it did. Call it before the first pydantic model is made."""
    if _LOADER in sys.modules or plugins_possible():
        return False
    sys.modules[_LOADER] = _NoPlugins(_LOADER)
    return True
