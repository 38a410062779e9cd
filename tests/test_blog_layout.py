"""Finding the blog: posts_dir detected from fixture blogs shaped like Hugo, Hexo, Jekyll,
VitePress, MkDocs and Obsidian; --posts-dir; hints for a missing or empty posts folder; the
state folder's .gitignore; doctor writes nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillrt import AgentRuntime, load_config
from skillrt._io.layout import detect_layout
from skillrt.settings import make_state_dir
from skillrt.testing import ScriptedModel
from tests.cli_support import cli_env, make_blog, skillrt, write_script

POST = "---\ntitle: {title}\n---\n\n{title} is a post about {title}.\n"

# Each blog: the files that give it its shape, and the posts folder we expect.
BLOGS: dict[str, tuple[dict[str, str], str, str]] = {
    "hugo": (
        {
            "hugo.toml": 'baseURL = "https://example.org/"\n',
            "content/posts/first.md": POST.format(title="Hugo one"),
            "content/posts/second.md": POST.format(title="Hugo two"),
            "content/about.md": POST.format(title="About"),
            "themes/x/README.md": "not a post",
        },
        "content/posts",
        "Hugo",
    ),
    "zola": (  # a small Zola site: no content/_index.md, posts under content/posts/
        {
            "config.toml": 'base_url = "https://example.org"\ntitle = "Zola"\n',
            "content/posts/first.md": '+++\ntitle = "Zola one"\n+++\n\nZola one.\n',
        },
        "content",
        "Zola",
    ),
    "hexo": (
        {
            "_config.yml": "title: Hexo\n",
            "source/_posts/hello-world.md": POST.format(title="Hexo one"),
            "source/about/index.md": POST.format(title="About"),
        },
        "source/_posts",
        "Hexo",
    ),
    "jekyll": (
        {
            "_config.yml": "title: Jekyll\n",
            "_posts/2024-01-01-welcome.md": POST.format(title="Jekyll one"),
            "index.md": POST.format(title="Home"),
        },
        "_posts",
        "Jekyll",
    ),
    "vitepress": (
        {
            "package.json": "{}",
            "docs/.vitepress/config.mts": "export default {}\n",
            "docs/guide/intro.md": POST.format(title="VitePress intro"),
            "docs/index.md": POST.format(title="Home"),
        },
        "docs",
        "VitePress",
    ),
    "mkdocs": (
        {
            "mkdocs.yml": "site_name: Notes\n",
            "docs/index.md": POST.format(title="MkDocs home"),
        },
        "docs",
        "MkDocs",
    ),
    "obsidian": (
        {
            ".obsidian/app.json": "{}",
            "Daily/2024-01-01.md": POST.format(title="A day"),
            "Ideas.md": POST.format(title="Ideas"),
        },
        ".",
        "Obsidian",
    ),
    "newsletter": (  # a plain docs/ of Markdown, like the weekly newsletter in issue 13
        {f"docs/issue-{i}.md": POST.format(title=f"Issue {i}") for i in range(1, 6)},
        "docs",
        "docs/",
    ),
}


def build(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``root`` (hidden ones included) with size and mtime."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            stat = path.stat()
            out[path.relative_to(root).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return out


@pytest.mark.parametrize("kind", sorted(BLOGS))
def test_layout_is_detected(tmp_path: Path, kind: str) -> None:
    files, posts_dir, label = BLOGS[kind]
    root = build(tmp_path / kind, files)
    config = load_config(content_root=root)
    assert config.posts_dir == posts_dir
    layout = config.layout
    assert label in layout.reason
    assert layout.markdown_files and layout.markdown_files >= 1
    assert layout.hint() is None
    assert label in layout.describe()


@pytest.mark.parametrize("kind", ["hugo", "obsidian", "newsletter"])
async def test_detected_posts_are_indexed_and_new_posts_go_there(tmp_path: Path, kind: str) -> None:
    files, posts_dir, _ = BLOGS[kind]
    root = build(tmp_path / kind, files)
    config = load_config(content_root=root, state_dir=tmp_path / "state")
    rt = AgentRuntime(config, llm=ScriptedModel([]))
    await rt.initialize()
    try:
        assert rt.memory is not None
        rt.memory.refresh()
        indexed = {meta.path for meta in rt.memory.posts.all_posts()}
        created = await rt.run_skill("CreateArticle", {"title": "Brand new"})
    finally:
        await rt.close()
    expected = {rel for rel in files if rel.endswith(".md")}
    if kind == "hugo":
        expected = {rel for rel in expected if rel.startswith("content/posts/")}
    assert indexed == expected
    assert created.data["path"] == (
        f"{posts_dir}/brand-new.md" if posts_dir != "." else "brand-new.md"
    )


async def test_an_obsidian_notes_inline_tags_are_its_tags(tmp_path: Path) -> None:
    """ "what tags does shell tips have?" in a vault said it had none: its "#shell" is a tag
    in Obsidian (a Hugo post's "#shell" is not)."""
    note = (
        "Shell tips for everyday use. #shell #cli/zsh #Shell\n\n- `#notatag` in code\n"
        "- issue #42, see [[#Usage]] and [above](#intro) %% #hidden %%\n"
    )
    blogs = {
        "obsidian": {".obsidian/app.json": "{}", "Shell tips.md": note},
        "hugo": {"hugo.toml": "title = 'x'\n", "content/posts/Shell tips.md": note},
    }
    for kind, files in blogs.items():
        root = build(tmp_path / kind, files)
        config = load_config(content_root=root, state_dir=tmp_path / kind / ".state")
        rt = AgentRuntime(config, llm=ScriptedModel([]))
        await rt.initialize()
        try:
            msg = await rt.process_input("what tags does shell tips have?")
        finally:
            await rt.close()
        assert msg.state == "COMPLETED", msg.content
        expected = ["shell", "cli/zsh"] if kind == "obsidian" else []
        assert msg.data.get("tags") == expected, msg.content


@pytest.mark.parametrize(
    ("settings", "folder"),
    [
        (".obsidian/templates.json", '{"folder": "Templates"}'),
        (".obsidian/plugins/templater-obsidian/data.json", '{"templates_folder": "meta/tpl/"}'),
    ],
)
async def test_an_obsidian_vaults_templates_are_not_posts(
    tmp_path: Path, settings: str, folder: str
) -> None:
    """A vault's template (``{{title}}``, a tag of its own) was listed among the posts and its
    tag counted as the blog's."""
    where = json.loads(folder).popitem()[1].strip("/")
    template = "---\ntags: [daily]\n---\n# {{title}}\n\n{{date}}\n"
    files = {
        ".obsidian/app.json": "{}",
        settings: folder,
        "Shell tips.md": "Shell tips for everyday use. #shell\n",
        f"{where}/Daily.md": template,
        f"{where}/sub/Weekly.md": template,
        "Templates notes.md": "Notes on templates. #templating\n",  # (a name, not the folder)
    }
    root = build(tmp_path / "vault", files)
    config = load_config(content_root=root, state_dir=tmp_path / ".state")
    rt = AgentRuntime(config, llm=ScriptedModel([]))
    await rt.initialize()
    try:
        listed = await rt.process_input("list my posts")
        tags = await rt.process_input("list my tags")
    finally:
        await rt.close()
    assert "Shell tips" in listed.content and "Templates notes" in listed.content
    assert "Daily" not in listed.content and "Weekly" not in listed.content, listed.content
    assert "daily" not in tags.content and "shell" in tags.content, tags.content


def test_posts_folder_first_then_configured_wins(tmp_path: Path) -> None:
    root = build(tmp_path / "b", {"posts/a.md": POST.format(title="A"), "docs/b.md": "x"})
    assert detect_layout(root).posts_dir == "posts"
    config = load_config(content_root=root, posts_dir="docs")
    assert config.posts_dir == "docs"
    assert config.layout.kind == "configured" and config.layout.markdown_files == 1


def test_missing_and_empty_posts_folders_get_a_hint(tmp_path: Path) -> None:
    bare = load_config(content_root=build(tmp_path / "bare", {"README.txt": "hi"}))
    assert bare.posts_dir == "posts" and bare.layout.kind == "default"
    assert "does not exist yet" in (bare.layout.hint() or "")
    empty_root = tmp_path / "empty"
    (empty_root / "posts").mkdir(parents=True)
    empty = load_config(content_root=empty_root)
    assert empty.posts_dir == "posts"
    assert "no Markdown files" in (empty.layout.hint() or "")
    assert "--posts-dir" in (empty.layout.hint() or "")


def test_state_folder_is_created_with_a_gitignore(tmp_path: Path) -> None:
    state = make_state_dir(tmp_path / "blog" / ".skillrt")
    assert (state / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    (state / ".gitignore").write_text("mine\n", encoding="utf-8")
    make_state_dir(state)  # an existing folder is left as it is
    assert (state / ".gitignore").read_text(encoding="utf-8") == "mine\n"


def test_doctor_shows_the_layout_and_writes_nothing(tmp_path: Path) -> None:
    files, _, _ = BLOGS["vitepress"]
    root = build(tmp_path / "site", files)
    env = cli_env(root, write_script(tmp_path / "s.json", []))
    before = tree(root)
    done = skillrt("doctor", "--json", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert checks["posts"]["detail"]["kind"] == "vitepress"
    assert checks["posts"]["detail"]["markdown_files"] == 2
    assert "VitePress" in checks["posts"]["value"]
    text = skillrt("doctor", env=env, cwd=tmp_path)
    assert "docs/ (VitePress site: docs/.vitepress/ found) · 2 Markdown files" in text.stdout
    assert tree(root) == before  # no .skillrt, no log, nothing

    indexed = skillrt("index", env=env, cwd=tmp_path)  # now with a state folder and an index
    assert indexed.returncode == 0, indexed.stderr
    assert indexed.stdout.startswith("2 posts indexed")
    assert (root / ".skillrt" / ".gitignore").read_text(encoding="utf-8").endswith("*\n")
    before = tree(root)
    again = skillrt("doctor", env=env, cwd=tmp_path)
    assert again.returncode == 0 and "2 posts indexed" in again.stdout
    assert tree(root) == before


def test_posts_dir_option_and_help(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    build(blog, {"notes/one.md": POST.format(title="One")})
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    done = skillrt("index", "--json", "--posts-dir", "notes", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["posts"] == 1
    doctor = skillrt("doctor", "--posts-dir", "nowhere", env=env, cwd=tmp_path)
    assert "nowhere/" in doctor.stdout and "does not exist yet" in doctor.stdout
    helped = skillrt("--help", env=env, cwd=tmp_path)
    assert "posts_dir" in helped.stdout and "--posts-dir" in helped.stdout
    assert "--posts-dir" in skillrt("chat", "--help", env=env, cwd=tmp_path).stdout


def test_chat_banner_shows_the_layout_and_a_hint(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    (root / "posts").mkdir(parents=True)
    env = cli_env(root, write_script(tmp_path / "s.json", []))
    done = skillrt("chat", env=env, cwd=tmp_path, input="")
    assert done.returncode == 0, done.stderr
    assert "posts: posts/ (posts/ found) · 0 Markdown files" in done.stdout
    assert "hint: posts/ holds no Markdown files yet" in done.stdout
    files, _, _ = BLOGS["hexo"]
    hexo = build(tmp_path / "hexo", files)
    shown = skillrt("chat", env=cli_env(hexo, tmp_path / "s.json"), cwd=tmp_path, input="")
    assert "source/_posts/ (Hexo site: source/_posts/ found) · 1 Markdown files" in shown.stdout
    assert "hint:" not in shown.stdout


def test_an_index_built_without_inline_tags_is_built_again_with_them(tmp_path: Path) -> None:
    from skillrt.blog.posts import PostIndex

    root = build(tmp_path / "vault", {"Shell tips.md": "Tips. #shell\n"})
    db = tmp_path / "posts.sqlite3"
    before = PostIndex(db, root, ".")
    before.refresh()
    assert [m.tags for m in before.all_posts()] == [()]
    before.close()
    after = PostIndex(db, root, ".", inline_tags=True)  # (the file unchanged since)
    after.refresh()
    assert [m.tags for m in after.all_posts()] == [("shell",)]
    after.close()
