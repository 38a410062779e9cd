"""Undo: every write keeps the version before it; ``rt.undo`` restores it byte for byte for an
edit, a translation, a new post and a deleted one, also in a new runtime (after a restart);
a post changed since the write is not undone; the kept versions are bounded."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from skillrt.skills.writing.undoing import is_undo
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import writing_runtime

POST = "posts/rust-smart-pointers.md"


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


def snapshot(blog: Path) -> dict[str, str]:
    return {
        p.relative_to(blog).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(blog.rglob("*"))
        if p.is_file() and ".skillrt" not in p.parts
    }


async def run_then_undo(blog: Path, answers: list[Any], name: str, params: dict[str, Any]) -> Any:
    """Run a skill in one runtime, undo in a second one (a restart in between)."""
    before = snapshot(blog)
    rt = writing_runtime(blog, ScriptedModel(answers))
    msg = await rt.run_skill(name, params)
    await rt.close()
    assert msg.state in ("COMPLETED", "WAITING_INPUT"), msg.content
    assert snapshot(blog) != before
    rt = writing_runtime(blog, ScriptedModel([]))
    undone = await rt.undo()
    await rt.close()
    assert undone.state == "COMPLETED" and undone.data["outcome"] == "done", undone.content
    assert snapshot(blog) == before  # byte for byte, every file
    return undone


async def test_undo_an_edit_after_a_restart(blog: Path) -> None:
    original = (blog / POST).read_bytes()
    undone = await run_then_undo(
        blog, ["A new body.\n"], "EditContent", {"instruction": "rewrite it", "path": POST}
    )
    assert undone.data == {
        "path": POST,
        "action": "edit",
        "undone_task": undone.data["undone_task"],
        "outcome": "done",
    }
    assert (blog / POST).read_bytes() == original
    assert "Undid the edit" in undone.content


async def test_undo_a_translation_and_a_new_post(blog: Path) -> None:
    chinese = "智能指针在堆上保存值，并负责释放它们。"
    undone = await run_then_undo(
        blog, ["智能指针", chinese], "Translate", {"path": POST, "language": "Chinese"}
    )
    assert undone.data["action"] == "create" and undone.data["path"].endswith("-zh.md")
    undone = await run_then_undo(blog, [], "CreateArticle", {"title": "A fresh post"})
    assert undone.data["path"] == "posts/a-fresh-post.md"


async def test_undo_a_delete_brings_the_post_back(blog: Path) -> None:
    before = snapshot(blog)
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    asked = await rt.process_input(f"delete {POST}")
    assert asked.state == "WAITING_INPUT", asked.content
    done = await rt.process_input("yes")
    assert done.data.get("deleted") is True and not (blog / POST).exists()
    assert any(p.is_file() for p in (blog.parent / "state" / "trash").rglob("*"))
    await rt.close()
    rt = writing_runtime(blog, ScriptedModel([]))
    undone = await rt.undo(POST)
    await rt.close()
    assert undone.data["action"] == "delete", undone.content
    assert snapshot(blog) == before
    trash = blog.parent / "state" / "trash"  # the state folder of writing_runtime
    assert not any(p.is_file() for p in trash.rglob("*"))  # taken out of the trash


async def test_undo_refuses_a_post_changed_since_and_says_when_there_is_nothing(
    blog: Path,
) -> None:
    rt = writing_runtime(blog, ScriptedModel(["A new body.\n"]))
    nothing = await rt.undo()
    assert nothing.state == "ERROR" and nothing.data["error"] == "nothing_to_undo"
    await rt.run_skill("EditContent", {"instruction": "rewrite it", "path": POST})
    (blog / POST).write_text("edited by hand\n", encoding="utf-8")
    changed = await rt.undo(POST)
    assert changed.data["error"] == "changed" and "changed after" in changed.content
    assert (blog / POST).read_text(encoding="utf-8") == "edited by hand\n"
    await rt.close()


async def test_the_kept_versions_are_bounded(blog: Path) -> None:
    rt = writing_runtime(blog, ScriptedModel([f"Body {i}.\n" for i in range(4)]), undo={"keep": 2})
    for _ in range(4):
        msg = await rt.run_skill("EditContent", {"instruction": "rewrite it", "path": POST})
        assert msg.state == "COMPLETED", msg.content
    assert len(list((blog.parent / "state" / "versions").glob("*.json"))) == 2
    assert (await rt.undo()).data["outcome"] == "done"
    assert (blog / POST).read_text(encoding="utf-8").endswith("Body 2.\n")
    await rt.close()


def test_a_version_is_never_kept_cut_short_nor_read_from_a_fifo(tmp_path: Path) -> None:
    """``keep`` reads the post as ``FileStore.read`` does: a post over ``max_post_bytes`` is
    refused (an undo would have restored a cut copy), a FIFO is refused, never waited on."""
    import os

    from skillrt.blog.files import FileStore
    from skillrt.blog.versions import VersionStore
    from skillrt.exceptions import PathNotAllowed, UserError

    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts" / "big.md").write_text("x" * 5000, encoding="utf-8")
    os.mkfifo(blog / "posts" / "pipe.md")
    files = FileStore(blog, max_read_bytes=4096)
    versions = VersionStore(tmp_path / "versions")
    with pytest.raises(UserError, match="max_post_bytes"):
        versions.keep(files, "posts/big.md", "delete", key="t:big", after=None)
    with pytest.raises(PathNotAllowed, match="not a regular file"):
        versions.keep(files, "posts/pipe.md", "delete", key="t:pipe", after=None)
    assert versions.versions() == []
    versions.keep(files, "posts/new.md", "edit", key="t:new", after=None)  # not there yet
    assert [v.had_before for v in versions.versions()] == [False]


# --- preview before writing: edit.confirm ---------------------------------------------------


async def test_confirm_shows_the_diff_and_writes_only_on_yes(blog: Path) -> None:
    original = (blog / POST).read_bytes()
    rt = writing_runtime(blog, ScriptedModel(["A new body.\n", "Another body.\n"]))
    await rt.initialize()
    context = {"current_file": POST, "confirm": True}  # what the chat sends
    asked = await rt.process_input("rewrite the post", context)
    assert asked.state == "WAITING_INPUT", asked.content
    assert "```diff" in asked.content and "+A new body." in asked.content
    assert (blog / POST).read_bytes() == original  # nothing written before the yes
    kept = await rt.process_input("no")
    assert kept.data["written"] is False and (blog / POST).read_bytes() == original
    await rt.process_input("rewrite the post", context)
    done = await rt.process_input("yes")
    assert done.state == "COMPLETED" and done.data["changed"] is True, done.content
    assert (blog / POST).read_text(encoding="utf-8").endswith("Another body.\n")
    await rt.close()


async def test_a_request_typed_where_the_diff_asks_yes_or_no_writes_nothing(blog: Path) -> None:
    """A new request typed at the diff's question was read as "no" and lost: it is run now,
    and the post stays as it was."""
    original = (blog / POST).read_bytes()
    llm = ScriptedModel(["A new body.\n", "The post says hello.", "Another body.\n"])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        context = {"current_file": POST, "confirm": True}
        asked = await rt.process_input("rewrite the post", context)
        assert asked.state == "WAITING_INPUT", asked.content
        other = await rt.process_input("summarize the post", {"current_file": POST})
        assert other.task_id != asked.task_id and other.data.get("source") == POST, other.content
        assert (blog / POST).read_bytes() == original
        # "save it" there is a yes.
        await rt.process_input("rewrite the post", context)
        done = await rt.process_input("save it")
    finally:
        await rt.close()
    assert done.state == "COMPLETED" and done.data["changed"] is True, done.content
    assert (blog / POST).read_text(encoding="utf-8").endswith("Another body.\n")


async def test_confirm_is_off_unless_asked_and_on_from_the_setting(blog: Path) -> None:
    rt = writing_runtime(blog, ScriptedModel(["A new body.\n"]))
    msg = await rt.run_skill("EditContent", {"instruction": "rewrite it", "path": POST})
    assert msg.state == "COMPLETED"  # the Python API, run and HTTP: no question by default
    await rt.close()
    rt = writing_runtime(blog, ScriptedModel(["B.\n", "C.\n"]), edit={"confirm": True})
    msg = await rt.run_skill("EditContent", {"instruction": "rewrite it", "path": POST})
    assert msg.state == "WAITING_INPUT"
    assert rt.abort(msg.task_id)
    skip = await rt.run_skill(
        "EditContent", {"instruction": "rewrite it", "path": POST}, {"confirm": False}
    )
    assert skip.state == "COMPLETED", skip.content  # --yes / confirm=false skips it
    await rt.close()


# --- the doors: skillrt undo, POST /v1/undo, /undo ----------------------------------------------


def test_skillrt_undo_on_the_command_line(tmp_path: Path) -> None:
    from tests.cli_support import cli_env, make_blog, skillrt, write_script

    blog = make_blog(tmp_path)
    original = (blog / POST).read_bytes()
    env = cli_env(blog, write_script(tmp_path / "script.json", ["A new body.\n"]))
    edited = skillrt("run", "rewrite it", "--file", POST, "--json", env=env, cwd=blog)
    assert edited.returncode == 0, edited.stderr
    assert (blog / POST).read_bytes() != original
    undone = skillrt("undo", POST, "--json", env=env, cwd=blog)
    assert undone.returncode == 0, undone.stderr
    assert (blog / POST).read_bytes() == original
    again = skillrt("undo", "--json", env=env, cwd=blog)
    assert again.returncode == 1 and "nothing to undo" in again.stdout.lower()


def test_skillrt_undo_of_a_path_outside_the_blog_is_a_usage_error(tmp_path: Path) -> None:
    """``skillrt undo ../../etc/passwd`` exited 1, the status of "nothing to undo", with "Cannot
    undo: path not allowed" on stdout: a path outside the blog is bad usage (2), one line on
    stderr, as ``skillrt publish`` says it."""
    from tests.cli_support import cli_env, make_blog, skillrt, write_script

    blog = make_blog(tmp_path)
    env = cli_env(blog, write_script(tmp_path / "script.json", []))
    for path in ("../../etc/passwd", "/etc/passwd"):
        done = skillrt("undo", path, env=env, cwd=blog)
        assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
        assert done.stderr.startswith("skillrt: error: path not allowed"), done.stderr
        assert done.stdout == ""
    inside = skillrt("undo", POST, env=env, cwd=blog)  # inside: nothing to undo (1)
    assert inside.returncode == 1 and "nothing to undo" in inside.stdout.lower()


def test_post_v1_undo(tmp_path: Path) -> None:
    from tests.server_support import LiveServer, make_runtime

    runtime = make_runtime(tmp_path, ScriptedModel(["A new body.\n"]))
    blog = tmp_path / "blog"
    original = (blog / POST).read_bytes()
    server = LiveServer(runtime)
    try:
        with server.client() as http:
            run = http.post(
                "/v1/skills/EditContent/run",
                json={"params": {"instruction": "rewrite it", "path": POST}},
            )
            assert run.json()["state"] == "COMPLETED", run.text
            undone = http.post("/v1/undo", json={"path": POST})
            assert undone.status_code == 200 and undone.json()["data"]["action"] == "edit"
            assert undone.headers["X-Skillrt-Exit-Code"] == "0"
            assert (blog / POST).read_bytes() == original
            nothing = http.post("/v1/undo", json={})
            assert nothing.json()["data"]["error"] == "nothing_to_undo"
    finally:
        server.stop()


# --- a crash between the model step and the save ----------------------------------------------


def test_an_edit_killed_before_its_save_resumes_and_still_undoes_to_the_original(
    tmp_path: Path,
) -> None:
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.undo_crash_child import REVISED

    child = Path(__file__).with_name("undo_crash_child.py")
    blog, state, work = tmp_path / "blog", tmp_path / "state", tmp_path / "child"
    (blog / "posts").mkdir(parents=True)
    work.mkdir()
    post = blog / "posts" / "keys.md"
    original = b"---\ntitle: Keys  # mine\n---\n\nThe original body,\r\nwith CRLF.\n"
    post.write_bytes(original)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)

    def spawn(mode: str) -> subprocess.Popen[str]:
        args = [sys.executable, str(child), mode, str(blog), str(state), str(work)]
        return subprocess.Popen(
            args, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    proc = spawn("start")
    try:
        deadline = time.monotonic() + 60
        while not (work / "paused").exists():
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the child never reached the save"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert post.read_bytes() == original  # killed before the save: nothing written

    resumed = spawn("resume")
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    assert len(report["resumable"]) == 1 and report["state"] == "COMPLETED", report
    assert report["edited"].endswith(REVISED)  # the resumed task saved the model's text
    assert report["undone"]["outcome"] == "done" and report["undone"]["action"] == "edit"
    assert post.read_bytes() == original  # byte for byte, CRLF and comment included


async def test_undo_a_publish(blog: Path) -> None:
    draft = blog / "posts" / "draft.md"
    draft.write_bytes(b"---\ntitle: Draft\ndraft: true  # not yet\n---\n\nBody.\n")
    before = snapshot(blog)
    rt = writing_runtime(blog, ScriptedModel([]))
    done = await rt.publish("posts/draft.md")
    assert done.changed and snapshot(blog) != before
    undone = await rt.undo()
    await rt.close()
    assert undone.data["action"] == "edit", undone.content
    assert snapshot(blog) == before


def test_the_chat_previews_an_edit_and_undoes_it(tmp_path: Path) -> None:
    from tests.cli_support import cli_env, make_blog, write_script
    from tests.test_cli_chat import quit_with_ctrl_d, spawn_chat

    blog = make_blog(tmp_path)
    original = (blog / POST).read_bytes()
    child = spawn_chat(cli_env(blog, write_script(tmp_path / "s.json", ["A new body.\n"])), blog)
    child.expect("›")
    child.sendline(f"rewrite {POST}")
    child.expect("Write this change")  # the diff first, then the question
    assert (blog / POST).read_bytes() == original
    child.sendline("yes")
    child.expect("Edited")
    assert (blog / POST).read_bytes() != original
    child.sendline("/undo")
    child.expect("Undid the edit")
    assert (blog / POST).read_bytes() == original
    assert quit_with_ctrl_d(child) == 0


# --- undo refused, never raised ----------------------------------------------------------------


async def test_undo_of_a_post_another_task_holds_is_refused_as_busy(blog: Path) -> None:
    """A LockConflict escaped ``rt.undo`` raw: two sessions undoing at once, the loser got the
    exception, and ``skillrt undo`` printed a traceback. It is a refusal naming the holder."""
    rt = writing_runtime(blog, ScriptedModel(["A new body.\n"]))
    await rt.run_skill("EditContent", {"instruction": "rewrite it", "path": POST})
    edited = (blog / POST).read_bytes()
    locks = rt._run.state.locks
    locks.acquire(POST, "other-task")
    busy = await rt.undo(POST)
    assert busy.state == "ERROR" and busy.data["error"] == "busy", busy.content
    assert "other-task" in busy.content and "try again" in busy.content
    assert (blog / POST).read_bytes() == edited
    locks.release_task_locks("other-task")
    assert (await rt.undo(POST)).data["outcome"] == "done"  # the record was kept for later
    await rt.close()


async def test_a_missing_kept_version_is_refused_and_its_record_dropped(blog: Path) -> None:
    """The blob gone, ``rt.undo`` raised FileNotFoundError (the CLI: "the state folder cannot
    be used") and the record stayed, so every later undo hit it."""
    rt = writing_runtime(blog, ScriptedModel(["A new body.\n"]))
    await rt.run_skill("EditContent", {"instruction": "rewrite it", "path": POST})
    for blob in (blog.parent / "state" / "versions").glob("*.blob"):
        blob.unlink()
    missing = await rt.undo(POST)
    assert missing.state == "ERROR" and missing.data["error"] == "refused", missing.content
    assert f"the kept version of {POST} is missing" in missing.content
    nothing = await rt.undo()
    assert nothing.data["error"] == "nothing_to_undo", nothing.content
    await rt.close()


async def test_a_record_of_a_write_that_never_happened_does_not_block_undo(blog: Path) -> None:
    """A tag rename that found the post locked, a save refused as FileChanged, a kill -9
    between the record and the write: each left a record, and undo then said "changed after
    that write" of a post nothing had changed; the true edit before could not be undone."""
    original = (blog / POST).read_bytes()
    rt = writing_runtime(blog, ScriptedModel(["A new body.\n"]))
    await rt.run_skill("EditContent", {"instruction": "rewrite it", "path": POST})
    files, versions = rt._run.files, rt._run.versions
    versions.keep(files, POST, "edit", key="never-written:save", after="0" * 64)
    versions.keep(files, "posts/never-made.md", "create", key="never-made:save", after="1" * 64)
    undone = await rt.undo(POST)
    assert undone.data["outcome"] == "done" and undone.data["action"] == "edit", undone.content
    assert (blog / POST).read_bytes() == original
    assert (await rt.undo()).data["error"] == "nothing_to_undo"
    await rt.close()


@pytest.mark.parametrize("keep", [50, 1])
async def test_one_undo_of_a_publish_that_moved_the_draft_brings_it_back(
    tmp_path: Path, keep: int
) -> None:
    """Publishing a Jekyll draft moves it into _posts/: the first undo put the published post
    in the trash and left the draft there too, the post in neither place; with undo.keep = 1
    the draft's half was pruned at once. One undo now brings the draft back."""
    from tests.blog import copy_fixture

    blog = copy_fixture("jekyll", tmp_path / "blog")
    before = snapshot(blog)
    rt = writing_runtime(blog, ScriptedModel([]), undo={"keep": keep})
    done = await rt.publish("_drafts/unfinished-idea.md")
    assert done.moved_from == "_drafts/unfinished-idea.md" and snapshot(blog) != before
    undone = await rt.undo()
    assert undone.state == "COMPLETED" and undone.data["action"] == "publish", undone.content
    assert undone.data["path"] == "_drafts/unfinished-idea.md"
    assert "Undid the publish" in undone.content and done.path in undone.content
    assert snapshot(blog) == before  # byte for byte, the published copy gone
    trash = [p.name for p in (tmp_path / "state" / "trash").rglob("*") if p.is_file()]
    assert trash and all(name.startswith("2") for name in trash)  # the draft's copy taken out
    assert (await rt.undo()).data["error"] == "nothing_to_undo"
    await rt.close()


async def test_a_post_with_a_long_chinese_name_goes_to_the_trash_and_comes_back(
    blog: Path,
) -> None:
    """80 "长" (240 bytes) plus ".YYYYmmddTHHMMSS.ffffff.md" went over the 255-byte name
    limit: the delete failed with a raw "[Errno 36] File name too long" naming both paths."""
    name = "posts/" + "长" * 80 + ".md"
    (blog / name).write_bytes(b"---\ntitle: long\n---\n\nbody\n")
    before = snapshot(blog)
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    asked = await rt.process_input(f"delete {name}")
    assert asked.state == "WAITING_INPUT", asked.content
    done = await rt.process_input("yes")
    assert done.data.get("deleted") is True and not (blog / name).exists(), done.content
    trashed = [p for p in (blog.parent / "state" / "trash").rglob("*") if p.is_file()]
    assert len(trashed) == 1 and len(trashed[0].name.encode("utf-8")) <= 255
    assert trashed[0].name.startswith("长" * 70) and trashed[0].name.endswith(".md")
    undone = await rt.undo(name)
    assert undone.data["action"] == "delete", undone.content
    assert snapshot(blog) == before
    await rt.close()


SQLITE = "posts/sqlite-fts5.md"
GO = "posts/go-concurrency.md"


async def test_an_undo_asked_in_words_restores_the_post_it_names(blog: Path) -> None:
    """ "undo the change to the sqlite post" was an edit's instruction, sent to the model with
    the post (the open one, another post, as the words after "to" were not read): the kept
    version was never restored. Now the post it names gets its last change undone, with no
    model, and the reply shows what came back; "undo" again has nothing left to undo there,
    and a post changed by hand since its write is not undone."""
    sqlite, go = (blog / SQLITE).read_bytes(), (blog / GO).read_bytes()
    rt = writing_runtime(blog, ScriptedModel(["A new sqlite body.\n", "A new go body.\n"]))
    for path in (SQLITE, GO):
        msg = await rt.run_skill("EditContent", {"instruction": "rewrite it", "path": path})
        assert msg.state == "COMPLETED", msg.content
    edited_go = (blog / GO).read_bytes()
    undo = {"instruction": "undo the change to the sqlite post"}
    undone = await rt.run_skill("EditContent", undo, {"current_file": GO})
    assert undone.state == "COMPLETED", undone.content
    assert (blog / SQLITE).read_bytes() == sqlite and (blog / GO).read_bytes() == edited_go
    assert f"Undid the last change to `{SQLITE}`" in undone.content
    assert "-A new sqlite body." in undone.content
    again = await rt.run_skill("EditContent", {**undo, "path": SQLITE})
    assert again.state == "ERROR" and again.data["error"] == "nothing_to_undo_here"
    (blog / GO).write_bytes(edited_go + b"\nBy hand.\n")
    changed = await rt.run_skill("EditContent", {"instruction": "撤销对这篇文章的修改", "path": GO})
    assert changed.data["error"] == "undo_changed_since", changed.content
    assert (blog / GO).read_bytes() == edited_go + b"\nBy hand.\n"
    (blog / GO).write_bytes(edited_go)
    back = await rt.run_skill("EditContent", {"instruction": "revert my last edit", "path": GO})
    await rt.close()
    assert back.state == "COMPLETED", back.content
    assert (blog / GO).read_bytes() == go


@pytest.mark.parametrize(
    ("instruction", "undo"),
    [
        ("undo the title change", True),
        ("roll back the go post to its previous version", True),
        ("撤销上一次修改", True),
        ("把 sqlite 那篇文章恢复原样", True),
        ("把它改回去", True),
        ("把标题改回去", False),  # the title's edit
        ("undo the bold in the intro", False),  # an edit of the words
        ("revert the title to Old notes", False),  # a title set
        ("reverse the order of the sections", False),
        ("撤回发布这篇文章", False),  # unpublish
    ],
)
def test_an_undo_asked_in_words_is_told_from_an_edit(instruction: str, undo: bool) -> None:
    assert is_undo(instruction) is undo


@pytest.mark.parametrize("words", ["undo", "undo that", "undo my last edit", "撤销"])
async def test_an_undo_typed_after_an_edit_undoes_it(blog: Path, words: str) -> None:
    """A bare "undo" typed over HTTP or MCP (``process_input``; the REPL reads it as /undo)
    was small talk ("Happy to help…"), and "undo my last edit" a menu of choices: nothing
    was undone. It is EditContent's undo of the post in focus now, byte for byte."""
    original = (blog / POST).read_bytes()
    rt = writing_runtime(blog, ScriptedModel(["A new body.\n"]))
    await rt.initialize()
    done = await rt.process_input("rewrite the post", {"current_file": POST})
    assert done.state == "COMPLETED" and (blog / POST).read_bytes() != original, done.content
    undone = await rt.process_input(words)
    await rt.close()
    assert undone.state == "COMPLETED", undone.content
    assert undone.data.get("undone") is True, undone.data
    assert (blog / POST).read_bytes() == original
