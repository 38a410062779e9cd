"""A frontmatter field set as the request writes it, with no model.

"change its category to linux", "set the author to Jane Doe", "set the slug of the ssh post
to ssh-config", "把它的 categories 改成 linux": the model edits the body and never sees the
frontmatter, so such a request sent to it as an edit could only go wrong. The embedded model,
asked to change a Hexo post's category, wrote two sentences about the request, and they
replaced the post's body. The field is set here instead, in the frontmatter's own format,
every other byte kept:

- a field the post has, by its name or its plural (``category`` for ``categories``), keeps
  its kind: a list gets the words given, split at commas ("linux, networking"); a boolean
  takes yes or no; a number a number; a string the words as written (their quotes off);
- a post without the field gets it only for a few common ones (``author``, ``categories``,
  ``slug``, ``keywords``, ``series``); any other name is no field, and the request is an edit
  of the body as before ("change the intro to something friendlier");
- a field whose value cannot be written so (a date, a table, a list of tables), or a value of
  the wrong kind, is refused with the reason: nothing is sent to the model.

The title, the tags, the description and the draft mark have their own requests
(``titles.py``, ``tags.py``, ``fields.py``, ``publishing.py``), and the language is a
translation's: none of them is set here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["FieldSet", "given_field"]

_KEY = r"(?P<key>[A-Za-z][\w-]{1,30})"
_SET = re.compile(
    r"^\W*(?:(?:please|ok|okay|now|then)[\s,]+)*(?:set|change|update|switch)\s+"
    r"(?:(?:its|the|this|that)\s+)?(?:(?:post|article|note)(?:'s|’s)\s+)?"
    rf"{_KEY}(?:\s+(?:field|key))?"
    r"(?:\s+(?:of|in|for|on)\s+(?P<post>.+?))?"
    r"\s+(?:to|as|into)\s*[:：]?\s*(?P<value>.+?)\s*(?:,?\s*please)?\s*[.!。！]?\s*$",
    re.I,
)
_SET_ZH = re.compile(
    r"^(?:请)?(?:把|将)?(?:它的|这篇文章的|这篇的|文章的|该文章的)?\s*"
    rf"{_KEY}\s*(?:字段)?\s*(?:改成|改为|设为|设置为|换成)\s*[:：]?\s*(?P<value>.+?)\s*[。！]?$",
    re.I,
)
# Fields that have their own requests, or are no field to set as written.
_ELSEWHERE_WORDS = """
title headline name heading tag tags description summary excerpt blurb draft drafts published
publish language lang languages locale text body content intro introduction conclusion
paragraph section sections headings tone style length word words wording voice format it this
that
"""
_ELSEWHERE = frozenset(_ELSEWHERE_WORDS.split())
# Fields a post may be given when it has none (the common ones Hugo, Hexo and Jekyll read).
_NEW_KEYS = {
    "author": "author",
    "authors": "authors",
    "category": "categories",
    "categories": "categories",
    "slug": "slug",
    "keywords": "keywords",
    "keyword": "keywords",
    "series": "series",
}
# More than one value in the request: another field set, or another change asked for.
_MORE = re.compile(
    r"\b(?:and|then|also)\s+(?:(?:the|its|set|change)\s+\w+\s+(?:to|as)\b|(?:make|add|remove|"
    r"change|set|fix|translate|rewrite|shorten|expand|rename|update|delete|publish)\b)"
    r"|[,;]\s*(?:then\s+)?(?:make|add|remove|change|set|fix|translate|rewrite|rename)\b"
    r"|(?:然后|再|并且|并)(?:把|将|改|加|删)",
    re.I,
)
_QUOTES = "\"'“”‘’「」『』《》`"
_TRUE = frozenset({"true", "yes", "on", "是"})
_FALSE = frozenset({"false", "no", "off", "否"})
_LIST_SPLIT = re.compile(r"\s*(?:,|，|、|\band\b)\s*", re.I)


@dataclass(frozen=True, slots=True)
class FieldSet:
    """A field to set (``key``, as the frontmatter spells it) to ``value`` (of the old
    value's kind); or, with ``refused``, why it cannot be: ``kind`` (a date, a table…) or
    ``value`` (the words are not of the field's kind; ``wanted`` says which)."""

    key: str
    value: Any = None
    refused: str = ""
    wanted: str = ""


def given_field(instruction: str, fields: dict[str, Any]) -> FieldSet | None:
    """The field ``instruction`` sets and its value, read against the post's ``fields``;
    None when it names no field (an edit of the body, or another request's field)."""
    text = " ".join(instruction.split())
    found = _SET.match(text) or _SET_ZH.match(text)
    if found is None:
        return None
    name = found.group("key")
    if name.casefold() in _ELSEWHERE:
        return None
    raw = found.group("value").strip().strip(_QUOTES).strip()
    if not raw or len(raw) > 200 or _MORE.search(raw):
        return None  # ("… to Jane and the title to X", "… to Jane and make it shorter")
    key = _field(name, fields)
    if key is None:
        new = _NEW_KEYS.get(name.casefold())
        if new is None:
            return None
        value: Any = _listed(raw) if new in ("categories", "keywords", "authors") else raw
        return FieldSet(new, value)
    return _typed(key, fields[key], raw)


def _field(name: str, fields: dict[str, Any]) -> str | None:
    """The post's own key for ``name``: itself, its plural or singular, whatever the case."""
    by_fold = {key.casefold(): key for key in fields}
    folded = name.casefold()
    for candidate in (folded, folded + "s", folded.removesuffix("s"), _NEW_KEYS.get(folded)):
        if candidate and candidate in by_fold:
            return by_fold[candidate]
    return None


def _listed(raw: str) -> list[str]:
    return [item.strip(_QUOTES).strip() for item in _LIST_SPLIT.split(raw) if item.strip()]


_DATE_KEY = re.compile(r"date|lastmod|updated|modified|expires?|expiry", re.I)
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?")


def _typed(key: str, old: Any, raw: str) -> FieldSet:
    """``raw`` as a value of ``old``'s kind, or why it cannot be."""
    if _DATE_KEY.search(key) and not (isinstance(old, str) and _ISO_DATE.fullmatch(raw)):
        # ("set the date to tomorrow" written as is would be no date)
        return FieldSet(key, refused="kind" if not isinstance(old, str) else "value",
                        wanted="a date such as 2024-05-10")  # fmt: skip
    if isinstance(old, bool):
        folded = raw.casefold()
        if folded in _TRUE or folded in _FALSE:
            return FieldSet(key, folded in _TRUE)
        return FieldSet(key, refused="value", wanted="yes or no")
    if isinstance(old, int | float):
        try:
            return FieldSet(key, int(raw) if isinstance(old, int) else float(raw))
        except ValueError:
            return FieldSet(key, refused="value", wanted="a number")
    if isinstance(old, list):
        if not all(isinstance(item, str | int | float) for item in old):
            return FieldSet(key, refused="kind")
        return FieldSet(key, _listed(raw))
    if old is None or isinstance(old, str):
        return FieldSet(key, raw)
    return FieldSet(key, refused="kind")  # a date, a table: written by hand
