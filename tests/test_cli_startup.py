"""What a command's process loads: the start-up levers of ``skillrt tasks``, ``skillrt doctor``
and ``import skillrt`` (docs/benchmarks.md, "The CLI as a whole process").

Each runs as a real process and reports ``sys.modules`` at exit, so a change that loads the
runtime, an SDK or an HTTP client again for these commands fails here (the time they take is
a benchmark: ``python -m benchmarks --only cli``).
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillrt.abort import AbortController
from skillrt.llm.discover import KNOWN_SERVERS
from tests.cli_support import cli_env, skillrt_reporting_modules, write_script

# Loaded by none of the three: the model SDKs, the HTTP client, the runtime and what only a
# running runtime needs (structured logs, the router and its classifier, the skills, the
# line editor).
NEVER = (
    "openai",
    "llama_cpp",
    "mcp",
    "httpx",
    "structlog",
    "prompt_toolkit",
    "skillrt.agent",
    "skillrt._routing",
    "skillrt._tasks.run",
    "skillrt.skills.writing",
    "skillrt.skills.browsing.agent",
)


def _loaded(found: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in found if any(m == n or m.startswith(n + ".") for n in names)]


def _run_cli(
    tmp_path: Path, root: Path, *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``skillrt ARGS`` in a process of its own; its result and the modules it had loaded."""
    script = write_script(tmp_path / "script.json", [])  # the scripted model: never asked
    return skillrt_reporting_modules(
        *args,
        env={**cli_env(root, script, HOME=str(tmp_path)), **env},
        cwd=root,
        report=tmp_path / "modules.json",
    )


def _seed(root: Path, description: str) -> None:
    """One resumable task in the embedded store (real SQLite), as a crash would leave it."""
    from skillrt._state.embedded.checkpoints import CheckpointStore
    from skillrt._state.records import TaskRecord

    (root / "posts").mkdir(parents=True)
    (root / "posts" / "hello.md").write_text("# Hello\n\nA post.\n", encoding="utf-8")
    store = CheckpointStore(root / ".skillrt" / "checkpoints")
    now = time.time()
    record = TaskRecord(
        id="task0001",
        session_id="s",
        state="EXECUTING",
        raw_input=description,
        skill="WriteArticle",
        params={"topic": "tags"},
        steps={"outline": "outline"},
        created_at=now - 60,
        updated_at=now - 30,
    )
    store.apply([record], [])
    store.close()


def test_import_skillrt_loads_no_sdk_client_or_runtime() -> None:
    code = (
        "import json, sys; before = set(sys.modules); import skillrt;"
        " print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    found = json.loads(done.stdout)
    assert "skillrt" in found
    assert _loaded(found, (*NEVER, "pydantic", "pydantic_settings", "skillrt.settings")) == []
    # The old-names finder is a plain class: importlib.abc's bases loaded importlib.resources
    # (tempfile, shutil, bz2, lzma, random) with every import.
    assert _loaded(found, ("importlib.abc", "importlib.resources", "tempfile")) == []


def test_tasks_lists_without_the_runtime_and_shows_a_request_as_written(tmp_path: Path) -> None:
    root = tmp_path / "blog"
    request = "fix the [/b] tag and make [red]this[/red] plain"
    _seed(root, request)
    done, found = _run_cli(tmp_path, root, "tasks")
    assert done.returncode == 0, done.stderr
    # The request is text, not Rich markup: "[/b]" used to end the command with a MarkupError.
    flat = " ".join(done.stdout.split())
    assert "task0001" in flat and "interrupted" in flat
    assert "fix the [/b] tag and make [red]this[/red] plain" in flat
    # Listing reads the store: no file locks (filelock), no runtime, no SDK, and no record
    # parsed (the summaries are stored beside them), so TaskRecord's validator is not built.
    assert "skillrt._state.records" in found
    assert _loaded(found, (*NEVER, "filelock", "skillrt.blog.files", "<TaskRecord built>")) == []
    # Its settings are read without pydantic-settings (cli/storeconfig.py) when the config
    # sets nothing else: no RuntimeConfig, no asyncio (pydantic-settings loaded it).
    assert _loaded(found, ("pydantic_settings", "skillrt.settings", "asyncio")) == []
    # The table is Rich's table of Text cells: no live display, no emoji table.
    assert _loaded(found, ("skillrt.cli.display", "rich.live", "rich._emoji_codes")) == []
    assert (root / ".skillrt" / "logs" / "skillrt.log").is_file()  # logs go where they went


def test_tasks_with_other_settings_reads_them_all_and_fails_as_before(tmp_path: Path) -> None:
    root = tmp_path / "blog"
    _seed(root, "write an article about tags")
    light, _ = _run_cli(tmp_path, root, "tasks", "--json")
    # A key listing does not read: RuntimeConfig reads the config, the listing is the same.
    (root / "skillrt.toml").write_text("history_limit = 5\n", encoding="utf-8")
    done, found = _run_cli(tmp_path, root, "tasks", "--json")
    assert done.returncode == 0, done.stderr
    assert "pydantic_settings" in found and "skillrt.settings" in found
    assert json.loads(done.stdout) == json.loads(light.stdout)
    assert [t["id"] for t in json.loads(done.stdout)] == ["task0001"]
    # A bad value anywhere in the config stops `skillrt tasks` as it stops every command.
    (root / "skillrt.toml").write_text('[llm]\ntimeout_s = "soon"\n', encoding="utf-8")
    done, _ = _run_cli(tmp_path, root, "tasks")
    assert done.returncode == 2
    assert "skillrt.toml: llm.timeout_s: expected" in done.stderr
    # ...and so does a bad value of a key it reads itself, named the same way.
    (root / "skillrt.toml").write_text("checkpoint_max_age_h = 0\n", encoding="utf-8")
    done, _ = _run_cli(tmp_path, root, "tasks")
    assert done.returncode == 2
    assert "skillrt.toml: checkpoint_max_age_h: expected" in done.stderr


def test_tasks_honours_the_state_folder_and_resume_window_from_each_source(
    tmp_path: Path,
) -> None:
    # The task was last saved 30 s ago: a window of 0.001 h (3.6 s) leaves it out.
    root = tmp_path / "blog"
    _seed(root, "write an article about tags")
    state = root / ".skillrt"
    moved = tmp_path / "elsewhere"
    state.rename(moved)
    done, _ = _run_cli(tmp_path, root, "tasks", "--json", SKILLRT_STATE_DIR=str(moved))
    assert [t["id"] for t in json.loads(done.stdout)] == ["task0001"], done.stderr
    xdg = tmp_path / "xdg"
    (xdg / "skillrt").mkdir(parents=True)
    (xdg / "skillrt" / "config.toml").write_text(f"state_dir = {str(moved)!r}\n")
    done, _ = _run_cli(tmp_path, root, "tasks", "--json", XDG_CONFIG_HOME=str(xdg))
    assert [t["id"] for t in json.loads(done.stdout)] == ["task0001"], done.stderr
    (root / "skillrt.toml").write_text("checkpoint_max_age_h = 0.001\n", encoding="utf-8")
    done, found = _run_cli(tmp_path, root, "tasks", "--json", XDG_CONFIG_HOME=str(xdg))
    assert json.loads(done.stdout) == [], done.stderr
    done, _ = _run_cli(
        tmp_path,
        root,
        "tasks",
        "--json",
        XDG_CONFIG_HOME=str(xdg),
        SKILLRT_CHECKPOINT_MAX_AGE_H="1",
    )
    assert [t["id"] for t in json.loads(done.stdout)] == ["task0001"], done.stderr
    assert "pydantic_settings" not in found


def test_doctor_checks_without_an_http_client_or_the_runtime(tmp_path: Path) -> None:
    root = tmp_path / "blog"
    _seed(root, "write an article about tags")
    # The embedded model: doctor also looks for local model servers on 127.0.0.1.
    done, found = _run_cli(
        tmp_path, root, "doctor", "--json", "--no-generate", SKILLRT_LLM__PROVIDER="local"
    )
    report = json.loads(done.stdout)
    names = [check["name"] for check in report["checks"]]
    assert "local servers" in names and "[browser] settings" in names
    assert "checkpoints database" in names
    assert _loaded(found, NEVER) == []
    # The database's schema is compared with the columns alone: not the listing's module,
    # diskcache or the store's records.
    listing = ("skillrt._state.embedded.listing", "diskcache", "skillrt._state.records")
    assert _loaded(found, listing) == []
    # The model is described (skillrt.llm.select), not made: no provider, protocol or prices.
    model = next(check for check in report["checks"] if check["name"] == "model")
    assert model["value"].startswith("local")
    assert "skillrt.llm.select" in found
    assert _loaded(found, ("skillrt.llm.local", "skillrt.llm.base", "skillrt.llm.prices")) == []
    # The local servers are connected to first, with the address as bytes: where no port
    # answers, neither http.client nor the IDNA codec is loaded.
    # They are connected to together without threads: no thread pool where none answers.
    if not any(_listening(port) for _name, port in KNOWN_SERVERS):
        assert _loaded(found, ("http.client", "encodings.idna", "stringprep")) == []
        assert _loaded(found, ("concurrent.futures",)) == []


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_a_failing_abort_callback_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The abort module makes its logger at the first failure (not at import): it still logs.
    controller = AbortController()
    called: list[str] = []

    def broken(reason: str) -> None:
        raise RuntimeError("callback bug")

    controller.signal.add_callback(broken)
    controller.signal.add_callback(called.append)
    with caplog.at_level(logging.DEBUG, logger="skillrt.abort"):
        assert controller.abort("stop") is True
    assert called == ["stop"]
    [record] = [r for r in caplog.records if r.name == "skillrt.abort"]
    assert "agent.error" in record.getMessage() and "abort callback" in record.getMessage()
    assert "callback bug" in record.getMessage()


def test_chat_starts_without_the_browsing_machinery_or_the_frontmatter_parsers(
    tmp_path: Path,
) -> None:
    # The skills are registered (their names, intents and parameters), not loaded: the agent
    # loop, the browsers and httpx come with a browsing task; PyYAML, tomlkit and
    # python-frontmatter with the first post read or written, python-slugify with a new post.
    root = tmp_path / "blog"
    _seed(root, "write an article about tags")
    done, found = _run_cli(tmp_path, root, "chat")  # stdin at its end: starts, then quits
    assert done.returncode == 0, done.stderr
    assert "task0001" in done.stdout  # the start lists what can be resumed
    assert "skillrt.agent" in found and "skillrt.skills.browsing.skills" in found
    late = (
        "httpx",
        "playwright",
        "skillrt.skills.browsing.agent",
        "skillrt.skills.browsing.backends",
        "skillrt.skills.browsing.research",
        "yaml",
        "tomlkit",
        "frontmatter",
        "slugify",
        "openai",
        "llama_cpp",
    )
    assert _loaded(found, late) == []


def test_loading_the_config_builds_no_section_validator(tmp_path: Path) -> None:
    # The sections are defer_build models: RuntimeConfig's schema validates them inline.
    code = (
        "import json, skillrt.settings as s; c = s.load_config();"
        " print(json.dumps([s.LLMConfig.__pydantic_complete__, c.llm.provider,"
        " s.LLMConfig(provider='openai').provider, s.LLMConfig.__pydantic_complete__]))"
    )
    env = cli_env(tmp_path, tmp_path / "none.json", HOME=str(tmp_path))
    del env["SKILLRT_LLM__PROVIDER"], env["SKILLRT_LLM__SCRIPT_PATH"]  # the default: auto
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    # Unbuilt after load_config; used on its own, the section validates (and is built then).
    assert json.loads(done.stdout) == [False, "auto", "openai", True]


def test_the_commands_parameters_are_objects_not_strings() -> None:
    # Typer reads them at every start; string annotations were evaluated twice each (eval and
    # a compiled ForwardRef per name), about a third of building the commands.
    from skillrt.cli import app

    callbacks = [c.callback for c in app.registered_commands]
    assert len(callbacks) >= 10 and app.registered_callback is not None
    callbacks.append(app.registered_callback.callback)
    for callback in callbacks:
        assert callback is not None
        hints = callback.__annotations__
        assert hints and not any(isinstance(h, str) for h in hints.values()), callback.__name__
