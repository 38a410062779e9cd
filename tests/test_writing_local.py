"""WriteArticle on the embedded local model (SmolLM2-135M through llama.cpp): no quality is
asserted, only a valid file with frontmatter and a non-empty body."""

from __future__ import annotations

from pathlib import Path

import frontmatter
import pytest

from tests.blog import copy_blog
from tests.writing_support import writing_runtime


@pytest.mark.local_model
@pytest.mark.slow
async def test_write_article_on_the_local_model(tmp_path: Path) -> None:
    from skillrt.llm.local import LocalProvider

    blog = copy_blog(tmp_path / "blog")
    llm = LocalProvider(n_ctx=4096, seed=0)
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.run_skill("WriteArticle", {"topic": "Rust ownership", "length": "80"})
        assert msg.state == "COMPLETED", msg.content
        post = frontmatter.load(blog / msg.data["path"])
        # An empty list of tags or links is left out of a new post (docs/writing.md).
        assert post["title"] and isinstance(post.get("tags", []), list)
        assert all(rt.memory.resolve_link(name) for name in post.get("wikiLinks", []))
        assert post.content.strip()
        assert msg.tokens > 0
    finally:
        await rt.close()
        await llm.aclose()  # a model passed in is the caller's to close: its worker process too
