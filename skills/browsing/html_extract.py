"""From HTML to what an observation needs: interactive elements and readable text.

The HTTP backend acts on the parsed nodes directly; the Chromium backend uses only
``readable_text`` over the rendered DOM (its elements come from a JavaScript snippet applying
the same rules, see ``chromium_js``). The benchmark uses both.

Readable text drops scripts, styles, hidden elements and navigation boilerplate (``nav``,
``header``/``footer`` landmarks, ``aside``, ARIA navigation roles) and keeps headings (``#``),
list items (``-``) and table rows (``|``) as Markdown-like lines.

Reading is bounded: at most ``MAX_ELEMENTS`` elements are listed, and with a ``deadline``
(a ``time.monotonic()`` value) the work stops there, keeping what was read so far; the page's
``cut`` says why it is incomplete. Callers run this in a thread (``page_reader``): a hostile
page costs a worker thread its time, never the event loop.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser, LexborNode

from skillrt.skills.browsing.observation import PASSWORD_FILLED, Element, ElementSignature

__all__ = ["ParsedPage", "accessible_text", "parse_page", "readable_text"]

MAX_TEXT_CHARS = 200_000
MAX_NAME_CHARS = 100
MAX_DEPTH = 256
MAX_ELEMENTS = 3000
"""Elements listed per page at most (an observation shows far fewer)."""

_SKIP_TEXT = frozenset(
    {
        "head", "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object",
        "nav", "aside", "footer", "select", "option", "datalist", "button", "input", "textarea",
        "map", "dialog", "-comment",
    }
)  # fmt: skip
_BOILERPLATE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
_BLOCK = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "ul", "ol", "dl", "dt", "dd",
        "table", "thead", "tbody", "tfoot", "blockquote", "figure", "figcaption", "form",
        "fieldset", "legend", "details", "summary", "address", "hr", "caption", "label",
    }
)  # fmt: skip
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_WIDGET_ROLES = frozenset(
    {
        "button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
        "menuitemradio", "option", "combobox", "textbox", "searchbox", "listbox", "slider",
        "spinbutton", "treeitem",
    }
)  # fmt: skip
_TEXT_INPUTS = frozenset(
    {
        "text", "email", "password", "number", "tel", "url", "date", "datetime-local", "month",
        "week", "time", "color", "range",
    }
)  # fmt: skip


@dataclass(slots=True)
class ParsedPage:
    """A parsed document: its title, base URL, elements (with their nodes) and text."""

    tree: LexborHTMLParser
    url: str
    base_url: str
    title: str
    elements: list[Element] = field(default_factory=list)
    nodes: list[LexborNode] = field(default_factory=list)
    text: str = ""
    cut: str = ""  # why the page was read only in part ("" when it was read whole)


class _Overtime(Exception):
    """The reading deadline passed (caught where the reading started)."""


class _Clock:
    """Counts nodes and checks the deadline every 256 of them."""

    __slots__ = ("count", "deadline")

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.count = 0

    def tick(self) -> None:
        self.count += 1
        if self.deadline is not None and not self.count & 255 and time.monotonic() > self.deadline:
            raise _Overtime


def _attr(node: LexborNode, name: str) -> str:
    value = node.attributes.get(name)
    return value.strip() if isinstance(value, str) else ""


def _squash(text: str, limit: int = MAX_NAME_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_hidden(node: LexborNode) -> bool:
    current: LexborNode | None = node
    depth = 0
    while current is not None and current.tag not in ("body", "html") and depth < MAX_DEPTH:
        attrs = current.attributes
        if "hidden" in attrs or attrs.get("aria-hidden") == "true":
            return True
        style = (attrs.get("style") or "").replace(" ", "").lower()
        if "display:none" in style or "visibility:hidden" in style:
            return True
        if current.tag in ("template", "noscript"):
            return True
        current = current.parent
        depth += 1
    return False


class _Labels:
    """``label[for]`` texts and id lookups, built once per document."""

    def __init__(self) -> None:
        self.by_for: dict[str, str] = {}
        self.by_id: dict[str, LexborNode] = {}

    def see(self, node: LexborNode) -> None:
        attrs = node.attributes
        if "id" in attrs:
            self.by_id.setdefault(_attr(node, "id"), node)
        if node.tag == "label" and "for" in attrs:
            key = _attr(node, "for")
            if key and key not in self.by_for:
                self.by_for[key] = _squash(node.text(deep=True, separator=" "))


def _scan(tree: LexborHTMLParser, clock: _Clock) -> tuple[_Labels, list[LexborNode]]:
    """One walk over the elements: the labels and ids, and the candidate elements in document
    order. A generator walk, not ``tree.css``: a selector builds its whole result list in one
    C call, holding the GIL (300,000 links would stall every other thread, the loop too)."""
    labels = _Labels()
    candidates: list[LexborNode] = []
    if tree.root is None:
        return labels, candidates
    for node in tree.root.traverse():
        clock.tick()
        labels.see(node)
        if (
            node.tag in _CANDIDATE_TAGS
            or "role" in node.attributes
            or "onclick" in (node.attributes)
        ):
            candidates.append(node)
    return labels, candidates


def _wrapping_label(node: LexborNode) -> str:
    parent = node.parent
    depth = 0
    while parent is not None and depth < 8:
        if parent.tag == "label":
            parts = []
            for child in parent.iter(include_text=True):
                if child.tag in ("select", "input", "textarea", "button"):
                    continue
                parts.append(child.text(deep=True, separator=" "))
            return _squash(" ".join(parts))
        parent = parent.parent
        depth += 1
    return ""


def accessible_text(node: LexborNode, labels: _Labels) -> str:
    """A simplified accessible name: aria-label, labelledby, label, value/alt, text, title."""
    label = _attr(node, "aria-label")
    if label:
        return _squash(label)
    ids = _attr(node, "aria-labelledby").split()
    if ids:
        texts = [labels.by_id[i].text(deep=True, separator=" ") for i in ids if i in labels.by_id]
        if any(t.strip() for t in texts):
            return _squash(" ".join(texts))
    tag = node.tag
    kind = _attr(node, "type").lower()
    if tag in ("input", "select", "textarea"):
        if tag == "input" and kind in ("submit", "button", "reset"):
            return _squash(_attr(node, "value") or {"reset": "Reset"}.get(kind, "Submit"))
        if tag == "input" and kind == "image":
            return _squash(_attr(node, "alt") or _attr(node, "value") or "Submit")
        found = labels.by_for.get(_attr(node, "id")) if _attr(node, "id") else None
        return found or _wrapping_label(node) or _squash(_attr(node, "title"))
    text = _squash(node.text(deep=True, separator=" "))
    if not text:
        img = node.css_first("img[alt]")
        text = _squash(_attr(img, "alt")) if img is not None else ""
    return text or _squash(_attr(node, "title"))


def _role_and_type(node: LexborNode, scripting: bool) -> tuple[str, str] | None:
    """The role an element is listed with (and its type), or None when it is not listed."""
    tag = node.tag
    explicit = _attr(node, "role").lower()
    kind = _attr(node, "type").lower()
    if tag == "a":
        href = _attr(node, "href")
        if not href or (href.startswith(("javascript:", "#")) and not scripting):
            return None
        return (explicit if explicit in _WIDGET_ROLES else "link"), ""
    if tag == "button":
        kind = kind or "submit"
        if kind in ("button", "reset") and not scripting:
            return None
        return (explicit if explicit in _WIDGET_ROLES else "button"), kind
    if tag == "input":
        kind = kind or "text"
        if kind in ("hidden", "file"):
            return None
        if kind in ("submit", "image"):
            return "button", kind
        if kind in ("button", "reset"):
            return ("button", kind) if scripting else None
        if kind in ("checkbox", "radio"):
            return kind, kind
        if kind == "search":
            return "searchbox", kind
        return "textbox", kind if kind in _TEXT_INPUTS else "text"
    if tag == "textarea":
        return "textbox", "textarea"
    if tag == "select":
        return ("listbox" if "multiple" in node.attributes else "combobox"), "select"
    if scripting and (explicit in _WIDGET_ROLES or "onclick" in node.attributes):
        return explicit or "button", ""
    if scripting and tag == "summary":
        return "button", ""
    return None


_CANDIDATE_TAGS = frozenset({"a", "button", "input", "textarea", "select", "summary"})


def _options(node: LexborNode) -> tuple[tuple[str, ...], tuple[str, ...]]:
    options: list[str] = []
    selected: list[str] = []
    for option in node.css("option"):
        text = _squash(option.text(deep=True, separator=" ")) or _attr(option, "value")
        options.append(text)
        if "selected" in option.attributes:
            selected.append(text)
    if not selected and options and "multiple" not in node.attributes:
        selected.append(options[0])
    return tuple(options), tuple(selected)


def _make_element(
    node: LexborNode, index: int, role: str, kind: str, labels: _Labels, base_url: str
) -> Element:
    text = accessible_text(node, labels)
    href = ""
    if node.tag == "a" and _attr(node, "href"):
        href = urljoin(base_url, _attr(node, "href"))
    value: str | None = None
    checked: bool | None = None
    options: tuple[str, ...] = ()
    selected: tuple[str, ...] = ()
    if node.tag == "input" and kind not in ("submit", "image", "button", "reset"):
        if kind in ("checkbox", "radio"):
            checked = "checked" in node.attributes
        elif kind == "password":
            value = PASSWORD_FILLED if _attr(node, "value") else None
        else:
            value = _attr(node, "value") or None
    elif node.tag == "textarea":
        value = node.text(deep=True).strip() or None
    elif node.tag == "select":
        options, selected = _options(node)
    signature = ElementSignature(
        role=role,
        text=text,
        id=_attr(node, "id"),
        name=_attr(node, "name"),
        aria_label=_squash(_attr(node, "aria-label")),
        href=href,
        placeholder=_squash(_attr(node, "placeholder")),
        type=kind,
    )
    return Element(
        index=index,
        role=role,
        text=text,
        signature=signature,
        tag=node.tag or "",
        href=href or None,
        value=value,
        options=options,
        selected=selected,
        checked=checked,
        disabled="disabled" in node.attributes,
    )


def parse_page(
    html: str,
    url: str,
    *,
    scripting: bool = False,
    max_text_chars: int = MAX_TEXT_CHARS,
    deadline: float | None = None,
) -> ParsedPage:
    """Parse a document; list its interactive elements (numbered from 1) and readable text.

    ``scripting=False`` lists only what works without JavaScript (links, form controls,
    submit buttons); ``True`` adds ARIA widgets, ``onclick`` elements and ``summary``.
    Past ``deadline`` (or ``MAX_ELEMENTS``) it stops and says so in ``cut``.
    """
    tree = LexborHTMLParser(html)
    base = tree.css_first("base[href]")
    base_url = urljoin(url, _attr(base, "href")) if base is not None else url
    title_node = tree.css_first("title")
    title = _squash(title_node.text(deep=True), 200) if title_node is not None else ""
    page = ParsedPage(tree=tree, url=url, base_url=base_url, title=title)
    clock = _Clock(deadline)
    try:
        labels, candidates = _scan(tree, clock)
        for node in candidates:
            clock.tick()
            found = _role_and_type(node, scripting)
            if found is None or _is_hidden(node):
                continue
            if len(page.elements) >= MAX_ELEMENTS:
                page.cut = f"only the first {MAX_ELEMENTS} elements are listed"
                break
            role, kind = found
            page.elements.append(
                _make_element(node, len(page.elements) + 1, role, kind, labels, base_url)
            )
            page.nodes.append(node)
    except _Overtime:
        page.cut = "the page took too long to read; only its start is shown"
        return page
    out: list[str] = []
    try:
        page.text = _readable(tree, max_text_chars, clock, out)
    except _Overtime:
        page.text = _lines(out, max_text_chars)
        page.cut = "the page took too long to read; only the start of its text is shown"
    return page


# --- readable text ----------------------------------------------------------------------------


def _skip(node: LexborNode) -> bool:
    tag = node.tag or ""
    if tag in _SKIP_TEXT:
        return True
    attrs = node.attributes
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return True
    if (attrs.get("role") or "").lower() in _BOILERPLATE_ROLES:
        return True
    if tag == "header" and node.parent is not None and node.parent.tag == "body":
        return True
    style = (attrs.get("style") or "").replace(" ", "").lower()
    return "display:none" in style or "visibility:hidden" in style


def _walk(node: LexborNode, out: list[str], depth: int, clock: _Clock) -> None:
    if depth > MAX_DEPTH:
        return
    for child in node.iter(include_text=True):
        clock.tick()
        tag = child.tag or ""
        if tag == "-text":
            out.append(child.text(deep=False))
            continue
        if _skip(child):
            continue
        if tag == "br":
            out.append("\n")
        elif tag in _HEADINGS:
            out.append("\n" + "#" * _HEADINGS[tag] + " ")
            _walk(child, out, depth + 1, clock)
            out.append("\n")
        elif tag == "li":
            out.append("\n- ")
            _walk(child, out, depth + 1, clock)
            out.append("\n")
        elif tag == "pre":
            out.append("\n" + child.text(deep=True, strip=False) + "\n")
        elif tag == "tr":
            out.append("\n| ")
            _walk(child, out, depth + 1, clock)
            out.append("\n")
        elif tag in ("td", "th"):
            _walk(child, out, depth + 1, clock)
            out.append(" | ")
        elif tag == "img":
            alt = _attr(child, "alt")
            if alt:
                out.append(f" [image: {alt}] ")
        elif tag in _BLOCK:
            out.append("\n")
            _walk(child, out, depth + 1, clock)
            out.append("\n")
        else:
            _walk(child, out, depth + 1, clock)


def readable_text(
    source: LexborHTMLParser | str,
    *,
    max_chars: int = MAX_TEXT_CHARS,
    deadline: float | None = None,
) -> str:
    """The page's readable text as Markdown-like lines, boilerplate dropped, at most max_chars.

    Uses ``main`` (or ``[role=main]``, or a single ``article``) when the page marks one. Past
    ``deadline`` it returns what it read so far.
    """
    tree = LexborHTMLParser(source) if isinstance(source, str) else source
    out: list[str] = []
    try:
        return _readable(tree, max_chars, _Clock(deadline), out)
    except _Overtime:
        return _lines(out, max_chars)


def _readable(
    tree: LexborHTMLParser, max_chars: int, clock: _Clock, out: list[str] | None = None
) -> str:
    out = [] if out is None else out
    root = tree.css_first("main, [role=main]")
    if root is None:
        root = _single_article(tree, clock) or tree.body
    if root is None:
        return ""
    _walk(root, out, 0, clock)
    return _lines(out, max_chars)


def _single_article(tree: LexborHTMLParser, clock: _Clock) -> LexborNode | None:
    """The page's ``article`` when it has exactly one (walked, not selected: see ``_scan``)."""
    first = tree.css_first("article")
    if first is None or tree.root is None:
        return None
    seen = 0
    for node in tree.root.traverse():
        clock.tick()
        if node.tag == "article":
            seen += 1
            if seen > 1:
                return None
    return first


def _lines(out: list[str], max_chars: int) -> str:
    lines = []
    for raw in "".join(out).split("\n"):
        line = " ".join(raw.split())
        if line and line not in ("|", "-", "- |"):
            lines.append(line)
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[:max_chars]
