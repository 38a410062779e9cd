"""``skillrt run / tasks / resume / abandon / doctor / index`` as real processes.

Each test runs ``python -m skillrt`` on a copy of the fixture blog with the ``scripted``
provider (a JSON script of model answers in the test's folder): no network model.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.cli_support import (
    article,
    cli_env,
    make_blog,
    read_until,
    skillrt,
    start_skillrt,
    write_script,
)


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return make_blog(tmp_path)


def test_run_writes_an_article_and_prints_the_message_as_json(blog: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.json", article("Rust Ownership", ["Owners own.", "Moves."]))
    done = skillrt(
        "run",
        "--json",
        "write an article about Rust ownership",
        env=cli_env(blog, script),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    message = json.loads(done.stdout)
    assert message["state"] == "COMPLETED"
    assert message["data"]["outcome"] == "done"
    path = blog / message["data"]["path"]
    assert path.is_file()
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n") and "Owners own." in text and "Moves." in text
    # progress went to stderr, not into the JSON
    assert "[1/5]" in done.stderr and "[5/5]" in done.stderr


def test_run_prints_markdown_and_a_cost_line(blog: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.json", article("Go Channels", ["Send.", "Receive."]))
    done = skillrt(
        "run", "write an article about Go channels", env=cli_env(blog, script), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "posts/go-channels.md" in done.stdout
    assert "tokens · $" in done.stderr and "completed" in done.stderr


def test_run_exit_code_1_when_the_task_fails(blog: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.json", [])  # the model has nothing to say
    done = skillrt(
        "run",
        "--json",
        "write an article about Rust ownership",
        env=cli_env(blog, script),
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    message = json.loads(done.stdout)
    assert message["state"] == "ERROR"
    assert not list((blog / "posts").glob("rust-ownership*.md"))


def test_run_exit_codes_for_small_talk_and_unclear_requests(blog: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.json", [{"type": "UNKNOWN", "confidence": 0.1}] * 3)
    done = skillrt("run", "--json", "blorp", env=cli_env(blog, script), cwd=tmp_path)
    # One short word that no pattern knows is no task, not even a chat (issue 13): a short
    # reply, exit 2. Greetings and thanks do go to the Chat skill.
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["data"]["outcome"] == "chat"
    hello = skillrt("run", "--json", "hello", env=cli_env(blog, script), cwd=tmp_path)
    assert hello.returncode == 0, hello.stderr
    assert json.loads(hello.stdout)["data"]["chat"] is True
    unclear = skillrt("run", "--json", "blorp the flux", env=cli_env(blog, script), cwd=tmp_path)
    assert unclear.returncode == 3, unclear.stderr  # numbered choices wait for an answer
    assert "1. " in json.loads(unclear.stdout)["content"]
    empty = skillrt("run", "   ", env=cli_env(blog, script), cwd=tmp_path)
    assert empty.returncode == 2


def test_ctrl_c_cancels_run_with_exit_code_130(blog: Path, tmp_path: Path) -> None:
    answers = article("Slow Topic", ["first", "second"])
    answers[1] = {"$answer": "first", "$delay": 60}
    script = write_script(tmp_path / "s.json", answers)
    proc = start_skillrt(
        "run",
        "--json",
        "write an article about slow topic",
        env=cli_env(blog, script),
        cwd=tmp_path,
    )
    try:
        read_until(proc.stderr, "Writing section 1")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert json.loads(out)["state"] == "CANCELLED"
    assert not list((blog / "posts").glob("slow-topic*.md"))
    listed = skillrt("tasks", "--json", env=cli_env(blog, script), cwd=tmp_path)
    assert json.loads(listed.stdout) == []  # a cancelled task is not offered for resume


def test_a_crashed_run_is_listed_and_resumed_without_repeating_steps(
    blog: Path, tmp_path: Path
) -> None:
    first = article("Rust Ownership", ["Section one, paid for once.", "never sent"])
    first[2] = {"$answer": "never sent", "$delay": 120}  # section 2 hangs: the crash hits here
    env = cli_env(blog, write_script(tmp_path / "first.json", first))
    proc = start_skillrt("run", "write an article about Rust ownership", env=env, cwd=tmp_path)
    try:
        read_until(proc.stderr, "Writing section 2")
        proc.kill()  # SIGKILL: no clean-up at all
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.communicate()

    # Exactly the answers of the steps that were not done: section 2, then the entities.
    # A repeated outline or section 1 would use them up and the task would fail.
    rest = ["Section two, after the crash.", first[3]]
    env = cli_env(blog, write_script(tmp_path / "rest.json", rest))
    listed = skillrt("tasks", "--json", env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    tasks = json.loads(listed.stdout)
    assert len(tasks) == 1
    task = tasks[0]
    assert task["skill"] == "WriteArticle"
    assert task["error_reason"] == "CRASH"
    assert task["steps_done"] >= 3  # context, outline, section:1
    table = skillrt("tasks", env=env, cwd=tmp_path)
    assert task["id"] in table.stdout and "interrupted" in table.stdout

    resumed = skillrt("resume", "--json", task["id"][:6], env=env, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    message = json.loads(resumed.stdout)
    assert message["state"] == "COMPLETED"
    text = (blog / message["data"]["path"]).read_text(encoding="utf-8")
    assert "Section one, paid for once." in text
    assert "Section two, after the crash." in text
    assert "never sent" not in text
    after = skillrt("tasks", "--json", env=env, cwd=tmp_path)
    assert json.loads(after.stdout) == []


def test_run_with_a_file_outside_the_blog_is_a_usage_error(blog: Path, tmp_path: Path) -> None:
    """``skillrt run --file /etc/passwd`` was refused by the task and exited 1, the status of
    a task that failed, while ``skillrt undo /etc/passwd`` exits 2: a path outside the blog
    is bad usage, one line on stderr, no task started (``--json`` too: nothing on stdout)."""
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    for path in ("../x.md", "/etc/passwd"):
        for flags in ((), ("--json",)):
            done = skillrt("run", "fix the grammar", "--file", path, *flags, env=env, cwd=blog)
            assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
            assert done.stderr.startswith("skillrt: error: path not allowed"), done.stderr
            assert done.stdout == ""


def test_resume_and_abandon_refuse_unknown_ids(blog: Path, tmp_path: Path) -> None:
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    for command in ("resume", "abandon"):
        done = skillrt(command, "nope", env=env, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.strip() == "skillrt: error: no resumable task 'nope' (resumable: none)"


def test_replay_refuses_an_unknown_task_id_as_bad_usage(blog: Path, tmp_path: Path) -> None:
    # It was a task ending in ERROR, exit 1; docs/cli.md: "exit status as for run", where an
    # unknown task id is 2.
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    for task_id in ("feedfacefeedface", " "):
        done = skillrt("replay", task_id, env=env, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        expected = f"skillrt: error: no recorded browsing task {task_id.strip()!r} to replay"
        assert done.stderr.strip() == expected
        assert done.stdout == ""


def test_abandon_a_crashed_task(blog: Path, tmp_path: Path) -> None:
    answers = article("Abandoned", ["one", "two"])
    answers[1] = {"$answer": "one", "$delay": 120}
    env = cli_env(blog, write_script(tmp_path / "s.json", answers))
    proc = start_skillrt("run", "write an article about abandoned things", env=env, cwd=tmp_path)
    try:
        read_until(proc.stderr, "Writing section 1")
        proc.kill()
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.communicate()
    [task] = json.loads(skillrt("tasks", "--json", env=env, cwd=tmp_path).stdout)
    done = skillrt("abandon", task["id"][:5], env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"abandoned {task['id']}"
    assert json.loads(skillrt("tasks", "--json", env=env, cwd=tmp_path).stdout) == []


def test_bad_config_is_one_clear_line_and_exit_2(blog: Path, tmp_path: Path) -> None:
    env = cli_env(blog, tmp_path / "missing.json")
    (tmp_path / "skillrt.toml").write_text('[llm]\ntimeout_s = "soon"\n')
    for args in (["run", "hello"], ["chat"], ["tasks"], ["doctor"]):
        done = skillrt(*args, env=env, cwd=tmp_path, input="")
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("skillrt: error: ")
        assert "skillrt.toml: llm.timeout_s: expected" in lines[0]
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--bogus"], "No such option: --bogus (see skillrt -h)"),
        (
            ["tasks", "--jsn"],
            "No such option: --jsn (Possible options: --json) (see skillrt tasks -h)",
        ),
        (["run"], "Missing argument 'text'. (see skillrt run -h)"),
        (
            ["serve", "--port", "-5"],
            "Invalid value for '--port' / '-p': Input should be greater than or equal to 0"
            " (see skillrt serve -h)",
        ),
    ],
)
def test_a_command_line_the_parser_refuses_is_one_line_and_exit_2(
    blog: Path, tmp_path: Path, args: list[str], said: str
) -> None:
    # It was Typer's usage line, a hint and the error in a box 80 columns wide (a long
    # message broken inside it), where every other usage error is one line.
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    done = skillrt(*args, env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"skillrt: error: {said}\n"
    assert done.stdout == ""


def test_a_log_file_that_is_a_folder_is_one_clear_line_and_exit_2(
    blog: Path, tmp_path: Path
) -> None:
    # It was dropped without a word: the command ran, and no log line was kept anywhere.
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    (tmp_path / "logs").mkdir()
    (tmp_path / "skillrt.toml").write_text('log_file = "logs"\n')
    for args in (["tasks"], ["run", "hello"]):
        done = skillrt(*args, env=env, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("skillrt: error: "), done.stderr
        assert "log_file: expected" in done.stderr
        assert "a file, not a folder" in done.stderr


def test_a_missing_model_script_is_a_clear_error(blog: Path, tmp_path: Path) -> None:
    env = cli_env(blog, tmp_path / "missing.json")
    done = skillrt("run", "write an article about Rust", env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("skillrt: error: cannot read model script")
    assert "Traceback" not in done.stderr


def test_a_missing_root_is_a_clear_error(tmp_path: Path) -> None:
    env = cli_env(tmp_path, tmp_path / "s.json")
    done = skillrt("tasks", "--root", str(tmp_path / "nowhere"), env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert "is not a folder" in done.stderr


def test_root_and_posts_dir_before_the_command_hold_for_it(blog: Path, tmp_path: Path) -> None:
    # `skillrt -C DIR tasks` and a bare `skillrt -C DIR` (README: "`skillrt chat` (or
    # `skillrt`, `-C DIR` for another folder)") failed "No such option: -C", exit 2.
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    del env["SKILLRT_CONTENT_ROOT"]
    listed = skillrt("-C", "blog", "tasks", "--json", env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []
    n = len(list((blog / "posts").rglob("*.md")))
    indexed = skillrt(
        "--root", str(blog), "--posts-dir", "posts", "index", "--json", env=env, cwd=tmp_path
    )
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["posts"] == n
    blank = skillrt("--posts-dir", " ", "-C", "blog", "index", env=env, cwd=tmp_path)
    assert blank.returncode == 2
    assert blank.stderr.startswith("skillrt: error: --posts-dir needs a folder")
    # The command's own -C wins; after the command it works as before.
    for args in (["-C", "nowhere", "tasks", "-C", "blog"], ["tasks", "-C", "blog"]):
        done = skillrt(*args, env=env, cwd=tmp_path)
        assert done.returncode == 0, (args, done.stderr)
        assert done.stdout.strip() == "No resumable tasks."
    chat = skillrt("-C", "blog", env=env, cwd=tmp_path, input="")
    assert chat.returncode == 0, chat.stderr
    assert f"blog: {blog.resolve()}" in chat.stdout
    missing = skillrt("-C", "nowhere", env=env, cwd=tmp_path, input="")
    assert missing.returncode == 2
    assert missing.stderr.strip() == "skillrt: error: the content root 'nowhere' is not a folder"


def test_ctrl_c_while_run_opens_the_blog_starts_no_task(blog: Path, tmp_path: Path) -> None:
    """Ctrl-C while ``skillrt run`` opened the runtime (here an MCP server of
    ``[mcp.servers]`` that is slow to answer) aborted no task, since none ran yet: it said
    "Cancelling the task…", and the task then ran to its end (exit 0, a minute later)."""
    import sys
    import time

    started = tmp_path / "server-started"
    slow = f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(60)"
    (blog / "skillrt.toml").write_text(
        f"[mcp.servers.slow]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = ['-c', {json.dumps(slow)}]\ntimeout_s = 60\n",
        encoding="utf-8",
    )
    env = cli_env(blog, write_script(tmp_path / "s.json", ["a summary"]))
    child = start_skillrt("run", "summarize posts/docker-basics.md", env=env, cwd=blog)
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert child.poll() is None and time.monotonic() < deadline, child.stderr
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)  # not after the server's minute
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, (child.returncode, out, err)
    assert "a summary" not in out and "Summarising" not in err  # no task started


def test_index_of_a_posts_folder_that_does_not_exist_says_so(blog: Path, tmp_path: Path) -> None:
    """``skillrt index --posts-dir nope`` said "0 posts indexed" and nothing of why. A new
    blog's folder may not exist yet (the first write makes it): a hint, exit status 0."""
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    for args in (["index"], ["index", "--json"]):
        done = skillrt(*args, "--posts-dir", "nope", env=env, cwd=blog)
        assert done.returncode == 0, done.stderr
        assert "hint: nope/ does not exist yet" in done.stderr, done.stderr
        assert "--posts-dir" in done.stderr
    assert json.loads(done.stdout)["posts"] == 0
    (blog / "empty").mkdir()
    empty = skillrt("index", "--posts-dir", "empty", env=env, cwd=blog)
    assert "hint: empty/ holds no Markdown files yet" in empty.stderr
    found = skillrt("index", env=env, cwd=blog)  # the posts: no hint
    assert found.returncode == 0 and "hint" not in found.stderr, found.stderr
    # A typo removes nothing: "14 removed" left every session an empty index till the next.
    n = len(list((blog / "posts").rglob("*.md")))
    for args in (["index"], ["index", "--json"]):
        typo = skillrt(*args, "--posts-dir", "nope", env=env, cwd=blog)
        assert typo.returncode == 0, typo.stderr
        assert "hint: nope/ does not exist yet" in typo.stderr, typo.stderr
    assert json.loads(typo.stdout)["posts"] == n and json.loads(typo.stdout)["removed"] == []
    said = skillrt("index", "--posts-dir", "nope", env=env, cwd=blog).stdout
    assert said.startswith(f"{n} posts indexed; ") and "nope is not there" in said, said
    again = skillrt("index", "--json", env=env, cwd=blog)
    assert json.loads(again.stdout)["unchanged"] == n


def test_every_command_of_the_blog_takes_posts_dir(blog: Path, tmp_path: Path) -> None:
    # docs/cli.md: --posts-dir works before the command or after it, as -C does; tasks,
    # undo, replay and abandon had none ("No such option: --posts-dir", exit 2) and ignored
    # one given before them.
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    expected = {"tasks": 0, "undo": 1, "replay": 2, "abandon": 2}  # (1, 2: nothing to do)
    for command, status in expected.items():
        args = [command] if command in ("tasks", "undo") else [command, "no-such-task"]
        done = skillrt(*args, "--posts-dir", "posts", env=env, cwd=tmp_path)
        assert done.returncode == status, (command, done.stderr)
        assert "No such option" not in done.stderr
        for blank in ([*args, "--posts-dir", " "], ["--posts-dir", " ", *args]):
            refused = skillrt(*blank, env=env, cwd=tmp_path)
            assert refused.returncode == 2, (blank, refused.stderr)
            assert refused.stderr.startswith("skillrt: error: --posts-dir needs a folder")


def test_a_posts_dir_outside_the_blog_is_named_as_the_option(blog: Path, tmp_path: Path) -> None:
    # "--posts-dir .." indexed the folder above the blog (and dropped the index's posts); a
    # bad option's value was then said to come from "keyword arguments".
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    for command in ("index", "tasks", "doctor"):
        done = skillrt(command, "--posts-dir", "..", env=env, cwd=tmp_path)
        assert done.returncode == 2, (command, done.stderr)
        assert done.stderr.startswith(
            "skillrt: error: --posts-dir: posts_dir: expected a folder inside the content root"
        ), done.stderr


def test_a_missing_configured_root_is_a_clear_error_and_made_nowhere(tmp_path: Path) -> None:
    # $SKILLRT_CONTENT_ROOT (or content_root in skillrt.toml) naming a missing folder made a
    # blog there: run its .skillrt (exit 1), index the folder (exit 0), tasks exit 0.
    missing = tmp_path / "nowhere"
    env = cli_env(missing, write_script(tmp_path / "s.json", []))
    expected = f"skillrt: error: the content root {str(missing)!r} is not a folder"
    for args in (["run", "hello"], ["index"], ["tasks"], ["tasks", "--json"], ["chat"], []):
        done = skillrt(*args, env=env, cwd=tmp_path, input="")
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith(expected), (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1
        assert not missing.exists(), args
    del env["SKILLRT_CONTENT_ROOT"]
    (tmp_path / "skillrt.toml").write_text('content_root = "nowhere"\n', encoding="utf-8")
    done = skillrt("index", env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("skillrt: error: the content root 'nowhere' is not a folder")
    assert not missing.exists()
    doctor = skillrt("doctor", "--no-generate", env=env, cwd=tmp_path)  # doctor reports it
    assert doctor.returncode == 1
    assert "(missing)" in doctor.stdout
    assert not missing.exists()


def test_doctor_reports_what_it_would_use(blog: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.json", [])
    env = cli_env(blog, script)
    done = skillrt("doctor", "--json", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert report["ok"] is True
    assert checks["config files"]["detail"]["files"][0].endswith("default.toml")
    assert checks["model"]["value"].startswith("scripted")
    assert checks["model"]["detail"]["reason"] == "provider scripted is configured (llm.provider)"
    assert checks["content root"]["value"] == str(blog.resolve())
    assert checks["state folder"]["value"].startswith(str(blog.resolve() / ".skillrt"))
    assert checks["index"]["status"] == "warn"  # not built yet
    assert {"chromium", "playwright", "browser backend"} <= set(checks)

    indexed = skillrt("index", env=env, cwd=tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    n = len(list((blog / "posts").rglob("*.md")))
    assert indexed.stdout.startswith(f"{n} posts indexed")
    again = json.loads(skillrt("index", "--json", env=env, cwd=tmp_path).stdout)
    assert again["posts"] == n and again["added"] == [] and again["unchanged"] == n

    text = skillrt("doctor", env=env, cwd=tmp_path)
    assert text.returncode == 0
    assert f"{n} posts indexed" in text.stdout
    assert "scripted" in text.stdout


def test_doctor_fails_when_the_model_cannot_work(blog: Path, tmp_path: Path) -> None:
    env = cli_env(blog, tmp_path / "missing.json")
    done = skillrt("doctor", env=env, cwd=tmp_path)
    assert done.returncode == 1
    assert "FAIL" in done.stdout and "script_path" in done.stdout


def test_piped_chat_reads_lines_and_quits_at_the_end(blog: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.json", article("Docker", ["Images.", "Containers."]))
    done = skillrt(
        "chat",
        env=cli_env(blog, script),
        cwd=tmp_path,
        input="write an article about Docker\n/tasks\n/cost\n/nonsense\n",
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "model scripted" in out
    assert "posts/docker.md" in out
    assert "No resumable tasks." in out
    assert "This session: 4 model calls" in out
    assert "Unknown command /nonsense" in out
    assert done.stderr == ""  # logs go to the state folder, not the screen
    assert (blog / ".skillrt" / "logs" / "skillrt.log").is_file()


def test_a_question_ends_run_with_exit_3_unless_answered(blog: Path, tmp_path: Path) -> None:
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    asked = skillrt("run", "--json", "delete posts/docker-basics.md", env=env, cwd=tmp_path)
    assert asked.returncode == 3, asked.stderr
    message = json.loads(asked.stdout)
    assert message["state"] == "WAITING_INPUT"
    assert "docker-basics.md" in message["data"]["question"]
    assert f"skillrt resume {message['task_id']} --answer TEXT" in asked.stderr
    assert (blog / "posts" / "docker-basics.md").is_file()
    # the question stays: the task is offered for resume
    [task] = json.loads(skillrt("tasks", "--json", env=env, cwd=tmp_path).stdout)
    assert task["id"] == message["task_id"]
    skillrt("abandon", task["id"], env=env, cwd=tmp_path)

    answered = skillrt("run", "-a", "yes", "delete posts/docker-basics.md", env=env, cwd=tmp_path)
    assert answered.returncode == 0, answered.stderr
    assert "Moved" in answered.stdout
    assert not (blog / "posts" / "docker-basics.md").exists()


def test_resume_answers_the_question_again(blog: Path, tmp_path: Path) -> None:
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    asked = skillrt("run", "--json", "delete posts/docker-basics.md", env=env, cwd=tmp_path)
    assert asked.returncode == 3
    task_id = json.loads(asked.stdout)["task_id"]
    done = skillrt("resume", "--json", "-a", "yes", task_id, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["state"] == "COMPLETED"
    assert not (blog / "posts" / "docker-basics.md").exists()


def test_help_names_the_extras_and_keeps_each_command_on_its_lines() -> None:
    """Rich's markup took "skillrt[mcp]" for a style tag (the help said "needs skillrt") and
    kept the docstrings' line breaks in the list of commands."""
    from typer.testing import CliRunner

    from skillrt.cli.commands import app

    runner = CliRunner()
    env = {"COLUMNS": "120", "TERMINAL_WIDTH": "120"}
    top = runner.invoke(app, ["--help"], env=env)
    assert top.exit_code == 0
    assert "skillrt[server]" in top.output and "skillrt[mcp]" in top.output
    rows = [" ".join(line.strip("│ ").split()) for line in top.output.splitlines()]
    assert any("74 state folder unusable" in row for row in rows), top.output
    serve = runner.invoke(app, ["serve", "--help"], env=env)
    assert "needs skillrt[server]" in " ".join(serve.output.split())
    assert "serve-token in the state folder" in " ".join(serve.output.replace("│", "").split())


def test_version_prints_the_version_and_exits_0(tmp_path: Path) -> None:
    # It was "No such option: --version", exit 2: the version was in the chat's first line only.
    from skillrt import __version__

    done = skillrt("--version", env=cli_env(tmp_path, tmp_path / "s.json"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"skillrt {__version__}\n"
    assert not (tmp_path / ".skillrt").exists()  # nothing opened, nothing made


def test_a_command_typed_without_its_slash_runs(blog: Path, tmp_path: Path) -> None:
    """ "undo" went to the Chat skill ("I'm here. Tell me what to do…") and "exit" did not
    quit: the piped lines after it ran."""
    done = skillrt(
        "chat",
        env=cli_env(blog, write_script(tmp_path / "s.json", [])),
        cwd=tmp_path,
        input="undo\nhelp\nexit\n/nonsense\n",
    )
    assert done.returncode == 0, done.stderr
    assert "There is nothing to undo" in done.stdout
    assert "/publish" in done.stdout  # the help's list of commands
    assert "Unknown command /nonsense" not in done.stdout  # quit before it


def test_a_command_typed_without_its_slash_runs_where_a_question_waits(
    blog: Path, tmp_path: Path
) -> None:
    """ "undo" typed where "Which post should I summarise?" was asked was read as a post's
    name; the question stays waiting, and "exit" quits with the task left to resume."""
    done = skillrt(
        "chat",
        env=cli_env(blog, write_script(tmp_path / "s.json", [])),
        cwd=tmp_path,
        input="summarize the post about rust\nundo\nexit\n/nonsense\n",
    )
    assert done.returncode == 0, done.stderr
    assert "Which post should I summarise?" in done.stdout
    assert "There is nothing to undo" in done.stdout
    assert "I could not tell which post" not in done.stdout
    assert "Unknown command /nonsense" not in done.stdout
