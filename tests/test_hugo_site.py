"""A Hugo site skillrt wrote to, built by the real ``hugo`` (``tests/hugo_support.py``): the
site still builds, each new page is where its author expects it (its language, draft or not,
its web address, one page an address) and the posts that were there render the same."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from skillrt.blog.frontmatter import split_frontmatter
from skillrt.blog.siteconfig import site_today
from skillrt.testing import FunctionModel, ScriptedModel
from tests.blog import copy_fixture
from tests.hugo_support import hugo_build, hugo_listed, hugo_pages, require_hugo
from tests.writing_support import OUTLINE_ZH, WritingModelFn, writing_runtime

LAYOUT = "<h1>{{ .Title }}</h1>{{ .Content }}"


@pytest.fixture(autouse=True)
def hugo() -> str:
    """Each test skips without ``hugo`` (fails with SKILLRT_REQUIRE_HUGO=1), before it runs."""
    return require_hugo()


def make_site(root: Path, files: dict[str, str]) -> Path:
    """A Hugo site of ``files``, with a page layout that shows each page's title and text."""
    for rel, text in {"layouts/_default/single.html": LAYOUT, **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


async def run(site: Path, model: Any, skill: str, params: dict[str, Any]) -> Any:
    """``skill`` run once on ``site``: its reply, asserted complete."""
    rt = writing_runtime(site, model)
    await rt.initialize()
    try:
        msg = await rt.run_skill(skill, params)
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    return msg


async def test_a_new_post_is_not_at_the_address_a_posts_slug_gives_it(tmp_path: Path) -> None:
    """``old-name.md`` holding ``slug: hello-there`` is at ``/posts/hello-there/``: a new
    ``hello-there.md`` was listed by Hugo at that address too, and the site showed one of
    the two."""
    site = make_site(
        tmp_path / "site",
        {
            "hugo.toml": "baseURL = 'https://example.org/'\n",
            "content/posts/old-name.md": "---\ntitle: Old\ndate: 2024-03-01\n"
            "slug: hello-there\n---\n\nThe old post.\n",
        },
    )
    before = hugo_build(site)
    msg = await run(site, ScriptedModel([]), "CreateArticle", {"title": "Hello there"})
    pages = hugo_pages(site)  # (asserts one page an address)
    new = pages[f"content/{msg.data['path'].removeprefix('content/')}"]
    assert new.title == "Hello there" and new.draft, new
    assert new.permalink != "https://example.org/posts/hello-there/", new
    assert (
        hugo_build(site)["posts/hello-there/index.html"] == before["posts/hello-there/index.html"]
    )


async def test_a_published_draft_is_listed_by_hugo_as_no_draft(tmp_path: Path) -> None:
    """The hugo fixture's TOML draft, published from the chat: Hugo lists it published, at the
    address it had, and every other page renders as before."""
    site = copy_fixture("hugo", tmp_path / "site")
    before = hugo_build(site)
    rt = writing_runtime(site, ScriptedModel([]))
    await rt.initialize()
    try:
        msg = await rt.run_skill(
            "EditContent", {"path": "content/posts/toml-post.md", "instruction": "publish it"}
        )
    finally:
        await rt.close()
    assert msg.state == "COMPLETED" and msg.data["published"], msg.content
    page = hugo_pages(site)["content/posts/toml-post.md"]
    assert not page.draft and page.permalink == "https://example.org/posts/toml-post/", page
    after = hugo_build(site)
    assert {k: v for k, v in after.items() if "toml-post" not in k} == {
        k: v for k, v in before.items() if "toml-post" not in k
    }


@pytest.mark.parametrize(
    ("fields", "which", "said"),
    [
        ("date: 2027-05-01\n", "future", "Its date is 2027-05-01: Hugo puts it on the site"),
        ("date: 2024-05-01\npublishDate: 2028-01-01\n", "future", "Its date is 2028-01-01"),
        ("date: 2024-05-01\nexpiryDate: 2025-01-01\n", "expired", "2025-01-01, has passed"),
    ],
)
async def test_a_published_post_hugo_holds_back_is_said_so(
    tmp_path: Path, fields: str, which: str, said: str
) -> None:
    """Publishing a draft dated 2027-05-01 (or ``publishDate: 2028-01-01``, or an
    ``expiryDate`` passed) replied "Published … nothing else changed", and Hugo lists it in
    ``hugo list future`` (``expired``): the reply says when Hugo shows it, or that it will
    not, and the dates stay as the author wrote them."""
    post = "content/posts/soon.md"
    text = f"---\ntitle: Soon\n{fields}draft: true\n---\n\nSoon body.\n"
    site = make_site(
        tmp_path / "site", {"hugo.toml": "baseURL = 'https://example.org/'\n", post: text}
    )
    msg = await run(
        site, ScriptedModel([]), "EditContent", {"path": post, "instruction": "publish it"}
    )
    assert said in msg.content, msg.content
    assert (site / post).read_text(encoding="utf-8") == text.replace("draft: true\n", "")
    assert post in hugo_listed(site, which)
    assert not hugo_pages(site)[post].draft


ENGLISH = "Async hooks track the life of each asynchronous resource in Node.js."
CHINESE = "异步钩子跟踪 Node.js 中每个异步资源的生命周期，从创建到销毁都能看到。"
POST = f"---\ntitle: Async hooks\ndate: 2024-03-01\n---\n\n{ENGLISH}\n"


def translator(messages: Any, options: Any) -> str:
    """The title's and the text's Chinese."""
    return "异步钩子" if "title" in str(messages[0]["content"]) else CHINESE


FOLDERS = (
    "baseURL = 'https://example.org/'\ndefaultContentLanguage = 'en'\n"
    "[languages.en]\ncontentDir = 'content/en'\n[languages.zh]\ncontentDir = 'content/zh'\n"
)


async def test_a_translation_goes_to_its_languages_content_folder(tmp_path: Path) -> None:
    """With ``content/zh`` declared and not made yet, it went to
    ``content/en/posts/async-hooks-zh.md``: Hugo listed an English page of Chinese text at
    ``/posts/async-hooks-zh/``."""
    post, expected = "content/en/posts/async-hooks.md", "content/zh/posts/async-hooks.md"
    site = make_site(tmp_path / "site", {"hugo.toml": FOLDERS, post: POST})
    before = hugo_build(site)
    msg = await run(site, FunctionModel(translator), "Translate", {"path": post, "language": "zh"})
    assert msg.data["path"] == expected, msg.content
    page = hugo_pages(site)[expected]
    assert page.title == "异步钩子" and page.permalink.startswith("https://example.org/zh/"), page
    after = hugo_build(site)
    assert after["posts/async-hooks/index.html"] == before["posts/async-hooks/index.html"]


BY_NAME = (
    "baseURL = 'https://example.org/'\ndefaultContentLanguage = 'en'\n"
    "[languages.en]\nweight = 1\n[languages.zh]\nweight = 2\n"
)


@pytest.mark.parametrize(
    ("config", "post", "expected"),
    [
        (FOLDERS, "content/en/posts/async-hooks.md", "content/zh/posts/rust-suo-you-quan.md"),
        (BY_NAME, "content/posts/async-hooks.md", "content/posts/rust-suo-you-quan.zh.md"),
    ],
)
async def test_an_article_in_another_language_is_a_page_of_that_language(
    tmp_path: Path, config: str, post: str, expected: str
) -> None:
    """A Chinese article on a Hugo site that declares Chinese was saved as
    ``content/en/posts/rust-suo-you-quan.md`` (``content/posts/…md`` on a site whose
    translations are ``x.zh.md``): Hugo listed an English page of Chinese text."""
    site = make_site(tmp_path / "site", {"hugo.toml": config, post: POST})
    before = hugo_build(site)
    model = FunctionModel(WritingModelFn(OUTLINE_ZH))
    msg = await run(site, model, "WriteArticle", {"topic": "Rust 所有权", "language": "zh"})
    assert msg.data["path"] == expected and f"`{expected}`" in msg.content, msg.content
    page = hugo_pages(site)[expected]
    assert page.permalink == "https://example.org/zh/posts/rust-suo-you-quan/", page
    assert page.title == OUTLINE_ZH["title"] and page.draft, page
    after = hugo_build(site)
    assert after["posts/async-hooks/index.html"] == before["posts/async-hooks/index.html"]


async def test_a_published_translation_has_an_address_of_its_own(tmp_path: Path) -> None:
    """``async-hooks.zh.md`` kept ``url: /custom/async/`` and ``aliases: [/old-hooks/]``:
    published, Hugo wrote its Chinese page over the English one ("Duplicate target paths")."""
    post = "content/posts/async-hooks.md"
    text = POST.replace("\n---\n", "\nurl: /custom/async/\naliases: [/old-hooks/]\n---\n", 1)
    site = make_site(tmp_path / "site", {"hugo.toml": BY_NAME, post: text})
    before = hugo_build(site)
    msg = await run(site, FunctionModel(translator), "Translate", {"path": post, "language": "zh"})
    done = await run(
        site, ScriptedModel([]), "EditContent", {"path": msg.data["path"], "instruction": "publish"}
    )
    page = hugo_pages(site)[done.data["path"]]  # (one page an address)
    assert not page.draft and page.permalink == "https://example.org/zh/custom/async/", page
    after = hugo_build(site)
    assert after["zh/custom/async/index.html"] != after["custom/async/index.html"]
    assert {k: v for k, v in after.items() if not k.startswith("zh/")} == before


@pytest.mark.parametrize(
    ("config", "machine", "zone"),
    [
        # the site's timeZone far behind UTC: its day starts 12 hours after UTC's
        ("timeZone = 'Etc/GMT+12'\n", "UTC", "Etc/GMT+12"),
        # no timeZone (Hugo reads UTC) on a machine far ahead of UTC
        ("", "Etc/GMT-14", "UTC"),
    ],
)
async def test_a_new_post_is_dated_the_day_it_is_where_hugo_reads_its_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, machine: str, zone: str
) -> None:
    """A bare date is midnight in the site's ``timeZone`` (UTC without one), and Hugo skips a
    post dated in the future: on ``timeZone = "America/Los_Angeles"`` a post made at 06:45
    UTC was dated that day, and ``hugo list future`` held it back until 08:00. (Each case
    fails the old way half the day: the two together, at any hour.)"""
    monkeypatch.setenv("TZ", machine)
    time.tzset()
    try:
        site = make_site(
            tmp_path / "site",
            {
                "hugo.toml": f"baseURL = 'https://example.org/'\n{config}",
                "content/posts/a.md": POST,
            },
        )
        msg = await run(site, ScriptedModel([]), "CreateArticle", {"title": "Hello there"})
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    today = dt.datetime.now(ZoneInfo(zone)).date()
    fields = split_frontmatter((site / msg.data["path"]).read_text(encoding="utf-8")).fields()
    assert fields["date"] == today, fields
    page = hugo_pages(site)[msg.data["path"]]
    assert dt.datetime.fromisoformat(page.publish_date) <= dt.datetime.now(dt.UTC), page


async def test_a_new_post_is_made_in_its_titles_language(tmp_path: Path) -> None:
    """The newest post was Chinese: "Hello there" was made in ``content/zh/posts/``, the
    newest post's folder, and Hugo listed it as a Chinese page; "你好" stays there."""
    site = make_site(
        tmp_path / "site",
        {
            "hugo.toml": FOLDERS,
            "content/en/posts/async-hooks.md": POST,
            "content/zh/posts/async-hooks.md": POST.replace("2024-03-01", "2024-05-01"),
        },
    )
    english = await run(site, ScriptedModel([]), "CreateArticle", {"title": "Hello there"})
    chinese = await run(site, ScriptedModel([]), "CreateArticle", {"title": "你好"})
    pages = hugo_pages(site)
    assert pages[english.data["path"]].permalink == "https://example.org/posts/hello-there/"
    assert pages[chinese.data["path"]].permalink.startswith("https://example.org/zh/posts/")


@pytest.mark.parametrize(
    "archetype",
    [
        '---\ntitle: "{{ replace .File.ContentBaseName "-" " " | title }}"\n'
        "date: {{ .Date }}\ndraft: true\ncategories: [notes]\n---\n",
        '+++\ntitle = \'{{ replace .File.ContentBaseName "-" " " | title }}\'\n'
        "date = {{ .Date }}\ndraft = true\ncategories = ['notes']\n+++\n",
    ],
)
async def test_a_hugo_archetype_is_a_new_posts_template(tmp_path: Path, archetype: str) -> None:
    """``new_post.template = "archetypes/default.md"`` (the docs' own example), as ``hugo new
    site`` writes it: refused ("The frontmatter of `` cannot be read: invalid YAML"), no post
    made. Its placeholders are now filled: the title, today's date, its categories."""
    site = make_site(
        tmp_path / "site",
        {
            "hugo.toml": "baseURL = 'https://example.org/'\n",
            "archetypes/default.md": archetype,
            "content/posts/async-hooks.md": POST,
        },
    )
    rt = writing_runtime(site, ScriptedModel([]), new_post={"template": "archetypes/default.md"})
    try:
        msg = await rt.run_skill("CreateArticle", {"title": "Hello there"})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    page = hugo_pages(site)[msg.data["path"]]
    assert page.title == "Hello there" and page.draft, page
    fields = split_frontmatter((site / msg.data["path"]).read_text(encoding="utf-8")).fields()
    assert fields["categories"] == ["notes"] and "{{" not in str(fields), fields


async def test_a_new_post_goes_to_its_own_years_folder(tmp_path: Path) -> None:
    """The posts are kept by year: a post made now went to ``content/posts/2024/``, the
    newest post's folder, at ``/posts/2024/hello-there/``."""
    site = make_site(
        tmp_path / "site",
        {
            "hugo.toml": "baseURL = 'https://example.org/'\n",
            "content/posts/2023/async-hooks.md": POST.replace("2024-03-01", "2023-03-01"),
            "content/posts/2024/streams.md": POST.replace("Async hooks", "Streams"),
        },
    )
    msg = await run(site, ScriptedModel([]), "CreateArticle", {"title": "Hello there"})
    year = f"{site_today(site, 'hugo'):%Y}"
    assert msg.data["path"] == f"content/posts/{year}/hello-there.md", msg.content
    page = hugo_pages(site)[msg.data["path"]]
    assert page.permalink == f"https://example.org/posts/{year}/hello-there/", page
