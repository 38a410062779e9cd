"""The ``Browser`` protocol both backends implement, and ``run_action`` over it.

::

    browser = open_browser(browser_config(config), firewall)  # backends.py
    await browser.goto("https://example.com")
    observation = await browser.observe()
    result = await browser.act(ClickAction(index=3))
    await browser.close()

``act`` returns an ``ActionResult``; a mistake the model made (no such element, not a text
field, no such option) is a failed result, not an exception. It raises ``URLNotAllowed`` when
the firewall refuses a navigation and ``BrowserError`` when the network or the browser fails.

``run_action`` carries out a browser action: the index the model gave is looked up in the
observation it saw, and the element's signature travels with the action; if the page changed
and the index no longer points at that element, the browser re-finds it by signature; if that
fails, the element map is refreshed and the action retried once. A second failure is returned
(``stale``) for the executor to send back to the planner.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from skillrt.skills.browsing.actions import ActionResult, BrowserAction
from skillrt.skills.browsing.observation import ElementSignature, Observation

__all__ = ["Backend", "Browser", "run_action", "target_of"]

Backend = Literal["http", "chromium"]


@runtime_checkable
class Browser(Protocol):
    """One tab: navigate, observe, act. Implementations: HttpBrowser, ChromiumBrowser."""

    @property
    def url(self) -> str: ...

    @property
    def title(self) -> str: ...

    async def goto(self, url: str) -> None: ...

    async def observe(self) -> Observation: ...

    async def page_text(self) -> str:
        """The whole readable text of the page (not just the observed window)."""
        ...

    async def act(
        self, action: BrowserAction, target: ElementSignature | None = None
    ) -> ActionResult: ...

    async def back(self) -> None: ...

    async def close(self) -> None: ...


def target_of(action: BrowserAction, seen: Observation | None) -> ElementSignature | None:
    """The signature of the element the model meant, from the observation it saw."""
    index = getattr(action, "index", None)
    if index is None or seen is None:
        return None
    element = seen.element(index)
    return element.signature if element is not None else None


async def run_action(
    browser: Browser, action: BrowserAction, seen: Observation | None
) -> ActionResult:
    """Act; on a stale target refresh the element map and retry once."""
    target = target_of(action, seen)
    result = await browser.act(action, target)
    if result.stale:
        await browser.observe()
        result = await browser.act(action, target)
        if result.success:
            result.resolved_by = "refresh"
    return result
