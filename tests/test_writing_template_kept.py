"""``template_kept``: an edit whose instruction is not about templates leaves a post's
template code (Liquid, Hugo shortcodes, Tera) as it was. Found on the Jekyll fixture: "make
the first paragraph of the liquid tips post friendlier" came back with a new
``{{page.title}}`` and ``{% endraw %}`` moved after the model's own text, and was saved."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.checks import Generated, template_from, template_kept
from skillrt.testing import ScriptedModel
from tests.blog import copy_fixture
from tests.writing_support import run_writing_skill, writing_runtime

POST = "_posts/2024-01-15-liquid-tips.md"
LIQUID = "{% raw %}Use {{ page.title }} in layouts.{% endraw %}"
MANGLED = (
    "{% raw %}Use {{ page.title }} in layouts. {#fav-post-style-friendly-tips-posts #tip-1}\n\n"
    "This is a tip that I would like to share with you. You should use the {{page.title}} "
    "template when creating your tips post.\n\n{% endraw %}"
)
HUGO = 'A photo from the walk, for the record: {{< figure src="river.jpg" >}} and more.'


def verdict(instruction: str, answer: str, original: str = LIQUID) -> bool | None:
    check = template_kept(instruction, original)
    return None if check is None else check(Generated(text=answer)).passed


@pytest.mark.parametrize(
    ("instruction", "answer", "passed"),
    [
        ("make it friendlier", MANGLED, False),  # a new {{ }} added
        ("make it friendlier", "{% raw %}Use {{page.title}} in your layouts!{% endraw %}", True),
        ("make it friendlier", "{% raw %}Use {{ page.title }} in layouts, friend.", False),
        ("make it friendlier", "Use the title of the page in layouts.", True),  # written anew
        ("make it shorter", HUGO.replace("river.jpg", "lake.jpg"), False),
        ("make it friendlier", HUGO.replace("for the record", "just for you"), True),
    ],
)
def test_template_code_added_changed_or_unpaired_fails(
    instruction: str, answer: str, passed: bool
) -> None:
    original = HUGO if "figure" in answer else LIQUID
    assert verdict(instruction, answer, original) is passed


def test_a_dropped_shortcode_fails_unless_the_instruction_may_remove() -> None:
    kept_prose = "A photo from the walk, for the record: and more."
    original = HUGO + "\n\nThe river was high this spring, after a week of rain upstream."
    answer = kept_prose + "\n\nThe river was high this spring, after a week of rain upstream."
    assert verdict("make the tone friendlier", answer, original) is False
    assert verdict("make it more concise", answer, original) is True


def test_instructions_about_templates_and_texts_without_them_are_not_judged() -> None:
    assert verdict("fix the liquid tags", MANGLED) is None
    assert verdict("把短代码改一下", MANGLED) is None
    assert verdict("make it friendlier", MANGLED, original="Just prose here.") is None


async def test_an_edit_that_breaks_the_liquid_is_refused_and_nothing_saved(
    tmp_path: Path,
) -> None:
    blog = copy_fixture("jekyll", tmp_path / "jekyll")
    before = (blog / POST).read_text(encoding="utf-8")
    llm = ScriptedModel([MANGLED, MANGLED])
    msg = await run_writing_skill(
        blog,
        llm,
        "EditContent",
        {"instruction": "make the first paragraph friendlier", "path": POST},
    )
    assert msg.state == "ERROR" and msg.data["check"] == "template_kept", msg.content
    assert (blog / POST).read_text(encoding="utf-8") == before


async def test_hello_jekyll_names_the_post_titled_hello_comma_jekyll(tmp_path: Path) -> None:
    blog = copy_fixture("jekyll", tmp_path / "jekyll")
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    try:
        msg = await rt.process_input("add the tag jekyll to hello jekyll")
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["path"] == "_posts/2023-04-05-hello-jekyll.md"


@pytest.mark.parametrize(
    ("summary", "reason"),
    [
        # The embedded model's summary of the Jekyll fixture's liquid tips post.
        ("{% raw %}Use {{ page.title }} in layouts. {#use-page-in-layout #1234567890ABCDEBDF}}",
         "it shows a raw tag not closed"),
        ("It shows {{ site.name }}.", "it shows template code its source does not have"),
        ("Use page.title in layouts }}", "it shows template marks left alone (}})"),
        ("Use {{ page.title }} in layouts.", None),
        ("Use `{{ page.title }}` in layouts; wrap it in `{% raw %}`.", None),  # (code)
        (LIQUID, None),
        ("Tips on Liquid for layouts.", None),
    ],
)  # fmt: skip
def test_a_summary_shows_only_template_code_its_post_has(summary: str, reason: str | None) -> None:
    verdict = template_from(LIQUID)(Generated(text=summary))
    assert verdict.passed is (reason is None)
    assert reason is None or verdict.reason.startswith(reason), verdict.reason


async def test_a_summary_with_broken_template_code_is_refused(tmp_path: Path) -> None:
    jekyll = copy_fixture("jekyll", tmp_path / "jekyll")
    broken = "{% raw %}Use {{ page.title }} in layouts. {#use-page #12345}}"
    llm = ScriptedModel([broken, broken])
    msg = await run_writing_skill(jekyll, llm, "Summarize", {"path": POST})
    assert msg.state == "ERROR" and llm.call_count == 2, msg.content
    assert "template_from_sources" in msg.content


def test_an_edit_of_one_part_may_not_drop_its_template_code() -> None:
    """ "make the first paragraph clearer" of a one-line paragraph with a shortcode came back
    rewritten without it, and was saved: a part's answer keeps no line as it was, and was
    not judged for what it dropped. An edit of one part is."""
    original = 'Intro with a {{< ref "other.md" >}} link and quick words in it.'
    answer = "Intro with a link to the other post and brisk words in it."
    assert verdict("make the first paragraph clearer", answer, original) is False
    assert verdict("make the Usage section clearer", answer, original) is False
    assert verdict("make it clearer", answer, original) is True  # the whole body, anew
    check = template_kept("make it clearer", original, scoped=True)  # a selection
    assert check is not None and not check(Generated(text=answer)).passed
    assert verdict("shorten the first paragraph", answer, original) is True  # may remove


async def test_a_paragraph_edit_that_drops_a_shortcode_is_refused(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    post = '---\ntitle: S\n---\n\nIntro with a {{< ref "other.md" >}} link in it.\n\nEnd.\n'
    (blog / "posts/s.md").write_text(post, encoding="utf-8")
    dropped = "Intro with a link to the other post in it."
    llm = ScriptedModel([dropped, dropped])
    msg = await run_writing_skill(
        blog,
        llm,
        "EditContent",
        {"instruction": "make the first paragraph clearer", "path": "posts/s.md"},
    )
    assert msg.state == "ERROR" and msg.data["check"] == "template_kept", msg.content
    assert (blog / "posts/s.md").read_text(encoding="utf-8") == post
