"""The ``Browser`` protocol both backends implement, and ``open_browser`` to pick one.

::

    browser = open_browser(browser_config(config), firewall)  # "http" unless configured
    await browser.goto("https://example.com")
    observation = await browser.observe()
    result = await browser.act(ClickAction(index=3))
    await browser.close()

``act`` returns an ``ActionResult``; a mistake the model made (no such element, not a text
field, no such option) is a failed result, not an exception. It raises ``URLNotAllowed`` when
the firewall refuses a navigation and ``BrowserError`` when the network or the browser fails.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable
from urllib.parse import urljoin

from skillrt.exceptions import UserError
from skillrt.skills.browsing.actions import ActionResult, BrowserAction
from skillrt.skills.browsing.config import BrowserConfig
from skillrt.skills.browsing.firewall import URLFirewall
from skillrt.skills.browsing.observation import (
    Element,
    ElementSignature,
    Observation,
    find_by_signature,
    signature_score,
)

if TYPE_CHECKING:
    from skillrt.skills.browsing.secret_guard import SecretGuard

__all__ = ["Backend", "Browser", "firewall_from_config", "open_browser", "resolve_element"]

Backend = Literal["http", "chromium"]
_HAS_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


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


def absolute_url(url: str, current: str) -> str:
    """``url`` made absolute: relative to the current page, or ``https://`` when bare."""
    url = url.strip()
    if _HAS_SCHEME.match(url) and not re.match(r"^[\w.-]+:\d+(/|$)", url):
        return url
    if url.startswith(("/", "?", "#", ".")) and current:
        return urljoin(current, url)
    return "https://" + url.lstrip("/")


def resolve_element(
    elements: list[Element], index: int, target: ElementSignature | None
) -> tuple[Element | None, Literal["index", "signature"], str]:
    """Find the element an action means: by index when it still matches, else by signature.

    Returns ``(element, how, error)``; ``element`` is None (with the error) when neither works.
    """
    by_index = next((e for e in elements if e.index == index), None)
    if target is None:
        if by_index is None:
            return None, "index", f"there is no element [{index}] on this page"
        return by_index, "index", ""
    if by_index is not None and signature_score(target, by_index.signature) >= 1.0:
        return by_index, "index", ""
    found = find_by_signature(target, elements, near=index)
    if found is None:
        label = f'{target.role} "{target.text}"' if target.text else target.role
        return None, "signature", f"element [{index}] ({label}) is no longer on the page"
    return found, ("index" if found is by_index else "signature"), ""


def firewall_from_config(config: BrowserConfig) -> URLFirewall:
    """The firewall the config describes (allow, deny, allow_private)."""
    try:
        return URLFirewall(config.allow, config.deny, config.allow_private)
    except ValueError as exc:
        raise UserError(str(exc)) from exc


def open_browser(
    config: BrowserConfig,
    firewall: URLFirewall | None = None,
    *,
    backend: Backend | None = None,
    guard: SecretGuard | None = None,
) -> Browser:
    """A browser of the configured (or given) backend; Chromium needs ``skillrt[browser]``.
    With a ``guard``, secrets go only to their origins (``secret_guard``)."""
    firewall = firewall or firewall_from_config(config)
    chosen = backend or config.backend
    if chosen == "chromium":
        from skillrt.skills.browsing.chromium_browser import ChromiumBrowser

        return ChromiumBrowser(config, firewall, guard=guard)
    from skillrt.skills.browsing.http_browser import HttpBrowser

    return HttpBrowser(config, firewall, guard=guard)
