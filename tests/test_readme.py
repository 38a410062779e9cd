"""The README: its two setup commands match CI, and its example runs and prints what it says.

Every other example, in the README and in docs/, is run by tests/test_docs.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.docs_support import README, examples


def python_blocks() -> list[str]:
    return [example.code for example in examples(README)]


def test_readme_starts_with_two_setup_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first = re.search(r"```sh\n(.*?)```", text, re.DOTALL)
    assert first is not None
    commands = [line for line in first.group(1).splitlines() if line.strip()]
    assert len(commands) == 2
    assert "skillrt chat" in commands[0]
    assert "pytest" in commands[1]
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    # CI installs exactly what the README's test command installs, then runs the same pytest.
    readme_install = re.search(r"pip install -e '(\.\[[a-z,]+\])'", commands[1])
    ci_install = re.search(r"pip install -q -e '(\.\[[a-z,]+\])'", ci)
    assert readme_install is not None and ci_install is not None
    assert readme_install.group(1) == ci_install.group(1)
    assert "python -m pytest" in ci and "python -m pytest" in commands[1]


def test_api_example_runs(isolated: Path) -> None:
    [example] = [b for b in python_blocks() if "asyncio.run(main())" in b]
    script = isolated / "example.py"
    script.write_text(example, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "50% drafting" in out
    assert "100% done" in out
    assert "COMPLETED frogs | old pond / a frog jumps in / the sound of water" in out
