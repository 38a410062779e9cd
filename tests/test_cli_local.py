"""The README's first command: ``skillrt chat`` in the blog's folder, on the embedded model
(no key, no base URL, no scripted provider), in a real terminal."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest

from tests.cli_support import make_blog
from tests.test_cli_chat import PROMPT, quit_with_ctrl_d


@pytest.mark.local_model
@pytest.mark.slow
def test_skillrt_chat_on_the_embedded_model(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env.update(NO_COLOR="1", TERM="dumb", COLUMNS="100", PYTHONUNBUFFERED="1")
    command = Path(sys.executable).parent / "skillrt"  # the installed console script
    child = pexpect.spawn(
        str(command),
        ["chat"],
        env=env,
        cwd=str(blog),
        encoding="utf-8",
        timeout=240,
        dimensions=(40, 100),
    )
    child.logfile_read = sys.stdout
    child.expect("SmolLM2")  # the embedded model, chosen because nothing else is configured
    child.expect(f"blog: {blog.resolve()}")
    child.expect(PROMPT)
    child.sendline("what is ownership in Rust?")  # answered from the posts, by the model
    child.expect(r"tokens · \$0\.0000 · [0-9.]+ s · completed")
    child.expect(PROMPT)
    assert quit_with_ctrl_d(child) == 0
