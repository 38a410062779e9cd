"""``skillrt tasks`` and ``skillrt doctor`` as whole processes: what a person waits for.

Each command runs as a subprocess (``python -m skillrt ...``) in a small blog with a few
resumable tasks, ``runs`` times; the median wall time is reported. Floors are measured the
same way: the interpreter alone, and the interpreter importing the CLI's own libraries
(typer, rich, pydantic). ``import pydantic`` alone loads next to nothing (its names load on
first use), so a third floor also defines and validates one small model, as any command that
reads pydantic settings must. Both commands run without Typer when their arguments are plain
(cli/quick.py), so the fourth floor is that one model with rich and without Typer: what
``skillrt tasks`` cannot go under while its summaries are pydantic models and its table
rich's. Both commands skip pydantic's plug-in lookup when no installed distribution can declare
a plug-in, so the fifth floor skips it too.

skillrt's own modules are byte-compiled first, as an installed package's are (pip compiles
them, as it compiled the floor's libraries): from a source checkout under
``PYTHONDONTWRITEBYTECODE=1`` every process compiled every skillrt module it imported again,
40-80 ms of each figure on the Intel Xeon that no installed copy pays. Each command also
runs once untimed first.
"""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import row, temp_dir

__all__ = ["cli_commands"]

TARGET_MS = 250.0

# The libraries' floor, plus what using pydantic at all loads: one model with a bounded field,
# a secret and a choice, defined and validated.
_MODEL = """
from typing import Literal
from pydantic import BaseModel, Field, SecretStr
class Config(BaseModel):
    timeout_s: float = Field(default=1.0, gt=0)
    key: SecretStr | None = None
    mode: Literal["a", "b"] = "a"
Config()
"""
_ONE_MODEL = "import typer, rich.console, rich.table\n" + _MODEL
_NO_TYPER = "import rich.console, rich.table\n" + _MODEL
# The same, skipping pydantic's plug-in lookup as both commands do when no installed
# distribution can declare a plug-in (skillrt/cli/plugins.py): importlib.metadata and the scan
# of every distribution's entry points are not paid.
_NO_LOOKUP = (
    "from skillrt.cli.plugins import skip_pydantic_plugin_lookup\n"
    "skip_pydantic_plugin_lookup()\n" + _NO_TYPER
)


def _compile_skillrt() -> None:
    """Byte-code for skillrt's modules (``__pycache__``, ignored by git), as an install has."""
    import skillrt
    import skillrt.skills

    for folder in {*skillrt.__path__, *skillrt.skills.__path__}:
        compileall.compile_dir(folder, quiet=1)


def _wall_ms(cmd: list[str], cwd: Path, env: dict[str, str], runs: int) -> float:
    times = []
    subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=False)  # untimed
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        times.append((time.perf_counter() - started) * 1000)
        if done.returncode not in (0, 1):  # doctor exits 1 when a check fails (no model here)
            raise RuntimeError(f"{cmd} failed ({done.returncode}): {done.stderr[-2000:]}")
    return statistics.median(times)


def _seed(root: Path, tasks: int) -> None:
    from skillrt._state.embedded.checkpoints import CheckpointStore
    from skillrt._state.records import TaskRecord

    (root / "posts").mkdir(parents=True)
    (root / "posts" / "hello.md").write_text("# Hello\n\nA post.\n", encoding="utf-8")
    store = CheckpointStore(root / ".skillrt" / "checkpoints")
    now = time.time()
    store.apply(
        [
            TaskRecord(
                id=f"task{i:04d}",
                session_id="bench",
                state="EXECUTING",
                raw_input=f"write an article about topic {i}",
                skill="WriteArticle",
                params={"topic": f"topic {i}"},
                steps={"outline": "outline"},
                created_at=now - 60,
                updated_at=now - 30,
            )
            for i in range(tasks)
        ],
        [],
    )
    store.close()


def cli_commands(runs: int = 5, tasks: int = 20) -> dict[str, Any]:
    """Median wall time of ``skillrt tasks`` and ``skillrt doctor``, and the floors."""
    python = sys.executable
    _compile_skillrt()
    with temp_dir("cli") as root:
        _seed(root, tasks)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLRT_")}
        env["HOME"] = str(root)  # no user config file
        figures = {
            "tasks": _wall_ms([python, "-m", "skillrt", "tasks"], root, env, runs),
            # --no-generate: skillrt's own start-up and checks, not a token from a model
            "doctor": _wall_ms(
                [python, "-m", "skillrt", "doctor", "--no-generate"], root, env, runs
            ),
            "python": _wall_ms([python, "-c", "pass"], root, env, runs),
            "libraries": _wall_ms(
                [python, "-c", "import typer, rich.console, rich.table, pydantic"],
                root,
                env,
                runs,
            ),
            "one_model": _wall_ms([python, "-c", _ONE_MODEL], root, env, runs),
            "no_typer": _wall_ms([python, "-c", _NO_TYPER], root, env, runs),
            "no_lookup": _wall_ms([python, "-c", _NO_LOOKUP], root, env, runs),
        }
    floor = f"floor: python alone {figures['python']:.0f} ms, + typer/rich/pydantic"
    floor += f" {figures['libraries']:.0f} ms, + one pydantic model {figures['one_model']:.0f} ms"
    floor += f" (without typer {figures['no_typer']:.0f} ms, nor pydantic's plug-in lookup"
    floor += f" {figures['no_lookup']:.0f} ms)"
    rows = [
        row(
            f"skillrt tasks (whole process, {tasks} resumable)",
            figures["tasks"],
            "ms",
            target=f"≤ {TARGET_MS:.0f}",
            met=figures["tasks"] <= TARGET_MS,
            note=f"median of {runs}; {floor}",
        ),
        row(
            "skillrt doctor (whole process)",
            figures["doctor"],
            "ms",
            target=f"≤ {TARGET_MS:.0f}",
            met=figures["doctor"] <= TARGET_MS,
            note=f"median of {runs}",
        ),
    ]
    return {
        "name": "cli",
        "title": "6. The CLI as a whole process",
        "params": {"runs": runs, "tasks": tasks},
        "rows": rows,
        "details": figures,
    }
