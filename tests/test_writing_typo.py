"""A typo named in quotes ("fix the typo 'thousnads' in the go post"): a word not in the post
changes nothing and says so; a word the blog itself spells (one letter off, or two swapped)
is fixed without a model; else only the paragraph that holds it goes to the model, and an
answer that keeps it is refused. The embedded model, sent the whole post, wrote a new one
about Go "in healthcare, finance and gaming"."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.replace import fix_word, named_typo, spelled
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import writing_runtime

GO = "posts/go-concurrency.md"


@pytest.mark.parametrize(
    ("instruction", "typo"),
    [
        ("fix the typo 'thousnads' in the go post", "thousnads"),
        ("correct the spelling mistake “recieve”", "recieve"),
        ("fix the spelling of 'seperate'", "seperate"),
        ("'teh' is misspelled in the intro", "teh"),
        ("改正错别字“因该”", "因该"),
        ("fix the typos", None),  # none named: the model's, as any edit
        ("replace 'a' with 'b'", None),  # a replacement
    ],
)
def test_a_typo_named_in_quotes_is_read(instruction: str, typo: str | None) -> None:
    assert named_typo(instruction) == typo


@pytest.mark.parametrize(
    ("typo", "right"),
    [("thousnads", "thousands"), ("Recieve", "Receive"), ("teh", "the"), ("seperate", None),
     ("zzz", None), ("two words", None)],
)  # fmt: skip
def test_the_blogs_own_spelling_is_one_edit_away(typo: str, right: str | None) -> None:
    posts = ["Go runs thousands of goroutines; thousands are cheap.", "We receive the data."]
    assert spelled(typo, posts) == right


def test_a_word_the_blog_uses_is_no_typo_and_a_spelling_keeps_its_case() -> None:
    """ "then" is one edit from "the": a word two posts use is the blog's own (every "then"
    would have become "the")."""
    posts = ["Then we went; the end.", "It was then that the model failed.", "the the the"]
    assert spelled("then", posts) is None
    assert spelled("Javscript", ["JavaScript is a language.", "Use JavaScript."]) == "JavaScript"
    assert spelled("dcoker", ["Docker runs; docker builds."]) == "docker"


def test_a_word_is_fixed_whole_and_in_prose_only() -> None:
    body = "We recieve it.\n\n```\nrecieve()\n```\n\nSee `recieve`, recieved, recieve."
    fixed, count = fix_word(body, "recieve", "receive")
    assert count == 2
    assert fixed == "We receive it.\n\n```\nrecieve()\n```\n\nSee `recieve`, recieved, receive."


async def _edit(blog: Path, instruction: str, answers: list[str]) -> tuple:
    llm = ScriptedModel(answers)
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.run_skill("EditContent", {"instruction": instruction, "path": GO})
    finally:
        await rt.close()
    return msg, llm


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    root = copy_blog(tmp_path / "blog")
    post = root / GO
    text = post.read_text(encoding="utf-8")
    typo = text.replace("values between goroutines", "values between goroutiens", 1)
    post.write_text(typo, encoding="utf-8")
    return root


async def test_a_typo_the_blog_spells_right_is_fixed_without_the_model(blog: Path) -> None:
    before = (blog / GO).read_text(encoding="utf-8")
    msg, llm = await _edit(blog, "fix the typo 'goroutiens' in the go post", [])
    assert msg.state == "COMPLETED" and llm.call_count == 0, msg.content
    assert msg.data["spelled"] == "goroutines" and msg.data["replaced"] == 1
    assert (blog / GO).read_text(encoding="utf-8") == before.replace("goroutiens", "goroutines")


async def test_a_typo_not_in_the_post_changes_nothing(blog: Path) -> None:
    before = (blog / GO).read_text(encoding="utf-8")
    msg, llm = await _edit(blog, "fix the typo 'recieve' in the go post", [])
    assert msg.state == "ERROR" and llm.call_count == 0
    assert msg.content == "“recieve” is not in `posts/go-concurrency.md`; the file is unchanged."
    assert (blog / GO).read_text(encoding="utf-8") == before


async def test_only_the_paragraph_with_the_typo_goes_to_the_model(blog: Path) -> None:
    """A word the blog never spells right: the model is sent its paragraph alone, and an
    answer that keeps the typo is refused."""
    post = blog / GO
    post.write_text(
        post.read_text(encoding="utf-8").replace("Channels pass", "Chanells pass"), "utf-8"
    )
    before = post.read_text(encoding="utf-8")
    paragraph = next(p for p in before.split("\n\n") if "Chanells" in p)
    kept = paragraph.replace("goroutiens", "goroutines")  # the typo named stays
    msg, llm = await _edit(blog, "fix the typo 'Chanells'", [kept, kept])
    assert msg.state == "ERROR" and "typo_fixed" in msg.content, msg.content
    assert post.read_text(encoding="utf-8") == before
    sent = llm.calls[0][-1]["content"]
    assert paragraph in sent and "func worker" not in sent  # the paragraph, not the post
    fixed = paragraph.replace("Chanells", "Channels")
    msg, _ = await _edit(blog, "fix the typo 'Chanells'", [fixed])
    assert msg.state == "COMPLETED", msg.content
    assert post.read_text(encoding="utf-8") == before.replace("Chanells", "Channels")
    assert "goroutiens" in post.read_text(encoding="utf-8")  # (not named: left)


async def test_a_typo_in_the_title_alone_is_fixed_in_the_title(blog: Path) -> None:
    post = blog / GO
    post.write_text(
        post.read_text(encoding="utf-8").replace(
            'title: "Concurrency in Go', 'title: "Concurency in Go', 1
        ),
        encoding="utf-8",
    )
    before = post.read_text(encoding="utf-8")
    msg, llm = await _edit(blog, "fix the typo 'Concurency' in the go post", [])
    assert msg.state == "COMPLETED" and llm.call_count == 0, msg.content
    assert msg.content.startswith("Edited the title of `posts/go-concurrency.md`")
    assert post.read_text(encoding="utf-8") == before.replace("Concurency", "Concurrency", 1)


def test_the_paragraph_with_a_typo_is_the_bodys_own_text_crlf_too() -> None:
    from skillrt.skills.writing.replace import paragraph_with

    body = "Intro line one\r\nwe recieve data\r\n\r\nMore.\r\n"
    held, in_code = paragraph_with(body, "recieve")
    assert held == "Intro line one\r\nwe recieve data" and in_code == 0
    assert body.find(held) == 0  # (the edit finds it in the body, as a selection)
