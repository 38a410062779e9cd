"""Model prices: ``config/prices.toml`` read into a ``PriceTable``.

``PriceTable.load().cost("gpt-4o-mini-2024-07-18", usage)`` is the dollar cost of one call, or
None when the model has no price (unpriced is never reported as free). The matching rule
(exact, then one dated-variant suffix removed, then shell-style patterns) is described in the
TOML file, which is the data; this module is the small reader.
"""

from __future__ import annotations

import fnmatch
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from skillrt.exceptions import ConfigError
from skillrt.llm.base import Usage

__all__ = ["Price", "PriceTable", "user_prices_path"]

_PER_TOKENS = 1_000_000


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float

    def cost(self, usage: Usage) -> float:
        return (
            usage.prompt_tokens * self.input + usage.completion_tokens * self.output
        ) / _PER_TOKENS


def _price(source: str, key: str, value: object) -> Price:
    if not isinstance(value, Mapping):
        raise ConfigError(source, key, "a table { input = ..., output = ... }", value)
    try:
        price = Price(float(value["input"]), float(value["output"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(source, key, "numbers input and output (USD per 1M tokens)") from exc
    if price.input < 0 or price.output < 0:
        raise ConfigError(source, key, "prices >= 0", value)
    return price


def user_prices_path() -> Path:
    """Where a user's own prices go: ``$XDG_CONFIG_HOME/skillrt/prices.toml``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "skillrt" / "prices.toml"


def _parse(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, "(syntax)", f"valid TOML ({exc})") from exc


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), "(file)", f"a readable file ({exc.strerror})") from exc
    return _parse(text, str(path))


def _overlay(base: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    suffixes = [
        *base.get("match", {}).get("dated_suffixes", []),
        *user.get("match", {}).get("dated_suffixes", []),
    ]
    user_patterns = user.get("patterns", {})
    shipped_patterns = base.get("patterns", {}).items()
    return {
        "match": {"dated_suffixes": suffixes},
        "models": {**base.get("models", {}), **user.get("models", {})},
        # The user's patterns first (first match wins), then the shipped ones they do not redo.
        "patterns": {
            **user_patterns,
            **{k: v for k, v in shipped_patterns if k not in user_patterns},
        },
    }


class PriceTable:
    """Prices by model name; see ``config/prices.toml`` for the matching rule."""

    __slots__ = ("_models", "_patterns", "_suffixes")

    def __init__(
        self,
        models: Mapping[str, Price],
        *,
        patterns: Mapping[str, Price] | None = None,
        dated_suffixes: list[str] | None = None,
    ) -> None:
        self._models = {name.lower(): price for name, price in models.items()}
        self._patterns = [(pat.lower(), price) for pat, price in (patterns or {}).items()]
        self._suffixes = [re.compile(f"(?:{s})$") for s in (dated_suffixes or [])]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "prices") -> PriceTable:
        """Build a table from the parsed TOML layout (``models``, ``patterns``, ``match``)."""
        models = {k: _price(source, f"models.{k}", v) for k, v in data.get("models", {}).items()}
        patterns = {
            k: _price(source, f"patterns.{k}", v) for k, v in data.get("patterns", {}).items()
        }
        suffixes = data.get("match", {}).get("dated_suffixes", [])
        if not isinstance(suffixes, list) or not all(isinstance(s, str) for s in suffixes):
            raise ConfigError(source, "match.dated_suffixes", "a list of regular expressions")
        for suffix in suffixes:
            try:
                re.compile(suffix)
            except re.error as exc:
                raise ConfigError(
                    source, "match.dated_suffixes", f"a regex ({exc})", suffix
                ) from exc
        return cls(models, patterns=patterns, dated_suffixes=suffixes)

    @classmethod
    def load(cls, path: str | Path | None = None) -> PriceTable:
        """The shipped ``prices.toml`` with the user's ``~/.config/skillrt/prices.toml`` (when
        it exists; ``$XDG_CONFIG_HOME`` honoured) laid over it, or only the file at ``path``.

        The user file has the same layout; its models and patterns replace or add to the
        shipped ones (its patterns are tried first), its dated suffixes are added.
        """
        if path is not None:
            return cls.from_dict(_read(Path(path)), source=str(path))
        shipped = resources.files("skillrt.config").joinpath("prices.toml").read_text("utf-8")
        data = _parse(shipped, "prices.toml (shipped)")
        user = user_prices_path()
        if user.is_file():
            data = _overlay(data, _read(user))
        return cls.from_dict(data, source=str(user) if user.is_file() else "prices.toml")

    def price(self, model: str) -> Price | None:
        """The price of ``model``, or None when it is unpriced."""
        name = model.strip().lower()
        if not name:
            return None
        if name in self._models:
            return self._models[name]
        for suffix in self._suffixes:
            base = suffix.sub("", name)
            if base != name and base in self._models:
                return self._models[base]
        for pattern, price in self._patterns:
            if fnmatch.fnmatchcase(name, pattern):
                return price
        return None

    def cost(self, model: str, usage: Usage) -> float | None:
        """USD for ``usage`` on ``model``; None when the model is unpriced (not free)."""
        price = self.price(model)
        return None if price is None else price.cost(usage)

    def __contains__(self, model: object) -> bool:
        return isinstance(model, str) and self.price(model) is not None
