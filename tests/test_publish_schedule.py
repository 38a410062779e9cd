"""Publishing a post its generator will not build yet (dated after today where the site is)
or any more (Hugo's ``expiryDate`` passed): it is published, its dates as the author wrote
them, and the reply says when the site shows it. Before, a draft dated 2027-05-01 was
"Published … nothing else changed", and ``hugo list future`` held it back. And the day a
published Jekyll post is named by is the site's, as the chat takes it, in ``skillrt publish``
and ``AgentRuntime.publish`` too (they took this machine's)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from skillrt.blog.siteconfig import site_today
from skillrt.testing import ScriptedModel
from tests.cli_support import cli_env, skillrt, write_script
from tests.writing_support import writing_runtime

HUGO = "baseURL = 'https://example.org/'\n"


def _blog(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


async def _publish(root: Path, path: str) -> tuple[str, dict[str, object]]:
    """ "publish it" of the post at ``path`` from the chat: the reply and its data."""
    rt = writing_runtime(root, ScriptedModel([]))
    await rt.initialize()
    try:
        msg = await rt.run_skill("EditContent", {"path": path, "instruction": "publish it"})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    return msg.content, msg.data


@pytest.mark.parametrize(
    ("config", "fields", "held"),
    [
        (HUGO, "date: 2027-05-01\n", {"scheduled": "2027-05-01"}),
        (HUGO, "date: 2024-05-01\npublishDate: 2028-01-01\n", {"scheduled": "2028-01-01"}),
        (HUGO, "date: 2024-05-01\nexpiryDate: 2025-01-01\n", {"expired": "2025-01-01"}),
        (HUGO, "date: 2024-05-01\nexpiryDate: 2099-01-01\n", {}),
        (HUGO + "buildFuture = true\n", "date: 2027-05-01\n", {}),
        (HUGO + "buildExpired = true\n", "date: 2024-05-01\nexpiryDate: 2025-01-01\n", {}),
        (HUGO + "buildfuture = true\n", "date: 2027-05-01\n", {}),  # (any case, as Hugo)
        (HUGO, "date: 2024-05-01\n", {}),
    ],
)
async def test_a_hugo_post_held_back_is_published_and_the_reply_says_when(
    tmp_path: Path, config: str, fields: str, held: dict[str, str]
) -> None:
    post = "content/posts/soon.md"
    text = f"---\ntitle: Soon\n{fields}draft: true\n---\n\nSoon body.\n"
    root = _blog(tmp_path / "blog", {"hugo.toml": config, post: text})
    content, data = await _publish(root, post)
    assert (root / post).read_text(encoding="utf-8") == text.replace("draft: true\n", "")
    assert data["changed"] is True
    assert {k: data[k] for k in ("scheduled", "expired") if k in data} == held
    if "scheduled" in held:
        assert f"Its date is {held['scheduled']}: Hugo puts it on the site from that day" in content
    elif "expired" in held:
        assert f"{held['expired']}, has passed: Hugo will not put it on the site" in content
    else:
        assert "Hugo" not in content, content


@pytest.mark.parametrize(
    ("files", "path", "scheduled"),
    [
        # Jekyll builds no post dated after today unless ``future: true``
        ({"_config.yml": "title: J\n"}, "_posts/2027-05-01-soon.md", "2027-05-01"),
        ({"_config.yml": "title: J\nfuture: true\n"}, "_posts/2027-05-01-soon.md", None),
        # Hexo shows future posts unless ``future: false``
        ({"_config.yml": "title: H\nfuture: false\n"}, "source/_posts/soon.md", "2027-05-01"),
        ({"_config.yml": "title: H\n"}, "source/_posts/soon.md", None),
    ],
)
async def test_a_jekyll_or_hexo_future_post_is_said_scheduled_as_its_config_says(
    tmp_path: Path, files: dict[str, str], path: str, scheduled: str | None
) -> None:
    text = "---\ntitle: Soon\ndate: 2027-05-01\npublished: false\n---\n\nSoon body.\n"
    if path.startswith("source/"):
        files = {
            **files,
            "source/_posts/old.md": "---\ntitle: Old\ndate: 2024-01-01\n---\n\nOld.\n",
        }
    root = _blog(tmp_path / "blog", {**files, path: text})
    content, data = await _publish(root, path)
    assert (root / path).read_text(encoding="utf-8") == text.replace("published: false\n", "")
    assert data.get("scheduled") == scheduled, content
    assert ("puts it on the site from that day" in content) is (scheduled is not None), content


def _zone_not_here() -> str:
    """A time zone whose today is not this machine's (one of the two, at any hour)."""
    here = dt.date.today()
    for zone in ("Pacific/Kiritimati", "Pacific/Pago_Pago"):
        if dt.datetime.now(ZoneInfo(zone)).date() != here:
            return zone
    pytest.skip("both zones share this machine's date")


def _jekyll_in_another_day(root: Path) -> Path:
    zone = _zone_not_here()
    return _blog(
        root,
        {
            "_config.yml": f"title: J\ntimezone: {zone}\n",
            "_posts/2024-01-15-old.md": "---\ntitle: Old\n---\n\nOld.\n",
            "_drafts/idea.md": "---\ntitle: Idea\n---\n\nAn idea.\n",
        },
    )


def test_skillrt_publish_names_a_jekyll_post_by_the_sites_day(tmp_path: Path) -> None:
    root = _jekyll_in_another_day(tmp_path / "blog")
    env = cli_env(root, write_script(tmp_path / "s.json", []))
    done = skillrt("publish", "_drafts/idea.md", "--json", env=env, cwd=root)
    assert done.returncode == 0, done.stderr
    day = site_today(root, "jekyll")
    assert json.loads(done.stdout)["path"] == f"_posts/{day.isoformat()}-idea.md"


async def test_runtime_publish_names_a_jekyll_post_by_the_sites_day(tmp_path: Path) -> None:
    root = _jekyll_in_another_day(tmp_path / "blog")
    rt = writing_runtime(root, ScriptedModel([]))
    await rt.initialize()
    try:
        done = await rt.publish("_drafts/idea.md")
    finally:
        await rt.close()
    assert done.path == f"_posts/{site_today(root, 'jekyll').isoformat()}-idea.md"


def test_skillrt_publish_says_a_hugo_post_is_scheduled(tmp_path: Path) -> None:
    post = "content/posts/soon.md"
    text = "---\ntitle: Soon\ndate: 2027-05-01\ndraft: true\n---\n\nSoon body.\n"
    root = _blog(tmp_path / "blog", {"hugo.toml": HUGO, post: text})
    env = cli_env(root, write_script(tmp_path / "s.json", []))
    done = skillrt("publish", post, env=env, cwd=root)
    assert done.returncode == 0, done.stderr
    assert "Its date is 2027-05-01: Hugo puts it on the site from that day." in done.stdout
    listed = json.loads(skillrt("publish", post, "--json", env=env, cwd=root).stdout)
    assert listed["changed"] is False and listed["scheduled"] == "2027-05-01"


async def test_publish_in_the_chat_says_a_hugo_post_is_scheduled(tmp_path: Path) -> None:
    """The REPL's ``/publish`` said "Published …" alone of a draft dated 2027, which Hugo
    held back (``skillrt publish`` and "publish it" said when the site shows it)."""
    import io

    from rich.console import Console

    from skillrt.cli.repl import Repl
    from tests.test_cli_units import ListReader

    post = "content/posts/soon.md"
    text = "---\ntitle: Soon\ndate: 2027-05-01\ndraft: true\n---\n\nSoon body.\n"
    root = _blog(tmp_path / "blog", {"hugo.toml": HUGO, post: text})
    rt = writing_runtime(root, ScriptedModel([]))
    console = Console(file=io.StringIO(), width=200, color_system=None, force_terminal=False)
    await Repl(rt, console, ListReader([f"/publish {post}"])).run()
    output = " ".join(console.file.getvalue().split())
    assert f"Published {post}." in output
    assert "Its date is 2027-05-01: Hugo puts it on the site from that day." in output


def test_skillrt_publish_is_undone_by_skillrt_undo(tmp_path: Path) -> None:
    """``skillrt publish`` kept no version: ``skillrt undo`` answered "There is nothing to
    undo" (the chat's publish and ``/publish`` are undone)."""
    post = "content/posts/d.md"
    text = "---\ntitle: D\ndate: 2024-01-01\ndraft: true\n---\n\nBody.\n"
    root = _blog(tmp_path / "blog", {"hugo.toml": HUGO, post: text})
    env = cli_env(root, write_script(tmp_path / "s.json", []))
    assert skillrt("publish", post, env=env, cwd=root).returncode == 0
    assert (root / post).read_text(encoding="utf-8") == text.replace("draft: true\n", "")
    undone = skillrt("undo", env=env, cwd=root)
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (root / post).read_text(encoding="utf-8") == text
