"""The browsing settings: ``[browser]`` and ``[browser.search]``.

The runtime reads these sections as they are written (``RuntimeConfig.browser``, a table from
the config files, ``SKILLRT_BROWSER__*`` variables and keyword arguments, merged key by key)
and leaves their meaning to this package: ``browser_config(config)`` validates them into
``BrowserConfig``, with the defaults below, and a bad value raises ``ConfigError`` naming the
file or variable, the key and what was expected. ``skillrt doctor`` checks them the same way
(through the ``skillrt.settings`` entry point).
"""

from __future__ import annotations

import json
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_origin

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from skillrt._io.settings_fields import new_list, validate_section

if TYPE_CHECKING:
    from skillrt.settings import RuntimeConfig

__all__ = ["BrowserConfig", "SearchConfig", "browser_config"]


def _structured(annotation: Any) -> bool:
    """Whether a field holds a list or a table (which an environment variable gives as JSON)."""
    if get_origin(annotation) in (list, dict):
        return True
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


class _Section(BaseModel):
    # No `inf` or `nan` (TOML has both), as in the core settings: `timeout_s = inf` was
    # taken (a fetch that never times out), and `follow_up_s = nan` compared false with
    # every age.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _json_from_the_environment(cls, data: Any) -> Any:
        """``SKILLRT_BROWSER__ALLOW='["example.org"]'``: a list or a table set by an
        environment variable arrives as its JSON text."""
        if not isinstance(data, dict):
            return data
        decoded = dict(data)
        for name, value in data.items():
            field = cls.model_fields.get(name)
            if field is not None and isinstance(value, str) and _structured(field.annotation):
                with suppress(ValueError):  # not JSON: the field's own error says what is wanted
                    decoded[name] = json.loads(value)
        return decoded


class SearchConfig(_Section):
    """``[browser.search]``: where ResearchWeb searches."""

    provider: Literal["searxng", "duckduckgo", "brave"] = "duckduckgo"
    url: str | None = None
    api_key: SecretStr | None = None
    max_results: int = Field(default=5, ge=1, le=20)


class BrowserConfig(_Section):
    """``[browser]``: the backend, the URL firewall's rules, the agent's limits."""

    backend: Literal["http", "chromium"] = "http"
    chromium_path: Path | None = None
    allow: list[str] = Field(default_factory=new_list)
    deny: list[str] = Field(default_factory=new_list)
    allow_private: list[str] = Field(default_factory=new_list)
    timeout_s: float = Field(default=20.0, gt=0)  # a total deadline per fetch or navigation
    max_steps: int = Field(default=15, ge=1)
    max_failures: int = Field(default=3, ge=1)
    max_actions_per_step: int = Field(default=3, ge=1)
    planning_interval: int = Field(default=3, ge=1)
    observation_tokens: int = Field(default=2000, ge=100)
    max_page_bytes: int = Field(default=5_000_000, ge=1000)
    parse_timeout_s: float = Field(default=5.0, gt=0)  # reading one page, off the event loop
    read_concurrency: int = Field(default=4, ge=1)
    follow_up_s: float = Field(default=600.0, ge=0)  # a session's next Browse starts there
    search: SearchConfig = Field(default_factory=SearchConfig)


def browser_config(config: RuntimeConfig) -> BrowserConfig:
    """``config``'s ``[browser]`` section, validated. Raises ``ConfigError``."""
    return validate_section(config, "browser", BrowserConfig)
