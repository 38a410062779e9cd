"""EditContent on a TOML (Zola) post killed with SIGKILL at three points (in the model call,
just before the rename of the save, just after it), then resumed by a new process: the post
is at every moment either byte-identical or fully edited, its ``+++`` block byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillrt.blog.frontmatter import split_frontmatter
from tests.blog import copy_fixture
from tests.test_edit_resume import kill_in_the_model_call
from tests.toml_edit_crash_child import POST, REVISED

CHILD = Path(__file__).with_name("toml_edit_crash_child.py")


def spawn(mode: str, blog: Path, state: Path, work: Path, point: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env["XDG_CONFIG_HOME"] = str(work / "xdg")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    return subprocess.Popen(
        [sys.executable, str(CHILD), mode, str(blog), str(state), str(work), point],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_when_paused(proc: subprocess.Popen[str], work: Path) -> str:
    """SIGKILL the child at its pause (as test_edit_resume does); the point it paused at."""
    kill_in_the_model_call(proc, work)
    return (work / "paused").read_text(encoding="utf-8")


@pytest.mark.parametrize("point", ["model", "rename", "saved"])
def test_a_toml_post_is_whole_or_fully_edited_after_kill_9(tmp_path: Path, point: str) -> None:
    blog, state, work = copy_fixture("zola", tmp_path / "blog"), tmp_path / "state", tmp_path / "w"
    work.mkdir()
    post = blog / POST
    original = post.read_text(encoding="utf-8")
    block = split_frontmatter(original).block
    edited = block + "\n" + REVISED + "\n"

    assert kill_when_paused(spawn("start", blog, state, work, point), work) == point
    after_kill = post.read_text(encoding="utf-8")
    assert after_kill == (edited if point == "saved" else original)

    done = spawn("resume", blog, state, work, point)
    out, err = done.communicate(timeout=120)
    assert done.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["state"] == "COMPLETED", result
    assert post.read_text(encoding="utf-8") == edited  # the +++ block byte for byte
    assert not list(post.parent.glob(".skillrt-*.tmp"))  # no temp file left behind
    calls = (work / "calls.log").read_text(encoding="utf-8").count("edit")
    assert calls == (2 if point == "model" else 1)  # a journalled model answer is not paid twice
