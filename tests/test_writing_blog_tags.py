"""A tag renamed, removed or added in every post of the blog ("rename the tag hugo to gohugo in
every post", "把所有文章的标签 shell 改成 bash"): each post that carries it is changed where it
keeps its tags, every other byte stays, and no model is asked. Before, such a request asked
which post to edit and changed only that one; and "rename the tag rust to rustlang" on one
post was no tag change at all, so the model was asked to rewrite the body for it."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
from skillrt.testing import ScriptedModel
from skills.writing.blog_tags import Retag, _plan_one, _retag_one
from skills.writing.tags import TagChange, every_post, tag_change, tag_change_everywhere
from tests.blog import copy_fixture
from tests.writing_support import writing_runtime, writing_skills


@pytest.mark.parametrize(
    ("instruction", "tags"),
    [
        ("rename the tag rust to rustlang", ("rust", "rustlang")),
        ("change the rust tag to rustlang", ("rust", "rustlang")),
        ("replace the tag rust with rustlang", ("rust", "rustlang")),
        ('rename the "web dev" tag to webdev', ("web dev", "webdev")),
        ("rename the tag rust to rustlang in the rust post", ("rust", "rustlang")),
        ("把标签 rust 改成 rustlang", ("rust", "rustlang")),
        ("把 rust 标签改成 rustlang", ("rust", "rustlang")),
        ("把“编程”标签改成“开发”", ("编程", "开发")),
    ],
)
def test_a_renamed_tag_is_read(instruction: str, tags: tuple[str, str]) -> None:
    assert tag_change(instruction) == TagChange("rename", tags)


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        ("change the tag line to Hello there", None),  # a tagline
        ("rename the tag section to Usage", None),
        ("change the h1 tag to h2", None),  # HTML's
        ("change the ul tag to ol", None),
        ("change the og:image tag to cover.png", None),
        ("change the `<b>` tag to strong", None),
        ("change the tag to rust", TagChange("set", ("rust",))),  # not a tag "the"
        ("replace the tag with rust", TagChange("set", ("rust",))),
        ("把标签都改成 rust", TagChange("set", ("rust",))),  # not a tag "都" renamed
        ("rename the tag rust to rustlang in rust-notes", None),  # not "rustlang in rust-notes"
        ("rename the tag rust to rustlang in go.md", TagChange("rename", ("rust", "rustlang"))),
        ("rename the post to rust tips", None),
        ("change the tags to rust, cli", TagChange("set", ("rust", "cli"))),
        ("这篇文章的标签改成 rust", TagChange("set", ("rust",))),
        ("把标签改成 a，b", TagChange("set", ("a", "b"))),
    ],
)
def test_what_is_not_a_rename(instruction: str, expected: TagChange | None) -> None:
    assert tag_change(instruction) == expected


@pytest.mark.parametrize(
    ("instruction", "rest"),
    [
        ("rename the tag rust to rustlang in every post", "rename the tag rust to rustlang"),
        ("remove the tag draft from all posts", "remove the tag draft"),
        ("remove the tag draft from all of my articles.", "remove the tag draft"),
        ("remove the tag draft everywhere", "remove the tag draft"),
        ("add the tag blog to all my posts", "add the tag blog"),
        ("rename the tag go to golang across the blog", "rename the tag go to golang"),
        ("将所有文章的标签 rust 改为 rustlang", "标签 rust 改为 rustlang"),
        ("从所有文章中删除标签 draft", "删除标签 draft"),
        # a tag renamed right after the scope, as the chat's own example says it
        ("把所有文章的 rust 标签改成 rustlang", "rust 标签改成 rustlang"),
        ("把全站的 go 标签换成 golang", "go 标签换成 golang"),
        ("把所有文章的 rust 标签都改成 rustlang", "rust 标签都改成 rustlang"),
        ("rename the tag rust to rustlang", None),
        ("remove the tag draft from the rust post", None),
        ("summarize all posts", None),  # (a place, "in", "from", "to", must come first)
        ("add the tag rust, same as all posts", None),
    ],
)
def test_an_instruction_for_every_post_is_told(instruction: str, rest: str | None) -> None:
    assert every_post(instruction) == rest


@pytest.mark.parametrize(
    "instruction",
    [
        # a tag with 所有 or 全站 in it, or a post of its own: one post's change
        "添加标签 所有权、借用",
        "把 rust 标签改成 所有权",
        "给这篇文章加上标签 全站优化",
        "给这篇文章加上标签 rust，跟所有 rust 文章一样",
        "删除所有标签",
        # the tags for a place the instruction names, before its "all posts"
        "add the tag archive to the index page of all posts",
        "add the tag meta to my post ranking all my posts",
        "add the tag draft to the post everywhere",
        "跟所有文章一样，给 docker 那篇文章加上标签 devops",
        "参考所有文章的标签，给 docker 那篇加上标签 devops",
        "给 docker 那篇文章加上所有文章都有的标签 blog",
        "add the tag devops like all posts",
    ],
)
def test_what_is_no_tag_change_for_every_post(instruction: str) -> None:
    assert tag_change_everywhere(instruction) is None


@pytest.mark.parametrize(
    ("instruction", "change"),
    [
        ("add rust as a tag to all posts", TagChange("add", ("rust",))),
        ("add the tag rust as well to all posts", TagChange("add", ("rust",))),
        ("remove draft from the tags in all posts", TagChange("remove", ("draft",))),
        ("从所有文章中删除标签 其它", TagChange("remove", ("其它",))),  # (its 它 is no "it")
        ("删除所有文章的标签 draft", TagChange("remove", ("draft",))),
        ("给所有文章加上 blog 标签", TagChange("add", ("blog",))),
        ("所有文章的标签都改成 rust", TagChange("set", ("rust",))),  # (refused: see below)
        # the tag before "tag": it removed go from one post
        ("remove the go tag from every post", TagChange("remove", ("go",))),
        ("delete the rust and go tags from all posts", TagChange("remove", ("rust", "go"))),
    ],
)
def test_a_tag_change_for_every_post_is_read(instruction: str, change: TagChange) -> None:
    assert tag_change_everywhere(instruction) == change


async def _run(blog: Path, *inputs: str, **overrides: Any) -> tuple[list[Any], int]:
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm, **overrides)
    await rt.initialize()
    try:
        replies = [await rt.process_input(text) for text in inputs]
    finally:
        await rt.close()
    return replies, llm.call_count


def _texts(blog: Path) -> dict[str, str]:
    return {
        str(p.relative_to(blog)): p.read_text(encoding="utf-8")
        for p in sorted(blog.rglob("*.md"))
        if ".skillrt" not in p.parts
    }


async def test_a_tag_is_renamed_in_every_post_in_each_ones_own_format(tmp_path: Path) -> None:
    blog = copy_fixture("hugo", tmp_path / "blog")
    before = _texts(blog)
    (msg,), calls = await _run(blog, "rename the tag hugo to gohugo in every post")
    assert msg.state == "COMPLETED", msg.content
    assert calls == 0  # no model
    yaml_post, json_post = "content/posts/first-post.md", "content/posts/json-post.md"
    assert msg.data["paths"] == [yaml_post, json_post] and msg.data["left"] == {}
    after = _texts(blog)
    assert after[yaml_post] == before[yaml_post].replace('["hugo", "start"]', '["gohugo", "start"]')
    assert after[json_post] == before[json_post].replace('["json", "hugo"]', '["json", "gohugo"]')
    assert {k: v for k, v in after.items() if k not in (yaml_post, json_post)} == {
        k: v for k, v in before.items() if k not in (yaml_post, json_post)
    }
    assert "Renamed the tag “hugo” to “gohugo” in 2 post(s)" in msg.content
    assert "`undo` restores one post at a time" in msg.content

    # The index knows: "posts tagged gohugo" lists both; undo restores one post at a time.
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    try:
        listed = await rt.process_input("which posts are tagged gohugo?")
        assert yaml_post in listed.content and json_post in listed.content
        undone = await rt.undo()
        assert undone.state == "COMPLETED" and undone.data["path"] == json_post
    finally:
        await rt.close()
    assert _texts(blog)[json_post] == before[json_post]
    assert _texts(blog)[yaml_post] != before[yaml_post]


async def test_a_hexo_post_without_its_opening_line_is_retagged_in_its_fields(
    tmp_path: Path,
) -> None:
    """A Hexo post whose fields have no opening "---" was compared as all body: its retag
    was said to have renamed "the inline tag #hexo in their text" too."""
    blog = tmp_path / "blog"
    (blog / "source" / "_posts").mkdir(parents=True)
    (blog / "_config.yml").write_text("title: x\n", encoding="utf-8")
    post = blog / "source" / "_posts" / "hello.md"
    text = "title: Hello Hexo\ndate: 2024-01-01 10:00:00\ntags: [hexo, blog]\n---\n\nHi.\n"
    post.write_text(text, encoding="utf-8")
    (msg,), _ = await _run(blog, "rename the tag hexo to hexojs in every post")
    assert msg.state == "COMPLETED", msg.content
    assert post.read_text(encoding="utf-8") == text.replace("[hexo, blog]", "[hexojs, blog]")
    assert "inline tag" not in msg.content and "every other field" in msg.content, msg.content


async def test_a_zola_tag_is_removed_from_every_taxonomies_table(tmp_path: Path) -> None:
    blog = copy_fixture("zola", tmp_path / "blog")
    post = blog / "content" / "inside-rust" / "2024-09-10-compiler-team.md"
    before = post.read_text(encoding="utf-8")
    (msg,), _ = await _run(blog, "remove the tag planning from all posts")
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["paths"] == ["content/inside-rust/2024-09-10-compiler-team.md"]
    assert post.read_text(encoding="utf-8") == before.replace(', "planning"', "")
    assert "Zola builds the tags only when" not in msg.content  # (a removal needs nothing)
    # Added to posts without tags: each gets a [taxonomies] table, and the reply says what
    # Zola needs (the fixture's config.toml declares no taxonomy), as one post's edit does.
    (added,), _ = await _run(blog, "add the tag release to all posts")
    assert added.state == "COMPLETED", added.content
    assert len(added.data["paths"]) == 5
    assert 'tags = ["release"]' in (blog / "content" / "Rust-1.77.0.md").read_text("utf-8")
    assert "Zola builds the tags only when `config.toml` declares the taxonomy" in added.content


async def test_the_chat_asks_once_and_a_no_changes_nothing(tmp_path: Path) -> None:
    blog = copy_fixture("hugo", tmp_path / "blog")
    before = _texts(blog)
    (asked, no), _ = await _run(
        blog, "把所有文章的标签 hugo 改成 gohugo", "否", edit={"confirm": True}
    )
    assert asked.state == "WAITING_INPUT"
    assert "要在这 2 篇文章里把标签“hugo”改成“gohugo”吗？" in asked.content
    assert "`content/posts/first-post.md`" in asked.content
    assert no.state == "COMPLETED" and no.data["changed"] is False
    assert _texts(blog) == before
    (asked, yes), _ = await _run(
        blog, "把所有文章的标签 hugo 改成 gohugo", "是", edit={"confirm": True}
    )
    assert yes.state == "COMPLETED" and len(yes.data["paths"]) == 2, yes.content
    assert "已在 2 篇文章里把标签“hugo”改成“gohugo”" in yes.content


async def test_no_post_with_the_tag_and_setting_every_posts_tags(tmp_path: Path) -> None:
    blog = copy_fixture("hugo", tmp_path / "blog")
    before = _texts(blog)
    (none, wipe, unnamed), calls = await _run(
        blog,
        "remove the tag nothing-has-it from every post",
        "set the tags to misc in every post",
        "add tags to all the posts",
    )
    assert none.state == "COMPLETED" and none.data["paths"] == []
    assert "No post has the tag(s) “nothing-has-it”" in none.content
    assert wipe.state == "ERROR" and wipe.data["error"] == "every_set_refused"
    assert unnamed.state == "ERROR" and unnamed.data["error"] == "every_no_tags"
    assert calls == 0 and _texts(blog) == before


async def test_an_obsidian_tag_only_in_the_text_is_left_and_named(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "front.md").write_text("---\ntags: [shell, notes]\n---\n\nUse ls.\n", "utf-8")
    inline = "Some tips. #shell\n"
    (vault / "inline.md").write_text(inline, encoding="utf-8")
    # a name no inline tag can have (all digits): the inline tag is left, and said so
    (msg,), _ = await _run(vault, "rename the tag shell to 2024 everywhere")
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["paths"] == ["front.md"] and msg.data["left"] == {"inline.md": "inline"}
    assert (vault / "front.md").read_text(encoding="utf-8").startswith('---\ntags: ["2024", notes]')
    assert (vault / "inline.md").read_text(encoding="utf-8") == inline
    assert "These posts were left as they were" in msg.content
    assert "the tag is written in its text, as an inline #tag" in msg.content
    # nothing changed at all: said so, not "Renamed … in 0 post(s)"
    (none,), _ = await _run(vault, "remove the tag cli from every post")
    assert none.content.startswith("No post has the tag(s)")
    (only_inline,), _ = await _run(vault, "remove the tag shell from all notes")
    assert only_inline.state == "ERROR" and only_inline.data["paths"] == []
    assert only_inline.content.startswith("No post was changed.\n\nThese posts were left")


OBSIDIAN_NOTE = (
    "---\ncreated: 2024-02-01\n---\n# Git rebase\n\n#git #workflow #Git/advanced\n\n"
    "Run `#git` in code, `x`#git, and see [[#git]].\n\n```\n#git\n```\n%% #git %%\n"
    "1. In a list:\n\n    ```sh\n    git rebase  #git here\n    ```\n\n"
    "End. #gitlab #GIT\n\n```\nnever closed #git\n"
)


async def test_renaming_an_obsidian_tag_renames_its_inline_tags(tmp_path: Path) -> None:
    """ "rename the tag git to vcs in every post" left every note whose tag was an inline
    ``#git`` as it was ("tag edits change the frontmatter only"). As Obsidian's own rename
    does, the inline tag is renamed in the text, whatever its case; a tag under it
    (``#Git/advanced``, another tag, as in the frontmatter), code (a fence in a list item, one
    never closed), comments, links to a heading and other tags (``#gitlab``) stay byte for
    byte, and the reply says the text changed. One note at a time too, and a note whose tag
    is only inline is not said to lack it."""
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "rebase.md").write_text(OBSIDIAN_NOTE, encoding="utf-8")
    front = "---\ntags: [git, notes]\n---\nNo inline tag.\n"
    (vault / "front.md").write_text(front, encoding="utf-8")
    (every,), calls = await _run(vault, "rename the tag git to vcs in every post")
    assert every.state == "COMPLETED" and calls == 0, every.content
    assert every.data["paths"] == ["front.md", "rebase.md"] and every.data["left"] == {}
    renamed = OBSIDIAN_NOTE.replace("#git #workflow", "#vcs #workflow").replace(
        "#gitlab #GIT", "#gitlab #vcs"
    )
    assert (vault / "rebase.md").read_text(encoding="utf-8") == renamed
    assert (vault / "front.md").read_text(encoding="utf-8") == front.replace("[git,", "[vcs,")
    assert "The inline tag #git in their text is #vcs now too" in every.content
    assert "The body and every other field" not in every.content
    (vault / "rebase.md").write_text(OBSIDIAN_NOTE, encoding="utf-8")
    (one,), _ = await _run(vault, "rename the tag git to vcs in rebase.md")
    assert one.state == "COMPLETED" and one.data["changed"] is True, one.content
    assert (vault / "rebase.md").read_text(encoding="utf-8") == renamed
    # its frontmatter has no tags: said as such, not "its tags are now none"
    assert one.content.startswith(
        "The inline #git in the text of `rebase.md` is #vcs now; its frontmatter and the rest "
        "of its text are unchanged."
    ), one.content
    assert "not there to remove" not in one.content
    # its other inline tags are named; neither the old one nor the new one among them
    assert "Its inline tags in the text, #workflow #Git/advanced #gitlab, are still" in (
        one.content
    )


async def test_an_inline_looking_tag_outside_obsidian_is_text(tmp_path: Path) -> None:
    """Outside an Obsidian vault ``#git`` in a post is text (a Hugo post's "#shell" is no
    tag): a rename changes the frontmatter only, and says the body is unchanged."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    post = "---\ntitle: x\ntags: [git]\n---\nUse #git daily.\n"
    (blog / "posts" / "x.md").write_text(post, encoding="utf-8")
    (msg,), _ = await _run(blog, "rename the tag git to vcs in every post")
    assert msg.state == "COMPLETED", msg.content
    assert (blog / "posts" / "x.md").read_text(encoding="utf-8") == post.replace("[git]", "[vcs]")
    assert "The body and every other field of each post are unchanged." in msg.content


async def test_one_posts_tag_is_renamed_in_its_place(tmp_path: Path) -> None:
    blog = copy_fixture("hugo", tmp_path / "blog")
    post = blog / "content" / "posts" / "first-post.md"
    before = post.read_text(encoding="utf-8")
    (msg, again), calls = await _run(
        blog,
        "rename the tag hugo to gohugo in the my first post post",
        "rename the tag nope to yes in the my first post post",
    )
    assert msg.state == "COMPLETED" and calls == 0, msg.content
    assert post.read_text(encoding="utf-8") == before.replace(
        '"hugo", "start"', '"gohugo", "start"'
    )
    assert msg.data["tags"] == ["gohugo", "start"]
    json_post = blog / "content" / "posts" / "json-post.md"
    assert '"hugo"' in json_post.read_text(encoding="utf-8")  # only the post named
    assert again.data["changed"] is False and "has no tag “nope”" in again.content


class _Path(BaseModel):
    path: str


@pytest.mark.parametrize("keep", [50, 0], ids=["undo", "no-undo"])
async def test_a_post_written_before_a_crash_counts_as_changed_when_its_step_runs_again(
    tmp_path: Path, keep: int
) -> None:
    """The write step's write was made, then the task was cut off before its journal entry:
    the step run again finds the post as its plan (journalled before) left it, and says it
    changed (it did), writing nothing more; with undo's versions off too. A post changed by
    someone else after the plan is left, and said to have changed."""
    blog = copy_fixture("hugo", tmp_path / "blog")
    post = blog / "content" / "posts" / "first-post.md"
    change = TagChange("rename", ("hugo", "gohugo"))
    seen: list[Retag] = []

    @skill(name="Twice", params=_Path)
    async def twice(ctx: SkillContext, params: _Path) -> SkillResult:
        plan = _plan_one(ctx, params.path, change, "block")
        one = partial(_retag_one, ctx, plan, change, "retag:1", "block")
        seen.append(one())
        written = post.read_text(encoding="utf-8")
        seen.append(one())  # (as a resumed task runs the step again)
        assert post.read_text(encoding="utf-8") == written
        other = blog / "content" / "posts" / "json-post.md"
        late = _plan_one(ctx, "content/posts/json-post.md", change, "block")
        other.write_text(other.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
        seen.append(_retag_one(ctx, late, change, "retag:2", "block"))
        # changed since its plan so that the tag is gone: changed, not "not there"
        toml = blog / "content" / "posts" / "toml-post.md"
        remove = TagChange("remove", ("shortcodes",))
        planned = _plan_one(ctx, "content/posts/toml-post.md", remove, "block")
        toml.write_text(toml.read_text("utf-8").replace('"shortcodes"', '"other"'), "utf-8")
        seen.append(_retag_one(ctx, planned, remove, "retag:3", "block"))
        return SkillResult(message="ok")

    config = load_config(content_root=blog, state_dir=tmp_path / "state", undo={"keep": keep})
    rt = AgentRuntime(config, llm=ScriptedModel([]), skills=[*writing_skills(), twice])
    await rt.initialize()
    try:
        msg = await rt.run_skill("Twice", {"path": "content/posts/first-post.md"})
        assert msg.state == "COMPLETED", msg.content
        kept = rt._run.versions.versions("content/posts/first-post.md")
        assert len(kept) == (1 if keep else 0)
    finally:
        await rt.close()
    assert seen[0].changed and seen[0].diff and seen[1].changed and not seen[1].diff
    assert '"gohugo", "start"' in post.read_text(encoding="utf-8")
    assert not seen[2].changed and seen[2].left == "changed"
    assert not seen[3].changed and seen[3].left == "changed"


async def test_removing_an_obsidian_notes_inline_tag_says_where_it_is(tmp_path: Path) -> None:
    """ "remove the shell tag from shell tips" said the note had no tag shell, where its tag is
    the inline #shell: the reply says so now, and the note stays as it was."""
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    note = "---\ntags: [notes]\n---\n\nSome tips for the #shell.\n"
    (vault / "shell tips.md").write_text(note, encoding="utf-8")
    (msg, other), _ = await _run(
        vault, "remove the tag shell from shell tips", "remove the tag zsh from shell tips"
    )
    assert msg.state == "COMPLETED" and msg.data["changed"] is False, msg.content
    assert msg.data["in_text"] == ["shell"]
    assert "is written in its text, as an inline #tag" in msg.content
    assert (vault / "shell tips.md").read_text(encoding="utf-8") == note
    assert other.data["in_text"] == [] and "inline" not in other.content


async def test_tags_added_to_an_obsidian_note_name_its_inline_tags_too(tmp_path: Path) -> None:
    """A tag added to a note whose tags are inline ``#git #workflow`` was answered "The tags
    of … are now “tools”", when its tags are tools, git and workflow: the reply names them."""
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    note = "---\ncreated: 2024-02-01\n---\n# Git rebase\n\n#git #workflow\n\nSquash.\n"
    (vault / "git rebase.md").write_text(note, encoding="utf-8")
    (vault / "plain.md").write_text("---\ntags: [a]\n---\nNo inline tag.\n", encoding="utf-8")
    (added, plain), _ = await _run(
        vault, "add the tag tools to git rebase", "add the tag b to plain.md"
    )
    assert added.state == "COMPLETED" and added.data["tags"] == ["tools"], added.content
    assert "Its inline tags in the text, #git #workflow, are still its tags too." in added.content
    assert (vault / "git rebase.md").read_text(encoding="utf-8") == note.replace(
        "created: 2024-02-01\n", "created: 2024-02-01\ntags: [tools]\n"
    )
    assert plain.state == "COMPLETED" and "inline tags" not in plain.content


@pytest.mark.parametrize(
    "instruction",
    ["把所有文章的 rust 标签都改成 rustlang", "把所有文章的 rust 标签统一改成 rustlang"],
)
def test_a_rename_in_every_post_said_with_all_is_a_rename(instruction: str) -> None:
    """ "…标签都改成…" was taken for setting one post's tags to rustlang alone."""
    assert tag_change_everywhere(instruction) == TagChange("rename", ("rust", "rustlang"))


@pytest.mark.parametrize(
    ("body", "renamed"),
    [
        ("- work\n\t- learned #git\n", "- work\n\t- learned #vcs\n"),  # a nested list item
        ("```js``` is inline #git\n\nlater #git\n", "```js``` is inline #vcs\n\nlater #vcs\n"),
        ("~~~\ncode #git\n~~~~\nafter #git\n", "~~~\ncode #git\n~~~~\nafter #vcs\n"),
        ("    indented code #git\n\nok #git\n", "    indented code #git\n\nok #vcs\n"),
        ("```\nnever closed #git\n", "```\nnever closed #git\n"),
        ("`x`#git and #Git.\n", "`x`#git and #vcs.\n"),
        ("#STRASSE/child #straße\n", "#STRASSE/child #vcs\n"),
    ],
)
def test_an_inline_tag_is_renamed_where_obsidian_reads_one(body: str, renamed: str) -> None:
    """A second read found tags in a nested list item (a tab's indent) left, every tag after
    ``~~~`` closed by ``~~~~`` skipped, and a case-folded prefix cutting a child tag wrong."""
    from skillrt.blog.markdown import renamed_inline_tag

    assert renamed_inline_tag(body, "git" if "git" in body.casefold() else "straße", "vcs") == (
        renamed
    )


def test_the_tags_read_are_the_tags_renamed() -> None:
    """After a rename, the index read ``#git`` still where the rename had skipped it (after
    inline code, in a fence inside a list item, in a fence never closed), so the note kept the
    old tag: reading and renaming now see the same tags."""
    from skillrt.blog.markdown import inline_tags, renamed_inline_tag

    renamed = renamed_inline_tag(OBSIDIAN_NOTE.split("---\n", 2)[2], "git", "vcs")
    read = [tag.casefold() for tag in inline_tags(renamed)]
    assert "git" not in read and "vcs" in read and "git/advanced" in read
