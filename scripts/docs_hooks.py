"""MkDocs hooks for the docs site (named in mkdocs.yml; run by ``mkdocs build``).

- ``on_startup`` lays the package out as it is installed, as links under ``build/docs/``:
  pyproject maps ``runtime/`` to ``skillrt`` (and ``skills/``, ``config/``
  below it), and mkdocstrings reads source files by their import path.
- ``on_page_markdown`` puts the benchmark table into ``benchmarks.md`` where it says
  ``<!-- benchmark-results -->``, rendered from ``benchmarks/published.json`` (or from the
  file named by ``SKILLRT_BENCH_RESULTS``, e.g. a fresh ``benchmarks/results.json``) by the
  same code that prints ``python -m benchmarks --markdown``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "docs"
MARKER = "<!-- benchmark-results -->"
PUBLISHED = ROOT / "benchmarks" / "published.json"


def link_package_tree() -> Path:
    """``build/docs/skillrt``: links laid out like the installed package; returns build/docs."""
    package = TREE / "skillrt"
    shutil.rmtree(TREE, ignore_errors=True)
    package.mkdir(parents=True)
    for entry in (ROOT / "runtime").iterdir():
        (package / entry.name).symlink_to(entry)
    for sub in ("skills", "config"):
        (package / sub).symlink_to(ROOT / sub)
    return TREE


def results_path() -> Path:
    named = os.environ.get("SKILLRT_BENCH_RESULTS")
    return Path(named).resolve() if named else PUBLISHED


def results_table(path: Path) -> str:
    """The results as a Markdown table, or how to produce them when the file is missing."""
    if not path.is_file():
        return (
            f'!!! note "No results file"\n    `{path.name}` is missing. Run'
            " `python -m benchmarks` (it writes `benchmarks/results.json`), then build with"
            " `SKILLRT_BENCH_RESULTS=benchmarks/results.json mkdocs build`, or copy it to"
            " `benchmarks/published.json` to publish it.\n"
        )
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks.__main__ import markdown

    report = json.loads(path.read_text(encoding="utf-8"))
    return markdown(report)


def on_startup(**_: Any) -> None:
    # Before any plugin's on_config: mkdocstrings drops search paths that do not exist yet.
    link_package_tree()


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, results_table(results_path()))
