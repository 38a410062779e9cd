"""Feedback asked on a post ("review it", "give me feedback on this post") is answered from the
post, read-only: the classifier sent "review it" to an edit (the post rewritten as a review)
and "give me feedback on this post" to a summary, and the search for "review" answered from
another post."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.testing import ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import writing_runtime

OPEN = {"current_file": "posts/docker-basics.md"}


@pytest.mark.parametrize(
    "request_text",
    [
        "review it",
        "give me feedback on this post",
        "critique the docker post",
        "rate my post",
        "评价一下这篇文章",
        "你觉得这篇文章怎么样？",
    ],
)
async def test_feedback_is_answered_from_the_open_post_and_writes_nothing(
    tmp_path: Path, request_text: str
) -> None:
    blog = copy_blog(tmp_path / "blog")
    before = (blog / "posts" / "docker-basics.md").read_bytes()
    rt = writing_runtime(blog, ScriptedModel(["It explains containers clearly; add a summary."]))
    msg = await rt.process_input(request_text, context=OPEN)
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data.get("citations") == ["posts/docker-basics.md"], msg.content
    assert (blog / "posts" / "docker-basics.md").read_bytes() == before
