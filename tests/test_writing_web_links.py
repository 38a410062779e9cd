"""Web links a model made up become plain text before anything is saved: SmolLM2-135M ends
articles with "References" to addresses that do not exist. An address the request, the
prompt or the post already holds is kept, and so is code."""

from __future__ import annotations

from pathlib import Path

import frontmatter
import pytest

from skillrt.llm.base import LLMMessage
from skillrt.skills.writing.checks import Generated, web_addresses, web_links
from skillrt.testing import Answer, FunctionModel, ModelOptions, ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import EXTRACTION, prompt_kind, writing_runtime


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


def test_made_up_links_become_their_text() -> None:
    check = web_links(web_addresses("see https://docs.python.org/3/ first"))
    text = (
        "1. [Green Tea Guide](https://www.teabrewer.com/green_teas)\n"
        "2. [Docs](https://docs.python.org/3) and <https://made.up/x>.\n"
        '![a cup](https://img.invented/p.png "A cup")\n'
        "`[in code](https://in.code/x)`\n"
        "```\n[in a fence](https://in.fence/y)\n```\n"
        "A bare https://bare.example/z is left."
    )
    verdict = check(Generated(text=text))
    assert verdict.passed
    assert verdict.text == (
        "1. Green Tea Guide\n"
        "2. [Docs](https://docs.python.org/3) and .\n"
        "a cup\n"
        "`[in code](https://in.code/x)`\n"
        "```\n[in a fence](https://in.fence/y)\n```\n"
        "A bare https://bare.example/z is left."
    )
    assert "teabrewer" in verdict.reason and "docs.python" not in verdict.reason
    assert check(Generated(text="No links here.")).text is None


def _article_model(section: str) -> FunctionModel:
    def answer(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        kind = prompt_kind(messages)
        if kind == "outline":
            sections = [{"heading": "Brewing", "points": []}, {"heading": "Serving"}]
            return {"title": "Green tea", "sections": sections}
        if kind == "section":
            return section
        return EXTRACTION if kind == "extract" else "ok"

    return FunctionModel(answer)


async def test_an_article_keeps_no_made_up_reference(blog: Path) -> None:
    section = (
        "Steep it for two minutes at 80 °C, as https://tea.example/guide says.\n\n"
        "See [the guide](https://tea.example/guide) and [Tea Brewer](https://teabrewer.com/x)."
    )
    rt = writing_runtime(blog, _article_model(section))
    msg = await rt.process_input("write an article about green tea, see https://tea.example/guide")
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    body = frontmatter.load(blog / msg.data["path"]).content
    assert "[the guide](https://tea.example/guide)" in body  # given in the request: kept
    assert "teabrewer.com" not in body and "and Tea Brewer." in body
    report = {c["name"]: c for c in msg.data["checks"]}
    assert report["web_links"]["passed"] and "teabrewer" in report["web_links"]["reason"]


async def test_an_edit_keeps_the_posts_links_and_drops_new_ones(blog: Path) -> None:
    post = blog / "posts" / "links.md"
    post.write_text(
        "---\ntitle: Links\n---\n\nRead [the book](https://doc.rust-lang.org/book/).\n",
        encoding="utf-8",
    )
    edited = (
        "Read [the book](https://doc.rust-lang.org/book/) and "
        "[the reference](https://made-up.example/ref).\n"
    )
    rt = writing_runtime(blog, ScriptedModel([edited]))
    msg = await rt.run_skill(
        "EditContent", {"instruction": "add a second link", "path": "posts/links.md"}
    )
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    text = post.read_text(encoding="utf-8")
    assert "[the book](https://doc.rust-lang.org/book/)" in text
    assert "made-up.example" not in text and "and the reference." in text
