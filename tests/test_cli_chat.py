"""``skillrt chat`` in a real terminal (a pty driven by pexpect), with the scripted model.

Ctrl-C and Ctrl-D are sent as the terminal's own characters, so they arrive as a user's
keys would: SIGINT while a task runs (the terminal is in cooked mode), a key at the prompt.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.cli_support import article, cli_env, make_blog, write_script

PROMPT = "› "
TIMEOUT = 30


def spawn_chat(env: dict[str, str], cwd: Path) -> pexpect.spawn:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "skillrt", "chat"],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(40, 100),
    )
    child.logfile_read = sys.stdout  # shown by pytest when a test fails
    return child


def quit_with_ctrl_d(child: pexpect.spawn) -> int:
    """Ctrl-D at the prompt. A dumb terminal prints the prompt before switching to raw mode,
    so a Ctrl-D sent at once may reach the cooked terminal; send it until the REPL ends."""
    for _ in range(20):
        time.sleep(0.2)
        child.sendeof()
        if child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=1) == 0:
            break
    child.close()
    assert child.exitstatus is not None, "the REPL did not end"
    return int(child.exitstatus)


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return make_blog(tmp_path)


def test_a_chat_session_writes_cancels_and_quits(blog: Path, tmp_path: Path) -> None:
    slow = article("Go Channels", ["never sent", "never sent"])[:2]
    slow[1] = {"$answer": "never sent", "$delay": 60}
    answers = [
        *article("Rust Ownership", ["Every value has one owner.", "Moves transfer it."]),
        *slow,  # cancelled while its first section is being written
        *article("SQLite Triggers", ["Triggers run SQL.", "On insert."]),
    ]
    script = write_script(tmp_path / "script.json", answers, chunk_delay=0.01)
    child = spawn_chat(cli_env(blog, script), tmp_path)

    child.expect("model scripted")
    child.expect(f"blog: {blog.resolve()}")
    child.expect(PROMPT)

    child.sendline("write an article about Rust ownership")
    child.expect(r"\[1/5\] Finding related posts")
    child.expect(r"\[3/5\] Writing section 1/2")
    child.expect("Every value has one owner")  # the streamed section
    child.expect(r"\[5/5\] Updating the knowledge graph")
    child.expect("posts/rust-ownership.md")
    child.expect("tokens · \\$0.0000 · [0-9.]+ s · completed")
    child.expect(PROMPT)
    assert (blog / "posts" / "rust-ownership.md").read_text().startswith("---\n")

    child.sendline("/tasks")
    child.expect("No resumable tasks.")
    child.expect(PROMPT)

    child.sendline("write an article about Go channels")
    child.expect(r"Writing section 1/2")
    started = time.monotonic()
    child.sendintr()
    child.expect("Task cancelled.")
    child.expect("· cancelled")
    assert time.monotonic() - started < 10  # the 60 s answer was cut short
    child.expect(PROMPT)
    assert not list((blog / "posts").glob("go-channels*"))

    child.sendline("/tasks")
    child.expect("No resumable tasks.")  # cancelled tasks are not offered for resume
    child.expect(PROMPT)

    child.sendline("write an article about SQLite triggers")  # the REPL goes on
    child.expect("posts/sqlite-triggers.md")
    child.expect("completed")
    child.expect(PROMPT)

    child.sendline("/cost")
    child.expect("This session: 9 model calls")
    child.expect(PROMPT)

    assert quit_with_ctrl_d(child) == 0
    history = (blog / ".skillrt" / "input-history").read_text(encoding="utf-8")
    assert "write an article about Rust ownership" in history  # kept for the next run


def test_ctrl_c_at_an_empty_prompt_quits(blog: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.json", [])
    child = spawn_chat(cli_env(blog, script), tmp_path)
    child.expect(PROMPT)
    # One Ctrl-C is enough, even when it reaches a dumb terminal still in cooked mode (then
    # it is a SIGINT, which the REPL turns into the same interrupt of the prompt).
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_ctrl_c_while_the_chat_starts_quits_at_once(blog: Path, tmp_path: Path) -> None:
    """Ctrl-C while the model loaded was kept for the first prompt: the load went on, the
    banner came, and only then did the chat quit. Now it quits at once (130), no prompt."""
    from tests.cli_support import LOADING_ENV

    loading = tmp_path / "loading"
    env = cli_env(blog, tmp_path / "unused.json", SKILLRT_LLM__PROVIDER="python",
                  SKILLRT_LLM__FACTORY="tests.cli_support:slow_loading_model",
                  PYTHONPATH=str(Path(__file__).resolve().parent.parent),
                  **{LOADING_ENV: str(loading)})  # fmt: skip
    child = spawn_chat(env, tmp_path)
    deadline = time.monotonic() + TIMEOUT
    while not loading.exists():
        assert child.isalive() and time.monotonic() < deadline, child.before
        time.sleep(0.05)
    started = time.monotonic()
    child.sendintr()
    child.expect(pexpect.EOF, timeout=20)  # not after the minute the load would take
    child.close()
    assert time.monotonic() - started < 20
    assert PROMPT not in (child.before or "")
    assert child.exitstatus == 130


def test_ctrl_c_on_a_typed_line_clears_it(blog: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.json", [])
    child = spawn_chat(cli_env(blog, script), tmp_path)
    child.expect(PROMPT)
    time.sleep(0.5)  # the prompt is in raw mode: Ctrl-C is a key
    child.send("half a request")
    child.expect("half a request")
    child.sendintr()
    time.sleep(0.5)
    assert child.isalive()  # the line was cleared, the chat goes on
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_crashed_task_is_offered_at_start_and_resumed(blog: Path, tmp_path: Path) -> None:
    first = article("Rust Ownership", ["One.", "never sent"])
    first[2] = {"$answer": "never sent", "$delay": 60}
    child = spawn_chat(cli_env(blog, write_script(tmp_path / "a.json", first)), tmp_path)
    child.expect(PROMPT)
    child.sendline("write an article about Rust ownership")
    child.expect("Writing section 2/2")
    child.kill(9)  # the terminal closes, the machine crashes: no clean-up
    child.close()

    rest = ["Two, after the crash.", first[3]]
    child = spawn_chat(cli_env(blog, write_script(tmp_path / "b.json", rest)), tmp_path)
    child.expect("1 unfinished task can be resumed")
    child.expect(r"([0-9a-f]{16}) +interrupted +WriteArticle")
    task_id = child.match.group(1)
    child.expect(PROMPT)
    child.sendline(f"/resume {task_id[:4]}")
    child.expect(f"Resuming {task_id}")
    child.expect("posts/rust-ownership.md")
    child.expect("completed")
    child.expect(PROMPT)
    text = (blog / "posts" / "rust-ownership.md").read_text(encoding="utf-8")
    assert "One." in text and "Two, after the crash." in text
    assert quit_with_ctrl_d(child) == 0


def test_live_terminal_session(blog: Path, tmp_path: Path) -> None:
    """An xterm: progress bar and streamed text in a live region; Ctrl-C still cancels."""
    slow = article("Slow", ["x", "x"])[:2]
    slow[1] = {"$answer": "x", "$delay": 60}
    answers = [*article("Docker Basics", ["Images.", "Containers."]), *slow]
    script = write_script(tmp_path / "script.json", answers, chunk_delay=0.02)
    env = cli_env(blog, script, TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    child = spawn_chat(env, tmp_path)
    child.expect("Ctrl-D quits")
    time.sleep(0.3)
    child.sendline("write an article about Docker basics")
    child.expect("Writing section")  # the live region's progress line
    child.expect("posts/docker-basics.md")
    child.expect("completed")
    time.sleep(0.3)
    child.sendline("write an article about slow things")
    child.expect("Writing section 1/2")
    child.sendintr()
    child.expect("Task cancelled.")
    child.expect("cancelled")
    assert quit_with_ctrl_d(child) == 0


def test_ctrl_z_pauses_a_task_and_resume_continues_it(blog: Path, tmp_path: Path) -> None:
    answers = article("Rust Ownership", ["One.", "Two."])
    answers[1] = {"$answer": "One.", "$delay": 1.5}  # the pause lands after this section
    child = spawn_chat(cli_env(blog, write_script(tmp_path / "s.json", answers)), tmp_path)
    child.expect(PROMPT)
    child.sendline("write an article about Rust ownership")
    child.expect("Writing section 1/2")
    child.sendcontrol("z")
    child.expect("Pausing at the next step")
    child.expect(r"Task paused \(([0-9a-f]{16})\)")
    task_id = child.match.group(1)
    child.expect(PROMPT)
    child.sendline("/tasks")
    child.expect(f"{task_id} +paused +WriteArticle")
    child.expect(PROMPT)
    child.sendline(f"/resume {task_id[:3]}")
    child.expect("Writing section 2/2")
    child.expect("posts/rust-ownership.md")
    child.expect("completed")
    child.expect(PROMPT)
    assert quit_with_ctrl_d(child) == 0
    text = (blog / "posts" / "rust-ownership.md").read_text(encoding="utf-8")
    assert "One." in text and "Two." in text


def test_a_question_is_answered_cancelled_or_kept_for_later(blog: Path, tmp_path: Path) -> None:
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    child = spawn_chat(env, tmp_path)
    child.expect(PROMPT)
    child.sendline("delete posts/docker-basics.md")
    child.expect("Answer yes or no")
    child.expect(f"answer {PROMPT}")  # too long for the prompt: shown above it
    child.sendline("no")
    child.expect("was not deleted")
    child.expect(PROMPT)

    child.sendline("delete posts/docker-basics.md")
    child.expect(f"answer {PROMPT}")
    time.sleep(0.5)  # raw mode: Ctrl-C is a key, and cancels the task that asked
    child.sendintr()
    child.expect(r"Cancelled task [0-9a-f]{16}")
    child.expect(PROMPT)

    child.sendline("delete posts/docker-basics.md")
    child.expect(f"answer {PROMPT}")
    assert quit_with_ctrl_d(child) == 0  # quitting keeps the question for later
    assert (blog / "posts" / "docker-basics.md").is_file()

    child = spawn_chat(env, tmp_path)
    child.expect("1 unfinished task can be resumed")
    child.expect("interrupted +DeleteArticle")
    child.expect(PROMPT)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_new_request_typed_at_a_question_says_the_question_was_left(
    blog: Path, tmp_path: Path
) -> None:
    """A new request typed where a yes or no was asked ends the task that asked, nothing
    more done: the chat said nothing of it, so a change shown for a yes looked as if it might
    have been written. A line now says the question was left, before the new request runs;
    an answer says no such thing."""
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    child = spawn_chat(env, tmp_path)
    child.expect(PROMPT)
    child.sendline("delete posts/docker-basics.md")
    child.expect(f"answer {PROMPT}")
    child.sendline("how many words is posts/git-workflow.md?")
    child.expect(
        r"posts/docker-basics\.md`\)\?” was left\s+unanswered: its task stopped,\s+nothing"
    )
    child.expect(r"words\s+of\s+prose")
    child.expect(PROMPT)
    child.sendline("delete posts/docker-basics.md")
    child.expect(f"answer {PROMPT}")
    child.sendline("no")
    child.expect("was not deleted")
    child.expect(PROMPT)
    assert "left unanswered" not in (child.before or "")
    assert quit_with_ctrl_d(child) == 0
    assert (blog / "posts" / "docker-basics.md").is_file()


def test_unclear_input_shows_numbered_choices_and_a_model_only_search_asks(
    blog: Path, tmp_path: Path
) -> None:
    answers = [
        {"type": "UNKNOWN", "confidence": 0.0},
        {"type": "RESEARCH_WEB", "confidence": 1.0, "parameters": {"topic": "flux"}},
    ]
    # The table and the model alone (with the classifier, a low-trust model is not asked).
    script = write_script(tmp_path / "s.json", answers)
    env = cli_env(blog, script, SKILLRT_LLM__ROUTER_TRUST="low", SKILLRT_INTENT_CLASSIFIER="false")
    child = spawn_chat(env, tmp_path)
    child.expect(PROMPT)
    child.sendline("blorp the flux capacitor")
    child.expect("Reply with a number")  # every choice is shown, not only the first line
    child.expect(r"1\.? Answer from your blog")  # rendered as a Markdown list
    child.expect(r"2\.? Search the web")
    child.expect(r"3\.? Write an article: blorp the flux capacitor\s+\n")
    child.expect("Or just type a new request")
    child.expect(PROMPT)
    child.sendline("no")
    child.expect("OK, I won't.")
    child.expect(PROMPT)
    child.sendline("blorp the flux capacitor again")
    child.expect(r"Search the web for “flux”\? \(y/n\)")
    child.expect(PROMPT)
    child.sendline("n")
    child.expect("OK, I won't.")
    child.expect(PROMPT)
    assert quit_with_ctrl_d(child) == 0


def test_an_input_history_that_cannot_be_kept_is_warned_of_and_the_chat_runs(
    blog: Path, tmp_path: Path
) -> None:
    """A folder in place of the input history file: prompt_toolkit printed a traceback and
    "Press ENTER to continue..." at each line."""
    (blog / ".skillrt" / "input-history").mkdir(parents=True)
    script = write_script(tmp_path / "script.json", [])
    child = spawn_chat(cli_env(blog, script), tmp_path)
    child.expect("the input history .*input-history cannot be used")
    child.expect(PROMPT)
    child.sendline("/tasks")
    child.expect("No resumable tasks.")
    seen = child.before or ""
    child.expect(PROMPT)
    assert "Traceback" not in seen and "Press ENTER" not in seen, seen
    assert quit_with_ctrl_d(child) == 0
