"""EditContent (selection, whole body, frontmatter kept, refusal when the file changed),
CreateArticle (never overwrites) and DeleteArticle (confirmation, trash)."""

from __future__ import annotations

from pathlib import Path

import frontmatter
import pytest

from skillrt.llm.base import LLMMessage
from skillrt.testing import Answer, FunctionModel, ModelOptions, ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import writing_runtime

POST = "posts/rust-smart-pointers.md"


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


def with_custom_fields(blog: Path) -> str:
    """Add fields a user might have (and a comment) to the post's frontmatter."""
    path = blog / POST
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "description: When a single owner is not enough.\n",
        "description: When a single owner is not enough.\n"
        "draft: false  # keep this comment\n"
        "series: {name: Rust, part: 3}\n"
        "lastmod: 2024-04-01\n",
    )
    path.write_text(text, encoding="utf-8")
    return text.split("\n---\n", 1)[0]


async def test_edit_selection_keeps_frontmatter_and_returns_a_diff(blog: Path) -> None:
    block = with_custom_fields(blog)
    before = frontmatter.load(blog / POST).metadata
    llm = ScriptedModel(["`Box<T>` stores a value on the heap; it has exactly one owner."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    selection = "- `Box<T>` puts a value on the heap with a single owner."
    msg = await rt.process_input(
        "make this sentence clearer",
        context={"current_file": POST, "selected_text": selection[2:]},
    )
    assert msg.state == "COMPLETED", msg.content
    text = (blog / POST).read_text(encoding="utf-8")
    assert text.startswith(block)  # the frontmatter block byte for byte, comment included
    assert frontmatter.loads(text).metadata == before
    assert "- `Box<T>` stores a value on the heap; it has exactly one owner." in text
    assert "Rc<T>" in text  # the rest of the body is untouched
    diff = msg.data["diff"]
    assert diff.startswith(f"--- a/{POST}\n+++ b/{POST}\n")
    assert "-- `Box<T>` puts a value" in diff and "+- `Box<T>` stores a value" in diff
    assert "```diff" in msg.content
    # The model saw the selection and the instruction, not the whole post.
    prompt = llm.calls[0][-1]["content"]
    assert "make this sentence clearer" in prompt and "RefCell" not in prompt
    await rt.close()


async def test_edit_whole_body_in_chinese(blog: Path) -> None:
    path = "posts/docker-basics.md"
    meta = frontmatter.load(blog / path).metadata
    llm = ScriptedModel(["```markdown\n# Docker 容器入门\n\n容器把应用打包在一起。\n```"])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.run_skill("EditContent", {"instruction": "精简全文", "path": path})
    assert msg.state == "COMPLETED", msg.content
    post = frontmatter.load(blog / path)
    assert post.metadata == meta
    assert post.content == "# Docker 容器入门\n\n容器把应用打包在一起。"  # the fence was removed
    assert rt.memory.posts.search("打包", 1)[0].path == path  # re-indexed
    await rt.close()


async def test_edit_refuses_when_the_file_changed_meanwhile(blog: Path) -> None:
    target = blog / POST
    outside_edit = "\nA line the user typed in their editor while the model was busy.\n"

    def model(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        with target.open("a", encoding="utf-8") as fh:  # the user saves in their editor
            fh.write(outside_edit)
        return "Rewritten body."

    rt = writing_runtime(blog, FunctionModel(model))
    await rt.initialize()
    msg = await rt.process_input(
        "rewrite this post in a friendlier tone", context={"current_file": POST}
    )
    assert msg.data.get("error") == "file_changed", msg.content
    assert "changed on disk" in msg.content and POST in msg.content
    text = target.read_text(encoding="utf-8")
    assert text.endswith(outside_edit) and "Rewritten body." not in text  # user's edit kept
    assert rt.locks is not None and rt.locks.held_by(msg.task_id) == []
    await rt.close()


async def test_edit_needs_a_file_and_a_found_selection(blog: Path) -> None:
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    msg = await rt.run_skill("EditContent", {"instruction": "shorter"})
    assert msg.state == "WAITING_INPUT" and "Which post should I edit?" in msg.content
    msg = await rt.process_input("qqqq zzzz")  # names no post: nothing is done
    assert msg.state == "COMPLETED" and msg.data.get("error") == "no_post_chosen"
    msg = await rt.run_skill(
        "EditContent",
        {"instruction": "shorter", "path": POST, "selected_text": "text that is not there"},
    )
    assert msg.data.get("error") == "selection_not_found"
    msg = await rt.run_skill("EditContent", {"instruction": "shorter", "path": "../etc.md"})
    assert msg.data.get("error") == "path_not_allowed"
    await rt.close()


async def test_edit_refuses_a_post_with_broken_frontmatter(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog", broken=True)
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.run_skill(
        "EditContent", {"instruction": "fix typos", "path": "posts/broken-frontmatter.md"}
    )
    assert msg.data.get("error") == "invalid_frontmatter"
    assert "YAML" in msg.content and llm.call_count == 0
    await rt.close()


async def test_create_article_never_overwrites(blog: Path) -> None:
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    first = await rt.process_input("create a new post titled Go generics")
    assert first.state == "COMPLETED", first.content
    assert first.data["path"] == "posts/go-generics.md"
    post = frontmatter.load(blog / "posts" / "go-generics.md")
    assert post["title"] == "Go generics" and "tags" not in post and post.content == ""
    assert post["draft"] is True and "draft: true" in first.content  # marked, and said so
    (blog / "posts" / "go-generics.md").write_text("---\ntitle: mine\n---\nmy text\n")
    second = await rt.run_skill("CreateArticle", {"title": "Go generics", "tags": "go, 泛型"})
    assert second.data["path"] == "posts/go-generics-2.md"
    assert frontmatter.load(blog / second.data["path"])["tags"] == ["go", "泛型"]
    assert (blog / "posts" / "go-generics.md").read_text() == "---\ntitle: mine\n---\nmy text\n"
    chinese = await rt.run_skill("CreateArticle", {"title": "Go 泛型入门"})
    assert chinese.data["path"] == "posts/go-fan-xing-ru-men.md"
    assert "Go 泛型入门" in chinese.content
    await rt.close()


async def test_delete_asks_then_moves_to_the_trash(blog: Path) -> None:
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    question = await rt.process_input("删除 posts/docker-basics.md")
    assert question.state == "WAITING_INPUT"
    assert "确定要删除《Docker 容器入门》" in question.content
    assert (blog / "posts" / "docker-basics.md").exists()
    done = await rt.process_input("是")
    assert done.state == "COMPLETED", done.content
    assert not (blog / "posts" / "docker-basics.md").exists()
    trashed = list((blog.parent / "state" / "trash").rglob("docker-basics.*.md"))
    assert len(trashed) == 1 and "Docker" in trashed[0].read_text(encoding="utf-8")
    assert rt.memory.posts.get("posts/docker-basics.md") is None
    assert "posts/docker-basics.md" not in rt.memory.graph.posts()
    await rt.close()


@pytest.mark.parametrize("answer", ["no", "否", "算了", "yes please delete everything"])
async def test_delete_without_a_yes_keeps_the_file(blog: Path, answer: str) -> None:
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    question = await rt.process_input("delete the post posts/git-workflow.md")
    assert question.state == "WAITING_INPUT" and "Delete" in question.content
    reply = await rt.process_input(answer)
    assert reply.data.get("deleted") is False, reply.content
    assert (blog / "posts" / "git-workflow.md").exists()
    await rt.close()


async def test_delete_by_title_and_missing_post(blog: Path) -> None:
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    question = await rt.run_skill("DeleteArticle", {"title": "数据库索引原理"})
    assert question.state == "WAITING_INPUT" and "posts/database-indexing.md" in question.content
    done = await rt.process_input("y")
    assert done.data["deleted"] is True
    missing = await rt.run_skill("DeleteArticle", {"path": "posts/nope.md"})
    assert missing.data.get("error") == "not_found"
    (blog / "config.toml").write_text("x = 1\n")
    other = await rt.run_skill("DeleteArticle", {"path": "config.toml"})
    assert other.data.get("error") == "not_a_post" and (blog / "config.toml").exists()
    await rt.close()


@pytest.mark.parametrize("confirm", [True, False])
async def test_a_section_page_is_refused_before_the_model_is_asked(
    tmp_path: Path, confirm: bool
) -> None:
    """ "Make it clearer" on Zola's ``content/blog/_index.md`` sent its text to the model, and
    under ``edit.confirm`` showed a diff to accept, before the save refused the section page."""
    root = tmp_path / "zola"
    (root / "content/blog").mkdir(parents=True)
    (root / "config.toml").write_text('base_url = "https://example.org"\n', encoding="utf-8")
    page = root / "content/blog/_index.md"
    page.write_text('+++\ntitle = "Blog"\n+++\n\nAll my posts about things.\n', encoding="utf-8")
    (root / "content/blog/a.md").write_text('+++\ntitle = "A"\n+++\n\nA.\n', encoding="utf-8")
    llm = ScriptedModel(["All my posts, about things."])
    rt = writing_runtime(root, llm, state_dir=tmp_path / "state")
    try:
        msg = await rt.run_skill(
            "EditContent",
            {"path": "content/blog/_index.md", "instruction": "make it clearer"},
            {"confirm": confirm},
        )
    finally:
        await rt.close()
    assert msg.data["error"] == "path_not_allowed" and "section page" in msg.content
    assert llm.call_count == 0 and msg.state != "WAITING"
