"""Browsing records are redacted (issue 26, item 6): the replay recording, the follow-up note
and the reply's data hold no configured secret and no key-shaped string, even when the start
URL held both; a recording whose URLs held a secret is marked and replay refuses it.

A real server on 127.0.0.1; the model (a FunctionModel) logs in with the configured secret and
then echoes the secret and the key in its answer, as a careless or injected model would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillrt.skills.browsing.skills import close_pending_browsers
from skillrt.testing import FunctionModel
from tests.browsing_support import PageView, Recorder, agent_model, make_runtime
from tests.netsec_support import Server

SECRET = "pa55-Configured-7f2c"
KEY = "sk-live" + "Q" * 10 + "abcdefgh12345678"  # key-shaped, configured nowhere


def site() -> Server:
    return Server(
        {
            "/": (
                200,
                {},
                b"<title>Login</title><form action='/account' method='post'>"
                b"<input type='password' name='pw' aria-label='Password'>"
                b"<button>Log in</button></form>",
            ),
            "/account": (200, {}, b"<title>Account</title><p>Welcome back.</p>"),
        }
    )


def no_model(messages: Any, options: Any) -> str:
    raise AssertionError("replay needs no model")


def leaks(text: str) -> list[str]:
    return [s for s in (SECRET, KEY, SECRET.replace("-", "%2D")) if s in text]


async def browse(tmp_path: Path, server: Server, policy: Any) -> tuple[Any, Recorder]:
    rt = make_runtime(tmp_path, agent_model(policy), {"secrets": [SECRET]})
    events = Recorder(rt)
    try:
        msg = await rt.run_skill(
            "Browse",
            {"task": "log in and report", "url": server.url(f"/?session={SECRET}&key={KEY}")},
        )
    finally:
        await rt.close()
        await close_pending_browsers()
    return msg, events


async def test_nothing_the_task_keeps_or_returns_holds_the_secret_or_the_key(
    tmp_path: Path,
) -> None:
    def policy(page: PageView, prompt: str) -> list[dict[str, Any]]:
        if page.path.startswith("/account"):
            return [{"action": "done", "answer": f"logged in with {SECRET}; your key is {KEY}"}]
        return [
            {"action": "type", "index": page.find("textbox", "Password"), "text": SECRET},
            {"action": "click", "index": page.find("button", "Log in")},
        ]

    with site() as server:
        msg, events = await browse(tmp_path, server, policy)
    assert msg.state == "COMPLETED", msg.content
    assert [p for p, _ in server.posts] == ["/account"]  # the secret was typed and sent there
    assert SECRET.encode() in server.posts[0][1]

    state = tmp_path / ".skillrt"
    recording_path = state / "replays" / f"{msg.task_id}.json"
    recording = json.loads(recording_path.read_text("utf-8"))
    assert leaks(recording_path.read_text("utf-8")) == []
    assert recording["secret_urls"] is True
    assert "session=***" in recording["start_url"] or "<secret>" in recording["start_url"]
    for note in (state / "browsing").glob("*.json"):
        assert leaks(note.read_text("utf-8")) == []
    assert leaks(json.dumps(msg.data, ensure_ascii=False)) == []
    assert leaks(msg.content) == []
    assert leaks(json.dumps([e.data for e in events.events], default=str)) == []

    rt = make_runtime(tmp_path, FunctionModel(no_model), {"secrets": [SECRET]})
    try:
        again = await rt.run_skill("Browse", {"replay": msg.task_id})
    finally:
        await rt.close()
        await close_pending_browsers()
    assert again.state == "ERROR"
    assert "its URLs held a secret" in again.content
    assert [p for p, _ in server.posts] == ["/account"]  # replay sent nothing


async def test_a_page_whose_url_held_a_secret_leaves_no_follow_up_note(tmp_path: Path) -> None:
    def policy(page: PageView, prompt: str) -> list[dict[str, Any]]:
        return [{"action": "done", "answer": "the login page"}]

    with site() as server:
        msg, _ = await browse(tmp_path, server, policy)
    assert msg.state == "COMPLETED", msg.content
    notes = list((tmp_path / ".skillrt" / "browsing").glob("*.json"))
    assert all(leaks(n.read_text("utf-8")) == [] for n in notes)
    assert notes == []  # its URL would lead elsewhere once redacted: not remembered
    assert leaks(json.dumps(msg.data, ensure_ascii=False) + msg.content) == []
