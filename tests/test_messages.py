"""Messages that say what happened, in the user's language: a path outside the blog, a missing
file with the nearest posts, the REPL's own lines, /model without nested reasons."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pexpect
import pytest
from rich.console import Console

from skillrt.cli.display import Display
from skillrt.cli.lines import LINES, line
from skillrt.messages import ChatMessage
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog, copy_fixture
from tests.cli_support import article, cli_env, make_blog, skillrt, write_script
from tests.writing_support import writing_runtime


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("总结 docs/../../../etc/passwd", "在博客目录之外"),
        ("summarize docs/../../../etc/passwd", "is outside the blog"),
        ("总结 /etc/passwd", "在博客目录之外"),
        ("summarize ~/notes.md", "is outside the blog"),
    ],
)
async def test_a_path_outside_the_blog_is_named_as_such(
    blog: Path, request_text: str, expected: str
) -> None:
    model = ScriptedModel([])
    rt = writing_runtime(blog, model)
    try:
        msg = await rt.process_input(request_text)
    finally:
        await rt.close()
    assert expected in msg.content, msg.content
    assert msg.data["error"] == "path_not_allowed" and msg.data["outside_blog"] is True
    for asks_for_a_path in ("give a path", "给出路径", "要总结什么"):
        assert asks_for_a_path not in msg.content
    assert model.call_count == 0  # nothing was read, nothing sent to a model


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        (
            "summarize posts/rust-borowing.md",
            "`posts/rust-borowing.md` does not exist. Did you mean `posts/rust-borrowing.md`",
        ),
        (
            "总结 posts/rust-borowing.md",
            "`posts/rust-borowing.md` 不存在。你是不是要找：`posts/rust-borrowing.md`",
        ),
        ("summarize posts/zzzz-qqqq.md", "`posts/zzzz-qqqq.md` does not exist."),
        ("总结 docs/nonexistent.md", "`docs/nonexistent.md` 不存在。"),
    ],
)
async def test_a_missing_file_is_named_with_the_nearest_posts(
    blog: Path, request_text: str, expected: str
) -> None:
    rt = writing_runtime(blog, ScriptedModel([]))
    try:
        msg = await rt.process_input(request_text)
    finally:
        await rt.close()
    assert expected in msg.content, msg.content
    assert msg.data["error"] == "not_found"
    assert "Errno" not in msg.content
    assert str(blog.resolve()) not in msg.content and str(blog) not in msg.content


@pytest.mark.parametrize(
    ("path", "near"),
    [
        # A page bundle goes by its folder's name ("index" named them all alike).
        ("content/posts/photo-walks.md", ["content/posts/photo-walk/index.md"]),
        # Not a section page (_index.md), nor a post alike only in the folder's name.
        ("content/posts/nope.md", []),
        ("content/posts/json.md", ["content/posts/json-post.md"]),
    ],
)
async def test_a_missing_post_is_suggested_among_posts_only(
    tmp_path: Path, path: str, near: list[str]
) -> None:
    hugo = copy_fixture("hugo", tmp_path / "hugo")
    rt = writing_runtime(hugo, ScriptedModel([]))
    try:
        msg = await rt.run_skill("Summarize", {"path": path})
    finally:
        await rt.close()
    assert msg.data["error"] == "not_found", msg.content
    assert msg.data["suggestions"] == near, msg.content


def test_every_repl_line_has_both_languages() -> None:
    for key, (zh, en) in LINES.items():
        assert zh and en and zh != en, key
        assert any("\u4e00" <= ch <= "\u9fff" for ch in zh), key
    assert line("cancelling", "zh").startswith("正在取消任务")
    assert line("cancelling", "en").startswith("Cancelling the task")
    assert line("pausing", "zh").startswith("将在下一步暂停")


@pytest.mark.parametrize(("language", "saved"), [("zh", "已保存：posts/a.md"), ("en", "saved:")])
def test_reply_labels_follow_the_language(language: str, saved: str) -> None:
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)
    data = {"path": "posts/a.md", "next_steps": ["x"], "outcome": "done"}
    message = ChatMessage(content="Done.", data=data, state="COMPLETED")
    Display(console).reply(message, language=language)
    assert saved in out.getvalue()
    assert ("下一步：x" in out.getvalue()) == (language == "zh")


@pytest.mark.parametrize(
    ("state", "outcome", "flag"),
    [
        ("ERROR", "refused", "error"),
        ("COMPLETED", "refused", "error"),
        ("ERROR", "failed", "error"),
        ("COMPLETED", "done", "changed"),  # an edit that changed nothing
        ("COMPLETED", "done", "written"),  # a diff declined
    ],
)
def test_a_reply_that_saved_nothing_never_says_saved(state: str, outcome: str, flag: str) -> None:
    """An edit whose text failed its checks, changed nothing or was declined names the post
    it left alone in its data."""
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)
    data: dict[str, object] = {"path": "posts/a.md", "outcome": outcome}
    data[flag] = "unchecked" if flag == "error" else False
    Display(console).reply(ChatMessage(content="Nothing was saved.", data=data, state=state))
    assert "saved:" not in out.getvalue() and "posts/a.md" not in out.getvalue()


def test_chinese_session_cancels_and_pauses_in_chinese(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    slow = article("Rust", ["一。", "二。"])
    slow[1] = {"$answer": "一。", "$delay": 60}  # cancelled while its first section is written
    paused = article("Go", ["一。", "二。"])
    paused[1] = {"$answer": "一。", "$delay": 1.5}  # the pause lands after this section
    script = write_script(tmp_path / "s.json", [*slow[:2], *paused])
    child = pexpect.spawn(
        sys.executable,
        ["-m", "skillrt", "chat"],
        env=cli_env(blog, script),
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 100),
    )
    child.logfile_read = sys.stdout
    try:
        child.expect("› ")
        child.sendline("写一篇关于 Rust 所有权的文章")
        child.expect("撰写第 1/2 节")
        child.sendintr()
        child.expect("正在取消任务…")
        child.expect("任务已取消。")
        child.expect("› ")
        child.sendline("写一篇关于 Go 并发的文章")
        child.expect("撰写第 1/2 节")
        child.sendcontrol("z")
        child.expect("将在下一步暂停…")
        child.expect("任务已暂停")
        child.expect("› ")
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def test_model_command_says_its_reason_once(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    done = skillrt("chat", env=env, cwd=tmp_path, input="/model\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "model: scripted" in lines
    assert "provider: scripted" in lines
    assert "why: provider scripted is configured (llm.provider)" in lines
    for text in lines:  # the banner and /model: no reason inside another's brackets
        assert "((" not in text and "))" not in text, text
    banner = " ".join(" ".join(lines[:4]).split())
    assert "· provider scripted is configured (llm.provider)" in banner


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("总结 posts/zzzz-qqqq.md", ["不存在", "没有正在运行的任务", "没有任务在等待回答"]),
        ("summarize posts/zzzz-qqqq.md", ["does not exist", "No task is running", "No task is"]),
    ],
)
def test_slash_command_lines_follow_the_session_language(
    tmp_path: Path, request_text: str, expected: list[str]
) -> None:
    blog = make_blog(tmp_path)
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    done = skillrt("chat", env=env, cwd=tmp_path, input=f"{request_text}\n/pause\n/cancel\n")
    assert done.returncode == 0, done.stderr
    for text in expected:
        assert text in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("outcome", "language", "tail"),
    [
        ("refused", "en", "· refused: nothing done"),
        ("refused", "zh", "· 未完成：什么也没做"),
        ("done", "en", None),
    ],
)
def test_the_cost_line_says_a_refusal_was_no_work_done(
    outcome: str, language: str, tail: str | None
) -> None:
    """A refused answer's task completes (its reply is the refusal): the last line keeps the
    state, and says the work was refused, so "completed" is not read as the work done."""
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)
    message = ChatMessage(
        content="The model's answer failed its check.",
        data={"outcome": outcome},
        state="COMPLETED",
        task_id="t1",
        tokens=12,
    )
    Display(console).reply(message, language=language)
    last = out.getvalue().strip().splitlines()[-1]
    assert last.startswith("12 tokens · $0.0000 · completed")
    assert last.endswith(tail) if tail else last.endswith("· completed")
