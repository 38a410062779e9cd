"""A site's own config, read as its generator reads it: one reader for its TOML, YAML and JSON
files (``read_config``); Jekyll's and Hexo's ``_config.yml`` (``yaml_site_config``); Hugo's
``hugo.toml``, ``config.yaml``... and ``config/_default/`` (``hugo_config``); and the day it
is where the site's dates are read (``site_today``). Two readers of the same files disagreed
before (the translation's and publishing's). Blocking I/O: call these from a sync step.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import tomllib
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["hugo_config", "read_config", "site_today", "yaml_site_config"]

_HUGO_FILES = ("hugo", "config")
_HUGO_DIRS = ("", "config/_default/")
_SUFFIXES = ("toml", "yaml", "yml", "json")


def read_config(path: Path) -> dict[str, Any] | None:
    """A config file's table (TOML, YAML or JSON, by its suffix), or None (missing, or not
    one)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        if path.suffix == ".toml":
            return tomllib.loads(text)
        if path.suffix == ".json":
            loaded: Any = json.loads(text)
        else:
            import yaml  # here: the chat starts without PyYAML (tests/test_cli_startup.py)

            loaded = yaml.safe_load(text)
    except Exception:
        return None
    return loaded if isinstance(loaded, dict) else None


def yaml_site_config(root: Path) -> dict[str, Any]:
    """Jekyll's or Hexo's ``_config.yml`` (``{}`` when there is none, or it is no table)."""
    for name in ("_config.yml", "_config.yaml"):
        read = read_config(root / name)
        if read is not None:
            return read
    return {}


def hugo_config(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Hugo site's settings (``hugo.toml``, ``config.yaml``…, the first found winning, then
    ``config/_default/``'s) and the languages it declares (its ``languages`` table and
    ``config/_default/languages.*``)."""
    main: dict[str, Any] = {}
    languages: dict[str, Any] = {}
    for folder in _HUGO_DIRS:
        for name in _HUGO_FILES:
            for suffix in _SUFFIXES:
                read = read_config(root / f"{folder}{name}.{suffix}")
                if read is not None:
                    main = {**read, **main}
        if folder:
            for suffix in _SUFFIXES:
                read = read_config(root / f"{folder}languages.{suffix}")
                if read is not None:
                    languages.update(read)
    declared = main.get("languages")
    if isinstance(declared, dict):
        languages = {**declared, **languages}
    return main, languages


def _zone(name: Any) -> dt.tzinfo | None:
    """The time zone a config names (``America/Los_Angeles``), or None (none, or unknown)."""
    if not isinstance(name, str) or not name.strip():
        return None
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        return None


def site_today(root: Path, kind: str) -> dt.date:
    """Today where the site at ``root`` (a blog of ``kind``) reads a bare date: Hugo in its
    ``timeZone``, else UTC; Jekyll and Hexo in their ``timezone``, else here (they build
    where they run). Hugo skips a post dated in the future: on a site of ``timeZone =
    "America/Los_Angeles"``, a post made at 06:45 UTC was dated that day, midnight there,
    08:00 UTC, and ``hugo list future`` held it back; with no ``timeZone``, one made at 07:00
    in UTC+8 was dated a day Hugo reads as midnight UTC, an hour away."""
    if kind == "hugo":
        main, _ = hugo_config(root)
        zone = _zone(main.get("timeZone", main.get("timezone"))) or dt.UTC
        return dt.datetime.now(zone).date()
    if kind in ("jekyll", "hexo"):
        named = _zone(yaml_site_config(root).get("timezone"))
        if named is not None:
            return dt.datetime.now(named).date()
    return dt.date.fromtimestamp(time.time())
