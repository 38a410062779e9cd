"""A frontmatter field set as the request writes it, with no model.

"change its category to linux", "set the author to Jane Doe", "set the slug of the ssh post
to ssh-config", "把它的 categories 改成 linux": the model edits the body and never sees the
frontmatter, so such a request sent to it as an edit could only go wrong. The embedded model,
asked to change a Hexo post's category, wrote two sentences about the request, and they
replaced the post's body. The field is set here instead, in the frontmatter's own format,
every other byte kept:

- the request names the field as a field: "its X", "the X", "the post's X", "the X field",
  or "set X to …"; a clause after the name must name the post ("of the ssh post", "in this
  article"), so "change the author of the quote to Mark Twain", "change the type of the code
  block to bash" and "change author to writer" (a word swapped) stay edits of the body;
- the field is the post's own, by its name, or its singular or plural among a few common ones
  (``category`` and ``categories``, ``author`` and ``authors``, ``keyword`` and
  ``keywords``), and in Zola's ``[taxonomies]`` table when it is there, not a new top-level
  key Zola would ignore; "image" never finds ``images``, nor "comment" ``comments``;
- it keeps its kind: a list gets the words given, split at commas ("linux, networking"; "Tips
  and Tricks" stays one); a boolean takes yes or no; a number a number; a string the words
  as written (their quotes off). Words not of the field's kind ("change the math to display
  mode" on ``math: true``), or a field holding a table, are no field's value: the request is
  an edit of the body, as before;
- a post without the field gets it only for a few common ones (``author``, ``categories``,
  ``slug``, ``keywords``, ``series``), and only outside Zola;
- the post's date (``date``, ``lastmod``, ``updated``…) given as other words than a date
  ("change the date to tomorrow"), or held as a date the frontmatter types, is refused with
  the reason: nothing is sent to the model.

The title, the tags, the description and the draft mark have their own requests
(``titles.py``, ``tags.py``, ``fields.py``, ``publishing.py``), and the language is a
translation's: none of them is set here.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["FieldSet", "given_field"]

_KEY = r"(?P<key>[A-Za-z][\w-]{1,30})"
_SET = re.compile(
    r"^\W*(?:(?:please|ok|okay|now|then)[\s,]+)*(?P<verb>set|change|update|switch)\s+"
    r"(?P<its>(?:its|the|this|that)\s+)?(?P<owner>(?:post|article|note)(?:'s|’s)\s+)?"
    rf"{_KEY}(?P<field>\s+(?:field|key))?"
    r"(?:\s+(?:of|in|for|on)\s+(?P<post>.+?))?"
    r"\s+(?:to|as|into)\s*[:：]?\s*(?P<value>.+?)\s*(?:,?\s*please)?\s*[!。！]?\s*$",
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
# A field's other spellings: its singular or plural, among the common ones only.
_SAME_FIELD = {
    "category": ("categories",),
    "categories": ("category",),
    "author": ("authors",),
    "authors": ("author",),
    "keyword": ("keywords",),
    "keywords": ("keyword",),
}
# A clause after the field's name that names the post: "of the ssh post", "in this article".
_NAMES_POST = re.compile(
    r"\b(?:posts?|articles?|notes?|entry|entries|pages?|drafts?)\b|\.md\b|文章|笔记", re.I
)
_DATE_FIELDS = frozenset(
    {"date", "lastmod", "updated", "modified", "publishdate", "pubdate", "expirydate"}
)
_VERB = (
    r"(?:make|add|remove|change|set|fix|translate|rewrite|rename|shorten|expand|mention|move|"
    r"delete|publish|update|improve|replace|put|insert|drop|cut|tighten)"
)
# More than one value in the request: another field set, or another change asked for.
_MORE = re.compile(
    rf"\b(?:and|then|also)\s+(?:(?:the|its|set|change)\s+\w+\s+(?:to|as)\b|{_VERB}\b)"
    rf"|[,;]\s*(?:and\s+|then\s+)?{_VERB}\b"
    r"|然后|并且|同时|再把|再将",
    re.I,
)
_QUOTES = "\"'“”‘’「」『』《》`"
_TRUE = frozenset({"true", "yes", "on", "是"})
_FALSE = frozenset({"false", "no", "off", "否"})
_LIST_SPLIT = re.compile(r"\s*[,，、]\s*")
# A value's last full stop is the sentence's, unless it ends an abbreviation ("Jane Doe Jr.").
_STOP = re.compile(r"(?<!\b(?:Jr|Sr|Dr|Mr|Ms|St|Co|vs))(?<!\b(?:Mrs|Inc|Ltd|etc))\.$")


@dataclass(frozen=True, slots=True)
class FieldSet:
    """A field to set (``key``, as the frontmatter spells it; ``taxonomies.X`` in Zola's
    table) to ``value`` (of the old value's kind); or, with ``refused``, why it cannot be:
    ``value``, the words are not what the field takes (``wanted`` says what); ``zola``, a
    common field a Zola page does not have, which Zola would ignore at the top level."""

    key: str
    value: Any = None
    refused: str = ""
    wanted: str = ""


def given_field(
    instruction: str, fields: dict[str, Any], *, new_keys: bool = True
) -> FieldSet | None:
    """The field ``instruction`` sets and its value, read against the post's ``fields``;
    None when it names no field (an edit of the body, or another request's field).
    ``new_keys``: a common field the post lacks may be added (not on a Zola site)."""
    text = " ".join(instruction.split())
    found = _SET.match(text)
    named_as_field = found is not None and bool(
        found.group("its") or found.group("owner") or found.group("field")
        or found.group("verb").casefold() == "set"
    )  # fmt: skip
    if found is not None and found.group("post") and not _NAMES_POST.search(found.group("post")):
        return None  # "the author of the quote", "the type of the code block": the body's
    if found is None:
        found = _SET_ZH.match(text)
        named_as_field = found is not None
    if found is None or not named_as_field:
        return None
    name = found.group("key")
    if name.casefold() in _ELSEWHERE:
        return None
    raw = _STOP.sub("", found.group("value").strip()).strip().strip(_QUOTES).strip()
    if not raw or len(raw) > 200 or _MORE.search(raw):
        return None  # ("… to Jane and the title to X", "… to Jane, then shorten the intro")
    key = _field(name, fields)
    if key is not None:
        return _typed(key, fields[key], raw)
    taxonomies = fields.get("taxonomies")
    if isinstance(taxonomies, dict) and (nested := _field(name, taxonomies)) is not None:
        found_set = _typed(nested, taxonomies[nested], raw)  # Zola's categories
        if found_set is None or found_set.refused:
            return found_set
        return FieldSet(f"taxonomies.{nested}", found_set.value)
    new = _NEW_KEYS.get(name.casefold())
    if new is None:
        return None
    if not new_keys:  # Zola ignores a page's unknown top-level keys: said, not written
        return FieldSet(new, refused="zola")
    value: Any = _listed(raw) if new in ("categories", "keywords", "authors") else raw
    return FieldSet(new, value)


def _field(name: str, fields: dict[str, Any]) -> str | None:
    """The post's own key for ``name``: itself, or its singular or plural among the common
    ones (``_SAME_FIELD``), whatever the case."""
    by_fold = {str(key).casefold(): str(key) for key in fields}
    folded = name.casefold()
    for candidate in (folded, *_SAME_FIELD.get(folded, ())):
        if candidate in by_fold:
            return by_fold[candidate]
    return None


def _listed(raw: str) -> list[str]:
    return [item.strip(_QUOTES).strip() for item in _LIST_SPLIT.split(raw) if item.strip()]


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?")


def _typed(key: str, old: Any, raw: str) -> FieldSet | None:
    """``raw`` as a value of ``old``'s kind; a refusal for the post's date given otherwise;
    None when the words are no value of the field's kind (the body's edit, then)."""
    if key.casefold() in _DATE_FIELDS:
        if _ISO_DATE.fullmatch(raw):
            try:
                if isinstance(old, dt.datetime) or (isinstance(old, dt.date) and " " in raw):
                    return FieldSet(key, dt.datetime.fromisoformat(raw))
                if isinstance(old, dt.date):
                    return FieldSet(key, dt.date.fromisoformat(raw))
            except ValueError:
                pass  # ("2024-13-45")
            else:
                if old is None or isinstance(old, str):
                    return FieldSet(key, raw)
        return FieldSet(key, refused="value", wanted="a date such as 2024-05-10")
    if isinstance(old, bool):
        folded = raw.casefold()
        if folded in _TRUE or folded in _FALSE:
            return FieldSet(key, folded in _TRUE)
        return None
    if isinstance(old, int | float):
        try:
            return FieldSet(key, int(raw) if isinstance(old, int) else float(raw))
        except ValueError:
            return None
    if isinstance(old, list):
        if not all(isinstance(item, str | int | float) for item in old):
            return None
        return FieldSet(key, _listed(raw))
    if old is None or isinstance(old, str):
        return FieldSet(key, raw)
    return None  # a table: no value written out in a request
