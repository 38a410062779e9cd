"""``RuntimeConfig``: every setting, from four layers.

Lowest to highest: ``config/default.toml`` shipped in the package, then
``~/.config/skillrt/config.toml`` (``$XDG_CONFIG_HOME`` honoured), then ``./skillrt.toml``
(or the file named by ``SKILLRT_CONFIG``), then ``SKILLRT_*`` environment variables
(``SKILLRT_LLM__MODEL`` for nested keys), then keyword arguments.

A malformed file fails at start-up with ``ConfigError`` naming the file, the key and what
was expected.

A section a skill package owns (``[browser]``, with ``[browser.search]``, belongs to the
browsing skills) is kept here as written, merged key by key across the layers like the others;
the package validates it into its own model with ``validate_section``, and errors name their
source the same way. Values under secret-named keys (``api_key``, ``token``, ``password``,
``secret``) are held as ``SecretStr`` and redacted from logs. Packages list their sections
under the ``skillrt.settings`` entry point group (name -> model), so ``skillrt doctor`` can
check them without the runtime importing any skill.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from skillrt._io.config_files import (
    ENV_PREFIX,
    STATE_GITIGNORE,
    config_files,
    ensure_state,
    make_state_dir,
    read_toml,
)

# Every name this module held when it defined them (SECTIONS_GROUP, DraftsConfig and
# NewPostConfig outside __all__, as then).
from skillrt._io.settings_fields import (  # noqa: F401
    SECTIONS_GROUP,
    AnswerConfig,
    BudgetConfig,
    ConversationConfig,
    DraftsConfig,
    EditConfig,
    LLMConfig,
    McpConfig,
    McpServerConfig,
    NewPostConfig,
    QueueConfig,
    RuntimeFields,
    SecretEntry,
    ServeConfig,
    UndoConfig,
    config_error,
    section_models,
    validate_section,
)
from skillrt.exceptions import ConfigError

__all__ = [
    "STATE_GITIGNORE",
    "AnswerConfig",
    "BudgetConfig",
    "ConversationConfig",
    "EditConfig",
    "LLMConfig",
    "McpConfig",
    "McpServerConfig",
    "QueueConfig",
    "RuntimeConfig",
    "SecretEntry",
    "ServeConfig",
    "UndoConfig",
    "config_files",
    "ensure_state",
    "load_config",
    "make_state_dir",
    "section_models",
    "validate_section",
]


class RuntimeConfig(BaseSettings, RuntimeFields):
    """All settings of a runtime. ``RuntimeConfig()`` reads the files and the environment."""

    # Its fields, validators and helpers are RuntimeFields' (_io/settings_fields.py); this
    # class adds where the values come from.

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        allow_inf_nan=False,  # as RuntimeFields' (settings_fields.py)
        validate_default=True,
        defer_build=False,  # built at import, as before (RuntimeFields' is deferred)
    )

    def __init__(self, **values: Any) -> None:
        super().__init__(**values)
        self._keywords = values  # so an error found later in a section can name its source

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        files = [_TomlSource(settings_cls, path) for path in reversed(config_files())]
        return (init_settings, env_settings, *files)


class _TomlSource(InitSettingsSource):
    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        self.path = path
        self.data = read_toml(path)
        super().__init__(settings_cls, self.data)


def load_config(**overrides: Any) -> RuntimeConfig:
    """Build a ``RuntimeConfig``, turning validation errors into a ``ConfigError`` with a source."""
    _check_variable_names()
    try:
        return RuntimeConfig(**overrides)
    except ValidationError as exc:
        raise config_error(exc, (), overrides) from exc
    except SettingsError as exc:  # a variable that is no JSON where a list or a table is due
        raise _unparsed(exc) from exc


_FIELD = re.compile(r'field "([^"]+)"')
_NOT_SETTINGS = frozenset({"CONFIG"})  # $SKILLRT_CONFIG names the config file


def _check_variable_names() -> None:
    """A ``SKILLRT_*`` variable that names no setting but is spelt like one is a
    ``ConfigError``: ``SKILLRT_WATCHDOG_TIMEOUT=5`` (the ``_S`` left off) or
    ``SKILLRT_LMM__MODEL`` (a section misspelt) were ignored without a word, while
    ``SKILLRT_LLM__MODLE`` was refused. Other names are left alone: tools and scripts use the
    prefix for their own variables (``SKILLRT_URL``, ``SKILLRT_REQUIRE_CHROMIUM``)."""
    fields = sorted(RuntimeConfig.model_fields)
    for name in sorted(os.environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper[len(ENV_PREFIX) :] in _NOT_SETTINGS:
            continue
        key = upper[len(ENV_PREFIX) :].lower()
        head, nested, _ = key.partition("__")
        if head in fields:
            continue
        if nested:
            sections = [f for f in fields if _is_section(f)]
            raise ConfigError(f"${name}", head, f"a section: {', '.join(sections)}")
        close = difflib.get_close_matches(key, fields, n=1, cutoff=0.8)
        if close:
            meant = ENV_PREFIX + close[0].upper()
            raise ConfigError(f"${name}", key, f"a setting's name (did you mean ${meant}?)")


def _is_section(field: str) -> bool:
    """Whether a field of ``RuntimeConfig`` is a table (``llm``, ``browser``)."""
    annotation = RuntimeConfig.model_fields[field].annotation
    if getattr(annotation, "__origin__", None) is dict:
        return True
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _unparsed(exc: SettingsError) -> ConfigError:
    """A variable that holds no JSON where a list or a table is due (``SKILLRT_SECRETS=pw1``)
    as a ``ConfigError`` naming it: pydantic-settings' own error went out as a traceback, exit
    1, from every command."""
    found = _FIELD.search(str(exc))
    field = found.group(1) if found else ""
    prefix = ENV_PREFIX + field.upper()
    names = sorted(n for n in os.environ if n == prefix or n.startswith(prefix + "__"))
    name = names[0] if names else prefix
    key = name.removeprefix(ENV_PREFIX).lower().replace("__", ".")
    expected = 'JSON, as a list or a table in a variable is written (["a", "b"], {"k": 1})'
    return ConfigError(f"${name}", key, expected)  # (its value not shown: it may be a secret)
