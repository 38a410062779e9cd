"""An answer and a summary are in the language they were asked in: an English question on
the sqlite post answered "trigram 分词器可以匹配任意三个字符以上的子串 [1]", and the post's
summary asked for in English written in Chinese, were shown as done. The Chinese an English
answer quotes (a post's title, a link, a quoted term) is no reason to refuse it."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.testing import ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import run_writing_skill, writing_runtime

QUESTION = "What does the sqlite post say about the trigram tokenizer?"
IN_CHINESE = "trigram 分词器可以匹配任意三个字符以上的子串，所以它也适用于中文文本 [1]。"
QUOTING = (
    "The trigram tokenizer matches any substring of three characters or more, so it works "
    "for Chinese text such as “全文搜索” too [1]; [数据库索引原理](posts/database-indexing.md) "
    "explains indexes in general."
)


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


async def test_an_english_question_answered_in_chinese_is_not_shown(blog: Path) -> None:
    llm = ScriptedModel([IN_CHINESE, IN_CHINESE])
    msg = await run_writing_skill(blog, llm, "AnswerQuestion", {"question": QUESTION})
    assert llm.call_count == 2  # asked once more, with the reason
    assert msg.data["answered"] is False and msg.data["check"] == "not_degenerate"
    assert IN_CHINESE not in msg.content
    assert "question's language" in msg.content


async def test_an_english_answer_quoting_chinese_is_shown(blog: Path) -> None:
    llm = ScriptedModel([QUOTING])
    msg = await run_writing_skill(blog, llm, "AnswerQuestion", {"question": QUESTION})
    assert llm.call_count == 1
    assert msg.data.get("answered", True) is True and msg.content.startswith("The trigram")


async def test_a_chinese_question_answered_in_chinese_is_shown(blog: Path) -> None:
    llm = ScriptedModel([IN_CHINESE])
    msg = await run_writing_skill(
        blog, llm, "AnswerQuestion", {"question": "sqlite 那篇文章里 trigram 分词器有什么用？"}
    )
    assert llm.call_count == 1 and msg.content.startswith("trigram 分词器")


async def test_a_summary_in_another_language_than_asked_is_refused(blog: Path) -> None:
    before = (blog / "posts" / "sqlite-fts5.md").read_bytes()
    rt = writing_runtime(blog, ScriptedModel([IN_CHINESE, IN_CHINESE]), session_id="s")
    await rt.initialize()
    try:
        msg = await rt.process_input("summarize posts/sqlite-fts5.md")
    finally:
        await rt.close()
    assert msg.state != "COMPLETED" and "not_degenerate" in msg.content
    assert "not in English" in msg.content
    assert (blog / "posts" / "sqlite-fts5.md").read_bytes() == before


async def test_a_summary_asked_for_in_chinese_may_be_chinese(blog: Path) -> None:
    rt = writing_runtime(blog, ScriptedModel([IN_CHINESE]), session_id="s")
    await rt.initialize()
    try:
        msg = await rt.process_input("帮我总结一下 posts/sqlite-fts5.md")
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert IN_CHINESE.rstrip("。") in msg.content
