"""``skillrt tasks`` and ``skillrt doctor`` run without Typer when their arguments are plain
(cli/quick.py). Each case runs twice as real processes, once through ``skillrt.cli.main``
(the quick path) and once through Typer's app (``skillrt.cli.commands.main``, what every
command went through before), and the two must agree byte for byte: stdout, stderr and the
exit status. The one masked figure is doctor's free disk space (``N GB free``), which another
process may move between the two runs.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli.quick import quick_args
from tests.cli_support import cli_env, write_script

# argv: a file for the modules loaded at exit, the entry ("quick" or "typer"), then the
# command's arguments. SKILLRT_TEST_RAISE makes the tasks table raise that exception, to
# show both paths end the same way on Ctrl-C, a closed stdout and an end of input.
_RUN = """
import atexit, errno, json, os, sys
report, entry = sys.argv.pop(1), sys.argv.pop(1)
atexit.register(lambda: open(report, "w").write(json.dumps(sorted(sys.modules))))
raising = os.environ.get("SKILLRT_TEST_RAISE")
if raising:
    import skillrt.cli.tasklist as tasklist
    def boom(*args, **kwargs):
        raise {"int": KeyboardInterrupt(), "eof": EOFError(),
               "pipe": BrokenPipeError(errno.EPIPE, "Broken pipe")}[raising]
    tasklist.tasks_table = boom
if entry == "quick":
    from skillrt.cli import main
else:
    from skillrt.cli.commands import main
main()
"""


def _process(
    tmp_path: Path, root: Path, entry: str, args: tuple[str, ...], env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    report = tmp_path / f"modules-{entry}.json"
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(report), entry, *args],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done, json.loads(report.read_text(encoding="utf-8"))


def _masked(text: str) -> str:
    return re.sub(r"\b\d+ (GB|MB) free\b", r"N \1 free", text)


def _both(
    tmp_path: Path, root: Path, *args: str, quick: bool = True, **extra: str
) -> subprocess.CompletedProcess[str]:
    """Run ``skillrt ARGS`` through both entries; assert they agree; the quick one's result.
    ``quick``: whether the quick path should have taken it (no Typer loaded)."""
    script = write_script(tmp_path / "script.json", [])
    env = cli_env(root, script, HOME=str(tmp_path), **extra)
    fast, fast_modules = _process(tmp_path, root, "quick", args, env)
    full, full_modules = _process(tmp_path, root, "typer", args, env)
    assert (fast.returncode, _masked(fast.stdout), _masked(fast.stderr)) == (
        full.returncode,
        _masked(full.stdout),
        _masked(full.stderr),
    )
    assert "typer" in full_modules
    assert ("typer" not in fast_modules) is quick, args
    return fast


def _seed(root: Path, count: int, *, hours_ago: float = 3.0) -> None:
    """``count`` resumable tasks in the embedded store (real SQLite), as a crash leaves them;
    updated hours ago, so their age reads the same in both runs."""
    from skillrt._state.embedded.checkpoints import CheckpointStore
    from skillrt._state.records import TaskRecord

    store = CheckpointStore(root / ".skillrt" / "checkpoints")
    then = time.time() - hours_ago * 3600
    store.apply(
        [
            TaskRecord(
                id=f"task{i:04d}",
                session_id="s",
                state="EXECUTING",
                raw_input=f"write an article about [b]topic[/b] {i}, "
                + "with a long request " * (i % 3),
                skill="WriteArticle",
                params={"topic": f"topic {i}"},
                steps={"outline": "outline"},
                created_at=then - 60,
                updated_at=then,
            )
            for i in range(count)
        ],
        [],
    )
    store.close()


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    root = tmp_path / "blog"
    (root / "posts").mkdir(parents=True)
    (root / "posts" / "hello.md").write_text("# Hello\n\nA post.\n", encoding="utf-8")
    return root


# --- which arguments the quick path takes --------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["tasks"], ("tasks", {"as_json": False, "root": None, "verbose": False})),
        (
            ["tasks", "--json", "-C", "b", "-v"],
            ("tasks", {"as_json": True, "root": Path("b"), "verbose": True}),
        ),
        (
            ["tasks", "--root=b", "--verbose"],
            ("tasks", {"as_json": False, "root": Path("b"), "verbose": True}),
        ),
        (
            ["doctor", "--no-generate", "--posts-dir", "content", "--root", "b"],
            (
                "doctor",
                {
                    "as_json": False,
                    "root": Path("b"),
                    "verbose": False,
                    "posts_dir": "content",
                    "generate": False,
                },
            ),
        ),
        (
            ["doctor", "--posts-dir=x/y", "--json"],
            (
                "doctor",
                {
                    "as_json": True,
                    "root": None,
                    "verbose": False,
                    "posts_dir": "x/y",
                    "generate": True,
                },
            ),
        ),
    ],
)
def test_plain_arguments_take_the_quick_path(
    argv: list[str], expected: tuple[str, dict[str, object]]
) -> None:
    assert quick_args(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["chat"],
        ["run", "tasks"],
        ["--help"],
        ["tasks", "--help"],
        ["tasks", "-h"],
        ["doctor", "--help"],
        ["tasks", "--bogus"],
        ["tasks", "extra"],
        ["tasks", "--json", "--json"],  # repeated: Typer decides
        ["tasks", "--root", "a", "-C", "b"],
        ["tasks", "--root"],  # missing value
        ["tasks", "--root", ""],
        ["tasks", "--root="],
        ["tasks", "--root", "-v"],  # a value that looks like an option
        ["tasks", "-vC", "b"],  # combined short options
        ["tasks", "-Cb"],
        ["tasks", "--json=1"],
        ["tasks", "--posts-dir", "x"],  # (tasks takes it, through Typer)
        ["tasks", "--no-generate"],
        ["tasks", "--"],
        ["doctor", "--no-generate=yes"],
        ["doctor", "--posts"],  # no prefix matching
        ["Tasks"],
    ],
)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert quick_args(argv) is None


def test_a_completion_request_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_SKILLRT_COMPLETE", "bash_complete")
    assert quick_args(["tasks"]) is None


def test_on_windows_everything_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    # Click expands wildcards in the arguments on Windows (``--root *``); the quick path does not.
    assert quick_args(["tasks"]) is not None
    monkeypatch.setattr(os, "name", "nt")
    assert quick_args(["tasks"]) is None


# --- skillrt tasks: the same bytes both ways -----------------------------------------------


def test_tasks_with_no_state_folder(tmp_path: Path, blog: Path) -> None:
    done = _both(tmp_path, blog, "tasks")
    assert done.returncode == 0 and done.stdout == "No resumable tasks.\n"


def test_tasks_listed_as_a_table_and_as_json(tmp_path: Path, blog: Path) -> None:
    _seed(blog, 12)
    done = _both(tmp_path, blog, "tasks")
    assert done.returncode == 0 and "task0011" in done.stdout and "3 h ago" in done.stdout
    assert "[b]topic[/b]" in done.stdout  # as written, not markup
    done = _both(tmp_path, blog, "tasks", "--json")
    assert len(json.loads(done.stdout)) == 12
    _both(tmp_path, blog, "tasks", "--json", COLUMNS="60")
    _both(tmp_path, blog, "tasks", COLUMNS="200")


def test_tasks_from_another_folder_each_spelling(tmp_path: Path, blog: Path) -> None:
    _seed(blog, 3)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for args in (("--root", str(blog)), ("-C", str(blog)), (f"--root={blog}",)):
        script = write_script(tmp_path / "script.json", [])
        env = cli_env(blog, script, HOME=str(tmp_path))
        del env["SKILLRT_CONTENT_ROOT"]
        fast, fast_modules = _process(tmp_path, elsewhere, "quick", ("tasks", *args), env)
        full, _ = _process(tmp_path, elsewhere, "typer", ("tasks", *args), env)
        assert (fast.returncode, fast.stdout, fast.stderr) == (
            full.returncode,
            full.stdout,
            full.stderr,
        )
        assert fast.returncode == 0 and "task0002" in fast.stdout
        assert "typer" not in fast_modules
    done = _both(tmp_path, blog, "tasks", "--root", str(tmp_path / "missing"))
    assert done.returncode == 2 and "is not a folder" in done.stderr


def test_tasks_verbose(tmp_path: Path, blog: Path) -> None:
    _seed(blog, 2)
    _both(tmp_path, blog, "tasks", "-v")
    _both(tmp_path, blog, "tasks", "--verbose", "--json")


def test_tasks_with_a_corrupt_store(tmp_path: Path) -> None:
    # Each entry moves the damaged database aside (as a runtime's start does), so each runs in
    # its own copy of the blog; the folder and the quarantine's time stamp are masked.
    results = []
    for entry in ("quick", "typer"):
        root = tmp_path / entry
        (root / "posts").mkdir(parents=True)
        _seed(root, 1)
        db = root / ".skillrt" / "checkpoints" / "cache" / "cache.db"
        db.write_bytes(b"this is not a database" * 100)
        env = cli_env(root, write_script(tmp_path / "script.json", []), HOME=str(tmp_path))
        done, modules = _process(tmp_path, root, entry, ("tasks",), env)
        assert ("typer" in modules) is (entry == "typer")
        stderr = done.stderr.replace(str(root), "<blog>")
        results.append((done.returncode, done.stdout, re.sub(r"-\d{8}T\d{6}-\w+", "-X", stderr)))
    assert results[0] == results[1]
    status, stdout, stderr = results[0]
    assert status == 0 and stdout == "No resumable tasks.\n"
    assert stderr.startswith("skillrt: warning: checkpoint database <blog>/")


def test_tasks_with_a_bad_config(tmp_path: Path, blog: Path) -> None:
    (blog / "skillrt.toml").write_text("checkpoint_max_age_h = -1\n", encoding="utf-8")
    done = _both(tmp_path, blog, "tasks")
    assert done.returncode == 2 and "checkpoint_max_age_h" in done.stderr
    (blog / "skillrt.toml").write_text("this is [not toml\n", encoding="utf-8")
    done = _both(tmp_path, blog, "tasks")
    assert done.returncode == 2 and "skillrt.toml" in done.stderr
    done = _both(tmp_path, blog, "tasks", SKILLRT_CONFIG=str(blog / "missing.toml"))
    assert done.returncode == 2


def test_tasks_with_a_file_where_the_state_folder_goes(tmp_path: Path, blog: Path) -> None:
    state = blog / ".skillrt"
    state.write_text("a file where the folder goes", encoding="utf-8")
    done = _both(tmp_path, blog, "tasks")
    assert done.returncode == 74


def test_tasks_arguments_typer_handles_give_the_same_answers(tmp_path: Path, blog: Path) -> None:
    for args, status in (
        (("tasks", "--bogus"), 2),
        (("tasks", "--help"), 0),
        (("tasks", "--root"), 2),
        (("tasks", "--json", "--json"), 0),  # a repeated flag is allowed
        (("tasks", "extra"), 2),
    ):
        done = _both(tmp_path, blog, *args, quick=False)
        assert done.returncode == status, args


@pytest.mark.parametrize(("raising", "status"), [("int", 130), ("pipe", 1), ("eof", 1)])
def test_tasks_ended_by_ctrl_c_a_closed_pipe_or_end_of_input(
    tmp_path: Path, blog: Path, raising: str, status: int
) -> None:
    _seed(blog, 2)
    # At an end of input the quick path prints Typer's own "Aborted." (loading Typer then).
    done = _both(tmp_path, blog, "tasks", quick=raising != "eof", SKILLRT_TEST_RAISE=raising)
    assert done.returncode == status and done.stdout == ""


# --- skillrt doctor: the same bytes both ways ----------------------------------------------


def test_doctor_as_a_table_and_as_json(tmp_path: Path, blog: Path) -> None:
    _seed(blog, 2)
    done = _both(tmp_path, blog, "doctor", "--no-generate")
    assert "state folder" in done.stdout
    done = _both(tmp_path, blog, "doctor", "--no-generate", "--json")
    assert json.loads(done.stdout)["checks"]
    _both(tmp_path, blog, "doctor", "--no-generate", "-v", COLUMNS="70")


def test_doctor_with_a_failing_check_exits_1(tmp_path: Path, blog: Path) -> None:
    (blog / ".skillrt").write_text("a file where the folder goes", encoding="utf-8")
    done = _both(tmp_path, blog, "doctor", "--no-generate")
    assert done.returncode == 1 and "FAIL" in done.stdout


def test_doctor_with_options(tmp_path: Path, blog: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _both(tmp_path, blog, "doctor", "--no-generate", "--posts-dir", "other")
    assert "other" in done.stdout
    _both(tmp_path, blog, "doctor", "--posts-dir=posts", "--no-generate", "--root", str(blog))
    done = _both(tmp_path, blog, "doctor", "-C", str(tmp_path / "missing"), "--no-generate")
    assert done.returncode == 2


def test_doctor_with_a_bad_config(tmp_path: Path, blog: Path) -> None:
    (blog / "skillrt.toml").write_text("[serve]\nport = 99999\n", encoding="utf-8")
    done = _both(tmp_path, blog, "doctor", "--no-generate")
    assert done.returncode == 2 and "serve.port" in done.stderr


def test_doctor_arguments_typer_handles_give_the_same_answers(tmp_path: Path, blog: Path) -> None:
    for args, status in (
        (("doctor", "--bogus"), 2),
        (("doctor", "--help"), 0),
        (("doctor", "--posts-dir", ""), 2),
        (("doctor", "--no-generate", "--no-generate"), None),  # it runs, as Typer allows
    ):
        done = _both(tmp_path, blog, *args, quick=False)
        assert status is None or done.returncode == status, args


# --- doctor's table: Text marks print what the str marks printed ----------------------------


@pytest.mark.parametrize(
    "console",
    [
        {"width": 80},
        {"width": 40},
        {"width": 100, "force_terminal": True, "color_system": "truecolor"},
        {"width": 50, "force_terminal": True, "color_system": "standard", "emoji": False},
    ],
)
def test_doctor_table_prints_the_bytes_it_printed_with_str_marks(
    console: dict[str, Any],
) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from skillrt.cli.doctor import Check, checks_table

    checks = [
        Check("skillrt", "0.1.0 (Python 3.11)", "info"),
        Check("model", "local · x [b]y[/b] :smile: 12 GB http://a.b/c", "ok"),
        Check("index", "not built yet; run skillrt index " * 4, "warn"),
        Check("state folder", "/tmp/x is a file, not a folder: move it", "fail"),
    ]

    def render(table: Table) -> str:
        out = Console(file=io.StringIO(), **console)
        out.print(table, highlight=False)
        return out.file.getvalue()  # type: ignore[attr-defined]

    before = Table(box=None, show_header=False, pad_edge=False)  # as doctor built it before
    before.add_column(no_wrap=True)
    before.add_column(no_wrap=True)
    before.add_column(overflow="fold")
    marks = {"ok": "ok", "warn": "warn", "fail": "FAIL", "info": ""}
    for check in checks:
        before.add_row(marks[check.status], Text(check.name), Text(check.value))
    assert render(checks_table(checks)) == render(before)
