"""``HttpBrowser``: a browser without JavaScript, over httpx and selectolax.

It follows links, fills and submits forms (GET and POST, with hidden inputs, selects, check
boxes, radio buttons and default values), keeps cookies, checks the firewall at every request
and redirect hop (``SafeFetcher``), caps page size, and goes back through its own history of
parsed pages (the previous page is shown again, not fetched again, as a browser's cache would).
Elements that only work with JavaScript are not listed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urlencode, urljoin, urlsplit, urlunsplit

from selectolax.lexbor import LexborNode

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
from skillrt.skills.browsing.fetcher import DEFAULT_USER_AGENT, Fetched, SafeFetcher
from skillrt.skills.browsing.html_extract import ParsedPage
from skillrt.skills.browsing.observation import (
    PASSWORD_FILLED,
    Element,
    ElementSignature,
    Observation,
    SeenElements,
    Viewport,
    compose_observation,
)
from skillrt.skills.browsing.page_reader import read_page
from skillrt.skills.browsing.targets import absolute_url, resolve_element

if TYPE_CHECKING:
    import httpx

    from skillrt.skills.browsing.config import BrowserConfig
    from skillrt.skills.browsing.firewall import URLFirewall
    from skillrt.skills.browsing.secret_guard import SecretGuard

__all__ = ["HttpBrowser"]

MAX_HISTORY = 20
FormValue = str | bool | tuple[str, ...]


@dataclass(slots=True)
class _Page:
    fetched: Fetched
    parsed: ParsedPage
    values: dict[int, FormValue] = field(default_factory=dict)
    note: str = ""


def _attr(node: LexborNode, name: str) -> str:
    value = node.attributes.get(name)
    return value if isinstance(value, str) else ""


def _option_value(option: LexborNode) -> str:
    value = option.attributes.get("value")
    return value if isinstance(value, str) else " ".join(option.text(deep=True).split())


class HttpBrowser:
    """A JavaScript-free browser tab. ``transport`` lets tests plug in an httpx transport."""

    def __init__(
        self,
        config: BrowserConfig,
        firewall: URLFirewall,
        *,
        user_agent: str = DEFAULT_USER_AGENT,
        transport: httpx.AsyncBaseTransport | None = None,
        guard: SecretGuard | None = None,
    ) -> None:
        self.guard = guard
        self.fetcher = SafeFetcher(
            firewall,
            timeout_s=config.timeout_s,
            max_bytes=config.max_page_bytes,
            user_agent=user_agent,
            transport=transport,
            guard=guard,
        )
        self.observation_tokens = config.observation_tokens
        self.parse_timeout_s = config.parse_timeout_s
        self._page: _Page | None = None
        self._history: list[_Page] = []
        self._viewport = Viewport()
        self._seen = SeenElements()
        self._last_field: int | None = None

    # --- the protocol ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        return self._page.fetched.url if self._page else ""

    @property
    def title(self) -> str:
        return self._page.parsed.title if self._page else ""

    async def goto(self, url: str) -> None:
        await self._load("GET", absolute_url(url, self.url))

    async def observe(self) -> Observation:
        if self._page is None:
            return Observation(url="about:blank", title="", elements=[], text="", truncated=False)
        page = self._page
        elements = [self._live(e, page) for e in page.parsed.elements]
        observation = compose_observation(
            self.url,
            self.title,
            elements,
            page.parsed.text,
            budget_tokens=self.observation_tokens,
            viewport=self._viewport,
            previous=self._seen.previous(self.url),
            note=page.note,
        )
        self._seen.remember(self.url, elements)
        return observation

    async def page_text(self) -> str:
        return self._page.parsed.text if self._page else ""

    async def act(
        self, action: BrowserAction, target: ElementSignature | None = None
    ) -> ActionResult:
        name = action.action
        if isinstance(action, GotoAction):
            await self.goto(action.url)
            return self._navigated(name)
        if isinstance(action, BackAction):
            had = bool(self._history)
            await self.back()
            if not had:
                return ActionResult.failed(name, "there is no previous page")
            return self._navigated(name)
        if isinstance(action, ScrollAction):
            moved = self._viewport.scroll(action.direction)
            return ActionResult.scrolled(name, action.direction, moved)
        if isinstance(action, SubmitAction) and action.index is None:
            return await self._submit(None, None)
        index = action.index
        if self._page is None or index is None:
            return ActionResult.failed(name, "no page is open")
        element, how, error = resolve_element(self._page.parsed.elements, index, target)
        if element is None:
            return ActionResult.failed(name, error, stale=True)
        if element.disabled:
            return ActionResult.failed(name, f"element [{element.index}] is disabled")
        result = await self._on_element(action, element, self._page)
        if result.success and result.resolved_by is None:
            result.resolved_by = how
        return result

    async def back(self) -> None:
        if self._history:
            self._page = self._history.pop()
            self._page.values.clear()
            self._viewport.reset()

    async def close(self) -> None:
        await self.fetcher.aclose()

    # --- pages ----------------------------------------------------------------------------

    async def _load(self, method: str, url: str, data: list[tuple[str, str]] | None = None) -> None:
        fetched = await self.fetcher.request(method, url, data=data)
        parsed = await read_page(fetched, timeout_s=self.parse_timeout_s)  # off the loop
        notes = []
        if fetched.status >= 400:
            notes.append(f"HTTP {fetched.status}")
        if fetched.truncated:
            notes.append(f"page cut at {self.fetcher.max_bytes} bytes")
        if parsed.cut:
            notes.append(parsed.cut)
        if self._page is not None:
            self._history.append(self._page)
            del self._history[:-MAX_HISTORY]
        self._page = _Page(fetched, parsed, note="; ".join(notes))
        self._viewport.reset()
        self._last_field = None

    def _navigated(self, name: str) -> ActionResult:
        page = self._page
        status = f" (HTTP {page.fetched.status})" if page and page.fetched.status >= 400 else ""
        return ActionResult(
            name, message=f"opened {self.url}{status}", navigated=True, url=self.url
        )

    def _live(self, element: Element, page: _Page) -> Element:
        """The element with what was typed, chosen or ticked on this page so far."""
        value = page.values.get(element.index)
        if value is None:
            return element
        if isinstance(value, bool):
            return dataclasses.replace(element, checked=value)
        if isinstance(value, tuple):
            return dataclasses.replace(element, selected=value)
        if element.signature.type == "password":
            return dataclasses.replace(element, value=PASSWORD_FILLED if value else None)
        return dataclasses.replace(element, value=value)

    # --- element actions ------------------------------------------------------------------

    async def _on_element(
        self, action: BrowserAction, element: Element, page: _Page
    ) -> ActionResult:
        node = page.parsed.nodes[element.index - 1]
        name = action.action
        role = element.role
        if isinstance(action, TypeAction):
            if role not in ("textbox", "searchbox"):
                return ActionResult.failed(name, f"[{element.index}] is a {role}, not a text field")
            if self.guard is not None:  # before typing: is the secret allowed on this origin?
                password = element.signature.type == "password"
                self.guard.check_type(action.text, self.url, password_field=password)
            page.values[element.index] = action.text
            self._last_field = element.index
            return ActionResult(name, message=f"typed into [{element.index}]")
        if isinstance(action, SelectAction):
            return self._select(element, node, action.option, page)
        if isinstance(action, SubmitAction):
            return await self._submit(element, node)
        if isinstance(action, ClickAction):
            return await self._click(element, node, page)
        return ActionResult.failed(name, f"{name} does not take an element")

    async def _click(self, element: Element, node: LexborNode, page: _Page) -> ActionResult:
        if element.role == "link" and element.href:
            target, fragment = urldefrag(element.href)
            if fragment and target == urldefrag(self.url)[0]:
                return ActionResult("click", message=f"#{fragment} is on this page")
            await self._load("GET", element.href)
            return self._navigated("click")
        if element.role == "button":
            return await self._submit(element, node)
        if element.role == "checkbox":
            current = page.values.get(element.index, bool(element.checked))
            page.values[element.index] = not current
            return ActionResult(
                "click", message=f"[{element.index}] is now {'un' if current else ''}checked"
            )
        if element.role == "radio":
            group = _attr(node, "name")
            for other in page.parsed.elements:
                other_node = page.parsed.nodes[other.index - 1]
                if other.role == "radio" and group and _attr(other_node, "name") == group:
                    page.values[other.index] = False
            page.values[element.index] = True
            return ActionResult("click", message=f"[{element.index}] is now selected")
        if element.role in ("textbox", "searchbox", "combobox", "listbox"):
            self._last_field = element.index
            return ActionResult(
                "click", message=f"[{element.index}] has the focus; use type or select"
            )
        return ActionResult.failed(
            "click", f"[{element.index}] needs JavaScript (use the chromium backend)"
        )

    def _select(self, element: Element, node: LexborNode, wanted: str, page: _Page) -> ActionResult:
        if element.role not in ("combobox", "listbox"):
            return ActionResult.failed(
                "select", f"[{element.index}] is a {element.role}, not a drop-down"
            )
        options = [
            (" ".join(o.text(deep=True).split()), _option_value(o)) for o in node.css("option")
        ]
        want = wanted.strip().casefold()
        matchers = (
            lambda text, value: text.casefold() == want or value.casefold() == want,
            lambda text, value: text.casefold().startswith(want),
            lambda text, value: want in text.casefold(),
        )
        for match in matchers:
            hits = [text for text, value in options if match(text, value)]
            if hits:
                page.values[element.index] = (hits[0],)
                self._last_field = element.index
                return ActionResult("select", message=f'selected "{hits[0]}" in [{element.index}]')
        shown = ", ".join(f'"{text}"' for text, _ in options[:20])
        return ActionResult.failed(
            "select", f'no option "{wanted}" in [{element.index}]; options: {shown}'
        )

    # --- forms ----------------------------------------------------------------------------

    def _form_of(self, node: LexborNode) -> LexborNode | None:
        owner = _attr(node, "form")
        if owner and self._page is not None:
            found = self._page.parsed.tree.css_first(f'form[id="{owner}"]')
            if found is not None:
                return found
        parent = node.parent
        while parent is not None:
            if parent.tag == "form":
                return parent
            parent = parent.parent
        return None

    async def _submit(self, element: Element | None, node: LexborNode | None) -> ActionResult:
        page = self._page
        if page is None:
            return ActionResult.failed("submit", "no page is open")
        form: LexborNode | None = None
        submitter: LexborNode | None = None
        if node is not None:
            form = node if node.tag == "form" else self._form_of(node)
            if element is not None and element.role == "button":
                submitter = node
        elif self._last_field is not None:
            form = self._form_of(page.parsed.nodes[self._last_field - 1])
        else:
            forms = page.parsed.tree.css("form")
            form = forms[0] if len(forms) == 1 else None
        if form is None:
            where = (
                f"[{element.index}] is not in a form" if element else "which form? give an index"
            )
            return ActionResult.failed("submit", where)
        data = self._form_data(form, submitter, page)
        action = _attr(submitter, "formaction") if submitter is not None else ""
        action = action or _attr(form, "action")
        method = (_attr(submitter, "formmethod") if submitter is not None else "") or _attr(
            form, "method"
        )
        target = urljoin(page.parsed.base_url, action) if action else self.url
        if method.lower() == "post":
            await self._load("POST", urldefrag(target)[0], data)
        else:
            parts = urlsplit(target)
            await self._load("GET", urlunsplit(parts._replace(query=urlencode(data), fragment="")))
        return self._navigated("submit")

    def _form_data(
        self, form: LexborNode, submitter: LexborNode | None, page: _Page
    ) -> list[tuple[str, str]]:
        """The name/value pairs a browser would send, in document order."""
        index_of = {n.mem_id: i + 1 for i, n in enumerate(page.parsed.nodes)}
        controls = list(form.css("input, select, textarea, button"))
        form_id = _attr(form, "id")
        if form_id:
            controls += [
                n for n in page.parsed.tree.css(f'[form="{form_id}"]') if n not in controls
            ]
        data: list[tuple[str, str]] = []
        for control in controls:
            name = _attr(control, "name")
            if not name or "disabled" in control.attributes:
                continue
            index = index_of.get(control.mem_id)
            value = page.values.get(index) if index is not None else None
            tag = control.tag
            kind = _attr(control, "type").lower() or ("submit" if tag == "button" else "text")
            if tag in ("button",) or kind in ("submit", "image", "button", "reset"):
                if submitter is not None and control.mem_id == submitter.mem_id:
                    data.append((name, _attr(control, "value")))
                continue
            if kind == "file":
                continue
            if kind in ("checkbox", "radio"):
                checked = value if isinstance(value, bool) else "checked" in control.attributes
                if checked:
                    data.append((name, _attr(control, "value") or "on"))
            elif tag == "select":
                data.extend((name, v) for v in _selected_values(control, value))
            elif tag == "textarea":
                data.append((name, value if isinstance(value, str) else control.text(deep=True)))
            else:
                data.append((name, value if isinstance(value, str) else _attr(control, "value")))
        return data


def _selected_values(select: LexborNode, chosen: FormValue | None) -> list[str]:
    options = select.css("option")
    if isinstance(chosen, tuple):
        return [_option_value(o) for o in options if " ".join(o.text(deep=True).split()) in chosen]
    picked = [_option_value(o) for o in options if "selected" in o.attributes]
    if not picked and options and "multiple" not in select.attributes:
        picked = [_option_value(options[0])]
    return picked
