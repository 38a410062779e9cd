"""doctor's table without rich (cli/plaintable.py): the same bytes as rich's ``Table`` on a
``Console`` wherever it lays a table out itself, and rich's own output elsewhere.

Tables are compared with rich rendering ``checks_table`` (what doctor printed before) at many
widths, on generated cells (short and long words, runs of spaces, empty values, words longer
than the column); doctor itself runs as a process, in a pipe and on a pseudo-terminal, and its
table is compared with rich's rendering of the checks it reports as JSON.
"""

from __future__ import annotations

import io
import json
import os
import pty
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from skillrt.cli.doctor import _MARKS, Check, checks_table
from skillrt.cli.plaintable import console_width, table_text
from tests.cli_support import cli_env, write_script

_STATUSES = ("ok", "warn", "fail", "info")


def _rich(rows: list[tuple[str, str, str]], width: int) -> str:
    """What doctor printed with rich for these rows on a console this wide."""
    status = {mark: name for name, mark in _MARKS.items()}
    checks = [Check(name, value, status[mark]) for mark, name, value in rows]  # type: ignore[arg-type]
    out = io.StringIO()
    Console(file=out, width=width).print(checks_table(checks), highlight=False)
    return out.getvalue()


def _word(rng: random.Random) -> str:
    letters = "abcdefghijklmnopqrstuvwxyzABC0123456789/._-:;,()[]'\"·éßŁ"
    size = rng.choice((1, 2, 3, 5, 8, 13, 30, 70, 150))
    return "".join(rng.choice(letters) for _ in range(size))


def _value(rng: random.Random) -> str:
    if rng.random() < 0.05:
        return ""
    spaces = (" ", " ", " ", "  ", "   ")
    text = "".join(_word(rng) + rng.choice(spaces) for _ in range(rng.randint(1, 12)))
    if rng.random() < 0.5:
        text = text.rstrip()
    if rng.random() < 0.2:
        text = rng.choice(spaces) + text
    return text


def _rows(rng: random.Random) -> list[tuple[str, str, str]]:
    return [
        (
            _MARKS[rng.choice(_STATUSES)],
            rng.choice(("skillrt", "model", "checkpoints database", "[browser] settings", "x")),
            _value(rng),
        )
        for _ in range(rng.randint(1, 20))
    ]


@pytest.mark.parametrize("seed", range(40))
def test_generated_tables_are_laid_out_as_rich_lays_them_out(seed: int) -> None:
    rng = random.Random(seed)
    rows = _rows(rng)
    laid_out = 0
    for width in (*range(1, 40), 41, 47, 52, 60, 79, 80, 81, 100, 120, 200, 400):
        text = table_text(rows, width)
        if text is not None:
            laid_out += 1
            assert text == _rich(rows, width), (rows, width)
    assert laid_out > 20  # narrow widths are left to rich; the others laid out here


def test_doctors_own_rows_are_laid_out_here_at_usual_widths() -> None:
    rows = [
        ("", "skillrt", "0.1.0 (Python 3.11.7)"),
        ("ok", "model", "local · SmolLM2-135M-Instruct.Q4_1 (provider auto: no API key)"),
        ("warn", "index", "not built yet; run skillrt index"),
        ("FAIL", "checkpoints database", "/a/long/path/" * 12 + " is not a SQLite database"),
    ]
    for width in (40, 80, 132, 300):
        text = table_text(rows, width)
        assert text is not None and text == _rich(rows, width)


@pytest.mark.parametrize(
    "value",
    [
        "a\tb",  # a tab: rich expands it
        "two\nlines",
        "wide 漢字",
        "e\u0301",  # a combining accent
        "no\u00a0break",  # one cell, but whitespace to str.split
        "soft\u00adhyphen",
        "\x1b[31mred",
    ],
)
def test_cells_rich_measures_otherwise_are_left_to_rich(value: str) -> None:
    assert table_text([("ok", "name", value)], 80) is None


def test_a_console_too_narrow_for_the_first_columns_is_left_to_rich() -> None:
    rows = [("warn", "checkpoints database", "value")]
    assert table_text(rows, 4 + 1 + 20 + 2 + 1) is None
    assert table_text(rows, 4 + 1 + 20 + 2 + 2) == _rich(rows, 4 + 1 + 20 + 2 + 2)


def _width_in(env: dict[str, str], terminal: bool) -> int | None:
    """``console_width()`` in a process of its own (on a pseudo-terminal or in a pipe),
    beside ``Console().width``."""
    code = (
        "import json, sys\n"
        "from rich.console import Console\n"
        "from skillrt.cli.plaintable import console_width\n"
        "ours = console_width()\n"
        "sys.stderr.write(json.dumps([ours, Console().width]))\n"
    )
    if not terminal:
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
            check=True,
        )
        ours, theirs = json.loads(done.stderr)
    else:
        primary, secondary = pty.openpty()
        os.set_blocking(primary, True)
        import fcntl
        import struct
        import termios

        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 97, 0, 0))
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            stdin=secondary,
            stdout=secondary,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=True,
        )
        os.close(secondary)
        os.close(primary)
        ours, theirs = json.loads(done.stderr)
    if ours is not None:
        assert ours == theirs
    return ours  # type: ignore[no-any-return]


@pytest.mark.parametrize("terminal", [False, True])
def test_the_width_is_the_consoles(terminal: bool) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TERM")}
    assert _width_in(base, terminal) == (97 if terminal else 80)
    assert _width_in({**base, "COLUMNS": "61"}, terminal) == 61
    assert _width_in({**base, "COLUMNS": "61", "LINES": "10"}, terminal) == 61
    assert _width_in({**base, "COLUMNS": "abc"}, terminal) == (97 if terminal else 80)
    assert _width_in({**base, "TERM": "xterm-256color"}, terminal) == (97 if terminal else 80)
    assert _width_in({**base, "FORCE_COLOR": "1"}, terminal) == (97 if terminal else 80)
    assert _width_in({**base, "TERM": "dumb"}, terminal) is None  # left to rich
    assert _width_in({**base, "COLUMNS": "٣"}, terminal) is None


def test_the_width_here_is_the_consoles() -> None:
    ours = console_width()
    assert ours is None or ours == Console().width


def _doctor(root: Path, tmp_path: Path, *args: str, terminal: bool = False, **env: str) -> str:
    script = write_script(tmp_path / "script.json", [])
    environ = cli_env(root, script, HOME=str(tmp_path))
    for name in ("COLUMNS", "TERM", "NO_COLOR"):  # a user's terminal, not the tests' default
        environ.pop(name, None)
    environ.update(env)
    command = [sys.executable, "-m", "skillrt", "doctor", "--no-generate", *args]
    if not terminal:
        done = subprocess.run(
            command, env=environ, cwd=root, capture_output=True, timeout=120, check=False
        )
        return done.stdout.decode()
    primary, secondary = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 72, 0, 0))
    process = subprocess.Popen(
        command, env=environ, cwd=root, stdin=secondary, stdout=secondary, stderr=secondary
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(primary)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def _masked(text: str) -> str:
    return re.sub(r"\d+ (GB|MB) free", "N GB free", text)


@pytest.mark.parametrize("terminal", [False, True])
def test_doctor_prints_the_table_rich_printed(tmp_path: Path, terminal: bool) -> None:
    root = tmp_path / "blog"
    (root / "posts").mkdir(parents=True)
    (root / "posts" / "a.md").write_text("# A\n", encoding="utf-8")
    report = json.loads(_doctor(root, tmp_path, "--json"))
    rows = [(_MARKS[c["status"]], c["name"], c["value"]) for c in report["checks"]]
    table = _doctor(root, tmp_path, terminal=terminal, TERM="xterm-256color")
    assert "\x1b" not in table  # no colour: the same bytes on a terminal
    assert _masked(table) == _masked(_rich(rows, 72 if terminal else 80))
    dumb = _doctor(root, tmp_path, terminal=terminal, TERM="dumb", NO_COLOR="1")
    assert _masked(dumb) == _masked(_rich(rows, 80))  # rich's: 80 on a dumb terminal
    wide = _doctor(root, tmp_path, COLUMNS="150")
    assert _masked(wide) == _masked(_rich(rows, 150))
