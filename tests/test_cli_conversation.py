"""The conversation in a real terminal: follow-ups, the focus in the prompt, ``--continue``
after a restart, ``--session NAME``, ``/open``, ``/focus`` and ``/new`` (pexpect, scripted
model)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pexpect
import pytest

from tests.cli_support import article, cli_env, make_blog, write_script
from tests.test_cli_chat import quit_with_ctrl_d

TIMEOUT = 30


def spawn(env: dict[str, str], cwd: Path, *args: str) -> pexpect.spawn:
    # Follow-ups are what these tests are about: edits write without the chat's preview
    # (edit.confirm false; the preview itself is tested in test_undo.py).
    child = pexpect.spawn(
        sys.executable,
        ["-m", "skillrt", "chat", *args],
        env={**env, "SKILLRT_EDIT__CONFIRM": "false"},
        cwd=str(cwd),
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(40, 120),
    )
    child.logfile_read = sys.stdout
    return child


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return make_blog(tmp_path)


def test_a_conversation_goes_on_after_a_restart(blog: Path, tmp_path: Path) -> None:
    post = blog / "posts" / "rust-ownership.md"
    first = [*article("Rust Ownership", ["One owner.", "Moves."]), "A much shorter body.\n"]
    child = spawn(cli_env(blog, write_script(tmp_path / "a.json", first)), tmp_path)
    child.expect("› ")
    child.sendline("write an article about Rust ownership")
    child.expect("posts/rust-ownership.md")
    child.expect("rust-ownership.md › ")  # the prompt shows the focus
    child.sendline("make it shorter")
    child.expect("Edited the body of posts/rust-ownership.md")
    child.expect("rust-ownership.md › ")
    child.sendline("/focus")
    child.expect("Focus: posts/rust-ownership.md")
    assert quit_with_ctrl_d(child) == 0
    assert "A much shorter body." in post.read_text(encoding="utf-8")

    # A new process: --continue picks up the session, its turns and its focus.
    second = ["Summary: ownership in one line.", "Rust 所有权", "每个值只有一个所有者。", "嗨！"]
    env = cli_env(blog, write_script(tmp_path / "b.json", second))
    child = spawn(env, tmp_path, "--continue")
    child.expect(r"Continuing session [0-9a-f]{16}: 4 earlier messages; focus\s+posts/rust-own")
    child.expect("rust-ownership.md › ")
    child.sendline("summarize it")
    child.expect("Summary of posts/rust-ownership.md")
    child.expect("rust-ownership.md › ")
    child.sendline("translate it into Chinese")
    child.expect(r"as\s+posts/rust-ownership-zh\.md")
    child.expect("rust-ownership-zh.md › ")  # the translation is the focus now
    child.sendline("delete it")
    child.expect("Answer yes or no")
    child.sendline("yes")
    child.expect(r"to\s+the\s+trash")
    child.expect("\n› ")  # no focus any more
    child.sendline("/open posts/docker-basics.md")
    child.expect("Focus: posts/docker-basics.md")
    child.expect("docker-basics.md › ")
    child.sendline("你好")
    child.expect("嗨！")
    child.expect("completed")
    child.sendline("/new")  # the REPL speaks the language of the last request: Chinese now
    child.expect(r"新会话 [0-9a-f]{16}：没有之前的对话，也没有当前文章")
    child.sendline("/focus")
    child.expect("还没有当前文章")
    assert quit_with_ctrl_d(child) == 0
    assert not (blog / "posts" / "rust-ownership-zh.md").exists()
    assert post.is_file()

    # --continue now picks up the new, empty session; a named session keeps its own focus.
    child = spawn(env, tmp_path, "--continue")
    child.expect("› ")
    child.sendline("/focus")
    child.expect("No focus yet")
    assert quit_with_ctrl_d(child) == 0
    child = spawn(env, tmp_path, "--session", "drafts")
    child.expect("› ")
    child.sendline("/open posts/git-workflow.md")
    child.expect("git-workflow.md › ")
    assert quit_with_ctrl_d(child) == 0
    child = spawn(env, tmp_path, "--session", "drafts")
    child.expect("git-workflow.md › ")
    assert quit_with_ctrl_d(child) == 0


def test_continue_without_an_earlier_session_starts_a_new_one(blog: Path, tmp_path: Path) -> None:
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    child = spawn(env, tmp_path, "--continue")
    child.expect("No earlier session here; starting a new one.")
    child.expect("› ")
    assert quit_with_ctrl_d(child) == 0
    child = spawn(env, tmp_path, "--session", "bad name")
    child.expect("a session name is 1 to 100 letters")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2


def test_a_chinese_conversation_goes_on_after_a_restart(blog: Path, tmp_path: Path) -> None:
    first = article("Rust 所有权", ["每个值只有一个所有者。", "移动会转移所有权。"])
    child = spawn(cli_env(blog, write_script(tmp_path / "a.json", first)), tmp_path)
    child.expect("› ")
    child.sendline("写一篇关于 Rust 所有权的文章")
    child.expect("rust-suo-you-quan.md › ")
    assert quit_with_ctrl_d(child) == 0

    second = [
        "口语化的正文。\n",  # the edit
        "要点：所有权。",  # the summary
        "Rust Ownership",  # the translation's title, then its body
        "Every value has one owner.",
        *article("Go 的并发", ["goroutine 很轻。", "channel 传递数据。"]),
        "意思是那篇文章已移到回收站，可以找回。",  # chat
    ]
    child = spawn(cli_env(blog, write_script(tmp_path / "b.json", second)), tmp_path, "-c")
    child.expect(r"继续会话 [0-9a-f]{16}：之前有 2 条消息；当前文章\s*posts/rust-suo-you-quan\.md")
    child.expect("rust-suo-you-quan.md › ")
    child.sendline("把它改得更口语化")
    child.expect(r"已修改\s*posts/rust-suo-you-quan\.md")
    child.expect("rust-suo-you-quan.md › ")
    child.sendline("总结一下")
    child.expect(r"posts/rust-suo-you-quan\.md\s*的总结")
    child.expect("rust-suo-you-quan.md › ")
    child.sendline("把它翻译成英文")
    child.expect("rust-suo-you-quan-en.md › ")
    child.sendline("再写一篇类似的，关于 Go 的并发")
    child.expect("go-de-bing-fa.md › ")
    child.sendline("删掉它")
    child.expect("确定要删除")
    child.sendline("是")
    child.expect("回收站")
    child.expect("\n› ")
    child.sendline("什么意思？")
    child.expect("意思是那篇文章已移到回收站")
    child.sendline("/focus")
    child.expect("还没有当前文章")
    assert quit_with_ctrl_d(child) == 0
    posts = blog / "posts"
    assert "口语化的正文。" in (posts / "rust-suo-you-quan.md").read_text(encoding="utf-8")
    translated = (posts / "rust-suo-you-quan-en.md").read_text(encoding="utf-8")
    assert "Every value has one owner." in translated and "title: Rust Ownership" in translated
    assert not (posts / "go-de-bing-fa.md").exists()


# The follow-up conversations of tests/test_conversation.py, in a real terminal, across
# restarts: each process picks the session up with --continue, its turns and its focus.
# Each step: what is typed, what the reply must show, and what the prompt then shows: the focus
# ("" for none), or "answer" while a question waits for its answer (the prompt shows the
# question then); None marks a restart.
ENGLISH: list[tuple[str, str, str] | None] = [
    ("write an article about Rust ownership", r"posts/rust-ownership\.md", "rust-ownership.md"),
    None,
    ("make it shorter", r"Edited the body of\s+posts/rust-ownership\.md", "rust-ownership.md"),
    ("summarize it", r"Summary of\s+posts/rust-ownership\.md", "rust-ownership.md"),
    ("add a section about error handling to it", r"body of\s+posts/rust-ownership\.md",
     "rust-ownership.md"),
    ("shorten it", r"Edited the body of\s+posts/rust-ownership\.md", "rust-ownership.md"),
    ("translate it into Chinese", r"as\s+posts/rust-ownership-zh\.md", "rust-ownership-zh.md"),
    None,
    ("make it more casual", r"body of\s+posts/rust-ownership-zh\.md", "rust-ownership-zh.md"),
    ("write a similar post about Go channels", r"posts/go-channels\.md", "go-channels.md"),
    ("polish it", r"Edited the body of\s+posts/go-channels\.md", "go-channels.md"),
    ("delete it", "Answer yes or no", "answer"),
    ("yes", r"to\s+the\s+trash", ""),
    None,
    ("summarize it", r"Which post should I summarise\?", "answer"),
    ("1", r"Summary of\s+posts/rust-ownership-zh\.md", "rust-ownership-zh.md"),
]  # fmt: skip
CHINESE: list[tuple[str, str, str] | None] = [
    ("写一篇关于 Rust 所有权的文章", r"posts/rust-suo-you-quan\.md", "rust-suo-you-quan.md"),
    None,
    ("把它改得更口语化", r"已修改\s*posts/rust-suo-you-quan\.md", "rust-suo-you-quan.md"),
    ("让它更简洁一些", r"已修改\s*posts/rust-suo-you-quan\.md", "rust-suo-you-quan.md"),
    ("总结一下", r"posts/rust-suo-you-quan\.md\s*的总结", "rust-suo-you-quan.md"),
    ("给它加一节关于错误处理的内容", r"已修改\s*posts/rust-suo-you-quan\.md",
     "rust-suo-you-quan.md"),
    ("把它翻译成英文", r"posts/rust-suo-you-quan-en\.md", "rust-suo-you-quan-en.md"),
    None,
    ("再短一点", r"已修改\s*posts/rust-suo-you-quan-en\.md", "rust-suo-you-quan-en.md"),
    ("再写一篇类似的，关于 Go 的并发", r"posts/go-de-bing-fa\.md", "go-de-bing-fa.md"),
    ("删掉它", "确定要删除", "answer"),
    ("是", "回收站", ""),
    None,
    ("把它改得更正式一点", "要修改哪篇文章？", "answer"),
    ("2", r"已修改\s*posts/go-concurrency\.md", "go-concurrency.md"),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("steps", [ENGLISH, CHINESE], ids=["english", "chinese"])
def test_every_follow_up_goes_on_across_restarts(
    blog: Path, tmp_path: Path, steps: list[tuple[str, str, str] | None]
) -> None:
    env = cli_env(
        blog,
        write_script(tmp_path / "unused.json", []),
        SKILLRT_LLM__PROVIDER="python",
        SKILLRT_LLM__FACTORY="tests.writing_support:followup_model",
        PYTHONPATH=str(Path(__file__).resolve().parent.parent),
    )
    child = spawn(env, tmp_path)
    child.expect("› ")
    follow_ups = restarts = 0
    for i, step in enumerate(steps):
        if step is None:  # quit, and a new process picks the session up
            assert quit_with_ctrl_d(child) == 0
            child = spawn(env, tmp_path, "--continue")
            restarts += 1
            continue
        text, shown, focus = step
        child.sendline(text)
        child.expect(shown)
        if focus == "answer":  # the prompt shows the question (or "answer" for a long one)
            child.expect(" › ")
        else:
            child.expect(re.escape(f"{focus} › ") if focus else "\n› ")
        follow_ups += i > 0
    assert quit_with_ctrl_d(child) == 0
    assert restarts == 3 and follow_ups >= 11
