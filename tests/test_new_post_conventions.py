"""New posts and publishing follow the generator's rules and the blog's own habits: no YAML
aliases, a date-named field that is no date kept as the blog has it, no second post at an
existing post's web address, section pages left alone, Hexo's ``;;;`` JSON, the generator's
setup (config directory, ``zola.toml``, ``collections_dir``), dates with the blog's time and
offset, CRLF line ends, and the truth about drafts on VitePress and MkDocs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillrt.blog.frontmatter import split_frontmatter
from skillrt.testing import ScriptedModel
from tests.writing_support import writing_runtime


def make_blog(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return root


async def create(root: Path, title: str, **overrides: Any) -> tuple[Any, bytes]:
    """CreateArticle ``title`` on the blog at ``root``: the reply and the new post's bytes."""
    overrides.setdefault("state_dir", root.parent / f"{root.name}-state")
    rt = writing_runtime(root, ScriptedModel([]), **overrides)
    await rt.initialize()
    try:
        msg = await rt.run_skill("CreateArticle", {"title": title})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    return msg, (root / msg.data["path"]).read_bytes()


async def test_no_yaml_aliases_and_a_boolean_published_stays_a_boolean(tmp_path: Path) -> None:
    jekyll = make_blog(
        tmp_path / "jekyll",
        {
            "_config.yml": "title: J\n",
            "_drafts/.keep": "",
            **{
                f"_posts/2024-0{i}-0{i}-post-{i}.md": f"---\nlayout: post\ntitle: P{i}\n"
                f"date: 2024-0{i}-0{i} 10:00:00 +0000\npublished: true\n---\n\nBody {i}.\n"
                for i in range(1, 4)
            },
        },
    )
    _, text = await create(jekyll, "New one")
    assert b"&id" not in text and b"*id" not in text, text
    fields = split_frontmatter(text.decode()).fields()
    assert fields["published"] is True and fields["layout"] == "post", text
    hugo = make_blog(
        tmp_path / "hugo",
        {
            "hugo.toml": "baseURL = 'https://example.org/'\n",
            **{
                f"content/posts/p{i}.md": f"---\ntitle: P{i}\ndate: 2024-0{i}-01\n"
                f"publishDate: 2024-0{i}-02\n---\n\nBody {i}.\n"
                for i in range(1, 4)
            },
        },
    )
    _, text = await create(hugo, "New one")
    assert b"&id" not in text and b"*id" not in text, text
    fields = split_frontmatter(text.decode()).fields()
    assert fields["date"] == fields["publishDate"], text
