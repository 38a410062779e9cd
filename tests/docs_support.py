"""The Python examples of the README and of docs/: where they are and how to run one."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"

_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Example:
    """One ```python block: its file, the line it starts on, and its code."""

    path: Path
    line: int
    code: str

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def examples(path: Path) -> list[Example]:
    text = path.read_text(encoding="utf-8")
    return [
        Example(path, text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _BLOCK.finditer(text)
    ]


def all_examples() -> list[Example]:
    return [example for path in doc_files() for example in examples(path)]


def run_example(example: Example, cwd: Path) -> str:
    """Run the example as a script in ``cwd`` (a fresh, empty folder); returns its stdout."""
    script = cwd / "example.py"
    script.write_text(example.code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"{example.name} failed:\n{done.stderr}"
    return done.stdout
