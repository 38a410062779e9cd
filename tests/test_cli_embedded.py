"""``skillrt chat`` on the embedded model: it says once that the model is a tiny one and how to
connect a real one, offers a local model server it finds on 127.0.0.1, and ``/model`` lists it.
The model's worker is started as the chat opens (a model that cannot run is said at once);
nothing is generated."""

from __future__ import annotations

import errno
import os
import socket
import sys
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pexpect
import pytest

from tests.cli_support import make_blog
from tests.test_cli_chat import PROMPT, quit_with_ctrl_d
from tests.test_llm_doctor import _Models

OLLAMA_PORT = 11434


@pytest.fixture
def ollama() -> Iterator[int]:
    """A stand-in for Ollama's OpenAI-compatible API on its usual port (a real HTTP server)."""
    import threading

    try:
        server = ThreadingHTTPServer(("127.0.0.1", OLLAMA_PORT), _Models)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            pytest.skip(f"port {OLLAMA_PORT} is in use on this machine")
        raise
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield OLLAMA_PORT
    server.shutdown()
    server.server_close()


def chat(blog: Path, **extra: str) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env.update(NO_COLOR="1", TERM="dumb", COLUMNS="200", PYTHONUNBUFFERED="1", **extra)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "skillrt", "chat"],
        env=env,
        cwd=str(blog),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    child.logfile_read = sys.stdout
    return child


def test_the_banner_says_once_the_model_is_tiny_and_offers_a_local_server(
    tmp_path: Path, ollama: int
) -> None:
    blog = make_blog(tmp_path)
    child = chat(blog)
    child.expect("is a tiny one")
    child.expect(f"Found Ollama at http://127.0.0.1:{ollama}/v1 \\(qwen2.5:7b\\)")
    child.expect(f"SKILLRT_LLM__BASE_URL=http://127.0.0.1:{ollama}/v1")
    child.expect(PROMPT)
    child.sendline("/model")
    child.expect("local server: Ollama at")
    child.expect("SKILLRT_LLM__MODEL=qwen2.5:7b")
    child.expect(PROMPT)
    assert quit_with_ctrl_d(child) == 0

    again = chat(blog)  # the note is said once; the server is offered every time
    again.expect("Found Ollama")
    before = again.before or ""
    again.expect(PROMPT)
    assert "tiny one" not in before
    assert quit_with_ctrl_d(again) == 0


def test_no_local_server_no_offer(tmp_path: Path) -> None:
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", OLLAMA_PORT)) == 0:
            pytest.skip(f"something listens on {OLLAMA_PORT} here")
    blog = make_blog(tmp_path)
    child = chat(blog)
    child.expect(PROMPT)
    assert "Found " not in (child.before or "")
    child.sendline("/model")
    child.expect("no model server on 127.0.0.1")
    child.expect(PROMPT)
    assert quit_with_ctrl_d(child) == 0


@pytest.mark.local_model
def test_a_crashing_model_never_takes_the_chat_down(tmp_path: Path) -> None:
    """Every load mode's worker dies with SIGSEGV as it starts generating (the test hook: a
    real signal in the real worker process): the request ends with the named error, the task
    is listed as resumable, and the chat goes on to its next prompt and quits normally."""
    blog = make_blog(tmp_path)
    crash = "decode:default,no-extra-bufts,n-batch-1"
    child = chat(blog, SKILLRT_TEST_LLAMA_CRASH=crash)
    child.expect(PROMPT)
    child.sendline("what is ownership in Rust?")
    child.expect("the embedded model crashed: SIGSEGV in llama.cpp", timeout=180)
    child.expect("You can resume it later")
    child.expect(PROMPT)
    child.sendline("/tasks")
    child.expect("model down")  # a resumable task, stopped by its model
    child.expect(PROMPT)
    assert child.isalive()
    assert quit_with_ctrl_d(child) == 0


@pytest.mark.local_model
def test_a_model_file_llama_cpp_cannot_load_is_said_before_the_first_prompt(
    tmp_path: Path,
) -> None:
    """The worker used to start at the first request: with a broken model file the chat
    started as usual, "hi" got the Chat skill's own greeting ("completed"), and nothing said
    the model could not run until a request that needed it failed."""
    blog = make_blog(tmp_path)
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF\x03\x00\x00\x00 not a model")
    child = chat(blog, SKILLRT_LLM__MODEL_PATH=str(broken))
    child.expect("The embedded model cannot run: ")
    child.expect("llm.model_path")
    child.expect("skillrt doctor checks it")
    child.expect(PROMPT)
    assert child.isalive()
    assert quit_with_ctrl_d(child) == 0


@pytest.mark.local_model
def test_model_says_which_load_mode_the_worker_runs_in(tmp_path: Path) -> None:
    """On a CPU with AMX llama.cpp's default kernels crash; /model says which mode runs, and
    why (the doctor did; the chat said nothing)."""
    blog = make_blog(tmp_path)
    child = chat(blog, SKILLRT_LLM__LOCAL_MODE="no-extra-bufts")
    child.expect(PROMPT)
    child.sendline("/model")
    child.expect(r"load mode: no-extra-bufts \(llm.local_mode is set\)")
    child.expect(PROMPT)
    assert quit_with_ctrl_d(child) == 0
    # Forced by DESIGN.md's name for it, the reason names that key (it said llm.local_mode).
    child = chat(blog, SKILLRT_LLM__LOCAL__SAFE="true")
    child.expect(PROMPT)
    child.sendline("/model")
    child.expect(r"load mode: no-extra-bufts \(llm.local.safe is set\)")
    child.expect(PROMPT)
    assert quit_with_ctrl_d(child) == 0


@pytest.mark.local_model
def test_a_crash_the_reply_does_not_name_is_said_after_it(tmp_path: Path) -> None:
    """The worker dies with SIGSEGV at its first generation in the default mode (the test
    hook): "hi" is answered all the same (the call is retried one mode safer, as on an AMX
    CPU), and a line says the model crashed and the mode it runs in now; nothing said so."""
    blog = make_blog(tmp_path)
    child = chat(blog, SKILLRT_TEST_LLAMA_CRASH="decode:default")
    child.expect(PROMPT)
    child.sendline("hi")
    child.expect(r"completed", timeout=120)
    child.expect(r"the embedded model's worker died during this request \(the embedded model")
    child.expect(r"SIGSEGV in llama\.cpp\); it starts again, in load mode no-extra-bufts")
    child.expect(PROMPT)
    child.sendline("hi")
    child.expect(r"completed", timeout=120)
    child.expect(PROMPT)
    assert "worker died" not in (child.before or "")  # no crash this time: no line
    assert quit_with_ctrl_d(child) == 0
