"""``RuntimeConfig``'s values for ``skillrt doctor``, read without pydantic-settings.

doctor reports on the whole config, so it needs every field; importing pydantic-settings (with
asyncio, argparse, dotenv and its cloud sources) to read them was ~150 M of its ~1,100 M
instructions. ``read_runtime_fields`` merges the same sources as ``RuntimeConfig`` in the same
order, as pydantic-settings 2 merges them (``RuntimeConfig.settings_customise_sources``: the
keyword arguments, then ``SKILLRT_*``, then the config files from the highest to the shipped
``default.toml``; each merged under the ones above it, ``state = deep_update(source, state)``)
and validates the result with ``RuntimeFields``, ``RuntimeConfig``'s own fields and validators.

Only where that merge is plainly the same: every key at the top of a file or of the keyword
arguments is a field's own name (pydantic-settings would match another case of it, or keep an
unknown one to fail), and every ``SKILLRT_*`` variable but ``SKILLRT_CONFIG`` names one plain
value (a field, or a field of a section: ``SKILLRT_LLM__MODEL``) that is not a list, a table or
a model (those it decodes from JSON), each spelt once. Anything else, a file that does not
read, or values that do not validate, gives ``None``: the caller builds ``RuntimeConfig`` as
before, so the values, the errors and their wording are pydantic-settings' own.
``tests/test_cli_doctorconfig.py`` compares both readings on many sources.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr, ValidationError

from skillrt._io.config_files import config_files, env_paths, read_toml
from skillrt._io.settings_fields import RuntimeFields
from skillrt.exceptions import ConfigError

__all__ = ["read_runtime_fields"]

_PLAIN = (str, int, float, bool, Path, SecretStr, type(None))


def _plain(annotation: Any) -> bool:
    """Whether an environment variable gives this field its text as is: no list, table or
    model (which pydantic-settings decodes from JSON), no numeric ``Literal``."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return all(_plain(arg) for arg in get_args(annotation))
    if origin is Literal:
        return all(isinstance(arg, str) for arg in get_args(annotation))
    return annotation in _PLAIN


def _plain_paths() -> set[tuple[str, ...]]:
    """The key paths a ``SKILLRT_*`` variable may set here: plain fields, and the plain fields
    of the sections that are models (``[browser]`` is a table: not here)."""
    paths: set[tuple[str, ...]] = set()
    for name, field in RuntimeFields.model_fields.items():
        annotation = field.annotation
        if _plain(annotation):
            paths.add((name,))
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            paths.update(
                (name, sub) for sub, f in annotation.model_fields.items() if _plain(f.annotation)
            )
    return paths


def _env_values() -> dict[str, Any] | None:
    """``SKILLRT_*`` as pydantic-settings' environment source gives them (``env_paths``, as
    nested tables), or ``None`` when one is not a plain value named once."""
    paths = env_paths()
    if paths is None:
        return None
    found: dict[str, Any] = {}
    plain = _plain_paths() if paths else set()
    for path, value in paths.items():
        if path not in plain:
            return None
        if len(path) == 1:
            found[path[0]] = value
        else:
            found.setdefault(path[0], {})[path[1]] = value
    return found


def _deep_update(lower: dict[str, Any], higher: dict[str, Any]) -> dict[str, Any]:
    """``lower`` with ``higher``'s keys over it, tables merged key by key (pydantic's own
    ``deep_update``, which pydantic-settings merges its sources with)."""
    merged = lower.copy()
    for key, value in higher.items():
        below = merged.get(key)
        if key in merged and isinstance(below, dict) and isinstance(value, dict):
            merged[key] = _deep_update(below, value)
        else:
            merged[key] = value
    return merged


def read_runtime_fields(**overrides: Any) -> RuntimeFields | None:
    """What ``RuntimeConfig(**overrides)`` would hold, or ``None`` when the sources are not
    plainly merged the same way or do not validate (then build ``RuntimeConfig``)."""
    try:
        files = [read_toml(path) for path in reversed(config_files())]  # highest first
    except ConfigError:  # RuntimeConfig raises it, as it reads them
        return None
    env = _env_values()
    if env is None:
        return None
    fields = RuntimeFields.model_fields
    sources = [overrides, env, *files]
    if any(key not in fields for source in sources for key in source):
        return None
    state: dict[str, Any] = {}
    for source in sources:
        state = _deep_update(source, state)
    try:
        config = RuntimeFields.model_validate(state)
    except ValidationError:  # RuntimeConfig reports it, naming the source
        return None
    config._keywords = overrides
    return config
