"""FileStore on real files: path escapes refused, atomic writes, edits outside detected."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillrt.blog.files import FileStore
from skillrt.blog.locks import FileLockManager
from skillrt.exceptions import FileChanged, LockConflict, PathNotAllowed, UserError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    return blog


@pytest.fixture
def files(root: Path) -> FileStore:
    return FileStore(root)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


ESCAPES = [
    "../x.md",
    "a/../../x.md",
    "posts/../../x.md",
    "..",
    "/etc/passwd",
    "//server/share/x.md",
    "\\\\server\\share\\x.md",
    "C:\\x.md",
    "C:/x.md",
    "posts\\x.md",
    "a\x00b.md",
    "a\nb.md",
    "x" * 300 + ".md",
    "a/" * 2100 + "x.md",
    "~/x.md",
    "~",
    "",
    "   ",
    ".",
    "posts/..",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_escapes_are_refused(files: FileStore, path: str) -> None:
    with pytest.raises(PathNotAllowed):
        files.resolve(path)
    with pytest.raises(PathNotAllowed):
        files.write(path, "x")


def test_symlinks_out_of_the_root_are_refused(files: FileStore, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    (root / "link.md").symlink_to(outside / "secret.md")
    (root / "dangling.md").symlink_to(outside / "not-yet.md")
    (root / "posts" / "out").symlink_to(outside, target_is_directory=True)
    (root / "loop").symlink_to(root / "loop")

    for path in ["link.md", "dangling.md", "posts/out/secret.md", "posts/out/new.md", "loop/x"]:
        with pytest.raises(PathNotAllowed):
            files.resolve(path)
        with pytest.raises(PathNotAllowed):
            files.write(path, "overwritten")
    with pytest.raises(PathNotAllowed):
        files.read("link.md")
    assert (outside / "secret.md").read_text() == "secret"
    assert not (outside / "not-yet.md").exists()
    assert not (outside / "new.md").exists()
    assert files.list("**/*") == []  # links out are not listed, linked folders not followed


def test_paths_inside_are_accepted(files: FileStore, root: Path) -> None:
    real = root.resolve()
    assert files.resolve("posts/a.md") == real / "posts" / "a.md"
    assert files.resolve("./posts//a.md") == real / "posts" / "a.md"
    assert files.resolve("drafts/../posts/a.md") == real / "posts" / "a.md"
    assert files.resolve(str(root / "posts" / "a.md")) == real / "posts" / "a.md"
    assert files.resolve(Path("posts/中文.md")) == real / "posts" / "中文.md"
    assert files.relative(root / "posts" / "a.md") == "posts/a.md"
    (root / "alias").symlink_to(root / "posts", target_is_directory=True)
    assert files.relative("alias/a.md") == "posts/a.md"  # a symlink that stays inside is fine


def test_the_state_folder_is_refused_for_writes(files: FileStore) -> None:
    with pytest.raises(PathNotAllowed, match="state folder"):
        files.write(".skillrt/checkpoints/x", "x")
    with pytest.raises(PathNotAllowed, match="state folder"):
        files.write(".skillrt/trash/x.md", "x")


def test_write_and_read_round_trip(files: FileStore, root: Path) -> None:
    content = "---\ntitle: 所有权\n---\n\n# Rust 所有权\r\n正文\n"
    path, digest = files.write("posts/deep/new/rust.md", content)
    assert path == root.resolve() / "posts" / "deep" / "new" / "rust.md"
    assert digest == hashlib.sha256(content.encode()).hexdigest()
    assert path.read_bytes() == content.encode()
    assert files.read("posts/deep/new/rust.md") == (content, digest)
    assert files.hash_of("posts/deep/new/rust.md") == digest
    assert files.hash_of("posts/none.md") is None
    assert files.exists("posts/deep/new/rust.md") and not files.exists("posts/none.md")
    assert leftovers(root) == []


def test_read_refuses_non_utf8(files: FileStore, root: Path) -> None:
    (root / "posts" / "latin1.md").write_bytes("café".encode("latin-1"))
    with pytest.raises(UserError, match=r"posts/latin1\.md is not UTF-8"):
        files.read("posts/latin1.md")


def test_write_replaces_atomically_and_keeps_the_mode(files: FileStore, root: Path) -> None:
    target = root / "posts" / "a.md"
    target.write_text("old")
    target.chmod(0o640)
    before = target.stat().st_ino
    files.write("posts/a.md", "new")
    assert target.read_text() == "new"
    assert target.stat().st_ino != before  # a new file renamed over the old one
    assert target.stat().st_mode & 0o777 == 0o640
    assert leftovers(root) == []


def test_an_edit_outside_between_read_and_write_is_not_overwritten(
    files: FileStore, root: Path
) -> None:
    target = root / "posts" / "a.md"
    target.write_text("v1")
    _, digest = files.read("posts/a.md")
    target.write_text("v1 edited in the editor")

    with pytest.raises(FileChanged) as caught:
        files.write("posts/a.md", "v2 from the model", expected_hash=digest)
    assert caught.value.path == "posts/a.md"
    assert "posts/a.md changed on disk since it was read" in str(caught.value)
    assert target.read_text() == "v1 edited in the editor"
    assert leftovers(root) == []

    target.unlink()
    with pytest.raises(FileChanged, match="was deleted") as gone:
        files.write("posts/a.md", "v2", expected_hash=digest)
    assert gone.value.actual_hash is None
    assert not target.exists()

    target.write_text("v1")
    path, _ = files.write("posts/a.md", "v2", expected_hash=digest)  # unchanged: allowed
    assert path.read_text() == "v2"


def test_create_only(files: FileStore, root: Path) -> None:
    files.write("posts/new.md", "first", create_only=True)
    with pytest.raises(UserError, match=r"posts/new\.md already exists"):
        files.write("posts/new.md", "second", create_only=True)
    assert (root / "posts" / "new.md").read_text() == "first"
    assert leftovers(root) == []
    with pytest.raises(UserError):
        files.write("posts/new.md", "x", create_only=True, expected_hash="abc")


def test_failed_writes_leave_no_temp_files(files: FileStore, root: Path) -> None:
    (root / "posts" / "folder.md").mkdir()
    with pytest.raises(UserError, match="is a folder"):
        files.write("posts/folder.md", "x")
    (root / "posts" / "dir-target").mkdir()
    (root / "posts" / "dir-target" / "keep").write_text("x")
    with pytest.raises(OSError):
        files.write("posts/dir-target/keep/child.md", "x")  # a file where a folder should be
    with pytest.raises(FileChanged):
        files.write("posts/nothing.md", "x", expected_hash="0" * 64)
    assert leftovers(root) == []


def test_list_skips_dot_folders_and_sorts(files: FileStore, root: Path) -> None:
    for rel in ["posts/b.md", "posts/a.md", "index.md", "posts/sub/c.md", "notes.txt"]:
        files.write(rel, "x")
    (root / ".skillrt").mkdir()
    (root / ".skillrt" / "hidden.md").write_text("x")
    (root / ".git").mkdir()
    (root / ".git" / "x.md").write_text("x")
    (root / "posts" / ".draft.md").write_text("x")
    assert files.list() == ["index.md", "posts/a.md", "posts/b.md", "posts/sub/c.md"]
    assert files.list("posts/*.md") == ["posts/a.md", "posts/b.md"]
    assert files.list("*.txt") == ["notes.txt"]
    with pytest.raises(PathNotAllowed):
        files.list("../*.md")
    with pytest.raises(PathNotAllowed):
        files.list("/etc/*")


def test_move_to_trash_keeps_the_file(root: Path, tmp_path: Path) -> None:
    files = FileStore(root, trash_dir=tmp_path / "trash")
    files.write("posts/old.md", "bye")
    moved = files.move_to_trash("posts/old.md")
    assert not (root / "posts" / "old.md").exists()
    assert moved.read_text() == "bye"
    assert moved.parent == (tmp_path / "trash" / "posts").resolve()
    assert moved.name.startswith("old.") and moved.name.endswith(".md")
    files.write("posts/old.md", "again")
    second = files.move_to_trash("posts/old.md")
    assert second != moved and second.read_text() == "again" and moved.read_text() == "bye"
    with pytest.raises(UserError):
        files.move_to_trash("posts/old.md")


def test_task_views_take_and_keep_the_lock(root: Path, tmp_path: Path) -> None:
    locks = FileLockManager(tmp_path / "locks")
    store = FileStore(root, locks=locks)
    one, two = store.for_task("task-1"), store.for_task("task-2")
    assert one.root == store.root and one.owner == "task-1"

    one.write("posts/a.md", "from one")
    assert locks.holder("posts/a.md") == "task-1"
    with pytest.raises(LockConflict, match="task-1"):
        two.write("posts/a.md", "from two")
    with pytest.raises(LockConflict):
        two.write(root / "posts" / "a.md", "same file by its absolute path")
    one.write("posts/a.md", "again from one")  # re-entrant
    assert locks.release_task_locks("task-1") == 1
    two.write("posts/a.md", "from two")
    assert (root / "posts" / "a.md").read_text() == "from two"
    store.write("posts/free.md", "no owner, no lock")
    assert locks.holder("posts/free.md") is None
    locks.close()


WRITER = """
import sys
from pathlib import Path
from skillrt.blog.files import FileStore
files = FileStore(Path(sys.argv[1]))
a, b = "A" * 3_000_000, "B" * 3_000_000
files.write("posts/big.md", a)  # an old file first: a kill before the first write ends
print("ready", flush=True)  # (a loaded machine) leaves no file at all, which says nothing
while True:
    files.write("posts/big.md", a)
    files.write("posts/big.md", b)
"""


def test_a_killed_writer_leaves_the_old_or_the_new_file(root: Path) -> None:
    for delay in (0.05, 0.12, 0.2):
        with subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root)], stdout=subprocess.PIPE, text=True
        ) as child:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
            time.sleep(delay)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
        data = (root / "posts" / "big.md").read_bytes()
        assert data in (b"A" * 3_000_000, b"B" * 3_000_000)
    # A kill can leave a hidden temp file behind (never the target); list() does not show it.
    assert files_listed(root) == ["posts/big.md"]


def files_listed(root: Path) -> list[str]:
    return FileStore(root).list("**/*")


def test_the_root_itself_may_be_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real-blog"
    real.mkdir()
    link = tmp_path / "blog-link"
    link.symlink_to(real, target_is_directory=True)
    files = FileStore(link)
    path, _ = files.write(str(link / "posts" / "a.md"), "x")
    assert path == real.resolve() / "posts" / "a.md"
    assert os.path.isfile(real / "posts" / "a.md")
