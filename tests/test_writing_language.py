"""WriteArticle writes in the language asked for, and an article in another one is not done.

The language comes from the ``language`` parameter, else from the request ("in Chinese",
"用英文写", "写一篇英文博客"), else it is the request's own. Each section is checked for it: a
section the model writes in another language is asked for again once, then the article is
refused and nothing is saved (as with every other check).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillrt.llm.base import LLMMessage
from skillrt.skills.writing.languages import asked_language, strip_asked_language
from skillrt.testing import Answer, FunctionModel, ModelOptions
from tests.blog import copy_blog
from tests.test_writing_checks import assert_refused, check_names, snapshot
from tests.writing_support import EXTRACTION, OUTLINE_EN, prompt_kind, writing_runtime


@pytest.mark.parametrize(
    ("request_text", "code"),
    [
        ("write a post in Chinese about tea", "zh"),
        ("Write an article about caching in English, please", "en"),
        ("write an English post about 茶道", "en"),
        ("write a post into German", "de"),
        ("用英文写一篇关于缓存的文章", "en"),
        ("帮我写一篇英文博客，讲讲 Rust", "en"),
        ("write 一篇关于 remote work 的 blog，中文写", "zh"),
        ("以日语写一篇游记", "ja"),
        ("write a post about learning Chinese in Chinese", "zh"),
        # a language that is the topic, or describes it, asks for nothing
        ("write an article about tea in Chinese culture", None),
        ("write about Japanese post-war architecture", None),
        ("write a blog post about my first month learning Japanese", None),
        ("写一篇关于学英语的心得", None),
        ("写一篇关于英文写作技巧的文章", None),
        ("write an article on english grammar", None),
    ],
)
def test_the_language_a_request_asks_for(request_text: str, code: str | None) -> None:
    assert asked_language(request_text) == code


@pytest.mark.parametrize(
    ("topic", "kept"),
    [
        ("tea in Chinese", "tea"),
        ("tea, in Chinese please", "tea"),
        ("缓存，用英文写", "缓存"),
        ("remote work 的 blog，中文写", "remote work 的 blog"),
        ("tea in Chinese culture", "tea in Chinese culture"),
        ("in English", "in English"),  # nothing would be left: kept as it is
    ],
)
def test_the_language_asked_for_is_not_the_topic(topic: str, kept: str) -> None:
    assert strip_asked_language(topic) == kept


SECTION_ZH = "缓存把常用的数据放在离计算更近的地方，读取更快，但要处理失效和一致性的问题。"
SECTION_EN = "A cache keeps hot data close to the code that reads it, at the cost of staleness."


class _Writer:
    """Answers each writing prompt; every section in ``section`` (a language's text)."""

    def __init__(self, section: str) -> None:
        self.section = section
        self.systems: list[str] = []

    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Answer:
        kind = prompt_kind(messages)
        self.systems.append(messages[0]["content"])
        if kind == "outline":
            return {**OUTLINE_EN, "title": "Caching", "sections": OUTLINE_EN["sections"][:2]}
        if kind == "extract":
            return EXTRACTION
        return self.section


async def _write(tmp_path: Path, model: _Writer, request: str | dict[str, Any]) -> Any:
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, FunctionModel(model))
    await rt.initialize()
    try:
        before = snapshot(blog)
        if isinstance(request, dict):
            msg = await rt.run_skill("WriteArticle", request)
        else:
            msg = await rt.process_input(request)
    finally:
        await rt.close()
    return msg, blog, before


async def test_an_article_asked_for_in_chinese_is_written_in_chinese(tmp_path: Path) -> None:
    model = _Writer(SECTION_ZH)
    msg, blog, _ = await _write(tmp_path, model, "write a blog post about caching in Chinese")
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["language"] == "zh"
    assert check_names(msg)["language"] is True
    assert all("简体中文" in s for s in model.systems[:3])  # the outline and the sections
    text = (blog / msg.data["path"]).read_text(encoding="utf-8")
    assert SECTION_ZH in text
    assert msg.content.startswith("Wrote")  # the reply stays in the user's language


async def test_an_english_article_for_a_chinese_request_is_refused(tmp_path: Path) -> None:
    """The small model writes English twice for "用中文写": nothing is saved, and the reply
    says which check failed (before, the English article was saved and called done)."""
    model = _Writer(SECTION_EN)
    msg, blog, before = await _write(tmp_path, model, "write a blog post about caching in Chinese")
    assert_refused(msg, "language", before, blog)
    sections = [s for s in model.systems if "写一篇文章中的一节" in s]  # the Chinese prompt
    assert len(sections) == 2  # asked once more with the reason, then refused


async def test_yong_yingwen_xie_writes_english(tmp_path: Path) -> None:
    model = _Writer(SECTION_EN)
    msg, _, _ = await _write(tmp_path, model, {"topic": "缓存", "language": "英文"})
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["language"] == "en"
    assert all("English" in s for s in model.systems[:3])
    assert msg.content.startswith("已写好")  # the user wrote Chinese: a Chinese reply


async def test_an_unknown_language_is_refused_before_any_model_call(tmp_path: Path) -> None:
    model = _Writer(SECTION_EN)
    msg, blog, before = await _write(tmp_path, model, {"topic": "tea", "language": "Klingon"})
    assert msg.state == "ERROR"
    assert msg.data["error"] == "unknown_language"
    assert "Klingon" in msg.content and "Japanese" in msg.content
    assert model.systems == [] and snapshot(blog) == before


async def test_the_request_language_is_kept_when_none_is_asked(tmp_path: Path) -> None:
    model = _Writer(SECTION_EN)
    msg, _, _ = await _write(tmp_path, model, {"topic": "tea in Chinese culture"})
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["language"] == "en"
