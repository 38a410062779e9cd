"""Layering at import time, the curated public surface and imports that work on every OS.

``skillrt`` loads its names lazily (PEP 562), so a part imports only what it needs: the
storage layer loads nothing of the runtime but ``skillrt.exceptions``. As in httpx, every name
in ``__all__`` is importable and the list is kept sorted.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import skillrt

ROOT = Path(__file__).resolve().parent.parent
BLOG = sorted(p.stem for p in (ROOT / "runtime" / "blog").glob("*.py") if p.stem != "__init__")


def loaded_after(code: str) -> list[str]:
    """The ``skillrt`` modules a fresh interpreter has loaded after running ``code``."""
    report = "print(json.dumps(sorted(m for m in sys.modules if m.startswith('skillrt'))))"
    probe = f"{code}\nimport sys, json\n{report}"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def runtime_modules(modules: list[str]) -> set[str]:
    """The modules of ``modules`` above the blog (the blog, ``_io`` and config left out)."""
    return {
        m for m in modules if not m.startswith(("skillrt.blog", "skillrt._io", "skillrt.config"))
    }


def test_importing_skillrt_loads_nothing_else() -> None:
    assert loaded_after("import skillrt") == ["skillrt"]


@pytest.mark.parametrize("module", ["skillrt.blog", *(f"skillrt.blog.{m}" for m in BLOG)])
def test_the_blog_layer_loads_only_the_exceptions_of_the_runtime(module: str) -> None:
    assert runtime_modules(loaded_after(f"import {module}")) <= {"skillrt", "skillrt.exceptions"}


def test_every_name_in_all_is_importable() -> None:
    for name in skillrt.__all__:
        assert getattr(skillrt, name) is not None, name
    namespace: dict[str, object] = {}
    exec("from skillrt import *", namespace)
    assert set(skillrt.__all__) <= set(namespace)
    with pytest.raises(AttributeError):
        skillrt.NoSuchName  # noqa: B018


def test_all_is_sorted_and_without_repeats() -> None:
    def kind(name: str) -> tuple[int, str]:  # constants, then classes, then the rest
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    names = skillrt.__all__
    assert len(names) == len(set(names))
    assert names == sorted(names, key=kind)


def test_all_names_come_from_their_modules() -> None:
    """What ``__all__`` lists is exactly what the lazy table and the type-checking block name."""
    tree = ast.parse((ROOT / "runtime" / "__init__.py").read_text(encoding="utf-8"))
    typed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("skillrt"):
            typed.update(alias.asname or alias.name for alias in node.names)
    lazy = set(skillrt._LAZY)  # type: ignore[attr-defined]
    assert typed == lazy == set(skillrt.__all__) - {"__version__"}


def _top_level_fcntl(path: Path) -> bool:
    """Whether ``path`` imports fcntl outside an ``if sys.platform ...`` block."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Import) and any(a.name == "fcntl" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "fcntl":
            return True
        if isinstance(node, ast.Try):
            for inner in node.body:
                if isinstance(inner, ast.Import) and any(a.name == "fcntl" for a in inner.names):
                    return False  # a guarded import
    return False


def test_no_module_imports_fcntl_unguarded() -> None:
    files = [p for folder in ("runtime", "skills") for p in (ROOT / folder).rglob("*.py")]
    assert [str(p.relative_to(ROOT)) for p in files if _top_level_fcntl(p)] == []


def test_skillrt_imports_without_fcntl() -> None:
    """As on Windows: no fcntl or resource module at all."""
    code = (
        "import sys; sys.modules['fcntl'] = None; sys.modules['resource'] = None\n"
        "import skillrt, skillrt.exceptions, skillrt.storage, skillrt.blog.files\n"
        "import skillrt._state.embedded.checkpoints, skillrt._state.embedded.history\n"
        "from skillrt import AgentRuntime, State, skill, SkillResult, load_config\n"
        "import skillrt._io.faults, skillrt._state.summary, skillrt.services"
    )
    loaded = set(loaded_after(code))
    assert {"skillrt.blog.files", "skillrt.agent", "skillrt._io.faults"} <= loaded


def test_the_skill_decorator_survives_an_import_of_its_module() -> None:
    code = (
        "import skillrt.skill.definition\n"
        "from skillrt import skill\n"
        "assert callable(skill) and skill.__module__ == 'skillrt.skill.definition', skill\n"
        "from skillrt.skill.definition import Skill, SkillResult"
    )
    assert "skillrt.skill.definition" in loaded_after(code)


def test_no_module_logs_through_a_global_structlog_logger() -> None:
    """A module-level ``structlog.get_logger()`` prints to stdout in a host that configured
    nothing, unredacted; parts take the runtime's logger or ``library_logger`` instead."""
    folders = [ROOT / "runtime", ROOT / "skills"]
    found = [
        str(p.relative_to(ROOT))
        for folder in folders
        for p in folder.rglob("*.py")
        if "structlog.get_logger(" in p.read_text(encoding="utf-8")
    ]
    assert found == []


def _imports_of(path: Path) -> list[str]:
    """Every module ``path`` imports, wherever the import statement is."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_runtime_never_imports_a_skill() -> None:
    """Arrows point one way (skills -> runtime -> storage): the runtime reaches the builtin
    skills and the sections they own only through entry points."""
    crossing = [
        f"{path.relative_to(ROOT)}: {module}"
        for path in sorted((ROOT / "runtime").rglob("*.py"))
        for module in _imports_of(path)
        if module == "skillrt.skills" or module.startswith("skillrt.skills.")
    ]
    assert crossing == []


def test_loading_the_config_loads_no_skill() -> None:
    """The browser settings are read as written; the browsing skills validate them."""
    loaded = loaded_after("from skillrt import load_config\nload_config()")
    assert "skillrt.settings" in loaded
    assert [m for m in loaded if m.startswith("skillrt.skills")] == []


def test_the_package_root_holds_at_most_twelve_modules() -> None:
    """Concerns live in subpackages; the root keeps the facade and the lowest layer."""
    root = sorted(p.name for p in (ROOT / "runtime").glob("*.py"))
    assert len(root) <= 12, root


def _names_in(path: Path) -> set[str]:
    """Every identifier, attribute and imported name in ``path``'s code (not its docstrings)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.update(node.name.split("."))
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update(node.module.split("."))
    return found


def test_the_task_life_cycle_never_asks_which_backend_it_has() -> None:
    """No branch on the backend's kind in _tasks/: it names neither implementation nor a
    part of one, nor asks whether the store is remote; the protocol's calls decide."""
    kinds = {"CheckpointStore", "MemoryCheckpointStore", "PgTaskStore", "PgDatabase", "History",
             "RunLocks", "EmbeddedBackend", "PostgresBackend", "state_url", "remote", "embedded",
             "postgres", "sqlite3", "psycopg"}  # fmt: skip
    found = {
        f"{path.relative_to(ROOT)}: {sorted(kinds & _names_in(path))}"
        for path in sorted((ROOT / "runtime" / "_tasks").glob("*.py"))
        if kinds & _names_in(path)
    }
    assert found == set()


def test_old_import_paths_give_the_moved_modules() -> None:
    """Every module path the docs named before the rooms still imports, as the module itself."""
    import importlib

    moved = skillrt._MOVED  # type: ignore[attr-defined]
    assert len(moved) >= 40
    for old, new in moved.items():
        assert importlib.import_module(old) is importlib.import_module(new), old
    from skillrt.context import SkillContext
    from skillrt.storage.files import FileStore
    from skillrt.storage.locks import FileLockManager

    assert SkillContext is skillrt.SkillContext
    assert FileStore.__module__ == "skillrt.blog.files"
    assert FileLockManager.__module__ == "skillrt.blog.locks"
