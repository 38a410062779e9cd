"""New posts follow the blog (format, keys, file name, folder), are drafts marked the blog's
way, stay out of answers until published (``skillrt publish``, ``AgentRuntime.publish``), and
section pages are never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrt.blog.frontmatter import split_frontmatter
from skillrt.llm.base import LLMMessage
from skillrt.testing import FunctionModel, ModelOptions, ScriptedModel
from tests.blog import copy_fixture
from tests.cli_support import cli_env, skillrt, write_script
from tests.writing_support import WritingModelFn, writing_runtime


def tree_bytes(root: Path, pattern: str) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob(pattern)}


@pytest.mark.parametrize("name", ["zola", "hugo"])
async def test_an_empty_post_follows_the_blog_too(tmp_path: Path, name: str) -> None:
    root = copy_fixture(name, tmp_path / name)
    rt = writing_runtime(root, ScriptedModel([]))  # a fresh index: CreateArticle reads it
    await rt.initialize()
    msg = await rt.run_skill("CreateArticle", {"title": "Rust ownership", "tags": "rust"})
    post = split_frontmatter((root / msg.data["path"]).read_text(encoding="utf-8"))
    expected = {
        "zola": ("toml", ["path", "title", "draft"]),
        "hugo": ("yaml", ["title", "date", "tags", "draft"]),
    }
    assert (post.format, list(post.fields())) == expected[name]
    # The tags asked for and not written (Zola's posts carry none) are said, not lost silently.
    assert ("the tags (rust) were not written" in msg.content) is (name == "zola"), msg.content
    await rt.close()


@pytest.mark.parametrize(
    ("name", "folder", "fmt", "keys", "mark"),
    [
        # Zola (the Rust blog): TOML, path with the date, the folder of the recent posts.
        ("zola", "content", "toml", ["path", "title", "draft"], "draft = true"),
        # Hugo: YAML (most posts), title, date, tags, draft.
        ("hugo", "content/posts", "yaml", ["title", "date", "tags", "draft"], "draft: true"),
        # Jekyll: the shared layout copied, and the draft goes to _drafts/ (no date in its name).
        ("jekyll", "_drafts", "yaml", ["layout", "title"], "in `_drafts/`"),
    ],
)
async def test_a_new_article_follows_the_blog(
    tmp_path: Path, name: str, folder: str, fmt: str, keys: list[str], mark: str
) -> None:
    root = copy_fixture(name, tmp_path / name)
    sections = tree_bytes(root, "_index.md")
    rt = writing_runtime(root, FunctionModel(WritingModelFn()))
    await rt.initialize()
    msg = await rt.run_skill("WriteArticle", {"topic": "Rust ownership"})
    assert msg.state == "COMPLETED", msg.content
    path = msg.data["path"]
    assert path == f"{folder}/rust-ownership.md" and msg.data["draft"] is True
    post = split_frontmatter((root / path).read_text(encoding="utf-8"))
    assert post.format == fmt
    fields = post.fields()
    assert list(fields) == keys
    assert fields["title"] == "Understanding Rust Ownership"
    if name == "zola":
        assert fields["path"].endswith("/rust-ownership") and fields["path"][:4].isdigit()
    if name == "jekyll":
        assert fields["layout"] == "post"
    assert mark in msg.content and "skillrt publish" in msg.content  # the reply says so
    assert tree_bytes(root, "_index.md") == sections  # section pages untouched
    await rt.close()


async def test_new_post_settings_format_and_template(tmp_path: Path) -> None:
    root = copy_fixture("hugo", tmp_path / "hugo")
    (root / "archetypes").mkdir()
    (root / "archetypes" / "post.md").write_text(
        '+++\n# my template\ntitle = ""\ndate = 2000-01-01\nauthor = "Ann"\nseries = ""\n+++\n',
        encoding="utf-8",
    )
    rt = writing_runtime(
        root, ScriptedModel([]), new_post={"template": "archetypes/post.md"}, drafts={"mark": False}
    )
    await rt.initialize()
    msg = await rt.run_skill("CreateArticle", {"title": "Templated"})
    post = split_frontmatter((root / msg.data["path"]).read_text(encoding="utf-8"))
    assert post.format == "toml" and list(post.fields()) == ["title", "date", "author"]
    assert post.fields()["author"] == "Ann" and "draft" not in msg.content
    await rt.close()
    rt = writing_runtime(
        root, ScriptedModel([]), new_post={"format": "json"}, state_dir=tmp_path / "state2"
    )
    await rt.initialize()  # a fresh state folder: CreateArticle reads the posts itself
    msg = await rt.run_skill("CreateArticle", {"title": "In JSON", "tags": "a, b"})
    post = split_frontmatter((root / msg.data["path"]).read_text(encoding="utf-8"))
    assert post.format == "json"
    assert post.fields() == {
        "title": "In JSON",
        "date": post.fields()["date"],
        "tags": ["a", "b"],
        "draft": True,
    }
    await rt.close()


def _answering(messages: list[LLMMessage], options: ModelOptions) -> str:
    """Answers citing every source it was given."""
    prompt = str(messages[-1]["content"])
    cited = [line.split("(", 1)[1].split(")", 1)[0] for line in prompt.splitlines() if "](" in line]
    return "From the blog: " + ", ".join(f"[post]({c})" for c in cited)


async def test_drafts_stay_out_of_answers_until_published(tmp_path: Path) -> None:
    root = copy_fixture("hugo", tmp_path / "hugo")
    llm = FunctionModel(_answering)
    rt = writing_runtime(root, llm)
    await rt.initialize()
    # toml-post.md is a draft (draft = true): the only post on shortcodes.
    msg = await rt.process_input("what are shortcodes in Hugo?")
    assert "content/posts/toml-post.md" not in json.dumps(msg.data)
    done = await rt.publish("content/posts/toml-post.md")
    assert done.changed and done.removed == ("draft",)
    text = (root / "content/posts/toml-post.md").read_text(encoding="utf-8")
    assert "draft" not in text and text.startswith('+++\ntitle = "Shortcodes in TOML land"\n')
    msg = await rt.process_input("what are shortcodes in Hugo?")
    assert msg.data["citations"][0] == "content/posts/toml-post.md"  # the best match now
    again = await rt.publish("content/posts/toml-post.md")
    assert not again.changed  # not a draft any more: nothing touched
    await rt.close()


async def test_a_written_draft_is_not_cited_by_the_next_answer(tmp_path: Path) -> None:
    root = copy_fixture("zola", tmp_path / "zola")

    def model(messages: list[LLMMessage], options: ModelOptions) -> object:
        if "Sources:" in str(messages[-1]["content"]):
            return _answering(messages, options)
        return WritingModelFn()(messages, options)

    rt = writing_runtime(root, FunctionModel(model))
    await rt.initialize()
    wrote = await rt.run_skill("WriteArticle", {"topic": "Rust ownership"})
    answer = await rt.process_input("what is ownership in Rust?")
    assert wrote.data["path"] not in json.dumps(answer.data)
    await rt.close()


def test_skillrt_publish_moves_a_jekyll_draft(tmp_path: Path) -> None:
    root = copy_fixture("jekyll", tmp_path / "jekyll")
    draft = (root / "_drafts" / "unfinished-idea.md").read_bytes()
    env = cli_env(root, write_script(tmp_path / "s.json", []))
    done = skillrt("publish", "_drafts/unfinished-idea.md", "--json", env=env, cwd=root)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["moved_from"] == "_drafts/unfinished-idea.md"
    new = root / data["path"]
    assert data["path"].startswith("_posts/2") and data["path"].endswith("-unfinished-idea.md")
    assert new.read_bytes() == draft and not (root / "_drafts" / "unfinished-idea.md").exists()
    listed = json.loads(skillrt("index", "--json", env=env, cwd=root).stdout)
    item = next(i for i in listed["items"] if i["path"] == data["path"])
    assert item["draft"] is False and item["title"] == "An unfinished idea about Liquid"
    missing = skillrt("publish", "_drafts/nothing.md", env=env, cwd=root)
    assert missing.returncode == 2 and "does not exist" in missing.stderr


async def test_dates_in_questions_filter_and_say_when_nothing_matches(tmp_path: Path) -> None:
    root = copy_fixture("zola", tmp_path / "zola")
    llm = FunctionModel(_answering)
    rt = writing_runtime(root, llm)
    await rt.initialize()
    msg = await rt.run_skill(
        "AnswerQuestion", {"question": "what did the compiler team write in 2023?"}
    )
    assert msg.data["sources"] == ["content/inside-rust/2023-11-20-this-week.md"]
    assert msg.data["dates"] == "2023" and not msg.data["date_missed"]
    msg = await rt.run_skill("AnswerQuestion", {"question": "2024年的 compiler 文章"})
    assert msg.data["sources"] == ["content/inside-rust/2024-09-10-compiler-team.md"]
    msg = await rt.run_skill(
        "AnswerQuestion", {"question": "what did the compiler team write in 2019?"}
    )
    assert msg.data["date_missed"] is True
    assert "No post on the blog is dated 2019" in msg.content
    # Equal scores: the more recent post first.
    hits = rt.memory.posts.search("Announcing", 5)
    assert [h.path for h in hits] == ["content/Rust-1.78.0.md", "content/Rust-1.77.0.md"]
    await rt.close()


async def test_publish_in_the_chat_acts_on_the_focus(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from skillrt.cli.repl import Repl
    from tests.test_cli_units import ListReader

    root = copy_fixture("hugo", tmp_path / "hugo")
    post = root / "content/posts/toml-post.md"
    rt = writing_runtime(root, ScriptedModel([]))
    console = Console(file=io.StringIO(), width=200, color_system=None, force_terminal=False)
    lines = ["/open content/posts/toml-post.md", "/publish", "/publish"]
    await Repl(rt, console, ListReader(lines)).run()
    output = " ".join(console.file.getvalue().split())
    assert "Published content/posts/toml-post.md." in output
    assert "content/posts/toml-post.md is not a draft; nothing changed." in output
    assert "draft" not in post.read_text(encoding="utf-8")
    await rt.close()  # the REPL closed it already: a second close is harmless
