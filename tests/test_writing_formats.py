"""Writing skills on TOML and JSON posts: the frontmatter block never reaches the model, an
edit writes it back byte for byte, a reply's frontmatter is never written as the post's, and a
translation keeps the original's format."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.blog.frontmatter import split_frontmatter
from skillrt.llm.base import LLMMessage
from skillrt.testing import FunctionModel, ModelOptions, ScriptedModel
from tests.blog import copy_fixture
from tests.writing_support import writing_runtime

RELEASE = "content/Rust-1.77.0.md"


@pytest.fixture
def zola(tmp_path: Path) -> Path:
    return copy_fixture("zola", tmp_path / "blog")


def prompts_of(llm: ScriptedModel | FunctionModel) -> str:
    return "\n".join(str(m["content"]) for call in llm.calls for m in call)


@pytest.mark.parametrize(
    "reply",
    [
        "The Rust team announces Rust 1.77.0.",
        # The model echoed a frontmatter block (the bug: it was written as the whole post).
        '+++\ntitle = "Changed by the model"\n+++\n\nThe Rust team announces Rust 1.77.0.',
        "---\ntitle: made up\n---\nThe Rust team announces Rust 1.77.0.",
    ],
)
async def test_edit_of_a_toml_post_keeps_its_block_byte_for_byte(zola: Path, reply: str) -> None:
    before = (zola / RELEASE).read_text(encoding="utf-8")
    block = split_frontmatter(before).block
    llm = ScriptedModel([reply])
    rt = writing_runtime(zola, llm)
    await rt.initialize()
    msg = await rt.run_skill(
        "EditContent", {"instruction": "make it one sentence", "path": RELEASE}
    )
    assert msg.state == "COMPLETED", msg.content
    after = (zola / RELEASE).read_text(encoding="utf-8")
    assert after == block + "\nThe Rust team announces Rust 1.77.0.\n"
    seen = prompts_of(llm)
    assert "+++" not in seen and "Release Team" not in seen and "[extra]" not in seen
    assert "The Rust team is happy" in seen  # the body was what it saw
    await rt.close()


async def test_edit_of_a_selection_in_a_json_post(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    text = '{\n  "title": "JSON post",\n  "draft": false\n}\n\nOld sentence here.\nKeep me.\n'
    (blog / "posts" / "j.md").write_text(text, encoding="utf-8")
    llm = ScriptedModel(["New sentence here."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input(
        "reword this", context={"current_file": "posts/j.md", "selected_text": "Old sentence here."}
    )
    assert msg.state == "COMPLETED", msg.content
    assert (blog / "posts" / "j.md").read_text(encoding="utf-8") == text.replace("Old", "New")
    assert '"title"' not in prompts_of(llm)
    await rt.close()


async def test_edit_of_a_hexo_json_post_keeps_its_block(tmp_path: Path) -> None:
    """Hexo's JSON members up to ``;;;`` are frontmatter: never shown to the model, kept byte
    for byte while the whole body is rewritten."""
    blog = tmp_path / "blog"
    (blog / "source" / "_posts").mkdir(parents=True)
    block = ';;;\n"title": "Hexo post",\n"date": "2013/7/13 20:46:25"\n;;;\n'
    post = blog / "source" / "_posts" / "h.md"
    post.write_text(block + "\nA long first sentence here.\nAnd a second one.\n", encoding="utf-8")
    llm = ScriptedModel(["One sentence now."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.run_skill(
        "EditContent", {"instruction": "make it one sentence", "path": "source/_posts/h.md"}
    )
    assert msg.state == "COMPLETED", msg.content
    assert post.read_text(encoding="utf-8") == block + "\nOne sentence now.\n"
    seen = prompts_of(llm)
    assert '"title"' not in seen and ";;;" not in seen and "A long first sentence" in seen
    await rt.close()


async def test_edit_of_a_hexo_post_without_its_opening_line_keeps_its_fields(
    tmp_path: Path,
) -> None:
    """Hexo reads YAML fields with no opening "---" ("Prefixing separators are optional"):
    "make the post more concise" sent them to the model as body, and the post was saved as
    one line with no frontmatter, said unchanged."""
    blog = tmp_path / "blog"
    (blog / "source" / "_posts").mkdir(parents=True)
    block = "title: Hello Hexo\ndate: 2024-01-01 10:00:00\ntags: [hexo, blog]\n---\n"
    post = blog / "source" / "_posts" / "hello.md"
    post.write_text(block + "\nThis is my very first post on the new Hexo blog.\n", "utf-8")
    llm = ScriptedModel(["My first post on the new Hexo blog."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.run_skill(
            "EditContent",
            {"instruction": "make the post more concise", "path": "source/_posts/hello.md"},
        )
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert post.read_text(encoding="utf-8") == block + "\nMy first post on the new Hexo blog.\n"
    seen = prompts_of(llm)
    assert "Hello Hexo" not in seen and "tags:" not in seen and "very first post" in seen


async def test_summary_of_a_toml_post_never_shows_the_block(zola: Path) -> None:
    llm = ScriptedModel(["A release with C-string literals."])
    rt = writing_runtime(zola, llm)
    await rt.initialize()
    msg = await rt.run_skill("Summarize", {"path": RELEASE})
    assert msg.state == "COMPLETED", msg.content
    seen = prompts_of(llm)
    assert "+++" not in seen and "path =" not in seen and "C-string literals" in seen
    await rt.close()


async def test_translation_of_a_toml_post_stays_toml(zola: Path) -> None:
    def answer(messages: list[LLMMessage], options: ModelOptions) -> str:
        if "title" in str(messages[0]["content"]):
            return "宣布 Rust 1.77.0"
        return '+++\ntitle = "echo"\n+++\nRust 团队很高兴。'  # a part with an echoed block

    llm = FunctionModel(answer)
    rt = writing_runtime(zola, llm)
    await rt.initialize()
    msg = await rt.run_skill("Translate", {"path": RELEASE, "language": "zh"})
    assert msg.state == "COMPLETED", msg.content
    new = split_frontmatter((zola / msg.data["path"]).read_text(encoding="utf-8"))
    assert new.format == "toml"
    fields = new.fields()
    assert fields["title"] == "宣布 Rust 1.77.0" and fields["lang"] == "zh"
    assert fields["translation_of"] == RELEASE and fields["extra"] == {"release": True}
    assert "# The release post: its date is in `path`" in new.block  # the comment survived
    assert new.body.strip() == "Rust 团队很高兴。" and "echo" not in new.text
    assert "Release Team" not in prompts_of(llm)
    await rt.close()


@pytest.mark.parametrize(
    "path",
    [
        "content/posts/first-post.md",  # YAML
        "content/posts/json-post.md",  # JSON
        "content/posts/toml-post.md",  # TOML
        "content/posts/photo-walk/index.md",  # a page bundle
    ],
)
async def test_edits_keep_each_format_byte_for_byte(tmp_path: Path, path: str) -> None:
    root = copy_fixture("hugo", tmp_path / "hugo")
    before = (root / path).read_text(encoding="utf-8")
    found = split_frontmatter(before)
    llm = ScriptedModel(["A new body."])
    rt = writing_runtime(root, llm)
    await rt.initialize()
    msg = await rt.run_skill("EditContent", {"instruction": "rewrite it", "path": path})
    assert msg.state == "COMPLETED", msg.content
    assert (root / path).read_text(encoding="utf-8") == found.block + "\nA new body.\n"
    assert found.inner.strip() not in prompts_of(llm)
    await rt.close()


async def test_a_bundle_is_translated_into_a_bundle(zola: Path) -> None:
    llm = ScriptedModel(["异步闭包", "异步闭包让闭包返回 future。"])
    rt = writing_runtime(zola, llm)
    await rt.initialize()
    msg = await rt.run_skill(
        "Translate", {"path": "content/async-closures/index.md", "language": "zh"}
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["path"] == "content/async-closures-zh/index.md"
    rt.memory.refresh()
    post = rt.memory.posts.get("content/async-closures-zh/index.md")
    assert post is not None and post.title == "异步闭包" and post.draft
    await rt.close()


async def test_a_crlf_posts_body_edit_keeps_its_line_ends_and_blank_line(tmp_path: Path) -> None:
    """The model answers with LF lines: they were written so into a CRLF post, and the blank
    line after its frontmatter was dropped."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    post = blog / "posts" / "x.md"
    text = (
        "---\r\ntitle: T\r\n---\r\n\r\n## Intro\r\n\r\n"
        "This is teh intro about Rust ownership rules.\r\n"
    )
    post.write_bytes(text.encode())
    answer = "## Intro\n\nThis is the intro about Rust ownership rules.\n"
    rt = writing_runtime(blog, ScriptedModel([answer, answer]))
    msg = await rt.run_skill("EditContent", {"instruction": "fix the typos", "path": "posts/x.md"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert post.read_bytes() == text.replace("teh", "the").encode()


def test_a_one_line_part_of_a_crlf_post_is_replaced_in_crlf_lines() -> None:
    """The line ends were taken from the part replaced: one line holds none."""
    from skillrt.skills.writing.edit import _splice

    body = "\r\nFirst para.\r\n\r\nA line to expand.\r\n\r\nLast.\r\n"
    part = "A line to expand."
    new = _splice("---\r\n---\r\n", body, body.find(part), part, "One.\n\nTwo.", whole=False)
    assert new == "\r\nFirst para.\r\n\r\nOne.\r\n\r\nTwo.\r\n\r\nLast.\r\n"
