"""``no_chatter``: an edit's answer holds no line of the model's own about it. The embedded
model made the Rust 1.78.0 post's intro friendlier, then wrote "Here's a revised version:" and
a second version, and both were saved."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.checks import Generated, no_chatter
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog, copy_fixture
from tests.writing_support import writing_runtime

POST = "content/Rust-1.78.0.md"
INTRO = "The Rust team is happy to announce Rust 1.78.0, with diagnostic attributes."
TWO_VERSIONS = (
    "The Rust team is pleased to announce the release of Rust 1.78.0, with diagnostic "
    "attributes.\n\nHere's a revised version:\n\nRust 1.78.0: The Rust team has announced the "
    "release of Rust 1.78.0, with diagnostic attributes."
)
FRIENDLIER = "Good news: Rust 1.78.0 is here, and it brings diagnostic attributes!"


@pytest.mark.parametrize(
    ("answer", "passed", "text"),
    [
        (TWO_VERSIONS, False, None),
        ("Here is the edited paragraph:\n\n" + FRIENDLIER, True, FRIENDLIER),
        ("Sure! Here's the revised text:\n" + FRIENDLIER, True, FRIENDLIER),
        ("以下是修改后的段落：\nRust 1.78.0 发布了！", True, "Rust 1.78.0 发布了！"),
        # the embedded model's first line when fixing the typos of the Hugo JSON post
        ("\n\nThe text is:\n\n" + FRIENDLIER, True, FRIENDLIER),
        ("The corrected text reads:\n" + FRIENDLIER, True, FRIENDLIER),
        ("The new version is available from:\n- the site", True, None),  # the author's
        ("Sure! Here is the friendlier section:\n\n" + FRIENDLIER, True, FRIENDLIER),
        ("Here's the improved introduction:\n" + FRIENDLIER, True, FRIENDLIER),
        ("Here are three tips:\n- a\n- b", True, None),  # the text's own lead-in
        ("It works.\n\nHere is the result:\n\n```\nok\n```", True, None),
    ],
)
def test_the_models_own_lines_about_its_text(answer: str, passed: bool, text: str | None) -> None:
    verdict = no_chatter(INTRO)(Generated(text=answer))
    assert verdict.passed is passed
    assert verdict.text == text


def test_a_line_the_original_has_is_the_authors() -> None:
    original = "Intro.\n\nRevised version:\n\nThe second edition."
    assert no_chatter(original)(Generated(text="Intro, shorter.\n\nRevised version:\n\nB.")).passed


async def test_an_edit_with_two_versions_is_asked_again_and_the_clean_one_saved(
    tmp_path: Path,
) -> None:
    blog = copy_fixture("zola", tmp_path / "blog")
    post = blog / POST
    before = post.read_text(encoding="utf-8")
    assert INTRO in before
    llm = ScriptedModel([TWO_VERSIONS, FRIENDLIER])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill(
        "EditContent", {"instruction": "make the intro friendlier", "path": POST}
    )
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert post.read_text(encoding="utf-8") == before.replace(INTRO, FRIENDLIER)
    assert "Here's a revised version" in llm.calls[1][-1]["content"]  # the reason, told


ABOUT_THE_REQUEST = (
    "The text was requested to be edited. The instructions asked for a revised version of "
    "the text without any additional instructions."
)


@pytest.mark.parametrize(
    ("answer", "passed"),
    [
        (ABOUT_THE_REQUEST, False),
        (FRIENDLIER + " As requested, it is shorter.", False),
        ("The first paragraph is short. The instructions requested a shorter version.", False),
        ("根据你的要求，文章已经改好了。", False),
        ("You asked me to make it friendlier, so: " + FRIENDLIER, False),
        ("The instruction asks to change the category of the post.", False),
        ("You asked me to update the category.", False),
        ("根据要求，修改后的文本如下：", False),
        ("The original post was asked to be recategorised.", False),
        ("根据要求，填写表单。", True),  # a how-to's own words
        ("根据要求，修改配置文件即可。", True),
        ("The user asked to add a dark mode, so we built one.", True),
        (FRIENDLIER, True),
        ("Requests are answered as they come.", True),  # no sentence about the request
        # a blog's own sentences, not about the edit asked for
        ("Remember when you wanted to learn Go?", True),
        ("You asked for it, so here it is.", True),
        ("The user asked for a dark mode, so we built one.", True),
        ("Run the installer as instructed by the wizard.", True),
        ("Send the form as requested by the bank.", True),
        ("The instruction requires two operands.", True),
        ("The article was requested by several readers.", True),
        ("按照指示安装 Docker 即可。", True),
        ("Call it:\n\n```python\nfetch()  # as requested by the API\n```", True),
    ],
)
def test_a_sentence_about_the_request_is_no_part_of_the_text(answer: str, passed: bool) -> None:
    """The embedded model's whole answer to "change its category to linux" was two sentences
    about the request, and they replaced a Hexo post's body: every check passed (the post
    was too short for ``on_topic``). Such a sentence now fails, anywhere in the answer."""
    verdict = no_chatter(INTRO)(Generated(text=answer))
    assert verdict.passed is passed, verdict.reason
    if not passed:
        assert verdict.reason.startswith("the text speaks of the request")


def test_a_sentence_about_a_request_the_original_has_is_the_authors() -> None:
    original = "Prompts matter. The instructions asked the model to be brief."
    edited = "Prompts matter a lot. The instructions asked the model to be brief."
    assert no_chatter(original)(Generated(text=edited)).passed


async def test_an_edit_that_only_talks_about_the_request_is_refused(tmp_path: Path) -> None:
    blog = copy_fixture("zola", tmp_path / "blog")
    post = blog / POST
    before = post.read_text(encoding="utf-8")
    rt = writing_runtime(blog, ScriptedModel([ABOUT_THE_REQUEST, ABOUT_THE_REQUEST]))
    msg = await rt.run_skill("EditContent", {"instruction": "make it friendlier", "path": POST})
    await rt.close()
    assert msg.state == "ERROR" and "no_chatter" in msg.content, msg.content
    assert post.read_text(encoding="utf-8") == before


REFUSAL = (
    "As an AI language model, I cannot edit files on your computer, but I can help you write "
    "a friendlier introduction for your post about git."
)


async def test_an_edit_answered_with_a_refusal_is_refused_and_the_post_kept(
    tmp_path: Path,
) -> None:
    """ "Shorten the post", answered "As an AI language model, I cannot edit files…", had the
    git post's whole body replaced by that sentence, saved as done."""
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts/git-workflow.md"
    before = post.read_text(encoding="utf-8")
    rt = writing_runtime(blog, ScriptedModel([REFUSAL, REFUSAL]))
    msg = await rt.run_skill(
        "EditContent", {"instruction": "shorten the post", "path": "posts/git-workflow.md"}
    )
    await rt.close()
    assert msg.state == "ERROR" and msg.data["check"] == "no_chatter", msg.content
    assert "says it cannot do it" in msg.data["reason"]
    assert post.read_text(encoding="utf-8") == before


def test_a_refusal_the_original_quotes_is_the_authors() -> None:
    original = "ChatGPT said: As an AI language model, I cannot browse. We laughed."
    edited = "ChatGPT said: As an AI language model, I cannot browse. We all laughed."
    assert no_chatter(original)(Generated(text=edited)).passed
