"""pydantic's plug-in lookup in ``skillrt tasks`` and ``skillrt doctor`` (cli/plugins.py): skipped
only when no installed distribution can declare a plug-in; a plug-in installed is loaded and
called as before. Real processes, real distributions on ``sys.path`` (folders written here).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillrt.cli import plugins
from tests.cli_support import cli_env, write_script

_PLUGIN = '''
import os

class Recorder:
    """Writes the name of every schema pydantic makes a validator for."""

    def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind,
                             config, plugin_settings):
        with open(os.environ["PLUGIN_LOG"], "a", encoding="utf-8") as fh:
            fh.write(f"{schema_type_path.name}\\n")
        return None, None, None

plugin = Recorder()
'''

# argv: the report's path, the entry ("quick" or "typer"), then the command's arguments.
_RUN = """
import atexit, json, sys
report, entry = sys.argv.pop(1), sys.argv.pop(1)
def done():
    loader = sys.modules.get("pydantic.plugin._loader")
    modules = sorted(sys.modules)
    from skillrt.cli.plugins import plugins_possible
    with open(report, "w", encoding="utf-8") as fh:
        json.dump({"modules": modules, "possible": plugins_possible(),
                   "loader": None if loader is None else type(loader).__name__}, fh)
atexit.register(done)
if entry == "quick":
    from skillrt.cli import main
else:
    from skillrt.cli.commands import main
main()
"""


def _dist(folder: Path, name: str, entry_points: str | bytes | None) -> Path:
    """A distribution's metadata folder, as pip installs one."""
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        data = entry_points.encode() if isinstance(entry_points, str) else entry_points
        (info / "entry_points.txt").write_bytes(data)
    return info


def _seed(root: Path) -> None:
    from skillrt._state.embedded.checkpoints import CheckpointStore
    from skillrt._state.records import TaskRecord

    (root / "posts").mkdir(parents=True)
    (root / "posts" / "hello.md").write_text("# Hello\n\nA post.\n", encoding="utf-8")
    store = CheckpointStore(root / ".skillrt" / "checkpoints")
    then = time.time() - 3 * 3600
    store.apply(
        [
            TaskRecord(
                id="task0001",
                session_id="s",
                state="EXECUTING",
                raw_input="write an article about tags",
                skill="WriteArticle",
                steps={"outline": "outline"},
                created_at=then - 60,
                updated_at=then,
            )
        ],
        [],
    )
    store.close()


def _run(
    tmp_path: Path, root: Path, entry: str, *args: str, **extra: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    report = tmp_path / f"report-{entry}.json"
    script = write_script(tmp_path / "script.json", [])
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(report), entry, *args],
        env=cli_env(root, script, HOME=str(tmp_path), **extra),
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    found: dict[str, object] = json.loads(report.read_text(encoding="utf-8"))
    return done, found


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    root = tmp_path / "blog"
    _seed(root)
    return root


@pytest.mark.parametrize("args", [("tasks",), ("doctor", "--no-generate")])
def test_no_plugin_installed_no_lookup(tmp_path: Path, blog: Path, args: tuple[str, ...]) -> None:
    done, found = _run(tmp_path, blog, "quick", *args)
    assert done.returncode in (0, 1), done.stderr
    if found["possible"]:  # this environment has a distribution mentioning pydantic
        pytest.skip("an installed distribution's entry points mention pydantic")
    assert "task0001" in done.stdout or args[0] == "doctor"
    assert found["loader"] == "_NoPlugins"
    if args[0] == "tasks":  # doctor reads versions with importlib.metadata anyway
        assert "importlib.metadata" not in found["modules"]
        assert "email" not in found["modules"]


@pytest.mark.parametrize("args", [("tasks",), ("tasks", "--json"), ("doctor", "--no-generate")])
def test_a_plugin_installed_is_loaded_and_called_as_before(
    tmp_path: Path, blog: Path, args: tuple[str, ...]
) -> None:
    site = tmp_path / "site"
    _dist(site, "recorder", "[pydantic]\nrecorder = recorder_plugin:plugin\n")
    (site / "recorder_plugin.py").write_text(_PLUGIN, encoding="utf-8")
    seen: dict[str, tuple[object, ...]] = {}
    for entry in ("quick", "typer"):
        log = tmp_path / f"plugin-{entry}.log"
        done, found = _run(tmp_path, blog, entry, *args, PYTHONPATH=str(site), PLUGIN_LOG=str(log))
        assert found["loader"] == "module"  # pydantic's own
        models = log.read_text(encoding="utf-8").split()
        # Typer's path builds the same models and more (the commands' modules): the quick
        # path's models were all seen by the plug-in, as they were through Typer.
        assert models, done.stderr
        seen[entry] = (done.returncode, done.stdout, models)
    assert seen["quick"][:2] == seen["typer"][:2]
    assert set(seen["quick"][2]) <= set(seen["typer"][2])  # type: ignore[arg-type]


# --- what plugins_possible reads -----------------------------------------------------------


@pytest.fixture
def isolated_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``sys.path`` of one folder, and no finder but the path finder listing distributions."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site)])
    monkeypatch.setattr(
        sys,
        "meta_path",
        [f for f in sys.meta_path if not hasattr(f, "find_distributions")]
        + [importlib.machinery.PathFinder],
    )
    yield site


def _found_by_importlib() -> list[str]:
    return [ep.name for ep in importlib.metadata.entry_points(group="pydantic")]


@pytest.mark.parametrize(
    ("text", "declared"),
    [
        (None, False),
        ("", False),
        ("[console_scripts]\ntool = tool:main\n", False),
        ("[pydantic]\nrec = rec:plugin\n", True),
        ("  [pydantic]  \n rec = rec:plugin\n", True),
        ("[console_scripts]\npydantic-tool = tool:main\n", False),  # a mention only
        ("[pydantic.v1]\nrec = rec:plugin\n", False),
        (b"[console_scripts]\ntool = t\xe9:main\n", None),  # not UTF-8: the lookup fails
    ],
)
def test_any_distribution_declaring_the_group_is_seen(
    isolated_path: Path, text: str | bytes | None, declared: bool | None
) -> None:
    _dist(isolated_path, "one", "[console_scripts]\nother = other:main\n")
    _dist(isolated_path, "two", text)
    if declared is None:
        with pytest.raises(UnicodeDecodeError):
            _found_by_importlib()
        assert plugins.plugins_possible()
        return
    assert bool(_found_by_importlib()) is declared
    # Never False when importlib.metadata finds one; True also for a mere mention.
    assert plugins.plugins_possible() is (text is not None and "pydantic" in str(text))


def test_an_egg_info_folder_and_the_current_folder_are_read(
    isolated_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = isolated_path / "old.egg-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[pydantic]\nrec = rec:plugin\n")
    assert _found_by_importlib() == ["rec"] and plugins.plugins_possible()
    (info / "entry_points.txt").unlink()
    assert not plugins.plugins_possible()
    here = tmp_path / "here"
    _dist(here, "local", "[pydantic]\nrec = rec:plugin\n")
    monkeypatch.chdir(here)
    monkeypatch.setattr(sys, "path", ["", str(isolated_path)])
    assert _found_by_importlib() == ["rec"] and plugins.plugins_possible()


def test_what_cannot_be_read_as_folders_is_left_to_the_lookup(
    isolated_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _dist(isolated_path, "plain", "[console_scripts]\ntool = tool:main\n")
    missing = tmp_path / "missing"
    monkeypatch.setattr(sys, "path", [str(isolated_path), str(missing)])
    assert not plugins.plugins_possible()  # a missing folder holds nothing
    archive = tmp_path / "dists.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped-1.0.dist-info/METADATA", "Name: zipped\nVersion: 1.0\n")
        zf.writestr("zipped-1.0.dist-info/entry_points.txt", "[pydantic]\nrec = rec:plugin\n")
    monkeypatch.setattr(sys, "path", [str(isolated_path), str(archive)])
    assert _found_by_importlib() == ["rec"] and plugins.plugins_possible()
    egg = tmp_path / "thing.egg"
    egg.mkdir()
    monkeypatch.setattr(sys, "path", [str(isolated_path), str(egg)])
    assert plugins.plugins_possible()

    class Lister:
        @staticmethod
        def find_distributions(*args: object, **kwargs: object) -> list[object]:
            return []

    monkeypatch.setattr(sys, "path", [str(isolated_path)])
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Lister])
    assert plugins.plugins_possible()


def test_the_stand_in_gives_pydantics_own_names_on_demand(tmp_path: Path) -> None:
    code = """
import sys
from skillrt.cli.plugins import skip_pydantic_plugin_lookup
assert skip_pydantic_plugin_lookup()
assert not skip_pydantic_plugin_lookup()  # once
from pydantic import BaseModel
class M(BaseModel):
    a: int = 1
assert M(a="2").a == 2
assert "importlib.metadata" not in sys.modules
from pydantic.plugin._loader import get_plugins
assert list(get_plugins()) == []
import pydantic.plugin._loader as loader
assert loader._plugins is None  # pydantic's own module, loaded for a name it has
assert type(sys.modules["pydantic.plugin._loader"]).__name__ == "module"
assert list(sys.modules["pydantic.plugin._loader"].get_plugins()) == []
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.stdout == "ok\n", done.stderr
