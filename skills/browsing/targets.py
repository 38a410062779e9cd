"""Which URL and which element an action means: ``absolute_url`` and ``resolve_element``.

Both backends use these; they import nothing of the backends or of the ``Browser`` protocol.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urljoin

from skillrt.skills.browsing.observation import (
    Element,
    ElementSignature,
    find_by_signature,
    signature_score,
)

__all__ = ["absolute_url", "resolve_element"]

_HAS_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


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
