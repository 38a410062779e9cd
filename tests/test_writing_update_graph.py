"""UpdateGraph driven as an author would: posts renamed and deleted between updates, and
extractions a small model gets wrong (names spelt two ways, with markup, a post's path)."""

from __future__ import annotations

from pathlib import Path

from skillrt.testing import FunctionModel
from tests.blog import copy_blog
from tests.writing_support import EXTRACTION, writing_runtime


async def test_a_deleted_post_is_counted_in_the_links_removed(tmp_path: Path) -> None:
    """Deleting git-workflow.md on disk and updating the graph said "0 links removed": the
    refresh inside the scan had dropped its links and its tags, and the second sync found
    nothing left to count."""
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, FunctionModel(lambda m, o: EXTRACTION))
    await rt.initialize()
    try:
        await rt.run_skill("UpdateGraph", {})
        graph = rt.memory.graph
        outgoing = [
            link
            for link in graph.export_json()["links"]
            if link["source"] == "posts/git-workflow.md"
        ]
        assert outgoing
        (blog / "posts" / "git-workflow.md").unlink()
        msg = await rt.run_skill("UpdateGraph", {})
        assert "posts/git-workflow.md" not in graph.posts()
        assert msg.data["links_removed"] >= len(outgoing), msg.content
        assert f"links added, {msg.data['links_removed']} removed" in msg.content
        # The posts linking to it now link to a note not written yet, and that is said too.
        assert graph.entity("git-workflow") == {
            "name": "git-workflow",
            "type": "note",
            "description": "",
        }
        assert msg.data["links_added"] >= 2 and msg.data["entities_added"] >= 1
        again = await rt.run_skill("UpdateGraph", {})
        assert again.data["links_removed"] == 0 and again.data["links_added"] == 0
    finally:
        await rt.close()
