"""Journals written before the writing skills' steps were typed (plain JSON dicts, an edit as a
bare string) resume: the typed steps read them back, and nothing journalled is paid again."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import frontmatter
import pytest

from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.records import TaskRecord
from skillrt.llm.base import LLMMessage
from skillrt.testing import FunctionModel, ModelOptions
from tests.blog import copy_blog
from tests.writing_support import EXTRACTION, OUTLINE_EN, prompt_kind, writing_runtime

OLD_POST = (
    "---\ntitle: Understanding Rust Ownership\ndate: 2024-05-01\ntags:\n- rust\n"
    "wikiLinks:\n- rust-borrowing\n---\n\n## What ownership means\n\nOne owner per value.\n"
)


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


def seed(blog: Path, skill: str, params: dict[str, Any], steps: dict[str, Any]) -> str:
    """A paused task of ``skill`` with the journal ``steps``, as an earlier run left it."""
    now = time.time()
    store = CheckpointStore(blog.parent / "state" / "checkpoints")
    store.save(
        TaskRecord(
            id="old-task",
            session_id="old-session",
            state="EXECUTING",
            raw_input="write an article about Rust ownership",
            skill=skill,
            params=params,
            steps=steps,
            created_at=now - 60,
            updated_at=now - 30,
        )
    )
    store.close()
    return "old-task"


class Kinds:
    """A model that answers an entity extraction and records every kind of prompt it got."""

    def __init__(self) -> None:
        self.kinds: list[str] = []

    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Any:
        self.kinds.append(prompt_kind(messages))
        return EXTRACTION


async def test_a_write_article_journal_of_plain_dicts_resumes_at_the_save(blog: Path) -> None:
    outline = {**OUTLINE_EN, "sections": OUTLINE_EN["sections"][:1]}
    steps = {
        "context": [
            {
                "path": "posts/rust-borrowing.md",
                "title": "Rust 借用与引用",
                "snippet": "借用检查器",
                "link": "rust-borrowing",
            }
        ],
        "outline": outline,
        "section:1": "One owner per value.",
        "compose": {"path": "posts/rust-ownership.md", "text": OLD_POST, "word_count": 4},
    }
    task = seed(blog, "WriteArticle", {"topic": "Rust ownership"}, steps)
    model = Kinds()
    rt = writing_runtime(blog, FunctionModel(model))
    await rt.initialize()
    msg = await rt.resume_task(task)
    await rt.close()
    assert msg is not None and msg.state == "COMPLETED", msg
    assert model.kinds == ["extract"]  # no outline, no section written again
    assert (blog / "posts" / "rust-ownership.md").read_text(encoding="utf-8") == OLD_POST
    assert msg.data["path"] == "posts/rust-ownership.md"
    assert msg.data["sections"] == ["What ownership means"]
    assert msg.data["related"] == ["posts/rust-borrowing.md"]
    assert msg.data["graph"]["entities"] == ["Rust", "Copy trait"]


async def test_an_edit_journalled_as_a_bare_string_resumes_without_the_model(blog: Path) -> None:
    post = blog / "posts" / "git-workflow.md"
    digest = hashlib.sha256(post.read_bytes()).hexdigest()
    steps = {
        "read": {"path": "posts/git-workflow.md", "sha256": digest},
        "edit": "Keep `main` releasable.\n",  # how the edit step was journalled at first
    }
    params = {"instruction": "shorter", "path": "posts/git-workflow.md"}
    task = seed(blog, "EditContent", params, steps)
    model = Kinds()
    rt = writing_runtime(blog, FunctionModel(model))
    await rt.initialize()
    msg = await rt.resume_task(task)
    await rt.close()
    assert msg is not None and msg.state == "COMPLETED", msg
    assert model.kinds == []
    saved = frontmatter.load(post)
    assert saved["title"] == "A Practical Git Branching Workflow"  # the frontmatter is kept
    assert saved.content == "Keep `main` releasable."
    assert msg.data["changed"] is True and "-Small commits" in msg.data["diff"]
