"""What the CLI prints is redacted (issue 26, item 9): a model echoing a configured secret and
the API key shows ``***`` in the reply, in ``--json`` output and in a question's menu."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_support import cli_env, make_blog, skillrt, write_script

SECRET = "hunter2-configured-secret-value"
API_KEY = "sk-test0123456789abcdefghijklmn"
ECHO = f"The post is about Rc and RefCell. key {API_KEY} secret {SECRET}."


def test_cli_replies_are_redacted(tmp_path: Path) -> None:
    root = make_blog(tmp_path)
    env = cli_env(
        root,
        write_script(tmp_path / "s.json", [ECHO, ECHO]),
        SKILLRT_SECRETS=json.dumps([SECRET]),
        SKILLRT_LLM__API_KEY=API_KEY,
    )
    text = skillrt("run", "summarize posts/rust-smart-pointers.md", env=env, cwd=root)
    as_json = skillrt("run", "--json", "summarize posts/rust-smart-pointers.md", env=env, cwd=root)
    for out in (text, as_json):
        assert out.returncode == 0, out.stdout + out.stderr
        assert "Rc and RefCell" in out.stdout and "***" in out.stdout, out.stdout
        for secret in (SECRET, API_KEY):
            assert secret not in out.stdout + out.stderr
    assert "***" in json.loads(as_json.stdout)["content"]
