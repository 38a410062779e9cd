"""``open_browser``: a browser of the configured backend, behind the configured firewall.

::

    browser = open_browser(browser_config(config), firewall)  # "http" unless configured

Both backends are imported here, at the top: importing ``chromium_browser`` loads no
Playwright (it is imported when Chromium first starts), and nothing a backend imports leads
back here, so the package has no import cycle, not even through a function's imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillrt.exceptions import UserError
from skillrt.skills.browsing.browser import Backend, Browser
from skillrt.skills.browsing.chromium_browser import ChromiumBrowser
from skillrt.skills.browsing.config import BrowserConfig
from skillrt.skills.browsing.firewall import URLFirewall
from skillrt.skills.browsing.http_browser import HttpBrowser

if TYPE_CHECKING:
    from skillrt.skills.browsing.secret_guard import SecretGuard

__all__ = ["firewall_from_config", "open_browser"]


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
        return ChromiumBrowser(config, firewall, guard=guard)
    return HttpBrowser(config, firewall, guard=guard)
