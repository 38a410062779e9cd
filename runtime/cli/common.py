"""What every command shares: exit codes, config, logging, the runtime, task ids, errors."""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar, cast

from skillrt._io.config_files import make_state_dir
from skillrt._io.quiet import QuietFileHandler, QuietStream
from skillrt._io.redaction import RedactingFilter, Redactor
from skillrt.exceptions import StoreUnavailable, UserError
from skillrt.outcomes import (
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STORAGE,
    EXIT_UNFINISHED,
    EXIT_USAGE,
    exit_code,
)

if TYPE_CHECKING:
    from skillrt._io.settings_fields import RuntimeFields
    from skillrt.agent import AgentRuntime
    from skillrt.cli.storeconfig import StoreConfig
    from skillrt.events import Event
    from skillrt.messages import TaskSummary
    from skillrt.settings import RuntimeConfig

    C = TypeVar("C", RuntimeConfig, StoreConfig, RuntimeFields)

__all__ = [
    "EXIT_CANCELLED",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_STORAGE",
    "EXIT_UNFINISHED",
    "EXIT_USAGE",
    "configure_structlog",
    "exit_code",
    "fail",
    "find_task",
    "given_before_command",
    "make_runtime",
    "open_config",
    "open_full_config",
    "open_store_config",
    "user_errors",
]


class CliError(UserError):
    """A usage mistake found by the command line itself (an unknown task id...)."""


def fail(message: str) -> CliError:
    return CliError(message)


@contextmanager
def user_errors() -> Iterator[None]:
    """A ``UserError`` (config, usage) becomes one line on stderr and exit status 2, with no
    traceback; Ctrl-C before a command could install its own handler exits 130 quietly."""
    try:
        yield
    except UserError as exc:
        print(f"skillrt: error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_USAGE) from None
    except StoreUnavailable as exc:  # read-only, full, not a folder: said in one paragraph
        print(f"skillrt: error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_STORAGE) from None
    except (sqlite3.Error, OSError) as exc:  # a storage fault no store turned into one
        print(
            f"skillrt: error: the state folder cannot be used ({type(exc).__name__}: {exc});"
            " run skillrt doctor to see what is wrong.",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(EXIT_STORAGE) from None
    except KeyboardInterrupt:
        print(file=sys.stderr, flush=True)
        raise SystemExit(EXIT_CANCELLED) from None


# --- config and logging -----------------------------------------------------------------


def open_config(
    root: Path | None,
    *,
    verbose: bool = False,
    posts_dir: str | None = None,
    log_to_file: bool = True,
    require_root: bool = True,
    **overrides: Any,
) -> RuntimeConfig:
    """The config, as if started in ``root`` (like ``git -C``), with logging set up.

    Logs stay off the screen: JSON lines go to ``<state>/logs/skillrt.log`` unless the config
    names a ``log_file``; ``--verbose`` sends them to stderr at debug level instead.
    ``log_to_file=False`` (``doctor``, which writes nothing) keeps them on stderr.
    ``posts_dir`` is ``--posts-dir``: it beats the config files and the detection.
    ``require_root=False`` (``doctor``, which reports it) lets a missing content root by.
    """
    from skillrt.settings import load_config

    _enter_root(root, overrides)
    _take_posts_dir(posts_dir, overrides)
    with _options_named():
        config = load_config(**overrides)
    if require_root:
        _check_root(config)
    return _with_logging(config, verbose=verbose, log_to_file=log_to_file)


def open_store_config(
    root: Path | None, *, verbose: bool = False, posts_dir: str | None = None
) -> RuntimeConfig | StoreConfig:
    """``open_config`` for ``skillrt tasks``: the few settings it needs, read without
    pydantic-settings when the config sets nothing else (cli/storeconfig.py), else the
    whole ``RuntimeConfig``. The same values, the same errors, the same logging."""
    from skillrt.cli.storeconfig import read_store_config

    overrides: dict[str, Any] = {}
    _enter_root(root, overrides)
    _take_posts_dir(posts_dir, overrides)
    config = read_store_config(**overrides)
    if config is None:
        return open_config(None, verbose=verbose, **overrides)
    _check_root(config)
    return _with_logging(config, verbose=verbose, log_to_file=True)


def open_full_config(
    root: Path | None,
    *,
    verbose: bool = False,
    posts_dir: str | None = None,
    log_to_file: bool = True,
) -> RuntimeConfig | RuntimeFields:
    """``open_config`` for ``skillrt doctor``: every setting, read without pydantic-settings
    where the sources merge plainly (cli/doctorconfig.py), else ``RuntimeConfig`` itself.
    The same values, the same errors, the same logging."""
    from skillrt.cli.doctorconfig import read_runtime_fields

    overrides: dict[str, Any] = {}
    _enter_root(root, overrides)
    _take_posts_dir(posts_dir, overrides)
    with _options_named():
        config = read_runtime_fields(**overrides)
    if config is None:
        return open_config(
            None, verbose=verbose, log_to_file=log_to_file, require_root=False, **overrides
        )
    return _with_logging(config, verbose=verbose, log_to_file=log_to_file)


_OPTIONS = {"posts_dir": "--posts-dir", "content_root": "--root"}
"""The settings a command's options give ``load_config`` as keyword arguments."""


@contextmanager
def _options_named() -> Iterator[None]:
    """A bad value of an option is named as the option: ``--posts-dir: posts_dir: expected a
    folder inside the content root``, where it said "keyword arguments", which the command
    line has none of."""
    from skillrt.exceptions import ConfigError

    try:
        yield
    except ConfigError as exc:
        option = _OPTIONS.get(exc.key)
        if exc.source != "keyword arguments" or option is None:
            raise
        raise ConfigError(option, exc.key, exc.expected, exc.got) from exc


_BEFORE_COMMAND: dict[str, Any] = {}
"""``--root`` and ``--posts-dir`` given before the command (``skillrt -C DIR tasks``)."""


def given_before_command(root: Path | None, posts_dir: str | None) -> None:
    """Keep the options given before the command, for the command's config: they hold unless
    the command has its own (set at each start, so one in-process run leaks none into the
    next)."""
    _BEFORE_COMMAND.clear()
    _BEFORE_COMMAND.update(root=root, posts_dir=posts_dir)


def _take_posts_dir(posts_dir: str | None, overrides: dict[str, Any]) -> None:
    """The command's ``--posts-dir``, else the one given before the command, as the setting
    ``posts_dir`` in ``overrides``; a blank one is a usage error. (``tasks``, ``undo``,
    ``replay`` and ``abandon`` had no ``--posts-dir``, and took none given before them: a
    script passing it to every command failed "No such option", exit 2.)"""
    if posts_dir is None:
        posts_dir = _BEFORE_COMMAND.get("posts_dir")
    if posts_dir is None:
        return
    if not posts_dir.strip():
        raise fail("--posts-dir needs a folder (relative to the blog folder)")
    overrides["posts_dir"] = posts_dir


def _enter_root(root: Path | None, overrides: dict[str, Any]) -> None:
    """Start in ``root`` (like ``git -C``): it is the content root unless overridden. The
    command's own ``--root`` wins over one given before the command, which is taken once:
    a config read again after the first (``tasks``, ``doctor``) is already there."""
    before = _BEFORE_COMMAND.pop("root", None)
    if root is None:
        root = before
    if root is not None:
        target = root.expanduser()
        if not target.is_dir():
            raise fail(f"the content root {str(root)!r} is not a folder")
        os.chdir(target)
        overrides.setdefault("content_root", Path.cwd())


def _check_root(config: RuntimeConfig | StoreConfig) -> None:
    """The configured content root (``$SKILLRT_CONTENT_ROOT``, ``content_root`` in a config
    file) must be a folder, as ``--root`` must, before anything is written: a mistyped one
    made a blog there (``run`` its state folder, ``index`` the folder itself) and a later
    ``doctor`` said all was well."""
    if not config.root.is_dir():
        raise fail(
            f"the content root {str(config.content_root)!r} is not a folder"
            " (content_root: $SKILLRT_CONTENT_ROOT or a config file)"
        )


def _print_moved_aside(note: str) -> None:
    print(f"skillrt: warning: {note}", file=sys.stderr, flush=True)


def _with_logging(config: C, *, verbose: bool, log_to_file: bool) -> C:
    from skillrt._io.faults import on_moved_aside

    global _WARNING_OF_MOVES
    if _WARNING_OF_MOVES is None:  # a damaged file moved aside as the command runs: said
        _WARNING_OF_MOVES = on_moved_aside(_print_moved_aside)
    if verbose:
        config = config.model_copy(update={"log_level": "debug", "log_file": None})
    elif config.log_file is None and log_to_file:
        config = config.model_copy(update={"log_file": config.state_path / "logs" / "skillrt.log"})
    return _configure_library_logging(config, verbose)


_WARNING_OF_MOVES: Callable[[], None] | None = None
"""The unsubscriber of ``_print_moved_aside`` (subscribed once, by the first config read)."""
_STRUCTLOG: tuple[int, Any, Redactor] | None = None
"""Where structlog's lines go (level, stream, redactor), once ``open_config`` decided it:
configured when a command makes a runtime, so one that makes none loads no structlog."""


def configure_structlog() -> None:
    """Point structlog where ``open_config`` decided (before a command makes a runtime)."""
    if _STRUCTLOG is None:
        return
    import structlog

    level, stream, redactor = _STRUCTLOG
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            redactor.processor,
            structlog.processors.JSONRenderer(ensure_ascii=False),
        ],
        logger_factory=structlog.WriteLoggerFactory(file=stream),
        wrapper_class=structlog.make_filtering_bound_logger(level),
        cache_logger_on_first_use=False,
    )


def _configure_library_logging(config: C, verbose: bool) -> C:
    """The CLI is the application: it owns the handlers. The library's stdlib loggers
    (``skillrt.*``) and any other library's go where the runtime's lines go, redacted.

    A log file that cannot be written (a read-only or full state folder) is dropped: the
    command still runs, and says what is wrong with the state folder itself."""
    level = logging.DEBUG if verbose else getattr(logging, config.log_level.upper())
    redactor = Redactor(config.secret_values())
    handler: logging.Handler
    stream: Any
    if config.log_file is not None:
        path = Path(config.log_file).expanduser()
        try:
            if config.state_path in path.parents:  # <state>/logs: the state folder first
                make_state_dir(config.state_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            handler = QuietFileHandler(path, encoding="utf-8")
            stream = QuietStream(cast("TextIO", handler.stream))  # (structlog's lines too)
        except OSError:
            config = config.model_copy(update={"log_file": None})
            handler, stream = logging.NullHandler(), open(os.devnull, "w")  # noqa: SIM115
    else:
        handler = logging.StreamHandler(sys.stderr)
        stream = sys.stderr
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(redactor))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    global _STRUCTLOG
    _STRUCTLOG = (level, stream, redactor)  # set up with the first runtime (see make_runtime)
    return config


# --- the runtime ------------------------------------------------------------------------


def make_runtime(
    config: RuntimeConfig, *, with_model: bool = True, with_skills: bool = True
) -> AgentRuntime:
    """A runtime for one command (a plain instance; the CLI needs no singleton). Without
    skills (listing tasks) the skill packages, and the browser's imports, are not loaded."""
    from skillrt.agent import AgentRuntime  # the whole runtime: only for the commands that run
    from skillrt.cli.nomodel import NoModel

    configure_structlog()
    if config.commit_on_loop is None:  # a command runs its user's tasks one at a time
        config = config.model_copy(update={"commit_on_loop": True})
    runtime = AgentRuntime(
        config, llm=None if with_model else NoModel(), skills=None if with_skills else []
    )
    runtime.on("runtime:checkpoints_loaded", _report_quarantine)
    return runtime


def _report_quarantine(event: Event) -> None:
    """What start-up moved aside (an unreadable database or record), one line each."""
    for note in event.data.get("quarantined", []):
        print(f"skillrt: warning: {note}", file=sys.stderr, flush=True)


def find_task(prefix: str, tasks: Sequence[TaskSummary]) -> TaskSummary:
    """The task whose id starts with ``prefix``; a unique prefix is enough."""
    prefix = prefix.strip()
    if not prefix:
        raise fail("give a task id (a unique prefix is enough)")
    exact = [t for t in tasks if t.id == prefix]
    if exact:
        return exact[0]
    matches = [t for t in tasks if t.id.startswith(prefix)]
    if not matches:
        known = ", ".join(t.id[:8] for t in tasks) or "none"
        raise fail(f"no resumable task {prefix!r} (resumable: {known})")
    if len(matches) > 1:
        raise fail(
            f"task id {prefix!r} is ambiguous: {', '.join(t.id for t in matches)}; type more of it"
        )
    return matches[0]
