"""``ChromiumBrowser``: Playwright driving an installed Chromium (``skillrt[browser]``).

Playwright is imported when the browser first starts, and fails with ``MissingDependency``
when it is missing. Chromium is the one at ``browser.chromium_path`` or ``/usr/bin/chromium``
(Debian's package), launched headless without a sandbox, GPU, QUIC, first-run, background
networking, component updates or sync, with a fresh temporary profile (Playwright creates one
per launch and removes it at close). ``playwright install`` is not needed.

The firewall sees every request: a route on the context checks each URL, fetches allowed
ones itself without following redirects, and refuses the rest. The fetch is not Playwright's
(``route.fetch`` resolved the host name again after the check: DNS rebinding); it goes
through the HTTP backend's pinned transport (``route_fetch.py``) to the addresses the
firewall approved, with the URL's host name kept for ``Host``, SNI and the certificate, and
Chromium's own headers (its ``Cookie`` too); the answer is handed to the page with
``route.fulfill``, each ``Set-Cookie`` kept, so the browser stores its cookies itself. A
redirect of a navigation is answered with a small page (carrying the redirect's cookies) that
refreshes to the target, so the browser requests the next hop itself and the route checks it
too; redirects of other requests are followed in the route, each hop checked and pinned, with
the browser's cookies for that hop's URL (``route_fetch.next_hop``: a 303 makes a GET, another
origin gets no ``Authorization``; a ``Set-Cookie`` on such an in-between hop is not stored).
WebSockets are refused (only http and https are allowed), and so is WebRTC (no UDP without a
proxy, and no ``RTCPeerConnection`` in any frame): its STUN packets to an IP literal went past
the route. Chromium's own network stack resolves nothing
(``--host-resolver-rules="MAP * ~NOTFOUND"``), so a request that escaped the route reaches no
host. A fetch that cannot connect fails the navigation with ``could not fetch …`` (a
recoverable ``BrowserError``), a name that does not resolve with ``HostUnresolved``.
A navigation the firewall refused raises ``URLNotAllowed`` after the page is put back where
it was. ``browser.timeout_s`` is a total deadline per navigation (a ``goto``, or what a click or
a submit opened): every hop, each body to its last byte and the page's load; past it the page
is put back too and a recoverable ``BrowserError`` says it timed out.

Observations use the same rules as the HTTP backend: a JavaScript snippet lists the elements
(and tags each with ``data-skillrt-idx``), the readable text comes from the rendered DOM.
"""

from __future__ import annotations

import asyncio
import html
import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import httpx

from skillrt._io.lazy import import_off_loop
from skillrt.exceptions import BrowserError, HostUnresolved, MissingDependency, URLNotAllowed
from skillrt.skills.browsing.actions import (
    ActionResult,
    BackAction,
    BrowserAction,
    ClickAction,
    GotoAction,
    ScrollAction,
    SelectAction,
    SubmitAction,
    TypeAction,
)
from skillrt.skills.browsing.chromium_js import (
    EXTRACT_ELEMENTS,
    IS_REDIRECT_STUB,
    SUBMIT_FORM,
    TAG_ATTRIBUTE,
)
from skillrt.skills.browsing.fetcher import DEFAULT_USER_AGENT, MAX_REDIRECTS
from skillrt.skills.browsing.observation import (
    PASSWORD_FILLED,
    Element,
    ElementSignature,
    Observation,
    SeenElements,
    Viewport,
    compose_observation,
)
from skillrt.skills.browsing.page_reader import read_text
from skillrt.skills.browsing.route_fetch import (
    RouteAnswer,
    RouteFetcher,
    cookie_header,
    forwarded_headers,
    next_hop,
)
from skillrt.skills.browsing.targets import absolute_url, resolve_element

if TYPE_CHECKING:
    from playwright.async_api import Browser as PWBrowser
    from playwright.async_api import (
        BrowserContext,
        Page,
        Playwright,
        Route,
        WebSocketRoute,
    )

    from skillrt.skills.browsing.config import BrowserConfig
    from skillrt.skills.browsing.firewall import URLFirewall
    from skillrt.skills.browsing.secret_guard import SecretGuard

__all__ = ["CHROMIUM_ARGS", "NO_WEBRTC", "ChromiumBrowser", "find_chromium"]

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Chromium's own network stack resolves nothing (IP literals included): every request
    # must go through the firewall's route, whose fetch is made here (route_fetch), pinned to
    # the addresses the firewall approved, not by Chromium.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    # WebRTC sends UDP (STUN to any IP literal: 127.0.0.1, the LAN) past the route and the
    # resolver rules: a page could probe private ports. No UDP without a proxy, and there is
    # none. (``--force-webrtc-ip-handling-policy`` does not do it.)
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
]
NO_WEBRTC = """(() => {
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel",
                      "RTCIceCandidate", "RTCSessionDescription", "RTCRtpSender"]) {
    try { Object.defineProperty(window, name, {value: undefined, writable: false,
                                               configurable: false}); } catch (e) {}
  }
})();"""
"""Run in every frame before its scripts: no page gets a WebRTC connection object at all (the
launch flag above stops its UDP; this is the second wall, should a Chromium drop the flag)."""
DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
MAX_HISTORY = 20
BIG_BODY_FACTOR = 10
"""A body whose Content-Length is over this many times ``max_page_bytes`` is refused unread."""
LAUNCH_TIMEOUT_MS = 30_000.0
"""How long Chromium may take to start (not bounded by ``browser.timeout_s``, which is per
navigation: a loaded machine takes seconds to start it, and a short timeout_s failed there)."""
ACT_TIMEOUT_MS = 5000.0
"""How long a click, fill or select waits for its element to be actionable."""


def find_chromium(configured: Path | None = None) -> Path | None:
    """The Chromium to launch: the configured path, Debian's, one on PATH, else None.

    None leaves the choice to Playwright (its own download, if ``playwright install`` ran).
    """
    if configured is not None:
        return configured.expanduser()
    if DEBIAN_CHROMIUM.exists():
        return DEBIAN_CHROMIUM
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return Path(found)
    return None


def _stub(target: str) -> str:
    quoted = html.escape(target, quote=True)
    return (
        f'<!doctype html><meta name="skillrt-redirect" content="{quoted}">'
        f'<meta http-equiv="refresh" content="0;url={quoted}"><title>Redirecting</title>'
    )


def _element(item: dict[str, Any]) -> Element:
    signature = ElementSignature(
        role=item["role"],
        text=item["text"],
        id=item["id"],
        name=item["name"],
        aria_label=item["aria_label"],
        href=item["href"],
        placeholder=item["placeholder"],
        type=item["type"],
    )
    value = PASSWORD_FILLED if item["filled"] else item["value"]
    return Element(
        index=item["index"],
        role=item["role"],
        text=item["text"],
        signature=signature,
        tag=item["tag"],
        href=item["href"] or None,
        value=value,
        options=tuple(item["options"]),
        selected=tuple(item["selected"]),
        checked=item["checked"],
        disabled=item["disabled"],
    )


def _elements(found: str) -> list[Element]:
    return [_element(item) for item in json.loads(found)]


class ChromiumBrowser:
    """A Chromium tab behind the URL firewall. Starts on first use; ``close()`` ends it."""

    def __init__(
        self,
        config: BrowserConfig,
        firewall: URLFirewall,
        *,
        executable_path: Path | None = None,
        user_agent: str | None = DEFAULT_USER_AGENT,
        guard: SecretGuard | None = None,
    ) -> None:
        self.firewall = firewall
        self.guard = guard
        self.executable_path = executable_path or find_chromium(config.chromium_path)
        self.timeout_s = config.timeout_s
        self.timeout_ms = config.timeout_s * 1000
        self.act_timeout_ms = min(self.timeout_ms, ACT_TIMEOUT_MS)
        self.max_bytes = config.max_page_bytes
        self.observation_tokens = config.observation_tokens
        self.parse_timeout_s = config.parse_timeout_s
        self.user_agent = user_agent
        self._pw: Playwright | None = None
        self._browser: PWBrowser | None = None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._refused: list[URLNotAllowed | BrowserError] = []
        self._chain: tuple[str, str, int] = ("", "", 0)  # a navigation's redirects: from, to, n
        self._history: list[str] = []
        self._elements: list[Element] = []
        self._viewport = Viewport()
        self._seen = SeenElements()
        self._last_field: int | None = None
        self._title = ""
        self._navigations = 0  # main-frame navigation requests the route has seen
        self._fetcher: RouteFetcher | None = None  # the route's pinned connections

    # --- life cycle -----------------------------------------------------------------------

    async def _ensure(self) -> Page:
        if self._page is not None:
            return self._page
        try:
            await import_off_loop(["playwright.async_api"])  # ~65 ms: not on the event loop
            from playwright.async_api import async_playwright
        except ImportError as exc:
            raise MissingDependency(
                "the chromium browsing backend",
                "browser",
                "It drives an installed Chromium (e.g. apt install chromium); "
                "`playwright install` is not needed.",
            ) from exc
        if self.executable_path is not None and not self.executable_path.exists():
            raise BrowserError(f"no Chromium at {self.executable_path}", recoverable=False)
        self._pw = await async_playwright().start()
        self._fetcher = RouteFetcher()
        try:
            self._browser = await self._pw.chromium.launch(
                executable_path=str(self.executable_path) if self.executable_path else None,
                headless=True,
                args=CHROMIUM_ARGS,
                timeout=max(self.timeout_ms, LAUNCH_TIMEOUT_MS),  # a start is no navigation
            )
            self._context = await self._browser.new_context(
                service_workers="block", accept_downloads=False, user_agent=self.user_agent
            )
            await self._context.add_init_script(NO_WEBRTC)
            await self._context.route("**/*", self._route)
            await self._context.route_web_socket("**/*", self._refuse_socket)
            self._page = await self._context.new_page()
        except Exception as exc:
            await self.close()
            raise BrowserError(f"cannot start Chromium: {exc}", recoverable=False) from exc
        self._page.set_default_timeout(self.timeout_ms)
        return self._page

    async def close(self) -> None:
        browser, pw, fetcher = self._browser, self._pw, self._fetcher
        self._page = self._context = self._browser = None
        self._pw = self._fetcher = None
        try:
            if browser is not None:
                await browser.close()
        finally:
            try:
                if pw is not None:
                    await pw.stop()
            finally:
                if fetcher is not None:
                    await fetcher.aclose()

    # --- the firewall in the route --------------------------------------------------------

    async def _route(self, route: Route) -> None:
        """Check and fetch one request; ``browser.timeout_s`` bounds all the hops it follows
        and the body to its last byte."""
        request = route.request
        navigation = request.is_navigation_request()
        main_frame = navigation and request.frame.parent_frame is None
        self._navigations += main_frame
        try:
            try:
                async with asyncio.timeout(self.timeout_s):
                    await self._answer(route, navigation, main_frame)
            except TimeoutError:
                await route.abort("timedout")
        except Exception as exc:  # the page went away (or was stopped) while this was fetched
            if "closed" not in str(exc).lower() and "handled" not in str(exc).lower():
                raise

    async def _answer(self, route: Route, navigation: bool, main_frame: bool) -> None:
        """Each hop: the guard and the firewall, then a fetch pinned to the approved addresses
        (``route_fetch``), never following a redirect itself."""
        request = route.request
        url, method, body = request.url, request.method, request.post_data_buffer
        headers = forwarded_headers(await request.all_headers())  # Chromium's Cookie with it
        fetcher, context = self._fetcher, self._context
        if fetcher is None or context is None:  # the browser was closed meanwhile
            await route.abort("failed")
            return
        for _ in range(MAX_REDIRECTS + 1):
            try:
                if self.guard is not None:  # a secret in the URL or the body: not here
                    self.guard.check_request(url, body)
                approval = await self.firewall.approve(url)
            except (URLNotAllowed, HostUnresolved) as exc:
                if main_frame:
                    self._refused.append(exc)
                why = "blockedbyclient" if isinstance(exc, URLNotAllowed) else "namenotresolved"
                await route.abort(why)
                return
            try:
                answer = await fetcher.send(
                    approval, method, url, headers, body, timeout_s=self.timeout_s
                )
            except httpx.HTTPError as exc:
                await self._failed(route, url, exc, main_frame)
                return
            location = answer.header("location")
            if not (300 <= answer.status < 400 and location):
                break
            try:  # read as any body is (within the deadline), so the connection can be reused
                await answer.read(self.max_bytes)
            except httpx.HTTPError:
                pass  # a redirect's body is not shown: one cut short does not matter
            finally:
                await answer.aclose()
            target = urljoin(url, location)
            if navigation:  # the browser asks for the next hop itself, and the route checks it
                if main_frame and self._redirected(url, target):
                    await route.abort("failed")
                    return
                stub = {"content-type": "text/html", **answer.set_cookies()}
                await route.fulfill(status=200, headers=stub, body=_stub(target))
                return
            method, body, headers = next_hop(answer.status, method, body, headers, url, target)
            url = target  # its cookies are the browser's for that URL, not the first one's
            cookies = cookie_header(await context.cookies(url))
            if cookies:
                headers["cookie"] = cookies
        else:
            await route.abort("failed")
            return
        try:
            await self._deliver(route, answer, navigation, main_frame)
        finally:
            await answer.aclose()

    def _redirected(self, url: str, target: str) -> bool:
        """Count a navigation's redirects (each one a stub page the browser follows); True,
        the error noted, past ``MAX_REDIRECTS``, as the HTTP backend's fetcher says it. A
        redirect loop went on to the navigation's deadline and was reported as "timed out
        fetching …: no complete answer within 5 s"."""
        start, expected, hops = self._chain
        if url != expected:  # (a navigation of its own, not the next hop of one)
            start, hops = url, 0
        self._chain = (start, target, hops + 1)
        if hops + 1 <= MAX_REDIRECTS:
            return False
        self._refused.append(BrowserError(f"more than {MAX_REDIRECTS} redirects from {start}"))
        return True

    async def _deliver(
        self, route: Route, answer: RouteAnswer, navigation: bool, main_frame: bool
    ) -> None:
        """Hand a fetched answer to the page, cut at ``max_page_bytes``.

        Chromium gets the body as it came, so an encoded one would be decoded there whole (a
        200 KB gzip bomb: 200 MB). So the route asks for no encoding, and a body that came
        encoded anyway, or whose length says it is far over the cap, is refused unread; any
        other is read to at most one byte over the cap."""
        encoding = answer.header("content-encoding", "identity").strip().lower()
        length = answer.header("content-length")
        too_big = length.isdigit() and int(length) > BIG_BODY_FACTOR * self.max_bytes
        if encoding not in ("", "identity") or too_big:
            if main_frame:
                why = (
                    f"came {encoding}-encoded though none was asked for"
                    if not too_big
                    else (f"is {length} bytes, far over browser.max_page_bytes")
                )
                self._refused.append(
                    BrowserError(f"the page at {route.request.url} {why}; refused unread")
                )
            await route.abort("failed")
            return
        try:
            body = await answer.read(self.max_bytes)
        except httpx.HTTPError as exc:  # the server went away mid-body
            await self._failed(route, route.request.url, exc, main_frame)
            return
        if len(body) <= self.max_bytes or navigation:
            await route.fulfill(
                status=answer.status, headers=answer.fulfill_headers(), body=body[: self.max_bytes]
            )
        else:
            await route.abort("failed")

    async def _failed(self, route: Route, url: str, exc: httpx.HTTPError, main_frame: bool) -> None:
        """A fetch that could not connect or was cut off: a navigation fails saying so."""
        if main_frame:
            self._refused.append(
                BrowserError(f"could not fetch {url}: {str(exc) or type(exc).__name__}")
            )
        await route.abort("failed")

    async def _refuse_socket(self, ws: WebSocketRoute) -> None:
        await ws.close(code=1008, reason="WebSockets are not allowed")

    @asynccontextmanager
    async def _deadline(self, page: Page, url: str) -> AsyncIterator[None]:
        """``browser.timeout_s`` for a navigation as a whole: every hop (each redirect stub the
        page follows), each body to its last byte and the page's load. When it passes, the
        page stops loading and is put back where it was, so nothing half-loaded becomes the
        page, and a recoverable ``BrowserError`` says so."""
        try:
            async with asyncio.timeout(self.timeout_s):
                yield
        except TimeoutError:
            await self._put_back(page)
            raise BrowserError(
                f"timed out fetching {url}: no complete answer within "
                f"{self.timeout_s:g} s (browser.timeout_s)"
            ) from None

    async def _put_back(self, page: Page) -> None:
        """Replace a navigation cut at its deadline with the last page (or a blank one): a new
        navigation cancels the pending one, whose late answer or error page then lands nowhere."""
        back = self._history[-1] if self._history else "about:blank"
        with suppress(Exception):
            async with asyncio.timeout(self.timeout_s):
                await page.goto(back, wait_until="load")

    async def _settle(self, page: Page) -> None:
        """Wait until the page loaded and any redirect stub has been followed (callers bound
        this with ``_deadline``)."""
        while True:
            try:
                await page.wait_for_load_state("load")
                if not await page.evaluate(IS_REDIRECT_STUB):
                    break
            except Exception as exc:
                if "closed" in str(exc).lower():
                    raise BrowserError(f"Chromium went away: {exc}", recoverable=False) from exc
            await asyncio.sleep(0.05)
        if self._refused:
            refused = self._refused[-1]
            self._refused.clear()
            if page.url.startswith("chrome-error:") and self._history:
                await page.goto(self._history[-1], wait_until="load")
            raise refused
        await self._follow(page)

    async def _follow(self, page: Page) -> None:
        """Note where the page is now (a script or a late redirect may have moved it)."""
        if not page.url.startswith(("http:", "https:")):
            return
        if not self._history or self._history[-1] != page.url:
            self._history.append(page.url)
            del self._history[:-MAX_HISTORY]
            self._viewport.reset()
        try:
            self._title = await page.title()
        except Exception as exc:
            raise _browser_error(exc) from exc

    # --- the protocol ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        return self._history[-1] if self._history else ""

    @property
    def title(self) -> str:
        return self._title

    async def goto(self, url: str) -> None:
        target = absolute_url(url, self.url)
        if self.guard is not None:
            self.guard.check_request(target)
        await self.firewall.check(target)  # refuses what the route never sees (file:, chrome:)
        page = await self._ensure()
        self._refused.clear()
        async with self._deadline(page, target):
            try:
                await page.goto(target, wait_until="load", timeout=0)  # the deadline bounds it
            except Exception as exc:
                if not self._refused:
                    raise _browser_error(exc) from exc
            await self._settle(page)

    async def observe(self) -> Observation:
        if self._page is None or not self._history:
            return Observation(url="about:blank", title="", elements=[], text="", truncated=False)
        await self._follow(self._page)
        self._elements = await self._extract(self._page)
        text = await read_text(await self._page.content(), self.url, timeout_s=self.parse_timeout_s)
        observation = compose_observation(
            self.url,
            self.title,
            self._elements,
            text,
            budget_tokens=self.observation_tokens,
            viewport=self._viewport,
            previous=self._seen.previous(self.url),
        )
        self._seen.remember(self.url, self._elements)
        return observation

    async def page_text(self) -> str:
        if self._page is None:
            return ""
        html = await self._page.content()
        return await read_text(html, self.url, timeout_s=self.parse_timeout_s)

    async def back(self) -> None:
        if len(self._history) < 2:
            return
        self._history.pop()
        previous = self._history.pop()
        await self.goto(previous)

    async def act(
        self, action: BrowserAction, target: ElementSignature | None = None
    ) -> ActionResult:
        name = action.action
        if isinstance(action, GotoAction):
            await self.goto(action.url)
            return self._navigated(name)
        if isinstance(action, BackAction):
            if len(self._history) < 2:
                return ActionResult.failed(name, "there is no previous page")
            await self.back()
            return self._navigated(name)
        if isinstance(action, ScrollAction):
            moved = self._viewport.scroll(action.direction)
            if self._page is not None:
                sign = -1 if action.direction == "up" else 1
                await self._page.evaluate(f"window.scrollBy(0, {sign} * window.innerHeight * 0.8)")
            return ActionResult.scrolled(name, action.direction, moved)
        page = self._page
        if page is None:
            return ActionResult.failed(name, "no page is open")
        if isinstance(action, SubmitAction) and action.index is None:
            return await self._submit(page, self._last_field)
        index = action.index
        if index is None:
            return ActionResult.failed(name, "no element given")
        self._elements = await self._extract(page)
        element, how, error = resolve_element(self._elements, index, target)
        if element is None:
            return ActionResult.failed(name, error, stale=True)
        if element.disabled:
            return ActionResult.failed(name, f"element [{element.index}] is disabled")
        try:
            result = await self._on_element(page, action, element)
        except (URLNotAllowed, BrowserError):
            raise
        except Exception as exc:
            if not await page.locator(f'[{TAG_ATTRIBUTE}="{element.index}"]').count():
                error = f"element [{element.index}] vanished while acting on it"
                return ActionResult.failed(name, error, stale=True)
            raise _browser_error(exc) from exc
        if result.success and result.resolved_by is None:
            result.resolved_by = how
        return result

    # --- helpers --------------------------------------------------------------------------

    async def _extract(self, page: Page) -> list[Element]:
        try:
            found = await page.evaluate(EXTRACT_ELEMENTS)  # one JSON string (chromium_js)
        except Exception as exc:
            raise _browser_error(exc) from exc
        if not isinstance(found, str):
            return []
        return await asyncio.to_thread(_elements, found)  # up to 3000: off the loop

    def _navigated(self, name: str) -> ActionResult:
        return ActionResult(name, message=f"opened {self.url}", navigated=True, url=self.url)

    async def _on_element(
        self, page: Page, action: BrowserAction, element: Element
    ) -> ActionResult:
        locator = page.locator(f'[{TAG_ATTRIBUTE}="{element.index}"]')
        name = action.action
        if isinstance(action, TypeAction):
            if element.role not in ("textbox", "searchbox"):
                return ActionResult.failed(
                    name, f"[{element.index}] is a {element.role}, not a text field"
                )
            if self.guard is not None:  # before typing: is the secret allowed on this origin?
                password = element.signature.type == "password"
                self.guard.check_type(action.text, self.url, password_field=password)
            await locator.fill(action.text, timeout=self.act_timeout_ms)
            self._last_field = element.index
            return ActionResult(name, message=f"typed into [{element.index}]")
        if isinstance(action, SelectAction):
            if element.role not in ("combobox", "listbox"):
                return ActionResult.failed(
                    name, f"[{element.index}] is a {element.role}, not a drop-down"
                )
            want = action.option.strip().casefold()
            for match in (
                lambda o: o.casefold() == want,
                lambda o: o.casefold().startswith(want),
                lambda o: want in o.casefold(),
            ):
                hits = [o for o in element.options if match(o)]
                if hits:
                    await locator.select_option(label=hits[0], timeout=self.act_timeout_ms)
                    self._last_field = element.index
                    return ActionResult(name, message=f'selected "{hits[0]}" in [{element.index}]')
            try:
                await locator.select_option(value=action.option, timeout=self.act_timeout_ms)
                return ActionResult(
                    name, message=f'selected "{action.option}" in [{element.index}]'
                )
            except Exception:
                shown = ", ".join(f'"{o}"' for o in element.options[:20])
                return ActionResult.failed(
                    name, f'no option "{action.option}" in [{element.index}]; options: {shown}'
                )
        if isinstance(action, SubmitAction) and element.role != "button":
            return await self._submit(page, element.index)
        if isinstance(action, ClickAction | SubmitAction):
            return await self._click(page, locator, element)
        return ActionResult.failed(name, f"{name} does not take an element")

    async def _click(self, page: Page, locator: Any, element: Element) -> ActionResult:
        before = len(self._history), page.url
        self._refused.clear()
        navigations = self._navigations
        async with self._deadline(page, f"the page [{element.index}] opened"):
            try:  # Playwright also waits here for a navigation the click started
                await locator.click(timeout=self.act_timeout_ms)
            except Exception:
                if self._navigations == navigations:
                    raise  # the click itself failed
                # else only the page it opened is slow: the deadline bounds the wait for it
            await asyncio.sleep(0.05)  # let a navigation the click started begin
            await self._settle(page)
        if (len(self._history), page.url) != before:
            return self._navigated("click")
        if element.role in ("textbox", "searchbox", "combobox", "listbox"):
            self._last_field = element.index
        return ActionResult("click", message=f"clicked [{element.index}]")

    async def _submit(self, page: Page, index: int | None) -> ActionResult:
        handle = None
        if index is not None:
            handle = await page.query_selector(f'[{TAG_ATTRIBUTE}="{index}"]')
        self._refused.clear()
        if not await page.evaluate(SUBMIT_FORM, handle):
            return ActionResult.failed("submit", "which form? give the index of one of its fields")
        async with self._deadline(page, "the form's answer"):
            await asyncio.sleep(0.05)
            await self._settle(page)
        return self._navigated("submit")


def _browser_error(exc: BaseException) -> BrowserError:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    closed = any(s in text.lower() for s in ("has been closed", "target closed", "crashed"))
    return BrowserError(f"Chromium: {text}", recoverable=not closed)
