"""The config files in force and the state folder, without pydantic: what ``skillrt.settings``
builds ``RuntimeConfig`` from, and what ``skillrt tasks`` reads on its own (cli/storeconfig.py)
so that listing tasks loads no pydantic-settings."""

from __future__ import annotations

import importlib
import os
import tomllib
from importlib.machinery import SourceFileLoader, SourcelessFileLoader
from pathlib import Path
from typing import Any

from skillrt._io.faults import classify, unavailable
from skillrt.exceptions import ConfigError, StoreUnavailable

__all__ = [
    "ENV_PREFIX",
    "STATE_GITIGNORE",
    "config_files",
    "ensure_state",
    "env_paths",
    "make_state_dir",
    "read_toml",
    "state_path_of",
]

ENV_PREFIX = "SKILLRT_"


def env_paths() -> dict[tuple[str, ...], str] | None:
    """The ``SKILLRT_*`` variables as key paths, as pydantic-settings' environment source reads
    them (names in any case, ``__`` between nested keys: ``SKILLRT_LLM__MODEL`` is
    ``("llm", "model")``), ``$SKILLRT_CONFIG`` left out (it names a file, not a setting); or
    ``None`` when one path is spelt twice (``SKILLRT_X`` and ``skillrt_x``: which wins is
    pydantic-settings' to say). For the CLI's readers of the config without it."""
    found: dict[tuple[str, ...], str] = {}
    prefix = ENV_PREFIX.lower()
    for name, value in os.environ.items():
        lowered = name.lower()
        if not lowered.startswith(prefix):
            continue
        path = tuple(lowered[len(prefix) :].split("__"))
        if path == ("config",):
            continue
        if path in found:
            return None
        found[path] = value
    return found


STATE_GITIGNORE = (
    "# Created by skillrt: its state (checkpoints, indexes, logs) stays out of git.\n*\n"
)


def state_path_of(content_root: Path, state_dir: Path | None) -> Path:
    """The state folder, absolute: ``state_dir``, or ``<content_root>/.skillrt``."""
    if state_dir is not None:
        return state_dir.expanduser().resolve()
    return content_root.expanduser().resolve() / ".skillrt"


def make_state_dir(path: Path) -> Path:
    """Create the state folder if needed; a folder made here gets a ``.gitignore`` holding
    ``*`` (as pytest and mypy do for their caches), so it never lands in the blog's git."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o700)  # private: checkpoints, history and logs hold the drafts and chats
        gitignore = path / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text(STATE_GITIGNORE, encoding="utf-8")
    return path


def ensure_state(path: Path) -> Path:
    """The state folder, made (again, if it was deleted) with its ``.gitignore``;
    ``StoreUnavailable`` when it cannot be."""
    if path.exists() and not path.is_dir():
        raise StoreUnavailable(
            f"skillrt cannot save its state: {path} is a file, not a folder. Move it away,"
            " or point state_dir (SKILLRT_STATE_DIR) at a folder.",
            reason="unusable",
        )
    try:
        return make_state_dir(path)
    except OSError as exc:
        raise unavailable("state", path, classify(exc, path / ".gitignore"), exc) from exc


def _user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "skillrt" / "config.toml"


def _shipped_default() -> Path:
    """``config/default.toml`` as ``importlib.resources.files("skillrt.config")`` names it.
    For a package its loader reads from a folder (a ``FileLoader``), that is the folder of the
    loader's file: named here without importing ``importlib.resources`` (with ``tempfile``,
    ``random`` and ``zipfile``: ~20 M instructions of ``skillrt doctor``). Another loader (a
    zip file...) is left to it."""
    loader = getattr(importlib.import_module("skillrt.config").__spec__, "loader", None)
    if type(loader) in (SourceFileLoader, SourcelessFileLoader):
        return Path(str(Path(loader.path).parent.joinpath("default.toml")))  # type: ignore[union-attr]
    from importlib import resources

    return Path(str(resources.files("skillrt.config").joinpath("default.toml")))


def config_files() -> list[Path]:
    """The config files in force, lowest priority first (the shipped default is first)."""
    files: list[Path] = [_shipped_default()]
    user = _user_config_path()
    if user.is_file():
        files.append(user)
    elif user.is_dir():  # (it was skipped without a word, its settings not in force)
        raise ConfigError(str(user), "(file)", "a file, not a folder")
    explicit = os.environ.get(ENV_PREFIX + "CONFIG")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"${ENV_PREFIX}CONFIG", "path", "an existing file", explicit)
        files.append(path)
    elif Path("skillrt.toml").is_file():
        files.append(Path("skillrt.toml").resolve())
    elif Path("skillrt.toml").is_dir():
        raise ConfigError(str(Path("skillrt.toml").resolve()), "(file)", "a file, not a folder")
    return files


def a_log_file(path: Path | None) -> Path | None:
    """``log_file`` as a validator takes it: a file (made when first written), not a folder.
    A folder was dropped without a word by the command line (every log line lost) and failed
    the Python API with ``IsADirectoryError`` when the runtime opened it."""
    if path is not None and path.expanduser().is_dir():
        raise ValueError(f"a file, not a folder (a file in it: {path / 'skillrt.log'})")
    return path


def read_toml(path: Path) -> dict[str, Any]:
    """A config file's table; ``ConfigError`` naming the file when it is not valid TOML."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), "(syntax)", f"valid TOML ({exc})") from exc
    except OSError as exc:
        raise ConfigError(str(path), "(file)", f"a readable file ({exc.strerror})") from exc
