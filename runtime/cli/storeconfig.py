"""The settings ``skillrt tasks`` reads, without pydantic-settings or ``RuntimeConfig``.

Listing tasks needs the state folder, the resume window and where logs go. Importing
pydantic-settings (asyncio, ssl, dotenv, email, its cloud sources) and building
``RuntimeConfig``'s schema was about a third of the command's own work, so these are read
here from the same sources in the same order (the shipped ``default.toml``, the user's
``config.toml``, ``./skillrt.toml`` or ``$SKILLRT_CONFIG``, ``SKILLRT_*`` variables, then the
command's keyword arguments) and validated with the same field types.

Only when every source other than the shipped defaults sets nothing but the keys in
``_READ`` (and nothing in the shape pydantic-settings would decode differently, such as
JSON in ``SKILLRT_LLM``): then ``RuntimeConfig`` would hold the same values, and no other
key can make it fail. Otherwise, or when a value does not validate, ``read_store_config``
returns ``None`` and the caller builds ``RuntimeConfig`` as every other command does (and
reports a bad value the same way). ``tests/test_cli_storeconfig.py`` compares both readings
source by source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from skillrt._io.config_files import (
    a_log_file,
    config_files,
    env_paths,
    read_toml,
    state_path_of,
)

__all__ = ["StoreConfig", "read_store_config"]

# The keys read here (as RuntimeConfig spells them); llm.provider and llm.script_path only
# so that a wrong value fails as it does for every command (cli_env sets both).
_READ = {
    ("content_root",),
    ("state_dir",),
    ("log_level",),
    ("log_file",),
    ("checkpoint_max_age_h",),
    ("llm", "provider"),
    ("llm", "script_path"),
}


class _LLMKeys(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # As in skillrt.settings.LLMConfig.
    provider: Literal["auto", "openai", "local", "scripted", "python"] = "auto"
    script_path: Path | None = None


class StoreConfig(BaseModel):
    """What ``skillrt tasks`` uses of ``RuntimeConfig``, with the same types and meaning."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_default=True)

    # As in skillrt.settings.RuntimeConfig.
    content_root: Path = Path()
    state_dir: Path | None = None
    log_level: Literal["debug", "info", "warning", "error"] = "warning"
    log_file: Path | None = None
    checkpoint_max_age_h: float = Field(default=24.0, gt=0)
    llm: _LLMKeys = Field(default_factory=_LLMKeys)

    # Read here only when no source sets them: no shared store, no secrets.
    state_url: None = None

    _log_file = field_validator("log_file")(a_log_file)  # as RuntimeConfig's

    @property
    def root(self) -> Path:
        """The content root, absolute."""
        return self.content_root.expanduser().resolve()

    @property
    def state_path(self) -> Path:
        """The state folder: ``state_dir`` or ``<content_root>/.skillrt``, absolute."""
        return state_path_of(self.content_root, self.state_dir)

    def secret_values(self) -> list[str]:
        """None: a source setting a secret sends ``skillrt tasks`` to ``RuntimeConfig``."""
        return []


def _leaves(table: dict[str, Any], above: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """A config table as key path -> value: a table's own entries, an empty table itself
    (``[bogus]`` alone is an unknown key to ``RuntimeConfig``)."""
    found: dict[tuple[str, ...], Any] = {}
    for key, value in table.items():
        if isinstance(value, dict) and value:
            found.update(_leaves(value, (*above, key)))
        else:
            found[(*above, key)] = value
    return found


def _env_leaves() -> dict[tuple[str, ...], Any] | None:
    """``SKILLRT_*`` variables as key paths (``env_paths``); ``None`` when one is not a plain
    value read here, or two spellings of one name are set (left to ``RuntimeConfig``)."""
    found = env_paths()
    if found is None or any(path not in _READ for path in found):
        return None
    return found


def read_store_config(**overrides: Any) -> StoreConfig | None:
    """The settings of ``skillrt tasks`` as ``RuntimeConfig(**overrides)`` would hold them,
    or ``None`` when a source sets more than these (then build ``RuntimeConfig``).

    Raises ``ConfigError`` as ``RuntimeConfig`` would for a missing ``$SKILLRT_CONFIG`` file
    or a config file that is not TOML."""
    shipped, *others = config_files()
    values = {k: v for k, v in _leaves(read_toml(shipped)).items() if k in _READ}
    layers = [_leaves(read_toml(path)) for path in others]
    env = _env_leaves()
    if env is None:
        return None
    layers += [env, _leaves(overrides)]
    for layer in layers:
        if any(path not in _READ for path in layer):
            return None
        values.update(layer)
    nested: dict[str, Any] = {}
    for path, value in values.items():
        node = nested
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    try:
        return StoreConfig.model_validate(nested)
    except ValidationError:  # RuntimeConfig reports it, naming the source
        return None
