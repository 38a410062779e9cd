"""A frontmatter field named and given in the request is set as written, with no model, in
the frontmatter's own format; every other byte stays. The embedded model, sent "change its
category to linux" as an edit of a Hexo post's body (it never sees the frontmatter), wrote
two sentences about the request, and they replaced the body."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from skillrt.skills.writing.field_set import FieldSet, given_field
from skillrt.testing import ScriptedModel
from tests.blog import copy_fixture
from tests.writing_support import writing_runtime

FIELDS: dict[str, Any] = {
    "title": "Taming ssh",
    "date": datetime.datetime(2024, 5, 10, 9, 30),
    "tags": ["ssh"],
    "categories": "tools",
    "layout": "post",
    "comments": True,
    "weight": 3,
    "extra": {"a": 1},
}


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        ("change its category to linux", FieldSet("categories", "linux")),
        ("set the author to Jane Doe", FieldSet("author", "Jane Doe")),  # a common field, new
        ('update the author field to "J. Doe"', FieldSet("author", "J. Doe")),
        ("set the slug of the ssh post to ssh-config", FieldSet("slug", "ssh-config")),
        ("change the layout to page", FieldSet("layout", "page")),
        ("set comments to no", FieldSet("comments", False)),
        ("set the weight to 5", FieldSet("weight", 5)),
        ("change its category to linux please", FieldSet("categories", "linux")),
        ("把它的 categories 改成 linux", FieldSet("categories", "linux")),
        # refused: a value of the wrong kind, a date, a table
        ("set the weight to heavy", FieldSet("weight", refused="value", wanted="a number")),
        ("change the date to tomorrow",
         FieldSet("date", refused="kind", wanted="a date such as 2024-05-10")),
        ("set extra to 1", FieldSet("extra", refused="kind")),
        # no field of this request's: the body's edit, or another request's field
        ("change the intro to something friendlier", None),
        ("change the text to be friendlier", None),
        ("set the tone to friendly", None),
        ("change its color to red", None),  # no such field, and no common one
        ("change the title to X", None),
        ("set the description to X", None),
        ("change its language to Chinese", None),
        ("make it shorter", None),
        ('change "foo" to "bar"', None),
        # more than one change asked for
        ('set the author to "Jane" and the title to "X"', None),
        ("set the author to Jane and make it shorter", None),
    ],
)  # fmt: skip
def test_a_field_named_and_given_is_told_apart(instruction: str, expected: FieldSet) -> None:
    assert given_field(instruction, FIELDS) == expected


def test_a_list_field_takes_a_list_and_a_new_common_one_is_a_list() -> None:
    fields = {"categories": ["jekyll", "liquid"], "authors": ["Team"]}
    assert given_field("set the categories to jekyll, templates", fields) == FieldSet(
        "categories", ["jekyll", "templates"]
    )
    assert given_field("set the author to Jane", fields) == FieldSet("authors", ["Jane"])
    assert given_field("change its category to linux", {}) == FieldSet("categories", ["linux"])


HEXO = (
    "---\ntitle: Taming ~/.ssh/config\ndate: 2024-05-10 09:30:00\ntags: [ssh, linux]\n"
    "categories: tools  # the menu's\n---\nA good `~/.ssh/config` saves typing.\n\n"
    "```\nHost web\n  User deploy\n```\n"
)


async def test_a_hexo_posts_category_is_set_and_nothing_else_changes(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    (blog / "source" / "_posts").mkdir(parents=True)
    (blog / "_config.yml").write_text("title: Hexo\n", encoding="utf-8")
    post = blog / "source" / "_posts" / "ssh-config.md"
    post.write_text(HEXO, encoding="utf-8")
    llm = ScriptedModel([])  # never asked
    rt = writing_runtime(blog, llm)
    path = "source/_posts/ssh-config.md"
    msg = await rt.run_skill(
        "EditContent", {"instruction": "change its category to linux", "path": path}
    )
    assert msg.state == "COMPLETED", msg.content
    assert post.read_text(encoding="utf-8") == HEXO.replace("tools  #", "linux  #")
    assert msg.data["field"] == "categories" and msg.data["value"] == "linux"
    assert "`categories` of `source/_posts/ssh-config.md` is now “linux”." in msg.content
    date = await rt.run_skill(
        "EditContent", {"instruction": "change the date to tomorrow", "path": path}
    )
    assert date.state == "ERROR" and "change it in the file by hand" in date.content
    await rt.close()
    assert post.read_text(encoding="utf-8") == HEXO.replace("tools  #", "linux  #")
    assert llm.calls == []


async def test_fields_are_set_in_toml_and_in_a_flow_list(tmp_path: Path) -> None:
    zola = copy_fixture("zola", tmp_path / "zola")
    release = zola / "content" / "Rust-1.77.0.md"
    before = release.read_text(encoding="utf-8")
    rt = writing_runtime(zola, ScriptedModel([]))
    msg = await rt.run_skill(
        "EditContent",
        {"instruction": "set the author to The Rust Team", "path": "content/Rust-1.77.0.md"},
    )
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert release.read_text(encoding="utf-8") == before.replace(
        'authors = ["The Rust Release Team"]', 'authors = ["The Rust Team"]'
    )
    jekyll = copy_fixture("jekyll", tmp_path / "jekyll")
    liquid = jekyll / "_posts" / "2024-01-15-liquid-tips.md"
    before = liquid.read_text(encoding="utf-8")
    rt = writing_runtime(jekyll, ScriptedModel([]))
    msg = await rt.run_skill(
        "EditContent",
        {
            "instruction": "set the categories to jekyll, templates",
            "path": "_posts/2024-01-15-liquid-tips.md",
        },
    )
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert liquid.read_text(encoding="utf-8") == before.replace(
        "[jekyll, liquid]", "[jekyll, templates]"
    )


async def test_a_name_that_is_no_field_is_still_an_edit_of_the_body(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    post = blog / "posts" / "x.md"
    post.write_text("---\ntitle: X\n---\nThe intro is dull.\n", encoding="utf-8")
    llm = ScriptedModel(["The intro is lively."])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill(
        "EditContent",
        {"instruction": "change the intro to something livelier", "path": "posts/x.md"},
    )
    await rt.close()
    assert msg.state == "COMPLETED" and len(llm.calls) == 1, msg.content
    assert post.read_text(encoding="utf-8") == "---\ntitle: X\n---\nThe intro is lively.\n"
