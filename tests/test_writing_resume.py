"""WriteArticle killed (SIGKILL) after its outline, resumed by a new process: the outline is
not generated again, the article is saved once, complete, with valid frontmatter. On both task
stores (``store_kind``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import frontmatter

from tests.blog import copy_blog
from tests.stores import StoreKind
from tests.writing_support import OUTLINE_EN

CHILD = Path(__file__).with_name("writing_crash_child.py")


def spawn(mode: str, blog: Path, state: Path, work: Path, kind: StoreKind) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env.update(kind.env())
    env["XDG_CONFIG_HOME"] = str(work / "xdg")
    return subprocess.Popen(
        [sys.executable, str(CHILD), mode, str(blog), str(state), str(work)],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def calls(work: Path) -> list[str]:
    log = work / "calls.log"
    return log.read_text(encoding="utf-8").split() if log.exists() else []


def test_write_article_killed_after_the_outline_resumes_without_redoing_it(
    tmp_path: Path, store_kind: StoreKind
) -> None:
    blog = copy_blog(tmp_path / "blog")
    state, work = tmp_path / "state", tmp_path / "child"
    work.mkdir()
    before = sorted(p.name for p in (blog / "posts").rglob("*.md"))

    proc = spawn("start", blog, state, work, store_kind)
    try:
        deadline = time.monotonic() + 60
        while not (work / "paused").exists() and proc.poll() is None:
            assert time.monotonic() < deadline, "the child never reached the outline"
            time.sleep(0.01)
        if proc.poll() is not None:
            raise AssertionError(f"child ended early:\n{proc.communicate()[1]}")
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert calls(work) == ["outline"]
    assert sorted(p.name for p in (blog / "posts").rglob("*.md")) == before  # nothing saved

    store_kind.wait_for_dead_leases()
    resumed = spawn("resume", blog, state, work, store_kind)
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    task_id = (work / "task_id").read_text(encoding="utf-8")
    assert report["resumable"] == [task_id]
    assert report["state"] == "COMPLETED", report
    assert report["left"] == []
    sections = len(OUTLINE_EN["sections"])
    assert calls(work) == ["outline"] + ["section"] * sections + ["extract"]  # outline once

    path = report["data"]["path"]
    assert path == "posts/rust-ownership.md"
    post = frontmatter.load(blog / path)
    assert post["title"] == OUTLINE_EN["title"]
    assert post.content.count("## ") == sections
    assert sorted(p.name for p in (blog / "posts").rglob("*.md")) == sorted(
        [*before, "rust-ownership.md"]
    )
