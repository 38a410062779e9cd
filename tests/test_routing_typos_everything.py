"""Requests an author types, routed by the table: a summary asked with the verb mistyped
("sumarize my rust borrowing post" was offered three actions at 0.41) and posts asked for as
"everything tagged X" ("show me everything tagged python" was offered a browser and the graph
besides the blog's answer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_routing import _router
from skillrt.skills.writing.listing import TagAsk, tag_ask
from skillrt.testing import FunctionModel
from tests.blog import copy_blog
from tests.writing_support import WritingModelFn, writing_runtime


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("sumarize my rust borrowing post", "SUMMARIZE"),
        ("summerize the go post", "SUMMARIZE"),
        ("sumarise it", "SUMMARIZE"),
        ("show me everything tagged python", "ANSWER_QUESTION"),
        ("list everything tagged rust and async", "ANSWER_QUESTION"),
        # neighbours
        ("what did I do last summer", "ANSWER_QUESTION"),
        ("write a summary-style post about tmux", "WRITE_ARTICLE"),
    ],
)
async def test_the_table_routes_it(text: str, intent: str) -> None:
    parsed = await _router(None).parse(text, ask_model=False)
    assert parsed.type == intent, parsed


def test_everything_tagged_is_a_list_by_tag() -> None:
    assert tag_ask("show me everything tagged python") == TagAsk("python")


async def test_a_mistyped_summary_of_a_named_post_is_made(tmp_path: Path) -> None:
    model = WritingModelFn()
    rt = writing_runtime(copy_blog(tmp_path / "blog"), FunctionModel(model))
    await rt.initialize()
    try:
        said = await rt.process_input("sumarize my rust borrowing post")
    finally:
        await rt.close()
    assert said.content.startswith("Summary of `posts/rust-borrowing.md`"), said.content
