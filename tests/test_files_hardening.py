"""FileStore under attack (issue 26, items 3, 7, 8): a symlink race during thousands of writes,
writes only to posts, reads never in the state folder or hidden folders, no exec bit kept."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillrt.blog.dirfd import DIR_FD
from skillrt.blog.files import FileStore
from skillrt.blog.tempfiles import remove_stale_temps
from skillrt.exceptions import FileMissing, PathNotAllowed, UserError
from skillrt.testing import FunctionModel

# Swaps posts/sub for a symlink to the outside folder and back, as fast as it can, until killed.
SWAPPER = """
import os, sys
sub, away, outside, ready = sys.argv[1:5]
open(ready, "w").close()
n = 0
while True:
    n += 1
    try:
        os.rename(sub, f"{away}-{n}")
        os.symlink(outside, sub)
        os.unlink(sub)
        os.rename(f"{away}-{n}", sub)
    except OSError:
        pass  # a write made the folder again meanwhile: go on with a new name
"""


def _everything_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.skipif(not DIR_FD, reason="no dir_fd/O_NOFOLLOW on this platform")
@pytest.mark.parametrize("create_only", [False, True])
def test_a_folder_swapped_for_a_symlink_during_writes_puts_nothing_outside(
    tmp_path: Path, create_only: bool
) -> None:
    root = tmp_path / "blog"
    sub = root / "posts" / "sub"
    sub.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    ready = tmp_path / "ready"
    files = FileStore(root)
    swapper = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SWAPPER,
            str(sub),
            str(root / "posts" / "away"),
            str(outside),
            str(ready),
        ]
    )
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        written = refused = 0
        for i in range(3000):
            try:
                files.write(f"posts/sub/n{i}.md", f"post {i}\n", create_only=create_only)
                written += 1
            except (PathNotAllowed, OSError):
                refused += 1  # the folder was away or a symlink at that moment
    finally:
        swapper.kill()
        swapper.wait()
    assert written > 0 and refused > 0, (written, refused)  # the race really ran
    assert _everything_under(outside) == []
    # Every write that said it succeeded is inside the blog, under one of the folder's names.
    inside = list(root.rglob("n*.md"))
    assert len(inside) == written
    assert list(root.rglob("*.tmp")) == []


@pytest.mark.skipif(not DIR_FD, reason="no dir_fd/O_NOFOLLOW on this platform")
def test_a_folder_swapped_for_a_symlink_during_reads_reads_nothing_outside(tmp_path: Path) -> None:
    root = tmp_path / "blog"
    sub = root / "posts" / "sub"
    sub.mkdir(parents=True)
    (sub / "a.md").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.md").write_text("OUTSIDE SECRET\n")
    ready = tmp_path / "ready"
    files = FileStore(root)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(sub), str(root / "posts" / "away"), str(outside),
         str(ready)]
    )  # fmt: skip
    texts: set[str] = set()
    refused = 0
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        for _ in range(3000):
            try:
                texts.add(files.read("posts/sub/a.md")[0])
            except (PathNotAllowed, FileMissing, OSError):
                refused += 1
    finally:
        swapper.kill()
        swapper.wait()
    assert refused > 0  # the race really ran
    assert texts <= {"inside\n"}


def test_writes_touch_only_posts(tmp_path: Path) -> None:
    root = tmp_path / "blog"
    (root / "posts").mkdir(parents=True)
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "skillrt.toml").write_text("[llm]\n")
    (root / "build.sh").write_text("echo hi\n")
    files = FileStore(root, posts_dir="posts")
    for path in [
        ".git/config",
        ".git/hooks/pre-commit",
        ".git/x.md",
        "skillrt.toml",
        "build.sh",
        "posts/build.sh",
        "posts/.hidden.md",
        "posts/.drafts/a.md",
        "readme.md",  # Markdown, but not under the posts folder
        ".skillrt/serve-token",
    ]:
        with pytest.raises(PathNotAllowed):
            files.write(path, "pwned\n")
    assert (root / ".git" / "config").read_text() == "[core]\n"
    assert (root / "skillrt.toml").read_text() == "[llm]\n"
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    files.write("posts/ok.md", "# ok\n")
    files.write("posts/deep/ok.markdown", "# ok\n")
    # The posts folder is the root itself: any Markdown file outside hidden folders.
    anywhere = FileStore(root, posts_dir=".")
    anywhere.write("readme.md", "# hi\n")
    with pytest.raises(PathNotAllowed):
        anywhere.write("build.sh", "x")
    with pytest.raises(PathNotAllowed):
        anywhere.move_to_trash("skillrt.toml")


def test_a_copy_is_byte_for_byte_new_and_keeps_the_write_guards(tmp_path: Path) -> None:
    """``copy`` (a page bundle's image beside its translation) writes any file under the
    posts folder, never over one, never from or to outside it, a hidden name or a symlink
    out, and never with an exec bit."""
    root = tmp_path / "blog"
    (root / "posts" / "x").mkdir(parents=True)
    (root / "posts" / "y").mkdir()
    (root / "skillrt.toml").write_text("[llm]\n")
    (root / "posts" / ".secret").write_text("s")
    (tmp_path / "outside.png").write_bytes(b"out")
    (root / "posts" / "x" / "link.png").symlink_to(tmp_path / "outside.png")
    image = root / "posts" / "x" / "cover.png"
    image.write_bytes(b"\x89PNG\xff\x00")
    image.chmod(0o755)
    files = FileStore(root, posts_dir="posts")
    digest = files.copy("posts/x/cover.png", "posts/y/cover.png")
    copied = root / "posts" / "y" / "cover.png"
    assert (
        copied.read_bytes() == b"\x89PNG\xff\x00" and files.hash_of("posts/y/cover.png") == digest
    )
    assert stat.S_IMODE(copied.stat().st_mode) & 0o7111 == 0
    with pytest.raises(UserError, match="already exists"):
        files.copy("posts/x/cover.png", "posts/y/cover.png")
    for source, dest in [
        ("skillrt.toml", "posts/y/skillrt.toml"),
        ("posts/x/cover.png", "build.sh"),
        ("posts/.secret", "posts/y/secret"),
        ("posts/x/cover.png", "posts/y/.hidden.png"),
        ("posts/x/link.png", "posts/y/link.png"),
        ("posts/x/cover.png", ".skillrt/trash/x.png"),
    ]:
        with pytest.raises(PathNotAllowed):
            files.copy(source, dest)
    with pytest.raises(FileMissing):
        files.copy("posts/x/none.png", "posts/y/none.png")
    assert sorted(p.name for p in (root / "posts" / "y").iterdir()) == ["cover.png"]
    files.move_to_trash("posts/y/cover.png", resource=True)
    assert not copied.exists()
    with pytest.raises(PathNotAllowed):
        files.move_to_trash("posts/x/cover.png")  # not a post: only as a resource


def test_an_edit_never_keeps_an_exec_bit(tmp_path: Path) -> None:
    root = tmp_path / "blog"
    (root / "posts").mkdir(parents=True)
    post = root / "posts" / "run.md"
    post.write_text("# run\n")
    post.chmod(0o6755)
    FileStore(root, posts_dir="posts").write("posts/run.md", "# edited\n")
    mode = stat.S_IMODE(post.stat().st_mode)
    assert mode & 0o7111 == 0, oct(mode)
    assert mode & 0o600 == 0o600


def test_reads_refuse_the_state_folder_and_hidden_folders(tmp_path: Path) -> None:
    root = tmp_path / "blog"
    (root / ".skillrt").mkdir(parents=True)
    (root / ".skillrt" / "serve-token").write_text("tok-" + "x" * 40)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[remote]\nurl = https://user:pw@example.org\n")
    (root / ".env").write_text("OPENAI_API_KEY=sk-x\n")
    (root / "state").mkdir()
    (root / "state" / "notes.md").write_text("kept by the runtime\n")
    (root / "post.md").write_text("# fine\n")
    files = FileStore(root, state_dir=root / "state")
    for path in [".skillrt/serve-token", ".git/config", ".env", "state/notes.md"]:
        with pytest.raises(PathNotAllowed):
            files.read(path)
        with pytest.raises(PathNotAllowed):
            files.hash_of(path)
    assert files.read("post.md")[0] == "# fine\n"


def test_temp_files_of_a_dead_writer_are_removed_at_the_next_start(tmp_path: Path) -> None:
    root = tmp_path / "blog"
    (root / "posts").mkdir(parents=True)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(dead.stdout)
    left = root / "posts" / f".skillrt-{dead_pid}-0123456789abcdef.tmp"
    left.write_text("half")
    live = root / "posts" / f".skillrt-{os.getpid()}-fedcba9876543210.tmp"
    live.write_text("being written")
    removed = remove_stale_temps(root)
    assert removed == [f"posts/{left.name}"]
    assert not left.exists() and live.exists()


def test_the_state_folder_is_private_whatever_the_umask(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts" / "a.md").write_text("# A\n\nText.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    script = tmp_path / "s.json"
    script.write_text('{"answers": ["A summary."]}')
    env.update(
        SKILLRT_LLM__PROVIDER="scripted",
        SKILLRT_LLM__SCRIPT_PATH=str(script),
        SKILLRT_CONTENT_ROOT=str(blog),
    )
    code = "import os, sys; os.umask(0o022); from skillrt.cli import main; sys.argv[1:] = "
    args = ["run", "summarize posts/a.md"]
    done = subprocess.run(
        [sys.executable, "-c", code + repr(args) + "; main()"],
        env=env, cwd=blog, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    state = blog / ".skillrt"
    found = [state, *state.rglob("*")]
    assert any(p.name.endswith(".db") for p in found)  # the checkpoints and history exist
    for path in found:
        if path.is_symlink():
            continue
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, (str(path.relative_to(blog)), oct(mode))


@pytest.mark.parametrize(
    "name",
    ["CON.md", "posts/con.md", "posts/Aux.draft.md", "posts/nul/x.md", "posts/LPT1.md",
     "posts/com9.markdown", "posts/trailing-dot.", "posts/\u202egpj.md", "posts/a\u2066b.md"],
)  # fmt: skip
def test_reserved_and_bidi_names_are_refused(tmp_path: Path, name: str) -> None:
    root = tmp_path / "blog"
    (root / "posts").mkdir(parents=True)
    files = FileStore(root, posts_dir=".")
    with pytest.raises(PathNotAllowed):
        files.write(name, "# x\n")
    assert sorted(p.name for p in root.rglob("*") if p.is_file()) == []
    files.write("posts/console.md", "# fine\n")  # only the exact reserved names


async def test_a_folder_as_target_path_gets_the_post_inside(tmp_path: Path) -> None:
    from tests.blog import copy_blog
    from tests.writing_support import WritingModelFn, writing_runtime

    blog = copy_blog(tmp_path / "blog")
    (blog / "posts" / "drafts").mkdir()
    rt = writing_runtime(blog, FunctionModel(WritingModelFn()))
    await rt.initialize()
    for target, folder in [("posts/", "posts"), ("posts/drafts", "posts/drafts")]:
        msg = await rt.run_skill("WriteArticle", {"topic": "Rust ownership", "target_path": target})
        assert msg.state == "COMPLETED", msg.content
        assert msg.data["path"].startswith(folder + "/rust-ownership"), msg.data["path"]
    assert not (blog / "posts.md").exists() and not (blog / "posts" / "drafts.md").exists()
    await rt.close()
    llm = FunctionModel(WritingModelFn())
    rt2 = writing_runtime(blog, llm)
    await rt2.initialize()
    msg = await rt2.run_skill("WriteArticle", {"topic": "Rust", "target_path": "posts/CON.md"})
    assert msg.data.get("error") == "path_not_allowed", msg.content
    assert llm.call_count == 0  # refused before anything was spent
    await rt2.close()
