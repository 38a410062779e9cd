"""``skillrt tasks`` and ``skillrt doctor`` without Typer, when their arguments are plain.

Building the Typer app costs every process importing Typer (and its copy of Click) and
reading all twelve commands' parameters: ~115 M instructions (~35 ms on the Intel Xeon, of
a 250 ms target) for the two commands people run only to look. So ``main`` first reads
``sys.argv`` itself, and only for these shapes:

- ``tasks`` followed by ``--json``, ``-v``/``--verbose``, ``--root DIR``/``-C DIR``/``--root=DIR``;
- ``doctor`` followed by those and ``--posts-dir DIR``/``--posts-dir=DIR``, ``--no-generate``;

each option at most once, a value neither empty nor starting with ``-``. It then calls the
function the Typer command calls (``tasks_command``, ``doctor_command``) with the values Typer
would pass, and exits as Typer's Click main would: the function's status; 130 on Ctrl-C; a
closed stdout (EPIPE) exits 1 quietly. Anything else (``--help``, another command, an unknown
or repeated option, ``-vC DIR``, a completion request, any arguments on Windows, where Click
expands wildcards) goes to Typer untouched, so its help, usage errors and messages are
Typer's own. (An unexpected exception's traceback lacks Typer's frames.)
``tests/test_cli_quick.py`` runs both paths as processes and compares their output byte
for byte.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["aborted", "main", "quick_args"]

# Per command: the flags (-> keyword), the options taking a value (-> keyword).
_FLAGS: dict[str, dict[str, str]] = {
    "tasks": {"--json": "as_json", "-v": "verbose", "--verbose": "verbose"},
    "doctor": {
        "--json": "as_json",
        "-v": "verbose",
        "--verbose": "verbose",
        "--no-generate": "no_generate",
    },
}
_VALUES: dict[str, dict[str, str]] = {
    "tasks": {"--root": "root", "-C": "root"},
    "doctor": {"--root": "root", "-C": "root", "--posts-dir": "posts_dir"},
}
_COMPLETE_VAR = "_SKILLRT_COMPLETE"  # Click's shell completion request for prog "skillrt"


def quick_args(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    """The command and the keywords Typer would give it, when ``argv`` (without the program)
    has a plain shape this path takes; ``None`` for anything else (Typer decides)."""
    if not argv or argv[0] not in _FLAGS or _COMPLETE_VAR in os.environ:
        return None
    if os.name == "nt":  # Click expands wildcards in the arguments there: left to it
        return None
    command, flags, values = argv[0], _FLAGS[argv[0]], _VALUES[argv[0]]
    given: dict[str, Any] = {}
    rest = iter(argv[1:])
    found: bool | str
    for token in rest:
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if not equals and name in flags:
            key, found = flags[name], True
        elif name in values:
            if not equals:
                value = next(rest, "")
            if not value or value.startswith("-"):
                return None
            key, found = values[name], value
        else:
            return None
        if key in given:
            return None
        given[key] = found
    keywords: dict[str, Any] = {
        "as_json": given.get("as_json", False),
        "root": Path(given["root"]) if "root" in given else None,
        "verbose": given.get("verbose", False),
    }
    if command == "doctor":
        keywords["posts_dir"] = given.get("posts_dir")
        keywords["generate"] = not given.get("no_generate", False)
    return command, keywords


def _run(command: str, keywords: dict[str, Any]) -> int:
    if command == "tasks":
        from skillrt.cli.tasklist import tasks_command

        return tasks_command(**keywords)
    from skillrt.cli.doctor import doctor_command

    return doctor_command(**keywords)


def aborted() -> None:
    """Say "Aborted!" and exit 1, in the words and style of Typer's main (an end of input)."""
    from gettext import gettext

    from typer.core import HAS_RICH

    if HAS_RICH:
        from typer.rich_utils import rich_abort_error

        rich_abort_error()
    else:
        print(gettext("Aborted!"), file=sys.stderr)
    sys.exit(1)


class _PacifyFlush:
    """A stream whose ``flush`` ignores a closed pipe, as Click leaves stdout after EPIPE (so
    the interpreter's last flush at exit prints no second error)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def main() -> None:
    """The ``skillrt`` console script (also ``python -m skillrt``)."""
    found = quick_args(sys.argv[1:])
    if found is None:
        from skillrt.cli.commands import main as typer_main

        typer_main()
        return
    from skillrt._io.distributions import hold
    from skillrt.cli.plugins import skip_pydantic_plugin_lookup

    hold()  # the installed distributions are read once (_io/distributions.py)
    skip_pydantic_plugin_lookup()  # when no distribution declares one (cli/plugins.py)
    try:
        status = _run(*found)
    except KeyboardInterrupt:  # as Typer's main: exit 130, nothing printed
        sys.exit(130)
    except EOFError:  # as Typer's main (neither command reads stdin): its own words
        print(file=sys.stderr)
        aborted()
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        sys.stdout = _PacifyFlush(sys.stdout)
        sys.stderr = _PacifyFlush(sys.stderr)
        sys.exit(1)
    sys.exit(status)
