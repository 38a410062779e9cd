"""New posts and publishing follow the generator's rules and the blog's own habits: no YAML
aliases, a date-named field that is no date kept as the blog has it, no second post at an
existing post's web address, section pages left alone, Hexo's ``;;;`` JSON, the generator's
setup (config directory, ``zola.toml``, ``collections_dir``), dates with the blog's time and
offset, CRLF line ends, and the truth about drafts on VitePress and MkDocs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from skillrt._io.layout import detect_layout
from skillrt.blog.conventions import address_key, is_bundle_page, is_section_page, post_stem
from skillrt.blog.files import FileStore
from skillrt.blog.frontmatter import split_frontmatter
from skillrt.blog.publish import free_names, publish_post, unpublish_post
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


def test_section_and_bundle_pages_in_a_language() -> None:
    assert is_section_page("content/blog/_index.zh.md")
    assert is_section_page("content/_index.md") and is_section_page("x/_index.pt-br.markdown")
    assert not is_section_page("content/blog/_index-notes.md")
    assert post_stem("content/posts/first-light/index.zh.md") == "first-light"
    assert is_bundle_page("content/posts/first-light/index.en.md")
    assert not is_bundle_page("content/posts/indexing.md")
    assert address_key("content/blog/2024-01-05-hello-zola.md") == (
        "content/blog",
        "hello-zola",
        "",
    )
    assert address_key("content/posts/goroutines/index.md") == address_key(
        "content/posts/goroutines.md"
    )
    assert address_key("content/posts/x/index.zh.md") == address_key("content/posts/x.zh.md")
    assert address_key("content/posts/x/index.zh.md") != address_key("content/posts/x/index.md")


def test_a_number_goes_before_a_language_code(tmp_path: Path) -> None:
    """``x.zh.md`` taken (a translation saved by another task a moment before) was followed
    by ``x.zh-2.md``: a language ``zh-2``, which Zola refuses and Hugo takes for another
    language. One pattern reads a code in a name everywhere (``x.pt_br.md`` had a language to
    Translate and none to ``address_key``)."""
    assert free_names("content/posts/hooks.zh.md")[1:3] == [
        "content/posts/hooks-2.zh.md",
        "content/posts/hooks-3.zh.md",
    ]
    assert free_names("content/posts/hooks/index.zh.md")[1] == "content/posts/hooks-2/index.zh.md"
    assert free_names("posts/hooks.md")[1] == "posts/hooks-2.md"
    assert address_key("posts/x.pt_br.md") == ("posts", "x", ".pt_br")
    assert is_bundle_page("posts/x/index.pt_br.md")
    root = make_blog(
        tmp_path / "jekyll",
        {
            "_config.yml": "title: J\n",
            "_posts/2026-11-30-hooks.zh.md": "---\ntitle: 钩子\n---\n\n旧的。\n",
            "_drafts/hooks.zh.md": "---\ntitle: 钩子\n---\n\n新的。\n",
        },
    )
    day = dt.date(2026, 11, 30)
    done = publish_post(FileStore(root), "_drafts/hooks.zh.md", posts_dir="_posts", day=day)
    assert done.path == "_posts/2026-11-30-hooks-2.zh.md", done


def test_a_draft_is_published_where_jekylls_and_hexos_settings_put_posts(tmp_path: Path) -> None:
    """Jekyll with ``collections_dir`` and no post yet: the date prefix was a guess from the
    posts there (none), and ``my_collections/_posts/liquid-tips.md`` is a post Jekyll skips.
    Hexo's ``new_post_name: :year/:month/:title.md`` was not followed: the draft went to the
    top of ``source/_posts`` beside ``2024/03/npm.md``."""
    day = dt.date(2026, 11, 30)
    draft = "---\ntitle: Liquid tips\n---\n\nTips.\n"
    jekyll = make_blog(
        tmp_path / "jekyll",
        {
            "_config.yml": "title: J\ncollections_dir: my_collections\n",
            "my_collections/_posts/.keep": "",
            "my_collections/_drafts/liquid-tips.md": draft,
        },
    )
    done = publish_post(
        FileStore(jekyll),
        "my_collections/_drafts/liquid-tips.md",
        posts_dir="my_collections/_posts",
        day=day,
    )
    assert done.path == "my_collections/_posts/2026-11-30-liquid-tips.md", done
    for setting, expected in [
        (":year/:month/:title.md", "source/_posts/2026/11/async-hooks.md"),
        (":year-:i_month-:i_day-:title.md", "source/_posts/2026-11-30-async-hooks.md"),
        (":title.md", "source/_posts/async-hooks.md"),  # the default: as the posts are
        (":lang/:title.md", "source/_posts/async-hooks.md"),  # a part it cannot fill
    ]:
        hexo = make_blog(
            tmp_path / f"hexo-{len(setting)}",
            {
                "_config.yml": f"title: H\nnew_post_name: {setting}\n",
                "source/_posts/2024/03/npm.md": "---\ntitle: npm\n---\n\nnpm.\n",
                "source/_drafts/async-hooks.md": draft,
            },
        )
        files = FileStore(hexo)
        done = publish_post(
            files, "source/_drafts/async-hooks.md", posts_dir="source/_posts", day=day
        )
        assert done.path == expected, (setting, done)
        assert (hexo / expected).read_text(encoding="utf-8") == draft
    # a post made a draft again comes back where its date puts it, as ``hexo publish`` does
    hexo = make_blog(
        tmp_path / "hexo-back",
        {
            "_config.yml": "title: H\nnew_post_name: :year/:month/:title.md\n",
            "source/_posts/2024/03/npm.md": "---\ntitle: npm\ndate: 2024-03-10\n---\n\nnpm.\n",
            "source/_drafts/.keep": "",
        },
    )
    files = FileStore(hexo)
    back = unpublish_post(files, "source/_posts/2024/03/npm.md", drafts_dir="source/_drafts")
    done = publish_post(files, back.path, posts_dir="source/_posts", day=day)
    assert done.path == "source/_posts/2024/03/npm.md", done


async def test_a_hexo_post_is_named_as_new_post_name_says(tmp_path: Path) -> None:
    """With ``drafts.mark`` off, a Hexo blog set to ``:year/:month/:title.md`` had its new
    post in the most recent post's folder, ``source/_posts/2024/03/``."""
    root = make_blog(
        tmp_path / "hexo",
        {
            "_config.yml": "title: H\nnew_post_name: :year/:month/:title.md\n",
            "source/_posts/2024/01/streams.md": "---\ntitle: S\ndate: 2024-01-10\n---\n\nS.\n",
            "source/_posts/2024/03/npm.md": "---\ntitle: npm\ndate: 2024-03-10\n---\n\nnpm.\n",
            "source/_drafts/.keep": "",
        },
    )
    msg, _ = await create(root, "Async hooks", drafts={"mark": False})
    today = dt.date.today()
    assert msg.data["path"] == f"source/_posts/{today:%Y/%m}/async-hooks.md", msg.data
    msg, _ = await create(root, "Event loop")  # a draft: in the drafts folder, by its title
    assert msg.data["path"] == "source/_drafts/event-loop.md", msg.data


async def test_an_obsidian_note_is_made_where_obsidian_makes_one(tmp_path: Path) -> None:
    """A vault's new note was made at its top, with ``date`` beside the ``created`` of every
    other note, though ``.obsidian/app.json`` puts new notes in ``Inbox/``."""
    notes = {
        f"Notes/Note {i}.md": f"---\ncreated: 2024-01-0{i}\ntags: [x]\n---\n\nNote {i}.\n"
        for i in range(1, 4)
    }
    settings = '{"newFileLocation": "folder", "newFileFolderPath": "Inbox"}'
    vault = make_blog(
        tmp_path / "vault", {".obsidian/app.json": settings, "Inbox/.keep": "", **notes}
    )
    msg, text = await create(vault, "Shell tips")
    assert msg.data["path"] == "Inbox/shell-tips.md", msg.data
    fields = split_frontmatter(text.decode()).fields()
    assert fields["title"] == "Shell tips" and "created" in fields and "date" not in fields
    top = make_blog(tmp_path / "top", {".obsidian/app.json": "{}", **notes})
    msg, _ = await create(top, "Shell tips")
    assert msg.data["path"] == "shell-tips.md", msg.data
    outside = '{"newFileLocation": "folder", "newFileFolderPath": "../elsewhere"}'
    away = make_blog(tmp_path / "away", {".obsidian/app.json": outside, **notes})
    msg, _ = await create(away, "Shell tips")
    assert msg.data["path"] == "shell-tips.md", msg.data


async def test_a_new_post_never_takes_an_existing_posts_address(tmp_path: Path) -> None:
    zola = make_blog(
        tmp_path / "zola",
        {
            "config.toml": 'base_url = "https://example.org"\n',
            "content/blog/_index.md": '+++\nsort_by = "date"\n+++\n',
            "content/blog/2024-01-05-hello-zola.md": '+++\ntitle = "Hello Zola"\n+++\n\nHi.\n',
            "content/blog/2024-02-05-tera.md": '+++\ntitle = "Tera"\n+++\n\nTera.\n',
            "content/blog/2024-03-05-sass.md": '+++\ntitle = "Sass"\n+++\n\nSass.\n',
        },
    )
    msg, _ = await create(zola, "Hello Zola")
    assert msg.data["path"].endswith("-hello-zola-2.md"), msg.data
    hugo = make_blog(
        tmp_path / "hugo",
        {
            "hugo.toml": "baseURL = 'https://example.org/'\n",
            "content/posts/goroutines.md": "---\ntitle: Goroutines\n---\n\nOld.\n",
            **{
                f"content/posts/{n}/index.md": f"---\ntitle: {n}\ndate: 2024-01-0{i}\n---\n\n{n}.\n"
                for i, n in enumerate("abc", 1)
            },
        },
    )
    msg, _ = await create(hugo, "Goroutines")
    assert msg.data["path"] == "content/posts/goroutines-2/index.md", msg.data


def test_publishing_never_takes_an_existing_posts_address(tmp_path: Path) -> None:
    root = make_blog(
        tmp_path / "jekyll",
        {
            "_config.yml": "permalink: /:title/\n",
            "_posts/2024-01-15-liquid-tips.md": "---\ntitle: Liquid tips\n---\n\nOld.\n",
            "_drafts/liquid-tips.md": "---\ntitle: Liquid tips\n---\n\nNew.\n",
        },
    )
    files = FileStore(root)
    day = dt.date(2026, 11, 30)
    done = publish_post(files, "_drafts/liquid-tips.md", posts_dir="_posts", day=day)
    assert done.path == "_posts/2026-11-30-liquid-tips-2.md", done
    assert (root / done.path).read_text(encoding="utf-8").endswith("New.\n")
    assert (
        (root / "_posts/2024-01-15-liquid-tips.md").read_text(encoding="utf-8").endswith("Old.\n")
    )


async def test_a_section_page_is_no_post_and_no_skill_writes_it(tmp_path: Path) -> None:
    root = make_blog(
        tmp_path / "zola",
        {
            "config.toml": 'base_url = "https://example.org"\ndefault_language = "en"\n'
            'taxonomies = [{name = "tags"}]\n[languages.zh]\n',
            "content/blog/_index.md": '+++\ntitle = "Blog"\nsort_by = "date"\n+++\n',
            "content/blog/_index.zh.md": '+++\ntitle = "博客"\nsort_by = "date"\n+++\n',
            "content/blog/a.md": '+++\ntitle = "A"\ndate = 2024-01-01\n[taxonomies]\n'
            'tags = ["x"]\n+++\n\nA.\n',
        },
    )
    before = {
        p: (root / p).read_bytes() for p in ("content/blog/_index.md", "content/blog/_index.zh.md")
    }
    rt = writing_runtime(root, ScriptedModel([]), state_dir=tmp_path / "state")
    await rt.initialize()
    try:
        rt.memory.posts.refresh()
        assert [p.path for p in rt.memory.posts.all_posts()] == ["content/blog/a.md"]
        for path in before:
            msg = await rt.run_skill(
                "EditContent", {"path": path, "instruction": "add tags rust"}, {"confirm": False}
            )
            assert msg.data["error"] == "path_not_allowed" and "section page" in msg.content
            assert "Use a path inside the blog" not in msg.content  # (it is inside)
    finally:
        await rt.close()
    assert {p: (root / p).read_bytes() for p in before} == before


async def test_hexo_json_frontmatter_is_written_as_hexo_writes_it(tmp_path: Path) -> None:
    posts = {
        "source/_posts/node-streams.md": ';;;\n"title": "Node streams",\n'
        '"date": "2024-01-10 09:00:00",\n"tags": ["node"]\n;;;\n\nStreams.\n',
        "source/_posts/event-loop.md": ';;;\n"title": "The event loop",\n'
        '"date": "2024-02-11 10:30:00",\n"tags": ["node"]\n;;;\n\nLoop.\n',
        "source/_posts/npm-scripts.md": '"title": "npm scripts",\n'
        '"date": "2024-03-12 11:00:00",\n"tags": ["npm"]\n;;;\n\nnpm.\n',
    }
    root = make_blog(tmp_path / "hexo", {"_config.yml": "title: H\n", **posts})
    msg, text = await create(root, "Async hooks")
    assert msg.data["path"] == "source/_drafts/async-hooks.md"
    assert text.startswith(b';;;\n"title": "Async hooks",\n"date": "'), text
    found = split_frontmatter(text.decode(), msg.data["path"])
    assert found.format == "json" and found.fields()["title"] == "Async hooks"
    assert found.block.endswith("\n;;;\n")


def test_generator_setups_are_recognised(tmp_path: Path) -> None:
    post = "---\ntitle: P\ndate: 2024-01-02\n---\n\nP.\n"
    hugo = make_blog(
        tmp_path / "hugo-dir",
        {
            "config/_default/hugo.toml": "baseURL = 'https://example.org/'\n",
            "content/posts/a.md": post,
        },
    )
    found = detect_layout(hugo)
    assert (found.kind, found.posts_dir) == ("hugo", "content/posts"), found
    hugo_json = make_blog(
        tmp_path / "hugo-json",
        {"config.json": '{"baseURL": "https://example.org/"}\n', "content/posts/a.md": post},
    )
    assert detect_layout(hugo_json).kind == "hugo"
    content_dir = make_blog(
        tmp_path / "hugo-cd",
        {
            "hugo.toml": "baseURL = 'https://example.org/'\ncontentDir = 'site/content'\n",
            "site/content/posts/a.md": post,
            "content/.keep": "",
        },
    )
    assert detect_layout(content_dir).posts_dir == "site/content/posts"
    zola = make_blog(
        tmp_path / "zola",
        {"zola.toml": 'base_url = "https://example.org"\n', "content/blog/a.md": "+++\n+++\n"},
    )
    assert detect_layout(zola).kind == "zola"
    jekyll = make_blog(
        tmp_path / "jekyll",
        {"_config.yml": "collections_dir: my_collections\n", "my_collections/_posts/a.md": post},
    )
    found = detect_layout(jekyll)
    assert (found.kind, found.posts_dir, found.drafts_dir) == (
        "jekyll",
        "my_collections/_posts",
        "my_collections/_drafts",
    )


async def test_dates_with_a_time_and_an_offset_and_crlf_line_ends(tmp_path: Path) -> None:
    root = make_blog(
        tmp_path / "hugo",
        {
            "hugo.toml": "baseURL = 'https://example.org/'\n",
            **{
                f"content/posts/p{i}.md": f"---\r\ntitle: P{i}\r\n"
                f"date: 2024-0{i}-01T10:00:00+08:00\r\n---\r\n\r\nBody {i}.\r\n"
                for i in range(1, 4)
            },
        },
    )
    _, text = await create(root, "New one")
    assert b"\r\n" in text and b"\n" not in text.replace(b"\r\n", b""), text
    date = split_frontmatter(text.decode()).fields()["date"]
    assert isinstance(date, dt.datetime) and date.utcoffset() == dt.timedelta(hours=8), text
    assert b"T" in text.split(b"date: ")[1].split(b"\r\n")[0], text
    assert abs(date - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=5)


async def test_vitepress_has_no_draft_flag_and_the_reply_says_so(tmp_path: Path) -> None:
    root = make_blog(
        tmp_path / "vitepress",
        {
            "docs/.vitepress/config.mts": "export default {}\n",
            **{
                f"docs/posts/p{i}.md": f"---\ntitle: P{i}\ndate: 2024-0{i}-10\n---\n\nP.\n"
                for i in range(1, 4)
            },
        },
    )
    msg, text = await create(root, "Vue router")
    assert split_frontmatter(text.decode()).fields()["draft"] is True  # (for skillrt's answers)
    assert "VitePress has no draft flag" in msg.content, msg.content
    assert "answers leave it out until it is published" not in msg.content

    rt = writing_runtime(root, ScriptedModel([]))
    await rt.initialize()
    try:
        back = await rt.run_skill(
            "EditContent", {"instruction": "unpublish it", "path": "docs/posts/p1.md"}
        )
    finally:
        await rt.close()
    assert back.state == "COMPLETED", back.content
    assert "is a draft again" in back.content and "VitePress has no draft flag" in back.content


async def test_a_jekyll_post_is_dated_the_day_it_is_in_the_sites_timezone(tmp_path: Path) -> None:
    """Jekyll reads a bare date in its ``timezone`` and leaves a future post out (``future:
    false``): a post is dated the day it is there (``Etc/GMT+12``: 12 hours behind UTC), not
    the day it is where skillrt runs."""
    jekyll = make_blog(
        tmp_path / "jekyll",
        {
            "_config.yml": "title: J\ntimezone: Etc/GMT+12\n",
            "_posts/2024-01-10-hooks.md": "---\nlayout: post\ntitle: Hooks\ndate: 2024-01-10\n"
            "---\n\nBody.\n",
        },
    )
    msg, text = await create(jekyll, "New one", drafts={"mark": False})
    today = dt.datetime.now(ZoneInfo("Etc/GMT+12")).date()
    assert msg.data["path"] == f"_posts/{today.isoformat()}-new-one.md", msg.data
    assert split_frontmatter(text.decode()).fields()["date"] == today, text
