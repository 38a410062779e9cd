"""Article lengths read from the request (zh and en), topics stripped of length words, slugs
and titles made from the topic, never from a related post."""

from __future__ import annotations

import re
from pathlib import Path

import frontmatter
import pytest

from skillrt.llm.base import LLMMessage
from skillrt.skills.writing.lengths import ArticleLength, parse_length, strip_length_words
from skillrt.skills.writing.write import choose_title
from skillrt.testing import Answer, FunctionModel, ModelOptions
from tests.blog import copy_blog
from tests.writing_support import EXTRACTION, prompt_kind, writing_runtime

LYING_FLAT = (
    "---\ntitle: 躺平：一种生活态度\ntags: [生活]\n---\n\n"
    "躺平是年轻人对内卷的回应。躺平不是放弃。\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("写一篇关于躺平的短文", ArticleLength("short")),
        ("写一篇简短的文章介绍 Rust", ArticleLength("short")),
        ("写一篇关于 Rust 的长文", ArticleLength("long")),
        ("写一篇深入介绍 Rust 的文章", ArticleLength("long")),
        ("写一篇 800 字的文章，关于躺平", ArticleLength("medium", 800)),
        ("写一篇八百字的短文", ArticleLength("medium", 800)),
        ("写一篇一千五百字的文章", ArticleLength("medium", 1500)),
        ("write a short post about remote work", ArticleLength("short")),
        ("write a brief article on Rust", ArticleLength("short")),
        ("write a long article about Rust", ArticleLength("long")),
        ("write an in-depth post on Rust lifetimes", ArticleLength("long")),
        ("write an article about Rust in 500 words", ArticleLength("medium", 500)),
        ("write a 500-word post about Rust", ArticleLength("medium", 500)),
        ("write about remote work, keep it short", ArticleLength("short")),
        ("write an article about long COVID", None),  # a topic, not a length
        ("write about selling short", None),
        ("写一篇关于成长的文章", None),  # 成长 is not 长
        ("short", ArticleLength("short")),
        ("long", ArticleLength("long")),
        ("1200", ArticleLength("medium", 1200)),
    ],
)
def test_parse_length_in_chinese_and_english(text: str, expected: ArticleLength | None) -> None:
    assert parse_length(text) == expected


@pytest.mark.parametrize(
    ("topic", "expected"),
    [
        ("躺平的短", "躺平"),  # the router's topic for 写一篇关于躺平的短文
        ("躺平的短文", "躺平"),
        ("内卷化的长", "内卷化"),
        ("800字的关于躺平", "躺平"),
        ("躺平的八百字短文", "躺平"),
        ("深入介绍 Rust", "Rust"),
        ("成长", "成长"),
        ("经济增长", "经济增长"),
        ("Rust ownership in 500 words", "Rust ownership"),
        ("remote work, keep it short", "remote work"),
        ("long COVID", "long COVID"),
        ("selling short", "selling short"),
    ],
)
def test_topic_loses_its_length_words(topic: str, expected: str) -> None:
    assert strip_length_words(topic) == expected


def test_lengths_bound_the_sections_and_their_size() -> None:
    assert ArticleLength("short").max_sections() == 3
    assert ArticleLength("long").max_sections() == 8
    assert ArticleLength("medium", 800).max_sections() == 4
    short = ArticleLength("short").words_per_section("zh", 3)
    long = ArticleLength("long").words_per_section("zh", 8)
    assert short < long
    assert ArticleLength("medium", 900).words_per_section("en", 3) == 300


def test_title_comes_from_the_topic_never_a_related_post() -> None:
    related = [{"title": "躺平：一种生活态度", "path": "posts/lying-flat.md", "link": "x"}]
    assert choose_title("躺平：一种生活态度 (posts/lying-flat.md)", "躺平", related) == "躺平"
    assert choose_title("躺平：一种生活态度", "躺平", related) == "躺平"
    assert choose_title("posts/lying-flat.md", "躺平", related) == "躺平"
    assert choose_title("Something else entirely", "remote work", []) == "Remote work"
    assert choose_title("躺平的三种理解", "躺平", related) == "躺平的三种理解"  # on the topic


class _Copycat:
    """An outline that copies the first related post's title and path, with eight sections."""

    def __init__(self) -> None:
        self.outline_prompts: list[str] = []
        self.section_tokens: list[int | None] = []

    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Answer:
        kind = prompt_kind(messages)
        if kind == "outline":
            self.outline_prompts.append(messages[0]["content"] + messages[-1]["content"])
            first = re.search(r"^- (.+)$", messages[-1]["content"], re.M)
            title = first.group(1) if first else "x"
            return {
                "title": title,
                "tags": ["生活"],
                "sections": [{"heading": f"第{i}节", "points": []} for i in range(1, 9)],
            }
        if kind == "extract":
            return EXTRACTION
        self.section_tokens.append(options.max_tokens)
        if "English" in messages[0]["content"]:  # each article in the language it was asked in
            return "Lying flat is a choice, and a fair one."
        return "躺平是一种选择。"


@pytest.mark.parametrize(
    ("request_text", "path", "title"),
    [
        ("写一篇关于躺平的短文", "posts/tang-ping.md", "躺平"),
        ("write a short post about lying flat", "posts/lying-flat.md", "Lying flat"),
    ],
)
async def test_short_article_slug_and_title(
    tmp_path: Path, request_text: str, path: str, title: str
) -> None:
    blog = copy_blog(tmp_path / "blog")
    (blog / "posts" / "lying-flat-life.md").write_text(LYING_FLAT, encoding="utf-8")
    model = _Copycat()
    rt = writing_runtime(blog, FunctionModel(model))
    await rt.initialize()
    try:
        msg = await rt.process_input(request_text)
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["path"] == path
    assert msg.data["title"] == title
    assert msg.data["length"] == "short"
    assert len(msg.data["sections"]) == 3  # the model planned eight
    planned = "2 到 3 个小节" if request_text.startswith("写") else "2 to 3 sections"
    assert planned in model.outline_prompts[0]  # a Chinese article is planned in Chinese
    assert len(model.section_tokens) == 3
    assert all(t is not None and t <= 1000 for t in model.section_tokens)
    post = frontmatter.load(blog / path)
    assert post["title"] == title
    assert "posts/" not in str(post["title"])
