"""Shared by the CLI tests: a copy of the fixture blog, model scripts, running ``skillrt``.

The CLI runs as a real process (``python -m skillrt``) with the ``scripted`` provider, so no
test reaches a network model. WriteArticle makes, in order: one outline call (structured),
one call per section (streamed text) and one entity-extraction call (structured).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

FIXTURE_BLOG = Path(__file__).parent / "fixtures" / "blog"


def make_blog(tmp_path: Path) -> Path:
    """A copy of the fixture blog (or an empty blog with a posts/ folder)."""
    root = tmp_path / "blog"
    if FIXTURE_BLOG.is_dir():
        shutil.copytree(FIXTURE_BLOG, root)
    else:
        (root / "posts").mkdir(parents=True)
    return root


def outline(title: str, headings: list[str]) -> dict[str, Any]:
    return {
        "title": title,
        "description": f"About {title}.",
        "tags": ["test"],
        "sections": [{"heading": h, "points": [f"{h} matters"]} for h in headings],
    }


def entities(*names: str) -> dict[str, Any]:
    return {"entities": [{"name": n, "type": "concept", "description": n} for n in names]}


def article(title: str, sections: list[str]) -> list[Any]:
    """The answers of one whole WriteArticle run: outline, one text per section, entities."""
    headings = [f"Part {i}" for i in range(1, len(sections) + 1)]
    return [outline(title, headings), *sections, entities(title.split()[0])]


def write_script(path: Path, answers: list[Any], **top: Any) -> Path:
    """A ScriptedModel JSON script: ``{"answers": [...], **top}``."""
    path.write_text(json.dumps({"answers": answers, **top}), encoding="utf-8")
    return path


def cli_env(root: Path, script: Path, **extra: str) -> dict[str, str]:
    """The environment of a CLI process: the scripted model, this blog, no colours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env.update(
        SKILLRT_LLM__PROVIDER="scripted",
        SKILLRT_LLM__SCRIPT_PATH=str(script),
        SKILLRT_CONTENT_ROOT=str(root),
        NO_COLOR="1",
        TERM="dumb",
        COLUMNS="100",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def skillrt(
    *args: str,
    env: dict[str, str],
    cwd: Path,
    input: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m skillrt ARGS`` to the end."""
    return subprocess.run(
        [sys.executable, "-m", "skillrt", *args],
        env=env,
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# argv: the report's path, then the command's arguments. The process writes the modules it
# had loaded at exit (and ``<TaskRecord built>`` when the record's validator was built: it is
# deferred to its first use).
_REPORTING_MODULES = """
import atexit, json, sys
path = sys.argv.pop(1)
def report():
    found = sorted(sys.modules)
    records = sys.modules.get("skillrt._state.records")
    if records is not None and records.TaskRecord.__pydantic_complete__:
        found.append("<TaskRecord built>")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(found, fh)
atexit.register(report)
from skillrt.cli import main
main()
"""


def skillrt_reporting_modules(
    *args: str, env: dict[str, str], cwd: Path, report: Path
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``skillrt ARGS`` in a process of its own; its result and the modules it had loaded
    (written to ``report``)."""
    done = subprocess.run(
        [sys.executable, "-c", _REPORTING_MODULES, str(report), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done, json.loads(report.read_text(encoding="utf-8"))


def start_skillrt(*args: str, env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """Start ``python -m skillrt ARGS`` with stdout and stderr piped (stdin closed)."""
    return subprocess.Popen(
        [sys.executable, "-m", "skillrt", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_until(stream: Any, marker: str, limit: int = 500) -> list[str]:
    """Lines of ``stream`` up to and including the first containing ``marker``."""
    seen: list[str] = []
    for _ in range(limit):
        line = stream.readline()
        if not line:
            raise AssertionError(f"{marker!r} never came; got:\n{''.join(seen)}")
        seen.append(line)
        if marker in line:
            return seen
    raise AssertionError(f"{marker!r} not in the first {limit} lines")


LOADING_ENV = "SKILLRT_TEST_LOADING"  # a file: written when the slow model starts loading


def slow_loading_model() -> Any:
    """``llm.factory`` for a chat whose start-up takes a minute: an embedded-like model (its
    ``provider`` is ``local``, so the chat loads it before the first prompt) whose ``load``
    writes the file ``$SKILLRT_TEST_LOADING``, then waits."""
    import asyncio

    from skillrt.testing import FunctionModel

    class SlowLoading(FunctionModel):
        provider = "local"

        async def load(self) -> None:
            Path(os.environ[LOADING_ENV]).write_text("loading", encoding="utf-8")
            await asyncio.sleep(60)

    return SlowLoading(lambda messages, options: "hi")
