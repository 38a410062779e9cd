"""Docs that run: every Python example of the README and of docs/ runs, and the site builds."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.docs_support import DOCS, README, ROOT, Example, all_examples, run_example

EXAMPLES = all_examples()


def test_the_docs_have_examples() -> None:
    # The collection itself works: a broken pattern would quietly run nothing.
    assert len(EXAMPLES) >= 4
    assert {e.path for e in EXAMPLES} >= {README, DOCS / "python-api.md", DOCS / "durability.md"}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_python_example_runs(example: Example, isolated: Path) -> None:
    run_example(example, isolated)


def test_the_file_store_example_does_what_it_says(isolated: Path) -> None:
    [example] = [e for e in EXAMPLES if e.path == DOCS / "durability.md"]
    out = run_example(example, isolated)
    assert "['posts/new.md', 'posts/rust.md']" in out
    assert "escapes the content root" in out
    assert "posts/rust.md is locked by task task-1" in out
    assert (isolated / "posts" / "rust.md").read_text(encoding="utf-8") == "# Rust\nMore.\n"
    assert not (isolated / "posts" / "new.md").exists()
    assert list((isolated / ".skillrt" / "trash").rglob("new*.md"))


def docs_hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "scripts" / "docs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmark_table_comes_from_the_results_file(tmp_path: Path) -> None:
    hooks = docs_hooks()
    report = json.loads((ROOT / "benchmarks" / "published.json").read_text(encoding="utf-8"))
    report["results"][0]["rows"][0]["value"] = 123456.0
    fresh = tmp_path / "results.json"
    fresh.write_text(json.dumps(report), encoding="utf-8")
    page = hooks.on_page_markdown(f"# Benchmarks\n\n{hooks.MARKER}\n", page=None)
    assert hooks.MARKER not in page and "| benchmark | metric |" in page
    assert "123,456" not in page
    # A fresh run is shown when named, and a missing file says how to make one.
    assert "123,456" in hooks.results_table(fresh)
    missing = hooks.results_table(tmp_path / "nothing.json")
    assert "python -m benchmarks" in missing and "| benchmark |" not in missing


def test_readme_links_to_docs_pages_that_exist() -> None:
    links = re.findall(r"\]\((docs/[^)#\s]+)", README.read_text(encoding="utf-8"))
    assert links, "the README links to the docs pages"
    for link in links:
        assert (ROOT / link).is_file(), f"README links to a missing page: {link}"


def test_every_docs_page_is_in_the_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        assert f" {page.relative_to(DOCS).as_posix()}\n" in config, f"{page} is not in the nav"


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None
    or importlib.util.find_spec("mkdocstrings_handlers") is None,
    reason="mkdocs is not installed: pip install -e '.[docs]'",
)
def test_mkdocs_build_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env.pop("SKILLRT_BENCH_RESULTS", None)
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    # The API reference was read from the source, and the benchmark table rendered.
    reference = (site / "reference" / "runtime" / "index.html").read_text(encoding="utf-8")
    assert "process_input" in reference
    benchmarks = (site / "benchmarks" / "index.html").read_text(encoding="utf-8")
    assert "benchmark-results" not in benchmarks
    assert "µs/task" in benchmarks
    # Nothing on any page is loaded from another host (no fonts, scripts or styles from a CDN).
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        remote = re.findall(r"<(?:script|link)[^>]*(?:src|href)=\"(?:https?:)?//[^\"]*\"", html)
        assert not remote, f"{page.relative_to(site)} loads {remote}"


def test_every_event_the_runtime_and_skills_emit_is_listed_in_the_docs() -> None:
    """``rt.on`` takes any name (a plugin may emit its own), so the list in docs/python-api.md
    is where a subscriber checks its spelling: ``ai:thinking`` was emitted but not listed."""
    emitted: set[str] = set()
    for folder in ("runtime", "skills"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            emitted |= set(re.findall(r'emit\(\s*"([a-z_]+:[a-z_:]+)"', text))
    assert len(emitted) > 10  # the pattern still finds the emits
    listed = (DOCS / "python-api.md").read_text(encoding="utf-8").split("## Events", 1)[1]
    assert sorted(name for name in emitted if f"`{name}`" not in listed) == []
