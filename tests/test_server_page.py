"""The web chat page at ``/`` in a real Chromium (Playwright): type a request, see progress and
streamed text, cancel and see the cancelled reply, reload mid-task and see it reattach, and
follow the user's language. With SKILLRT_UPDATE_SCREENSHOTS=1 it saves the README's
screenshot (docs/serve-page.png); otherwise the screenshot goes to the test's folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from skillrt.llm.base import LLMMessage
from skillrt.testing import Answer, FunctionModel, ModelOptions
from tests.browsing_support import require_chromium
from tests.server_support import LiveServer, make_runtime
from tests.writing_support import WritingModelFn, prompt_kind

pytestmark = pytest.mark.chromium
SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "serve-page.png"
SECTION = (
    "Every value in Rust has exactly one owner, and when that owner goes out of scope the"
    " value is dropped. Moving a String hands the buffer to its new owner; integers are Copy,"
    " so assigning one copies it. Borrowing lets a function read a value without owning it."
)


class SlowSections(WritingModelFn):
    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Answer:
        if prompt_kind(messages) == "section":
            return SECTION
        return super().__call__(messages, options)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    require_chromium()
    llm = FunctionModel(SlowSections(), chunk_delay=0.04)
    server = LiveServer(make_runtime(tmp_path, llm))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def page(live: LiveServer) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 720})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{live.url}/#token={live.token}")
            yield page
            assert errors == []
        finally:
            browser.close()


def test_chat_page_streams_cancels_and_reattaches(
    live: LiveServer, page: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    update = os.environ.get("SKILLRT_UPDATE_SCREENSHOTS") == "1"
    shot = SCREENSHOT if update else tmp_path / SCREENSHOT.name
    assert "#token" not in page.url  # taken out of the address bar
    expect(page.locator("#info")).to_contain_text("function")

    # 1. A request: progress and streamed text, then cancel.
    page.fill("#text", "write an article about Rust ownership")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.user")).to_have_text("write an article about Rust ownership")
    expect(page.locator("#progress")).to_be_visible()
    streaming = page.locator(".msg.assistant.streaming")
    expect(streaming).to_contain_text("Every value in Rust", timeout=15_000)
    assert "%" in page.locator("#progress-text").inner_text()
    expect(page.locator("#tasks li")).to_have_count(1)
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    page.click("#cancel")
    last = page.locator(".msg.assistant").last
    expect(last).to_contain_text("CANCELLED", timeout=10_000)
    expect(last).to_contain_text("ancel")  # the runtime's own cancelled reply
    expect(page.locator("#progress")).to_be_hidden()

    # 2. Another request; reload while it streams: the page reattaches and gets the end.
    page.fill("#text", "write an article about Rust borrowing")
    page.click("#send")
    expect(page.locator(".msg.assistant.streaming")).to_contain_text("owner", timeout=15_000)
    page.reload()
    expect(page.locator(".msg.note")).to_be_visible()
    done = page.locator(".msg.assistant").last
    expect(done).to_contain_text("COMPLETED", timeout=30_000)
    expect(done).to_contain_text("posts/")
    with live.client() as c:
        assert c.get("/v1/tasks").json() == []


def test_chat_page_follows_the_users_language_and_answers_questions(
    live: LiveServer, page: Any
) -> None:
    from playwright.sync_api import expect

    page.click("#context summary")
    page.fill("#current-file", "posts/rust-borrowing.md")
    page.fill("#text", "ask me")
    page.keyboard.press("Enter")
    expect(page.locator("#question")).to_be_visible()
    expect(page.locator("#question-text")).to_have_text("Which colour?")
    page.fill("#text", "蓝色")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant").last).to_contain_text("you said 蓝色")
    expect(page.locator("#send")).to_have_text("发送")  # the page follows the user: Chinese
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    page.fill("#text", "ask me")
    page.keyboard.press("Enter")
    expect(page.locator("#send")).to_have_text("Send")
    page.fill("#text", "red")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant").last).to_contain_text("you said red")
