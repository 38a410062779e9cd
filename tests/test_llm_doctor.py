"""``skillrt doctor`` really generates with the embedded model (one token, in a worker process,
with a timeout) and names the mode that works; local model servers on 127.0.0.1 are found."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from skillrt.llm.discover import find_local_servers
from skillrt.llm.local import default_model_path
from skillrt.llm.probe import probe_local
from tests.cli_support import skillrt


def doctor(tmp_path: Path, *args: str, **env: str) -> tuple[int, dict[str, Any]]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    clean.update(SKILLRT_CONTENT_ROOT=str(tmp_path), NO_COLOR="1", **env)
    done = skillrt("doctor", "--json", *args, env=clean, cwd=tmp_path, timeout=300)
    report = json.loads(done.stdout)
    return done.returncode, {c["name"]: c for c in report["checks"]}


@pytest.mark.local_model
def test_doctor_generates_a_token_and_names_the_mode(tmp_path: Path) -> None:
    code, checks = doctor(tmp_path)
    generation = checks["generation"]
    assert code == 0 and generation["status"] == "ok", generation
    assert generation["detail"]["status"] == "ok"
    assert generation["value"].startswith("one token in ")
    assert f"in mode {generation['detail']['mode']}" in generation["value"]
    assert not (tmp_path / ".skillrt").exists()  # doctor writes nothing
    # --no-generate skips it.
    _code, quick = doctor(tmp_path, "--no-generate")
    assert "generation" not in quick and quick["llama.cpp"]["status"] == "ok"


@pytest.mark.local_model
def test_doctor_reports_a_crash_with_its_signal_and_the_mode_that_works(tmp_path: Path) -> None:
    # The worker sends itself SIGSEGV in the first two modes (a test hook), whatever the CPU.
    hook = {"SKILLRT_TEST_LLAMA_CRASH": "decode:default,no-extra-bufts"}
    code, checks = doctor(tmp_path, **hook)
    generation = checks["generation"]
    assert generation["status"] == "warn" and code == 0, generation
    assert generation["detail"]["mode"] == "n-batch-1"
    assert {"mode": "no-extra-bufts", "signal": "SIGSEGV"} in generation["detail"]["crashes"]
    assert "no-extra-bufts crashed (SIGSEGV)" in generation["value"]
    assert "-DGGML_NATIVE=OFF" in generation["value"]  # how to build a portable llama.cpp
    # A forced mode is not stepped down from: the crash fails the check.
    code, checks = doctor(tmp_path, SKILLRT_LLM__LOCAL_MODE="no-extra-bufts", **hook)
    assert code == 1 and checks["generation"]["status"] == "fail"
    assert checks["generation"]["detail"]["crashes"] == [
        {"mode": "no-extra-bufts", "signal": "SIGSEGV"}
    ]


@pytest.mark.local_model
def test_a_worker_killed_from_outside_is_no_reason_to_step_down(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A SIGKILL (the out-of-memory killer) is no fault of a mode: the doctor said "skillrt
    # steps down to it by itself" and advised a portable build of llama.cpp.
    monkeypatch.setenv("SKILLRT_TEST_LLAMA_CRASH", "decode:default")
    monkeypatch.setenv("SKILLRT_TEST_LLAMA_SIGNAL", "SIGKILL")
    path = default_model_path()
    assert path is not None
    probe = probe_local(path, cpuinfo=lambda: "flags : fpu sse avx2\n")
    assert probe.status == "crashed" and probe.crashes == [("default", "SIGKILL")]
    assert "killed from outside" in probe.describe()
    assert "-DGGML_NATIVE=OFF" not in probe.describe()


@pytest.mark.local_model
def test_a_model_that_does_not_answer_in_time_is_slow() -> None:
    path = default_model_path()
    assert path is not None
    probe = probe_local(path, timeout_s=0.05)  # the load alone takes longer
    assert probe.status == "slow" and not probe.crashes
    assert "no token within" in probe.describe()


# --- local servers ------------------------------------------------------------------------------


class _Models(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path != "/v1/models":
            self.send_error(404)
            return
        body = json.dumps({"object": "list", "data": [{"id": "qwen2.5:7b"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


class _NotAModelServer(_Models):
    def do_GET(self) -> None:
        body = b"<html>a web page</html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def model_server() -> Iterator[int]:
    yield from _serve(_Models)


@pytest.fixture
def web_server() -> Iterator[int]:
    yield from _serve(_NotAModelServer)


def test_a_local_openai_compatible_server_is_found(model_server: int, web_server: int) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    known = (("Ollama", model_server), ("LM Studio", closed), ("llama.cpp server", web_server))
    found = find_local_servers(known)
    assert [(s.name, s.models) for s in found] == [("Ollama", ("qwen2.5:7b",))]
    server = found[0]
    assert server.base_url == f"http://127.0.0.1:{model_server}/v1"
    assert server.settings == (
        f"SKILLRT_LLM__BASE_URL=http://127.0.0.1:{model_server}/v1 SKILLRT_LLM__MODEL=qwen2.5:7b"
    )


class _Endless(_Models):
    """Answers 200 with a model list that never ends: 100 MB promised, sent until the reader
    goes away; ``sent`` counts what left."""

    sent = 0

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(100 << 20))
        self.end_headers()
        chunk = b'{"data": [' + b" " * 65526
        try:
            while _Endless.sent < 100 << 20:
                self.wfile.write(chunk)
                _Endless.sent += len(chunk)
        except OSError:  # the reader hung up
            pass


class _Dripping(_Models):
    """Answers 200, then a byte every 50 ms: each read comes well within the socket timeout,
    the body never ends."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            for _ in range(100000):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass


def test_a_server_whose_answer_never_ends_is_not_read_to_its_end() -> None:
    servers = [_serve(_Endless), _serve(_Dripping)]
    endless, dripping = (next(s) for s in servers)
    try:
        started = time.monotonic()
        found = find_local_servers((("Ollama", endless), ("LM Studio", dripping)), timeout_s=0.5)
        took = time.monotonic() - started
    finally:
        for s in servers:
            next(s, None)
    assert found == []
    # Read up to the cap (1 MiB) and a buffer or two past it, not the 100 MB it offered; the
    # drip is dropped at the deadline, not after its 100,000 bytes (5,000 s).
    assert _Endless.sent < 16 << 20
    assert took < 30


def test_ports_are_asked_together_and_a_connection_that_hangs_times_out(
    model_server: int,
) -> None:
    import socket

    # Listeners whose accept queue is full: the kernel drops further handshakes, so a
    # connection to them is neither refused nor made (a firewall that drops looks the same).
    full = [socket.socket(), socket.socket()]
    fillers = []
    for listener in full:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(listener.getsockname())
            fillers.append(filler)
    with socket.socket() as sock:  # a port nothing listens on: refused at once
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    hanging = [listener.getsockname()[1] for listener in full]
    known = (("a", hanging[0]), ("b", closed), ("c", model_server), ("d", hanging[1]))
    try:
        time.sleep(0.1)
        started = time.monotonic()
        found = find_local_servers(known, timeout_s=1.0)
        took = time.monotonic() - started
    finally:
        for s in (*fillers, *full):
            s.close()
    assert [(s.name, s.base_url) for s in found] == [("c", f"http://127.0.0.1:{model_server}/v1")]
    assert 0.9 < took < 1.8  # each hanging port given its second at the same time, not in turn
