"""EditContent killed (SIGKILL) during its model call, resumed by a new process, on a post
that holds a key-shaped string: the post is byte-identical outside the edit (redaction never
reaches what a step returns), and the checkpoint holds neither the key nor the post's text.
On both task stores (``store_kind``): on PostgreSQL "the checkpoint" is every row the database
holds, as well as the state folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.edit_crash_child import REVISED, SELECTION
from tests.stores import StoreKind

CHILD = Path(__file__).with_name("edit_crash_child.py")
KEY = "sk-proj-abcdefghijklmnopqrstuvwx1234"
POST = (
    "---\ntitle: Keys\ntags: [shell]\n---\n\nSet up your shell first:\n\n"
    f"```sh\nexport OPENAI_API_KEY={KEY}\n```\n\n{SELECTION}\n\nThe end.\n"
)


def spawn(mode: str, blog: Path, state: Path, work: Path, kind: StoreKind) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env.update(kind.env())
    env["XDG_CONFIG_HOME"] = str(work / "xdg")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    return subprocess.Popen(
        [sys.executable, str(CHILD), mode, str(blog), str(state), str(work)],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_in_the_model_call(proc: subprocess.Popen[str], work: Path) -> None:
    try:
        deadline = time.monotonic() + 60
        while not (work / "paused").exists() and proc.poll() is None:
            assert time.monotonic() < deadline, "the child never reached the model call"
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


@pytest.mark.parametrize("whole", [False, True], ids=["selection", "whole-body"])
def test_an_edit_killed_in_its_model_call_resumes_without_touching_the_key(
    tmp_path: Path, whole: bool, store_kind: StoreKind
) -> None:
    blog, state, work = tmp_path / "blog", tmp_path / "state", tmp_path / "child"
    (blog / "posts").mkdir(parents=True)
    work.mkdir()
    post = blog / "posts" / "keys.md"
    post.write_text(POST, encoding="utf-8")
    if whole:
        (work / "whole").touch()

    kill_in_the_model_call(spawn("start", blog, state, work, store_kind), work)
    assert post.read_text(encoding="utf-8") == POST  # nothing written yet
    on_disk = store_kind.everything_stored(state)
    assert b'"skill":"EditContent"' in on_disk  # the checkpoint is among what was searched
    assert KEY.encode() not in on_disk and KEY[:12].encode() not in on_disk
    assert b"The end." not in on_disk  # the read is journalled by reference, not by value

    store_kind.wait_for_dead_leases()
    resumed = spawn("resume", blog, state, work, store_kind)
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    assert len(report["resumable"]) == 1
    assert report["state"] == "COMPLETED", report
    edited = "fine" if whole else REVISED
    expected = POST.replace(SELECTION, "This paragraph is fine." if whole else edited)
    assert post.read_text(encoding="utf-8") == expected
    assert f"OPENAI_API_KEY={KEY}" in post.read_text(encoding="utf-8")
    assert "***" not in post.read_text(encoding="utf-8")
