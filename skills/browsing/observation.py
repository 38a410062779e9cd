"""What the model sees of a page: indexed interactive elements plus readable text.

An ``Observation`` renders as compact lines::

    URL: https://example.com/search
    Title: Search
    Elements:
    [1] link "Home" -> /
    [2] searchbox "Query" name=q placeholder="Search articles"
    *[3] button "Search"
    Text:
    # Search
    ...

``*`` marks an element that was not there at the previous observation of the same page.
Everything fits a token budget: long pages are cut into windows that ``scroll`` moves through
(an observation says what lies above and below), never an error.

Every element carries an ``ElementSignature`` (role, accessible text, id, name, aria-label,
href, placeholder, type). When an index no longer points at the element the model meant (the
page re-rendered or reordered), ``find_by_signature`` finds it again.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urldefrag, urlsplit

from skillrt.llm.base import estimate_tokens

__all__ = [
    "PASSWORD_FILLED",
    "Element",
    "ElementSignature",
    "Observation",
    "SeenElements",
    "Viewport",
    "compose_observation",
    "find_by_signature",
    "short_href",
    "signature_score",
]

MAX_LABEL_CHARS = 80
MAX_OPTIONS_SHOWN = 12
ELEMENT_SHARE = 0.55
"""The share of the token budget the element list may use before the text gets the rest."""

PASSWORD_FILLED = "<filled>"  # noqa: S105 - a placeholder shown instead of a password
"""What a password field shows once something was typed into it: never the value."""

_QUIET_TYPES = frozenset({"", "text", "search", "submit", "button", "textarea", "select"})

MATCH_THRESHOLD = 0.6
_WEIGHTS = {"id": 3.0, "name": 3.0, "aria_label": 3.0, "href": 3.0, "text": 2.0}
_WEIGHTS |= {"placeholder": 2.0, "type": 1.0}


@dataclass(frozen=True, slots=True)
class ElementSignature:
    """What identifies an element across re-renders, independent of its index."""

    role: str
    text: str = ""
    id: str = ""
    name: str = ""
    aria_label: str = ""
    href: str = ""
    placeholder: str = ""
    type: str = ""


@dataclass(frozen=True, slots=True)
class Element:
    """One interactive element of a page.

    ``value`` is the text a field holds; a password field holds at most ``PASSWORD_FILLED``.
    """

    index: int
    role: str
    text: str
    signature: ElementSignature
    is_new: bool = False
    tag: str = ""
    href: str | None = None
    value: str | None = None
    options: tuple[str, ...] = ()
    selected: tuple[str, ...] = ()
    checked: bool | None = None
    disabled: bool = False

    def render(self, page_url: str = "") -> str:
        parts = [f"{'*' if self.is_new else ''}[{self.index}] {self.role}"]
        parts.append(_quote(self.text) if self.text else '""')
        sig = self.signature
        if not self.text and sig.name:
            parts.append(f"name={sig.name}")
        if sig.type not in _QUIET_TYPES and sig.type != self.role:
            parts.append(f"type={sig.type}")
        if sig.placeholder and sig.placeholder != self.text:
            parts.append(f"placeholder={_quote(sig.placeholder)}")
        if sig.type == "password":
            if self.value:
                parts.append(f"value={PASSWORD_FILLED}")
        elif self.value:
            parts.append(f"value={_quote(self.value)}")
        if self.checked is not None:
            parts.append("checked" if self.checked else "unchecked")
        if self.options:
            shown = ", ".join(_quote(o) for o in self.options[:MAX_OPTIONS_SHOWN])
            more = len(self.options) - MAX_OPTIONS_SHOWN
            parts.append(f"options: {shown}" + (f", ... {more} more" if more > 0 else ""))
            if self.selected:
                parts.append(f"selected: {', '.join(_quote(s) for s in self.selected)}")
        if self.disabled:
            parts.append("disabled")
        line = " ".join(parts)
        if self.href:
            line += f" -> {short_href(self.href, page_url)}"
        return line


def _quote(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > MAX_LABEL_CHARS:
        text = text[: MAX_LABEL_CHARS - 1] + "…"
    return '"' + text.replace('"', "'") + '"'


def short_href(href: str, page_url: str) -> str:
    """An href as the model sees it: path and query on the page's own site, else the URL."""
    target, page = urlsplit(href), urlsplit(page_url)
    if target.scheme == page.scheme and target.netloc == page.netloc:
        shown = target.path or "/"
        shown += f"?{target.query}" if target.query else ""
        shown += f"#{target.fragment}" if target.fragment else ""
    else:
        shown = href
    return shown if len(shown) <= 100 else shown[:99] + "…"


@dataclass(frozen=True, slots=True)
class Observation:
    """A page as shown to the model, already within its token budget.

    ``elements`` and ``text`` are the window shown; ``elements_above``/``elements_below`` and
    ``text_above``/``text_below`` say what scrolling would reveal. ``truncated`` is True when
    anything was left out. Links repeating an earlier link's text and target are not listed
    (``repeated_links`` counts them): the listed one does the same.
    """

    url: str
    title: str
    elements: list[Element]
    text: str
    truncated: bool
    elements_above: int = 0
    elements_below: int = 0
    repeated_links: int = 0
    text_above: bool = False
    text_below: bool = False
    note: str = ""

    def element(self, index: int) -> Element | None:
        return next((e for e in self.elements if e.index == index), None)

    def render(self) -> str:
        lines = [f"URL: {self.url}", f"Title: {self.title or '(none)'}"]
        if self.note:
            lines.append(f"Note: {self.note}")
        lines.append("Elements:" if self.elements else "Elements: (none)")
        if self.elements_above:
            lines.append(f"... {self.elements_above} elements above (scroll up)")
        lines.extend(e.render(self.url) for e in self.elements)
        if self.elements_below:
            lines.append(f"... {self.elements_below} more elements below (scroll down)")
        if self.repeated_links:
            lines.append(
                f"({self.repeated_links} repeated links, same text and target, not listed)"
            )
        lines.append("Text:")
        if self.text_above:
            lines.append("... (text above; scroll up)")
        lines.append(self.text or "(no text)")
        if self.text_below:
            lines.append("... (more text below; scroll down)")
        return "\n".join(lines)

    def fingerprint(self) -> str:
        """Identifies what the model saw, for spotting a repeated action on an unchanged page."""
        return self.render()


class Viewport:
    """The window of a long page the model sees; ``scroll`` moves it by one window."""

    def __init__(self) -> None:
        self.element_start = 0
        self.text_start = 0
        self._element_end = 0
        self._text_end = 0
        self._more_elements = False
        self._more_text = False
        self._back: list[tuple[int, int]] = []

    def reset(self) -> None:
        """Back to the top (a new page)."""
        self.element_start = self.text_start = 0
        self._element_end = self._text_end = 0
        self._more_elements = self._more_text = False
        self._back.clear()

    def shown(self, element_end: int, text_end: int, more_elements: bool, more_text: bool) -> None:
        self._element_end, self._text_end = element_end, text_end
        self._more_elements, self._more_text = more_elements, more_text

    def scroll(self, direction: str) -> bool:
        """Move one window up or down; False when there is nothing more that way."""
        if direction == "up":
            if not self._back:
                return False
            self.element_start, self.text_start = self._back.pop()
            return True
        if not (self._more_elements or self._more_text):
            return False
        self._back.append((self.element_start, self.text_start))
        if self._more_elements:
            self.element_start = self._element_end
        if self._more_text:
            self.text_start = self._text_end
        return True


class SeenElements:
    """The signatures an observation showed, and of which page (its URL without fragment).

    ``previous(url)`` gives them back for the next observation of the same page, so that
    ``compose_observation`` marks the elements not among them as new; None on another page.
    """

    def __init__(self) -> None:
        self._seen: tuple[str, frozenset[ElementSignature]] | None = None

    def previous(self, url: str) -> frozenset[ElementSignature] | None:
        seen = self._seen
        return seen[1] if seen and seen[0] == urldefrag(url)[0] else None

    def remember(self, url: str, elements: Iterable[Element]) -> None:
        self._seen = (urldefrag(url)[0], frozenset(e.signature for e in elements))


def _mark_new(
    elements: Sequence[Element], previous: Iterable[ElementSignature] | None
) -> list[Element]:
    if previous is None:
        return list(elements)
    seen = set(previous)
    return [dataclasses.replace(e, is_new=e.signature not in seen) for e in elements]


def _without_repeated_links(elements: list[Element]) -> tuple[list[Element], int]:
    """Drop links whose text and target repeat an earlier link (they act the same)."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for element in elements:
        if element.role == "link" and element.href:
            key = (element.text, element.href)
            if key in seen:
                continue
            seen.add(key)
        kept.append(element)
    return kept, len(elements) - len(kept)


def _fit_text(text: str, start: int, budget: int) -> tuple[str, int]:
    """The longest run of whole lines of ``text[start:]`` within ``budget`` tokens, and its end.

    A first line longer than the budget is cut at a word boundary.
    """
    pos = start
    used = 0
    while pos < len(text):
        nl = text.find("\n", pos)
        end = len(text) if nl == -1 else nl + 1
        cost = estimate_tokens(text[pos:end])
        if used + cost > budget:
            if pos == start:
                return _cut_line(text, pos, end, budget)
            break
        used += cost
        pos = end
    return text[start:pos].rstrip("\n"), pos


def _cut_line(text: str, start: int, end: int, budget: int) -> tuple[str, int]:
    low, high = start, end
    while high - low > 1:
        mid = (low + high) // 2
        if estimate_tokens(text[start:mid]) <= budget:
            low = mid
        else:
            high = mid
    space = text.rfind(" ", start, low)
    if space > start + (low - start) // 2:
        low = space + 1
    return text[start:low].rstrip(), low


def compose_observation(
    url: str,
    title: str,
    elements: Sequence[Element],
    text: str,
    *,
    budget_tokens: int,
    viewport: Viewport | None = None,
    previous: Iterable[ElementSignature] | None = None,
    note: str = "",
) -> Observation:
    """Cut a page down to an ``Observation`` of at most ``budget_tokens`` (roughly).

    ``previous`` are the signatures of the last observation of the same page: elements not
    among them are marked new. ``viewport`` says which window to show and learns where it ended.
    """
    view = viewport or Viewport()
    marked, repeated = _without_repeated_links(_mark_new(elements, previous))
    header = f"URL: {url}\nTitle: {title}\nElements:\nText:\n{note}"
    remaining = max(budget_tokens - estimate_tokens(header) - 16, 40)
    element_budget = int(remaining * ELEMENT_SHARE) if text.strip() else remaining

    start = min(view.element_start, len(marked))
    shown: list[Element] = []
    used = 0
    for element in marked[start:]:
        cost = estimate_tokens(element.render(url)) + 1
        if used + cost > element_budget and shown:
            break
        shown.append(element)
        used += cost
    element_end = start + len(shown)

    text_start = min(view.text_start, len(text))
    text_shown, text_end = _fit_text(text, text_start, max(remaining - used, 20))
    more_elements = element_end < len(marked)
    more_text = bool(text[text_end:].strip())
    view.shown(element_end, text_end, more_elements, more_text)
    return Observation(
        url=url,
        title=title,
        elements=shown,
        text=text_shown.strip(),
        truncated=start > 0 or more_elements or text_start > 0 or more_text,
        elements_above=start,
        elements_below=len(marked) - element_end,
        repeated_links=repeated,
        text_above=text_start > 0,
        text_below=more_text,
        note=note,
    )


# --- signature matching ----------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _field_score(field: str, want: str, got: str) -> float:
    if field == "text" or field == "placeholder":
        a, b = _norm(want), _norm(got)
        if a == b:
            return 1.0
        ratio = difflib.SequenceMatcher(None, a, b).ratio()
        return ratio if ratio >= 0.8 else 0.0
    return 1.0 if want == got else 0.0


def signature_score(want: ElementSignature, got: ElementSignature) -> float:
    """How well ``got`` matches ``want``, 0 to 1. Roles must agree, else 0.

    Each field ``want`` has counts with its weight (id, name, aria-label, href strong; text,
    placeholder medium; type weak); fields ``want`` lacks are ignored.
    """
    if want.role != got.role:
        return 0.0
    total = 0.0
    score = 0.0
    for field, weight in _WEIGHTS.items():
        value = getattr(want, field)
        if not value:
            continue
        total += weight
        score += weight * _field_score(field, value, getattr(got, field))
    return 1.0 if total == 0 else score / total


def find_by_signature(
    signature: ElementSignature,
    elements: Sequence[Element],
    *,
    near: int | None = None,
    threshold: float = MATCH_THRESHOLD,
) -> Element | None:
    """The element that best matches ``signature`` above ``threshold``, or None.

    Ties go to the element whose index is closest to ``near`` (where it used to be).
    """
    best: Element | None = None
    best_key: tuple[float, float] = (threshold - 1e-9, float("-inf"))
    for element in elements:
        score = signature_score(signature, element.signature)
        distance = -abs(element.index - near) if near is not None else 0.0
        key = (score, float(distance))
        if score >= threshold and key > best_key:
            best, best_key = element, key
    return best
