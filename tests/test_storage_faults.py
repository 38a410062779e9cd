"""Storage faults give clear errors and lose nothing, through the Python API and the CLI.

Faults: a read-only, full or deleted state folder; a state path that is a file; a valid
SQLite file with another schema, a folder, a corrupt file or 0 bytes in place of the
checkpoint or history database; the checkpoint database cut to 0 bytes while open. A full
disk is a file-size limit of 0 bytes (every write fails with EFBIG); read-only runs the process
without the capabilities that let root write anyway (tests run as root).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
from skillrt._io.faults import on_moved_aside
from skillrt.testing import ScriptedModel

from .cli_support import article, cli_env, make_blog, write_script
from .helpers import Recorder, TopicParams

CHILD = Path(__file__).with_name("fault_child.py")
PR_CAPBSET_DROP = 24
DAC_CAPS = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER


def without_root_powers() -> None:
    """In a child before exec: drop the capabilities that let root ignore file modes."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in DAC_CAPS:
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def disk_full() -> None:
    """In a child before exec: every file write fails as on a full disk (EFBIG)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def read_only(state: Path) -> None:
    for folder, dirs, files in os.walk(state, topdown=False):
        for name in files:
            os.chmod(Path(folder) / name, 0o444)
        for name in dirs:
            os.chmod(Path(folder) / name, 0o555)
    os.chmod(state, 0o555)


def writable(state: Path) -> None:
    for folder, _dirs, files in os.walk(state):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(Path(folder) / name, 0o644)


def child(
    blog: Path, fault: str, when: str, preexec: Callable[[], None] | None = None
) -> dict[str, Any]:
    """The host program of ``fault_child.py``: its one JSON line, after checking it printed
    no traceback."""
    done = subprocess.run(
        [sys.executable, str(CHILD), str(blog), fault, when],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=preexec,
        env={**os.environ, "PYTHONPATH": str(CHILD.parent.parent)},
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def cli(
    blog: Path,
    tmp_path: Path,
    *args: str,
    preexec: Callable[[], None] | None = None,
    answers: list[Any] | None = None,
) -> subprocess.CompletedProcess[str]:
    script = write_script(tmp_path / "script.json", answers or [])
    done = subprocess.run(
        [sys.executable, "-m", "skillrt", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=cli_env(blog, script),
        preexec_fn=preexec,
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done


def one_paragraph(text: str) -> None:
    assert text.strip() and "\n\n" not in text.strip()
    assert len(text.strip().splitlines()) <= 3


@pytest.fixture
def root_can_be_limited() -> None:
    if os.geteuid() == 0:
        try:
            subprocess.run(["true"], preexec_fn=without_root_powers, check=True)
        except (subprocess.SubprocessError, OSError):
            pytest.skip("cannot drop root's file capabilities here")


# --- a skill that pauses after its first step ------------------------------------------------


def runtime(blog: Path) -> AgentRuntime:
    """A runtime over ``blog`` with one skill: two durable steps, pausing between them when
    its topic is "pause"."""
    rt = AgentRuntime(load_config(content_root=blog), llm=ScriptedModel([]), skills=[])

    @skill(name="PauseAfterOne", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def pause_after_one(ctx: SkillContext, params: TopicParams) -> SkillResult:
        await ctx.step("one", lambda: {"topic": params.topic})
        if params.topic == "pause":
            rt.pause(ctx.task_id)
        await ctx.step("two", lambda: 2)
        return SkillResult(message=f"done: {params.topic}")

    rt.register_skill(pause_after_one)
    return rt


async def paused_task(blog: Path) -> str:
    """A task paused after its first step, durably; the runtime closed."""
    rt = runtime(blog)
    message = await rt.run_skill("PauseAfterOne", {"topic": "pause"})
    assert message.data["outcome"] == "paused"
    await rt.close()
    assert message.task_id is not None
    return message.task_id


# --- databases that cannot be read: moved aside, the runtime starts -------------------------


def checkpoint_db(blog: Path) -> Path:
    return blog / ".skillrt" / "checkpoints" / "cache" / "cache.db"


def history_db(blog: Path) -> Path:
    return blog / ".skillrt" / "history" / "history.db"


def wrong_schema(path: Path) -> None:
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE Cache (x); CREATE TABLE tasks (x); CREATE TABLE messages (y);")
    db.commit()
    db.close()


def foreign_tables(path: Path) -> None:
    """Another program's ``Settings`` table (and one more of its own) beside the records."""
    db = sqlite3.connect(path)
    db.executescript(
        "DROP TABLE IF EXISTS Settings;"
        " CREATE TABLE Settings (id INTEGER PRIMARY KEY, owner TEXT, blob BLOB);"
        " INSERT INTO Settings VALUES (1, 'other-app', x'00');"
        " CREATE TABLE accounts (name TEXT, balance REAL);"
    )
    db.commit()
    db.close()


def folder_instead(path: Path) -> None:
    path.unlink()
    (path / "inside").mkdir(parents=True)


def corrupt(path: Path) -> None:
    with path.open("r+b") as fh:
        fh.write(b"this is no database" * 10)


def zero_bytes(path: Path) -> None:
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    path.write_bytes(b"")


def name_not_utf8(path: Path) -> None:
    """One byte of a table's name in the schema made \\xd5 (not UTF-8): Python's ``sqlite3``
    raises ``UnicodeDecodeError`` reading it, which every command met as a traceback."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the schema in the main file
    db.close()
    data = bytearray(path.read_bytes())
    at = max(data.find(b"tableCacheCache"), data.find(b"tabletaskstasks"))
    assert at > 0
    data[at + len("table") + 2] = 0xD5  # the name's third letter
    path.write_bytes(bytes(data))


DAMAGES = {
    "wrong_schema": wrong_schema,
    "foreign_tables": foreign_tables,  # every command exited 74 before (issue 26, item 10)
    "folder": folder_instead,
    "corrupt": corrupt,
    "zero_bytes": zero_bytes,
    "name_not_utf8": name_not_utf8,  # a traceback from every command before
}


@pytest.mark.parametrize("which", ["checkpoints", "history"])
@pytest.mark.parametrize("damage", sorted(DAMAGES))
async def test_an_unreadable_database_is_moved_aside_and_the_runtime_starts(
    tmp_path: Path, which: str, damage: str
) -> None:
    blog = tmp_path / "blog"
    held = await paused_task(blog)
    path = checkpoint_db(blog) if which == "checkpoints" else history_db(blog)
    if damage != "zero_bytes":  # the records reach the main file (a WAL checkpoint)
        db = sqlite3.connect(path)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
    DAMAGES[damage](path)

    rt = runtime(blog)
    events = Recorder(rt)
    await rt.initialize()  # raised on every start before
    (loaded,) = events.of("runtime:checkpoints_loaded")
    (note,) = loaded.data["quarantined"]
    assert "moved to" in note and "quarantine" in note
    quarantine = (path.parent.parent if which == "checkpoints" else path.parent) / "quarantine"
    assert any(quarantine.iterdir())  # kept, with a timestamp in its name
    if which == "checkpoints" and damage == "corrupt":
        assert held in note  # the tasks it may have held are named
    if which == "checkpoints" and damage == "zero_bytes":
        assert "lost" in note
    if which == "history":
        assert [t.id for t in rt.get_resumable_tasks()] == [held]  # checkpoints untouched
    done = await rt.run_skill("PauseAfterOne", {"topic": "after"})
    assert done.state == "COMPLETED"
    await rt.close()


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_cli_starts_and_warns_about_a_database_moved_aside(tmp_path: Path, damage: str) -> None:
    blog = make_blog(tmp_path)
    first = cli(blog, tmp_path, "tasks", "--json")
    assert first.returncode == 0
    DAMAGES[damage](checkpoint_db(blog))
    if history_db(blog).exists():
        DAMAGES[damage](history_db(blog))
    answers = article("Rust Ownership", ["Owners own.", "Moves."])
    done = cli(
        blog, tmp_path, "run", "--json", "write an article about Rust ownership", answers=answers
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"] == "COMPLETED"
    assert "skillrt: warning: checkpoint database" in done.stderr
    doctor = cli(blog, tmp_path, "doctor", "--json")
    assert "Traceback" not in doctor.stdout


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_doctor_names_a_damaged_database(tmp_path: Path, damage: str) -> None:
    blog = make_blog(tmp_path)
    assert cli(blog, tmp_path, "tasks").returncode == 0
    DAMAGES[damage](checkpoint_db(blog))
    done = cli(blog, tmp_path, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    found = checks["checkpoints database"]
    assert found["status"] == "warn"
    words = {
        "wrong_schema": "another schema",
        "foreign_tables": "another schema",
        "folder": "is a folder",
        "corrupt": "not a SQLite database",
        "zero_bytes": "empty (0 bytes)",
        "name_not_utf8": "unreadable",
    }
    assert words[damage] in found["value"] and "moved aside" in found["value"]


# --- a task record with a byte that is not UTF-8: that record moved aside, the rest kept -----


async def test_a_record_with_a_byte_that_is_not_utf8_is_moved_aside_and_named(
    tmp_path: Path,
) -> None:
    """One byte of a record (its skill's name, in its JSON and in the listing its row carries)
    made \\xff: every command exited 74 with "Could not decode to UTF-8 column 'tag'", and
    skillrt doctor said ok."""
    blog = make_blog(tmp_path)
    held = await paused_task(blog)
    db = checkpoint_db(blog)
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = db.read_bytes()
    assert data.count(b"PauseAfterOne") == 2  # the record's JSON and its row's listing
    db.write_bytes(data.replace(b"PauseAfterOne", b"Pause\xfffterOne"))

    doctor = cli(blog, tmp_path, "doctor", "--json", "--no-generate")
    found = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}["checkpoints database"]
    assert found["status"] == "warn" and held in found["value"]
    listed = cli(blog, tmp_path, "tasks", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []
    assert f"skillrt: warning: task record {held!r}" in listed.stderr
    assert "moved to" in listed.stderr and "quarantine" in listed.stderr
    assert list((blog / ".skillrt" / "checkpoints" / "quarantine").glob(f"record-{held}-*"))
    answers = article("Rust Ownership", ["Owners own.", "Moves."])
    done = cli(
        blog, tmp_path, "run", "--json", "write an article about Rust ownership", answers=answers
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"] == "COMPLETED"


def unparsable_record(blog: Path) -> None:
    """The record's JSON broken (``"state"!"``), the listing its row carries left sound."""
    db = checkpoint_db(blog)
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = db.read_bytes()
    assert data.count(b'"state":"') == 1
    db.write_bytes(data.replace(b'"state":"', b'"state"!"'))


@pytest.mark.parametrize("command", ["tasks", "resume", "chat"])
async def test_a_record_that_cannot_be_read_is_named_when_moved_aside(
    tmp_path: Path, command: str
) -> None:
    """Such a record was moved aside silently: skillrt tasks listed it, skillrt resume then
    said "no resumable task", and only a file in checkpoints/quarantine/ said why."""
    blog = make_blog(tmp_path)
    held = await paused_task(blog)
    unparsable_record(blog)
    args = {"tasks": ("tasks", "--json"), "resume": ("resume", held), "chat": ("chat",)}
    script = write_script(tmp_path / "script.json", [])
    done = subprocess.run(
        [sys.executable, "-m", "skillrt", *args[command]],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=cli_env(blog, script),
        input=f"/resume {held}\n" if command == "chat" else None,
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    warning = f"skillrt: warning: task record {held!r}"
    assert warning in done.stderr, done.stdout + done.stderr
    (moved,) = (blog / ".skillrt" / "checkpoints" / "quarantine").glob(f"record-{held}-*")
    assert str(moved) in done.stderr
    if command == "tasks":
        assert json.loads(done.stdout) == []  # not listed, to be called unknown by resume


async def test_a_record_whose_key_is_not_utf8_is_moved_aside_and_the_others_kept(
    tmp_path: Path,
) -> None:
    from skillrt._state.embedded.checkpoints import CheckpointStore

    blog = tmp_path / "blog"
    kept = await paused_task(blog)
    broken = await paused_task(blog)
    con = sqlite3.connect(checkpoint_db(blog))
    bad = broken[:4].encode() + b"\xff" + broken[5:].encode()
    con.execute("UPDATE Cache SET key = CAST(? AS TEXT) WHERE key = ?", (bad, broken))
    con.commit()
    con.close()
    store = CheckpointStore(blog / ".skillrt" / "checkpoints")
    try:
        assert store.all_ids() == [kept]  # raised OperationalError before
        loaded = store.load_lazy(max_age_s=3600, now=time.time())
        assert [r.id for r in loaded.records] == [kept]
        (note,) = loaded.quarantined
        assert "not UTF-8" in note and "moved to" in note and broken[:4] in note
    finally:
        store.close()


# --- a folder in place of a run-lock file -----------------------------------------------------


def test_a_folder_in_place_of_a_run_lock_file_is_named_and_moved_aside(tmp_path: Path) -> None:
    """Every command exited 74: "cannot save its run locks: …/locks/running holds an
    unreadable database ([Errno 21] Is a directory …)", and doctor said nothing."""
    blog = make_blog(tmp_path)
    assert cli(blog, tmp_path, "tasks").returncode == 0
    running = blog / ".skillrt" / "locks" / "running"
    for shard in "0123456789abcdef":  # whichever a task's id picks
        lock = running / f"running-{shard}.lock"
        lock.unlink(missing_ok=True)
        lock.mkdir(parents=True)
    doctor = cli(blog, tmp_path, "doctor", "--json", "--no-generate")
    named = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "run locks"]
    assert named and all("is a folder" in c["value"] for c in named)
    answers = article("Rust Ownership", ["Owners own.", "Moves."])
    done = cli(
        blog, tmp_path, "run", "--json", "write an article about Rust ownership", answers=answers
    )
    assert done.returncode == 0, done.stderr
    assert "skillrt: warning: run lock" in done.stderr and "moved to" in done.stderr
    assert any(lock.is_file() for lock in running.glob("running-*.lock"))  # the one it used
    assert list((blog / ".skillrt" / "locks" / "quarantine").iterdir())  # kept, not deleted
    assert cli(blog, tmp_path, "tasks").returncode == 0


# --- the state folder deleted or cut short while running: made again, nothing lost -----------


async def test_a_deleted_state_folder_is_made_again_and_loses_nothing(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    held = await paused_task(blog)
    rt = runtime(blog)
    await rt.initialize()
    state = rt.config.state_path
    shutil.rmtree(state)
    done = await rt.run_skill("PauseAfterOne", {"topic": "after"})  # raised OSError before
    assert done.state == "COMPLETED"
    paused = await rt.run_skill("PauseAfterOne", {"topic": "pause"})
    assert paused.data["outcome"] == "paused"
    await rt.close()
    assert (state / ".gitignore").is_file() or (state / "checkpoints").is_dir()

    again = runtime(blog)
    await again.initialize()
    resumable = {t.id for t in again.get_resumable_tasks()}
    assert resumable == {held, paused.task_id}  # the one from before the deletion too
    await again.close()


def test_a_deleted_state_folder_through_the_api_and_the_cli(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    out = child(blog, "delete", "running")
    assert [r["state"] for r in out["replies"][:2]] == ["COMPLETED", "COMPLETED"]
    assert (blog / ".skillrt").is_dir()
    shutil.rmtree(blog / ".skillrt")
    answers = article("Rust Ownership", ["Owners own.", "Moves."])
    done = cli(
        blog, tmp_path, "run", "--json", "write an article about Rust ownership", answers=answers
    )
    assert done.returncode == 0


async def test_a_checkpoint_database_cut_to_0_bytes_while_open(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    held = await paused_task(blog)
    rt = runtime(blog)
    await rt.initialize()
    db = checkpoint_db(blog)
    os.truncate(db, 0)
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    started = time.monotonic()
    done = await rt.run_skill("PauseAfterOne", {"topic": "after"})
    assert done.state == "COMPLETED"
    await rt.close()
    again = runtime(blog)
    await again.initialize()
    assert time.monotonic() - started < 10  # reopening never waits on a stale lock
    assert [t.id for t in again.get_resumable_tasks()] == [held]
    await again.close()


def test_a_checkpoint_database_cut_short_through_the_api(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    out = child(blog, "truncate", "running")
    assert [r["state"] for r in out["replies"][:2]] == ["COMPLETED", "COMPLETED"]


# --- a full disk, a read-only folder, a file in place of the folder: clear errors ------------


def test_a_full_disk_gives_clear_replies_and_never_claims_a_pause(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    out = child(blog, "full", "running")
    for message in out["replies"][:2]:
        assert message["state"] == "ERROR" and message["outcome"] == "storage"
        assert "full" in message["content"] and "Free some space" in message["content"]
        one_paragraph(message["content"])
    assert out["replies"][2]["content"]  # a chat input still gets an answer

    paused = child(blog, "pause_full", "running")
    first = paused["replies"][0]
    assert first["state"] == "ERROR" and first["outcome"] == "storage"
    assert "could not be saved" in first["content"]
    assert "paused" not in first["content"].lower() and "resume it" not in first["content"]
    assert paused["resumable"] == []

    closed = child(blog, "close_full", "running")
    assert closed["closed"]
    (last,) = closed["replies"]
    assert "resume" not in last["content"].lower() or "could not be" in last["content"]

    at_start = child(blog, "none", "start", preexec=disk_full)
    assert at_start["init"] == "StoreUnavailable"
    assert "full" in at_start["message"]


def test_a_full_disk_through_the_cli(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    assert cli(blog, tmp_path, "tasks").returncode == 0
    answers = article("Rust Ownership", ["Owners own.", "Moves."])
    done = cli(
        blog,
        tmp_path,
        "run",
        "write an article about Rust ownership",
        preexec=disk_full,
        answers=answers,
    )
    assert done.returncode == 74
    assert "full" in done.stderr
    one_paragraph(done.stderr)


@pytest.mark.usefixtures("root_can_be_limited")
def test_a_read_only_state_folder_through_the_api(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    out = child(blog, "read_only", "running", preexec=without_root_powers)
    for message in out["replies"][:2]:
        assert message["state"] == "ERROR" and message["outcome"] == "storage"
        assert "cannot be written" in message["content"] and "state_dir" in message["content"]
        assert str(blog) not in message["content"]
    writable(blog / ".skillrt")
    assert child(blog, "none", "start")["replies"][0]["state"] == "COMPLETED"
    read_only(blog / ".skillrt")
    try:
        at_start = child(blog, "none", "start", preexec=without_root_powers)
    finally:
        writable(blog / ".skillrt")
    assert at_start["init"] == "StoreUnavailable"
    assert "cannot be written" in at_start["message"]


@pytest.mark.usefixtures("root_can_be_limited")
def test_a_read_only_state_folder_through_the_cli(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    assert cli(blog, tmp_path, "tasks").returncode == 0
    read_only(blog / ".skillrt")
    try:
        answers = article("Rust Ownership", ["Owners own.", "Moves."])
        done = cli(
            blog,
            tmp_path,
            "run",
            "write an article about Rust ownership",
            preexec=without_root_powers,
            answers=answers,
        )
        listed = cli(blog, tmp_path, "tasks", preexec=without_root_powers)
        doctor = cli(blog, tmp_path, "doctor", "--json", preexec=without_root_powers)
    finally:
        writable(blog / ".skillrt")
    assert done.returncode == 74 and listed.returncode == 74
    assert "cannot be written" in done.stderr
    one_paragraph(done.stderr)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["state folder"]["status"] == "fail"
    assert "not writable" in checks["state folder"]["value"]


async def test_a_file_in_place_of_the_state_folder(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    (blog / ".skillrt").write_text("not a folder")
    rt = runtime(blog)
    from skillrt.exceptions import StoreUnavailable

    with pytest.raises(StoreUnavailable, match="is a file, not a folder"):
        await rt.initialize()
    done = cli(blog, tmp_path, "tasks")
    assert done.returncode == 74 and "is a file, not a folder" in done.stderr
    doctor = cli(blog, tmp_path, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["state folder"]["status"] == "fail"


# --- close() closes every connection --------------------------------------------------------


def open_fds() -> int:
    """The process's open file descriptors, once garbage (earlier tests' included) is gone:
    a handle that outlives close() is still referenced, so it is still counted."""
    gc.collect()
    return len(os.listdir("/proc/self/fd"))


async def test_close_closes_every_sqlite_connection(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    counts = []
    for n in range(3):
        rt = runtime(blog)
        await rt.initialize()
        for i in range(3):  # commits run in worker threads
            await rt.run_skill("PauseAfterOne", {"topic": f"t{n}-{i}"})
        await rt.close()
        counts.append(open_fds())
    assert counts[0] == counts[1] == counts[2], counts


# --- the post index: a cache of the blog, rebuilt ------------------------------------------


def test_a_post_index_damaged_while_open_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    from skillrt.blog.posts import PostIndex

    blog = make_blog(tmp_path)
    db_path = tmp_path / "index" / "posts.sqlite3"
    index = PostIndex(db_path, blog)
    index.refresh()
    assert index.search("asyncio")
    other = sqlite3.connect(db_path)  # another program drops the table under it
    other.execute("DROP TABLE posts")
    other.commit()
    other.close()
    (blog / "posts" / "new.md").write_text("# New\n\nabout asyncio\n", encoding="utf-8")
    notes: list[str] = []
    stop = on_moved_aside(notes.append)
    try:
        index.refresh()  # raised "no such table" before; now made again on a fresh index
    finally:
        stop()
    assert (tmp_path / "index" / "posts.sqlite3.corrupt").exists()  # moved aside
    (note,) = notes
    assert "post index" in note and "posts.sqlite3.corrupt" in note
    assert index.search("asyncio")  # filled again from the posts
    index.close()


def garble(path: Path) -> None:
    """A byte in every 97 made random from byte 200 on: pages SQLite finds malformed."""
    data = bytearray(path.read_bytes())
    rng = random.Random(1)
    for at in range(200, len(data), 97):
        data[at] = rng.randrange(256)
    path.write_bytes(bytes(data))


def not_utf8_path(path: Path) -> None:
    data = path.read_bytes()
    assert b"posts/python-asyncio.md" in data
    path.write_bytes(data.replace(b"posts/python-asyncio.md", b"posts/python-asynci\xff.md"))


@pytest.mark.parametrize("damage", ["garbled", "path_not_utf8"])
@pytest.mark.parametrize("which", ["posts.sqlite3", "graph.sqlite3"])
def test_a_damaged_post_index_is_named_and_rebuilt_by_every_command(
    tmp_path: Path, which: str, damage: str
) -> None:
    """Garbled pages, or a path that is not UTF-8: skillrt doctor said "ok", skillrt index
    exited 74 with Python's "Could not decode to UTF-8 column 'path'", and a task that read
    the index failed with "database disk image is malformed"."""
    blog = make_blog(tmp_path)
    assert cli(blog, tmp_path, "index").returncode == 0
    db = blog / ".skillrt" / "index" / which
    {"garbled": garble, "path_not_utf8": not_utf8_path}[damage](db)
    doctor = cli(blog, tmp_path, "doctor", "--json", "--no-generate")
    found = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}["index"]
    assert found["status"] == "warn" and "is damaged" in found["value"], found
    assert which in found["value"] and "skillrt index" in found["value"]
    done = cli(blog, tmp_path, "index")
    assert done.returncode == 0, done.stderr
    assert "skillrt: warning:" in done.stderr and f"{which}.corrupt" in done.stderr
    assert "Could not decode" not in done.stderr and "Error" not in done.stderr
    again = cli(blog, tmp_path, "doctor", "--json", "--no-generate")
    found = {c["name"]: c for c in json.loads(again.stdout)["checks"]}["index"]
    assert found["status"] == "ok" and "posts indexed" in found["value"]


def test_a_post_index_found_damaged_by_a_read_is_rebuilt_and_the_read_answers(
    tmp_path: Path,
) -> None:
    from skillrt.blog.posts import PostIndex

    blog = make_blog(tmp_path)
    index_path = tmp_path / "index" / "posts.sqlite3"
    index = PostIndex(index_path, blog)
    index.refresh()
    index.close()
    not_utf8_path(index_path)
    index = PostIndex(index_path, blog)  # opens: the damage is in a row, found when read
    notes: list[str] = []
    stop = on_moved_aside(notes.append)
    try:
        hits = index.search("asyncio")  # raised "Could not decode to UTF-8 column" before
    finally:
        stop()
        index.close()
    assert hits and notes and "posts.sqlite3.corrupt" in notes[0]


def test_a_disk_that_fills_while_the_cli_runs_a_task_ends_it_clearly(tmp_path: Path) -> None:
    """The log file is in the state folder, on the disk that fills: a log line written where
    the failed commit was settled raised there, its waiters were never woken, and `skillrt
    run` hung, printing "--- Logging error ---" tracebacks. (The file-size limit is set on
    the running process, after its log file is open: as a disk that fills.)"""
    blog = make_blog(tmp_path)
    answers = article("Rust Ownership", ["Owners own.", "Moves."])
    answers[2] = {"$answer": answers[2], "$delay": 3}  # section 1: the disk fills meanwhile
    script = write_script(tmp_path / "script.json", answers)
    child = subprocess.Popen(
        [sys.executable, "-m", "skillrt", "run", "write an article about Rust ownership"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=cli_env(blog, script),
    )
    try:
        assert child.stderr is not None
        for line in child.stderr:  # the progress lines
            if "section 1" in line:
                break
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        resource.prlimit(child.pid, resource.RLIMIT_FSIZE, (0, hard))
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 74, out + err
    assert "is full" in out and "Traceback" not in err and "Logging error" not in err, err
    assert not list((blog / "posts").glob("rust-ownership*"))
