"""HttpBrowser on the local site: forms, cookies, redirects, caps, history, stale indices."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from skillrt import load_config
from skillrt.exceptions import BrowserError, URLNotAllowed
from skillrt.skills.browsing import (
    ActionResult,
    BackAction,
    ClickAction,
    ElementSignature,
    GotoAction,
    HttpBrowser,
    Observation,
    ScrollAction,
    SelectAction,
    SubmitAction,
    TypeAction,
    URLFirewall,
)
from skillrt.skills.browsing.actions import BrowserAction
from skillrt.skills.browsing.browser import run_action
from skillrt.skills.browsing.config import browser_config
from skillrt.skills.browsing.observation import Element
from tests.site import SECRET_NUMBER, TARGET_CODE, TestSite


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    with TestSite() as running:
        yield running


def make_browser(**browser: object) -> HttpBrowser:
    config = browser_config(load_config(browser=browser))
    return HttpBrowser(config, URLFirewall(allow_private=["127.0.0.1"], deny=["evil.example"]))


@pytest.fixture
async def browser() -> AsyncIterator[HttpBrowser]:
    opened = make_browser()
    yield opened
    await opened.close()


def index_of(observation: Observation, role: str, text: str) -> int:
    return next(e.index for e in observation.elements if e.role == role and e.text == text)


async def test_a_get_form_sends_typed_selected_hidden_and_default_values(
    site: TestSite, browser: HttpBrowser
) -> None:
    await browser.goto(site.url("/search"))
    obs = await browser.observe()
    query = index_of(obs, "textbox", "Query")
    assert (await browser.act(TypeAction(index=query, text="rust owner"))).success
    result = await browser.act(
        SelectAction(index=index_of(obs, "combobox", "Section"), option="tech")
    )
    assert result.message == 'selected "Technology" in [6]'
    result = await browser.act(SubmitAction(index=query))
    assert result.navigated
    assert browser.url == site.url("/results?q=rust+owner&section=tech&src=form")
    assert "1 results (src=form, section=tech)" in (await browser.observe()).text


async def test_a_post_login_keeps_its_cookie(site: TestSite, browser: HttpBrowser) -> None:
    await browser.goto(site.url("/account"))
    assert "Please log in" in (await browser.observe()).text
    await browser.goto(site.url("/login"))
    obs = await browser.observe()
    await browser.act(TypeAction(index=index_of(obs, "textbox", "Username"), text="alice"))
    password = index_of(obs, "textbox", "Password")
    await browser.act(TypeAction(index=password, text="wonderland"))
    shown = (await browser.observe()).render()
    assert "wonderland" not in shown and "prefilled-secret" not in shown
    assert f'[{password}] textbox "Password" type=password value=<filled>' in shown
    result = await browser.act(ClickAction(index=index_of(obs, "button", "Log in")))
    assert result.navigated and browser.url == site.url("/account")
    assert f"Your secret number is {SECRET_NUMBER}" in (await browser.observe()).text
    await browser.goto(site.url("/account"))  # the cookie stays
    assert SECRET_NUMBER in (await browser.observe()).text
    assert "POST /login" in site.requests


async def test_a_wrong_password_shows_the_error_page(site: TestSite, browser: HttpBrowser) -> None:
    await browser.goto(site.url("/login"))
    obs = await browser.observe()
    await browser.act(TypeAction(index=index_of(obs, "textbox", "Username"), text="alice"))
    await browser.act(SubmitAction())  # the form of the last field typed into
    assert "Wrong username or password." in (await browser.observe()).text


async def test_checkboxes_and_mistakes_of_the_model(site: TestSite, browser: HttpBrowser) -> None:
    await browser.goto(site.url("/login"))
    obs = await browser.observe()
    remember = index_of(obs, "checkbox", "Remember me")
    assert (await browser.act(ClickAction(index=remember))).message.endswith("now unchecked")
    assert f'[{remember}] checkbox "Remember me" unchecked' in (await browser.observe()).render()
    not_text = await browser.act(TypeAction(index=remember, text="x"))
    assert not not_text.success and "not a text field" in (not_text.error or "")
    missing = await browser.act(ClickAction(index=99))
    assert missing.stale and missing.error == "there is no element [99] on this page"
    await browser.goto(site.url("/search"))
    obs = await browser.observe()
    bad = await browser.act(
        SelectAction(index=index_of(obs, "combobox", "Section"), option="sports")
    )
    assert not bad.success and '"All", "Geography", "Technology"' in (bad.error or "")


async def test_allowed_redirect_chains_are_followed(site: TestSite, browser: HttpBrowser) -> None:
    await browser.goto(site.url("/hop1"))
    assert browser.url == site.url("/articles/lighthouses")
    assert "Fresnel" in (await browser.observe()).text


async def test_redirects_to_private_addresses_are_refused_at_the_hop(
    site: TestSite, browser: HttpBrowser
) -> None:
    await browser.goto(site.url("/"))
    for path, why in (("/go-private", "link-local"), ("/go-ten", "private address")):
        with pytest.raises(URLNotAllowed, match=why):
            await browser.goto(site.url(path))
    assert browser.url == site.url("/")  # still on the page before


async def test_a_redirect_loop_is_an_error(site: TestSite, browser: HttpBrowser) -> None:
    with pytest.raises(BrowserError, match="more than 10 redirects"):
        await browser.goto(site.url("/loop"))


async def test_page_size_is_capped_and_said(site: TestSite) -> None:
    browser = make_browser(max_page_bytes=20_000)
    try:
        await browser.goto(site.url("/big"))
        obs = await browser.observe()
        assert obs.note == "page cut at 20000 bytes"
        assert "Note: page cut at 20000 bytes" in obs.render()
    finally:
        await browser.close()


async def test_a_slow_page_times_out(site: TestSite) -> None:
    browser = make_browser(timeout_s=0.3)
    try:
        with pytest.raises(BrowserError, match="timed out"):
            await browser.goto(site.url("/slow?s=2"))
    finally:
        await browser.close()


async def test_back_shows_the_previous_page_without_fetching_it(
    site: TestSite, browser: HttpBrowser
) -> None:
    await browser.goto(site.url("/articles/"))
    obs = await browser.observe()
    await browser.act(ClickAction(index=index_of(obs, "link", "Atlantis")))
    fetched = len(site.requests)
    result = await browser.act(BackAction())
    assert result.navigated and browser.url == site.url("/articles/")
    assert len(site.requests) == fetched
    assert not (await make_browser().act(BackAction())).success


async def test_goto_forms_and_non_html_pages(site: TestSite, browser: HttpBrowser) -> None:
    await browser.act(GotoAction(url=site.url("/searx/search?q=atlantis&format=json")))
    obs = await browser.observe()
    assert obs.elements == [] and '"engine": "atlas"' in obs.text
    await browser.act(GotoAction(url="/articles/atlantis"))  # relative to the page
    assert browser.url == site.url("/articles/atlantis")
    missing = await browser.act(GotoAction(url="/nowhere"))
    assert missing.message.endswith("(HTTP 404)")
    assert (await browser.observe()).note == "HTTP 404"


async def test_scroll_moves_through_a_long_page(site: TestSite) -> None:
    browser = make_browser(observation_tokens=300)
    try:
        await browser.goto(site.url("/many"))
        first = await browser.observe()
        assert first.truncated and first.elements_below
        assert (await browser.act(ScrollAction(direction="down"))).success
        second = await browser.observe()
        assert second.elements[0].index > first.elements[-1].index
        assert (await browser.act(ScrollAction(direction="up"))).success
        assert not (await browser.act(ScrollAction(direction="up"))).success
    finally:
        await browser.close()


async def test_a_stale_index_is_re_found_by_signature(site: TestSite, browser: HttpBrowser) -> None:
    await browser.goto(site.url("/reorder"))
    seen = await browser.observe()
    target = index_of(seen, "link", "Target")
    await browser.act(ClickAction(index=index_of(seen, "link", "Shuffle")))  # new order
    result = await run_action(browser, ClickAction(index=target), seen)
    assert result.success and result.resolved_by == "signature"
    assert TARGET_CODE in (await browser.observe()).text


class FlakyBrowser:
    """A real (tiny) Browser whose element shows up only after a refresh of the map."""

    def __init__(self) -> None:
        self.refreshed = 0
        self.acted: list[int] = []
        self.url = "https://flaky.example/"
        self.title = "Flaky"

    async def goto(self, url: str) -> None:
        self.url = url

    async def observe(self) -> Observation:
        self.refreshed += 1
        return Observation(self.url, self.title, [], "", False)

    async def page_text(self) -> str:
        return ""

    async def act(
        self, action: BrowserAction, target: ElementSignature | None = None
    ) -> ActionResult:
        if self.refreshed < 1:
            return ActionResult.failed(
                action.action, "element [3] is no longer on the page", stale=True
            )
        self.acted.append(getattr(action, "index", 0))
        return ActionResult(action.action, message="clicked")

    async def back(self) -> None:
        pass

    async def close(self) -> None:
        pass


async def test_a_stale_target_refreshes_the_map_and_retries_once() -> None:
    browser = FlakyBrowser()
    signature = ElementSignature(role="button", text="Go")
    seen = Observation("u", "t", [Element(3, "button", "Go", signature)], "", False)
    result = await run_action(browser, ClickAction(index=3), seen)
    assert result.success and result.resolved_by == "refresh"
    assert browser.refreshed == 1 and browser.acted == [3]


async def test_a_second_stale_failure_is_returned(site: TestSite, browser: HttpBrowser) -> None:
    await browser.goto(site.url("/articles/"))
    seen = await browser.observe()
    await browser.goto(site.url("/search"))
    result = await run_action(browser, ClickAction(index=index_of(seen, "link", "Atlantis")), seen)
    assert not result.success and result.stale
    assert result.error == 'element [5] (link "Atlantis") is no longer on the page'
