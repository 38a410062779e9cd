"""A frontmatter field set as the request writes it, with no model.

"change its category to linux", "set the author to Jane Doe", "set the slug of the ssh post
to ssh-config", "把它的分类改成 linux": the model edits the body and never sees the
frontmatter, so such a request sent to it as an edit could only go wrong. The embedded model,
asked to change a Hexo post's category, wrote two sentences about the request, and they
replaced the post's body. The field is set here instead, in the frontmatter's own format,
every other byte kept. Only what surely is such a request is taken; anything else stays an
edit of the body, as before:

- the request names the field as a field: "its X", "the X", "this post's X", "the X field",
  "set X to …", "把它的 X 改成 …", "把 X 字段改成 …" (a field's Chinese name, 分类, 作者,
  系列, 关键词, 日期, is enough); a clause after the name must name the post and only the post
  ("of the ssh post", "in this article", "of posts/x.md"): "change the author of the quote to
  Mark Twain", "change the type in the second code block of the post to bash" and "change
  author to writer" (a word swapped) are the body's; a file named there ("of
  Notes/ownership-notes.md", quoted or not) is the post whatever words its name holds, and
  the edit takes it (``named_file``);
- the value is a value, not a sentence: at most six words (a list's items at most four
  each), no sentence or clause after it ("… to Jane. Make the intro shorter", "… to Jane and
  proofread it", "…，顺便缩短开头"), not a description ("to a numbered list", "to something
  shorter", "to first person"), and one word where the field is an address or a name
  (``url``, ``slug``, ``image``, ``layout``, ``type``…);
- the field is the post's own, by its name, or its singular or plural among a few common ones
  (``category`` and ``categories``, ``author`` and ``authors``, ``keyword`` and
  ``keywords``), at the top level or in the table a generator keeps such fields in (Zola's
  ``[taxonomies]`` and ``[extra]``, Hugo's ``[params]``); "image" never finds ``images``, nor
  "comment" ``comments``;
- it keeps its kind: a list gets the words given, split at commas ("linux, networking"; "Tips
  and Tricks" stays one); a boolean takes yes or no; a number a number; a string the words
  as written (their quotes off). Words not of the field's kind ("change the math to display
  mode" on ``math: true``) are the body's; a field holding a table is refused, said;
- a post without the field gets it only for a few common ones (``date``, ``author``,
  ``authors``, ``categories``, ``slug``, ``keywords``, ``series``); on a Zola site only
  ``date``, ``slug`` and ``authors``, page keys Zola reads (another is refused, said: Zola
  ignores it);
- the post's date (``date``, ``lastmod``, ``updated``, Obsidian's ``created``…) takes a date
  (``2024-06-01``, ``2024-06-01 10:00``, ``2024-06-01T10:00:00+02:00``), written as a date of
  the frontmatter's kind, its time and offset kept when only the day is given; other words
  ("change the date to tomorrow", "2024-13-45") are refused, said; "the date" of a post
  with no ``date`` is the day it was written by another name (``created``, ``pubDate``…),
  "the created date" ``created``;
- two fields at once ("set the author to Jane and the date to …") are refused, said: one at a
  time.

The title, the tags, the description and the draft mark have their own requests
(``titles.py``, ``tags.py``, ``fields.py``, ``publishing.py``), and the language is a
translation's: none of them is set here.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["POST_NAMED", "TABLES", "FieldSet", "given_field", "named_file"]

_KEY = r"(?P<key>[A-Za-z][\w-]{1,30})"
_SET = re.compile(
    r"^\W*(?:(?:please|ok|okay|now|then|can\s+you|could\s+you|would\s+you)[\s,]+)*"
    r"(?P<verb>set|change|update|switch)\s+"
    r"(?:(?P<its>its|the)\s+|(?P<owner>(?:this|the|that)\s+(?:post|article|note|page)(?:'s|’s)"
    r"\s+))?"
    rf"{_KEY}(?P<dated>\s+date)?(?P<field>\s+(?:field|key))?"
    r"(?:\s+(?:of|in|for|on)\s+(?P<post>.+?))?"
    r"\s+(?:to|as|into)\s*[:：]?\s*(?P<value>.+?)\s*(?:,?\s*please)?\s*[!?。！？]?\s*$",
    re.I,
)
_SET_ZH = re.compile(
    r"^(?:请)?(?:把|将)(?P<its>它的|这篇文章的|这篇的|文章的|该文章的)?\s*"
    r"(?:(?P<zh>分类|类别|作者|系列|关键词|关键字|日期)|" + _KEY + r"\s*(?P<field>字段)?)"
    r"\s*(?:改成|改为|设为|设置为|换成)\s*[:：]?\s*(?P<value>.+?)\s*[。！]?$",
    re.I,
)
_ZH_NAMES = {
    "分类": "categories",
    "类别": "categories",
    "作者": "author",
    "系列": "series",
    "关键词": "keywords",
    "关键字": "keywords",
    "日期": "date",
}
# Fields that have their own requests, or are no field to set as written.
_ELSEWHERE_WORDS = """
title headline name heading tag tags description summary excerpt blurb draft drafts published
publish language lang languages locale text body content intro introduction conclusion
paragraph section sections headings tone style length word words wording voice format it this
that
"""
_ELSEWHERE = frozenset(_ELSEWHERE_WORDS.split())
# Fields a post may be given when it has none (the common ones Hugo, Hexo and Jekyll read),
# and on a Zola site (the page keys Zola itself reads).
_NEW_KEYS = {
    "date": "date",
    "author": "author",
    "authors": "authors",
    "category": "categories",
    "categories": "categories",
    "slug": "slug",
    "keywords": "keywords",
    "keyword": "keywords",
    "series": "series",
}
_ZOLA_KEYS = {"slug": "slug", "author": "authors", "authors": "authors", "date": "date"}
# A field's other spellings: its singular or plural, among the common ones only.
_SAME_FIELD = {
    "category": ("categories",),
    "categories": ("category",),
    "author": ("authors",),
    "authors": ("author",),
    "keyword": ("keywords",),
    "keywords": ("keyword",),
}
# The tables a generator keeps a post's own fields in (Zola's, Hugo's).
TABLES = ("taxonomies", "extra", "params")
# Words that name a post and nothing more: "the ssh post", "this article", "posts/x.md", a
# quoted title; not "the meeting in this post", "the paper cited in this article", "the
# linked post" (post_facts asks the same of a question's words).
POST_NAMED = re.compile(
    r"(?:this|that|the|my)\s+(?:(?!(?:of|in|on|from|about|for|with|that|which|by|cited|"
    r"mentioned|linked|quoted)\s)[\w.'’+#-]+\s+){0,5}?(?:post|article|note|entry)"
    r"|[\w./-]+\.md|[\"“'‘][^\"”'’]{1,80}[\"”'’](?:\s+(?:post|article|note))?",
    re.I,
)
# A post's file written out: quoted (spaces or Chinese in it: "Notes/所有权笔记.md"), or a
# bare path (``Notes/ownership-notes.md``); a bare path with spaces only as a whole clause
# ("of Notes/Borrow Checker.md", ``_CLAUSE_PATH``).
_MD = r"\.(?:md|markdown|mdx)"
_QUOTED_PATH = rf"[\"“'‘`「『](?P<quoted>[^\"“”'‘’`「」『』\n]{{1,200}}?{_MD})[\"”'’`」』]"
_MD_PATH = re.compile(rf"{_QUOTED_PATH}|(?<![\w./~-])[\w.~-][\w./~-]{{0,200}}?{_MD}(?![\w])")
_CLAUSE_PATH = re.compile(
    rf"(?:(?:the|this|that|my)\s+(?:post|article|note|file|page)\s+)?(?:{_QUOTED_PATH}"
    rf"|(?P<bare>(?:[\w.~-]+/)*[\w.~-]+{_MD}|(?:[\w.~-]+/)+[^\"“”/\n]{{1,120}}?{_MD}))",
    re.I,
)
_BODY_WORDS = re.compile(
    r"\b(?:paragraph|section|code|block|intro|introduction|line|list|table|heading|sentence|"
    r"example|snippet|quote|image|link|caption|footnote|footer|header|sidebar|comment|box|"
    r"changelog|notes)\b",
    re.I,
)
# A clause after the value: the post's ("… to Jane on the rust post": dropped), else a part of
# the body's ("… to Jane in the intro": the body's edit).
_CLAUSE_AFTER = re.compile(
    r"\s+(?:of|in|on|for|at)\s+(?P<clause>(?:the|this|that|my|its)\b.*"
    rf"|{_QUOTED_PATH.replace('quoted', 'after')}|[\w.~-][\w./~-]{{0,200}}?{_MD})$",
    re.I,
)
_DATE_FIELDS = frozenset(
    {"date", "lastmod", "updated", "modified", "publishdate", "pubdate", "expirydate",
     "created", "last_modified_at", "published", "date_created", "created_at"}
)  # fmt: skip
# Fields whose value is one word: an address, a name, a layout.
_ONE_WORD = frozenset({"url", "slug", "image", "cover", "layout", "type", "path", "permalink"})
_VERB = (
    r"(?:make|add|remove|change|set|fix|translate|rewrite|rename|shorten|expand|mention|move|"
    r"delete|publish|update|improve|replace|put|insert|drop|cut|tighten|proofread|tidy|clean|"
    r"check|review|correct|polish|format|reword|simplify|explain|summari[sz]e|keep|use)"
)
# More in the request than one value: a sentence or a clause after it, another change asked.
_MORE = re.compile(
    rf"\b(?:and|then|also|but)\s+(?:(?:the|its|set|change)\s+\w+\s+(?:to|as)\b|{_VERB}\b)"
    rf"|[,;]\s*(?:and\s+|then\s+)?{_VERB}\s+\S"  # ("books, review" is a list)
    r"|[.!?;]\s+\S+\s+\S|[；。！？]\s*\S|[，,]\s*[\u3400-\u9fff]{2,}"
    r"|然后|并且|同时|顺便|再把|再将|另外",
    re.I,
)
# Another field set in the same request: "… and the date to 2024-06-01".
_TWO_FIELDS = re.compile(r"(?:\band|,)\s+(?:(?:the|its)\s+)?([A-Za-z][\w-]{1,30})\s+to\b", re.I)
# A description of a value, not one: "a numbered list", "something shorter", "first person".
_DESCRIBED = re.compile(  # (lowercase: "The Rust Team" is a name)
    r"^(?:a|an|the|some|something|anything|more|less|much|very|first|second|third|"
    r"better|shorter|longer|this|that|these|those|my|our|your|me|myself|us|you)\b"
)
# An initial or a title's full stop, which ends no sentence.
_ABBREVIATED = r"(?:Jr|Sr|Dr|Mr|Mrs|Ms|St|Co|vs|Inc|Ltd|etc|Prof)"
_INITIALS = re.compile(rf"\b(?:[A-Z]|{_ABBREVIATED})\.")
_QUOTES = "\"'“”‘’「」『』《》`"
_TRUE = frozenset({"true", "yes", "on", "是"})
_FALSE = frozenset({"false", "no", "off", "否"})
_LIST_SPLIT = re.compile(r"\s*[,，、;；]\s*")
_ENDS_ABBREVIATED = re.compile(rf"\b(?:[A-Z]|{_ABBREVIATED})\.$")


def _without_stop(text: str) -> str:
    """``text`` without a sentence's last full stop ("Jane Doe." is "Jane Doe"), unless it ends
    an initial or an abbreviation ("Jane Doe Jr.")."""
    if text.endswith(".") and not _ENDS_ABBREVIATED.search(text):
        return text[:-1]
    return text


MAX_VALUE_WORDS = 6
MAX_ITEM_WORDS = 4


@dataclass(frozen=True, slots=True)
class FieldSet:
    """A field to set (``key``, as the frontmatter spells it; ``table.X`` in a table the
    post keeps such fields in) to ``value`` (of the old value's kind); or, with ``refused``,
    why it cannot be: ``value``, the words are not what the field takes (``wanted`` says
    what); ``table``, the field holds a table; ``zola``, a field a Zola page does not have,
    which Zola would ignore at the top level; ``two``, two fields asked at once."""

    key: str
    value: Any = None
    refused: str = ""
    wanted: str = ""


def given_field(instruction: str, fields: dict[str, Any], *, zola: bool = False) -> FieldSet | None:
    """The field ``instruction`` sets and its value, read against the post's ``fields``;
    None when it names no field (an edit of the body, or another request's field). ``zola``:
    the blog is a Zola site (only the page keys Zola reads may be added)."""
    if "\n" in instruction.strip():
        return None  # a second line: more than one value
    text = " ".join(instruction.split())
    found = _SET.match(text)
    if found is not None:
        named = bool(
            found.group("its") or found.group("owner") or found.group("field")
            or found.group("verb").casefold() == "set"
        )  # fmt: skip
        clause = found.group("post")
        if clause and _clause_file(clause) is None and not _names_post(clause):
            return None  # "the author of the quote", "the type in the code block": the body's
        name = found.group("key")
        if found.group("dated"):  # "the created date": its date field, else not one
            name = _dated(name, fields)
            named = named or bool(name)
    else:
        found = _SET_ZH.match(text)
        if found is None:
            return None
        named = bool(found.group("zh") or found.group("its") or found.group("field"))
        name = _ZH_NAMES.get(found.group("zh") or "", found.group("key") or "")
    if not named or not name or name.casefold() in _ELSEWHERE:
        return None
    written = found.group("value").strip()
    if (after := _CLAUSE_AFTER.search(written)) is not None:
        if _clause_file(after.group("clause")) is None and not _names_post(after.group("clause")):
            return None  # "… to Jane in the intro": where in the body, the body's edit
        written = written[: after.start()].strip()  # "… to Jane on the rust post"
    if (other := _TWO_FIELDS.search(written)) is not None and (
        _field(other.group(1), fields) or other.group(1).casefold() in _NEW_KEYS
    ):
        return FieldSet(name, refused="two")
    quoted = len(written) > 1 and written[0] in _QUOTES and written[-1] in _QUOTES
    raw = _without_stop(written).strip().strip(_QUOTES).strip()
    plain = _INITIALS.sub(lambda found: found.group()[:-1], raw)  # ("J. R. R. Tolkien")
    if not raw or len(raw) > 200 or (not quoted and (_MORE.search(plain) or _DESCRIBED.match(raw))):
        return None  # a sentence, a second request, or a description: the body's edit
    key, old = _found(name, fields)
    if key is None and name.casefold() == "date":
        key, old = _own_date(fields)
    if key is not None:
        return _typed(key, old, raw)
    new = (_ZOLA_KEYS if zola else _NEW_KEYS).get(name.casefold())
    if new is None:
        return FieldSet(name, refused="zola") if zola and name.casefold() in _NEW_KEYS else None
    return _typed(new, [] if new in ("categories", "keywords", "authors") else None, raw)


def _names_post(clause: str) -> bool:
    """Whether ``clause`` names the post and only the post ("of the ssh post", "in this
    article"), its words read without a file written in it: "change the date of
    Notes/ownership-notes.md to …" found "notes" in the path, took the request for an edit of
    the body, and the model's answer replaced the note's body."""
    words = _MD_PATH.sub(" post ", clause)
    return bool(POST_NAMED.fullmatch(clause.strip())) and not _BODY_WORDS.search(words)


def _clause_file(clause: str) -> str | None:
    """The file a clause is, when it is one and nothing more ("Notes/ownership-notes.md",
    "\"Notes/所有权笔记.md\"", "Notes/Borrow Checker.md", "the note notes/x.md"); its quotes
    off."""
    written = _CLAUSE_PATH.fullmatch(clause.strip())
    if written is None:
        return None
    return (written.group("quoted") or written.group("bare")).strip()


def named_file(instruction: str) -> str | None:
    """The file a field set names its post by ("change the date of \"Notes/所有权笔记.md\" to
    2024-06-02", "set the author to Jane on posts/x.md"), as written; None when it names none
    (or is no field set). The edit takes that post, not the one open or in focus: a quoted path
    with spaces or Chinese, which the router does not take, had the focus note changed in its
    place."""
    text = " ".join(instruction.split())
    found = _SET.match(text)
    if found is None:
        return None
    clause = found.group("post")
    if clause and (named := _clause_file(clause)) is not None:
        return named
    after = _CLAUSE_AFTER.search(found.group("value"))
    return _clause_file(after.group("clause")) if after is not None else None


def _found(name: str, fields: dict[str, Any]) -> tuple[str | None, Any]:
    """The post's key for ``name`` (``table.key`` in a generator's table) and its value."""
    key = _field(name, fields)
    if key is not None:
        return key, fields[key]
    for table in TABLES:
        inside = fields.get(table)
        if isinstance(inside, dict) and (nested := _field(name, inside)) is not None:
            return f"{table}.{nested}", inside[nested]
    return None, None


# The fields a post without ``date`` may be dated by, the day it was written (Obsidian's
# ``created``, Astro's ``pubDate``…); never a day it was changed (``updated``, ``lastmod``).
_OWN_DATES = ("created", "pubdate", "publishdate", "published", "date_created", "created_at")


def _own_date(fields: dict[str, Any]) -> tuple[str | None, Any]:
    """The field a post without ``date`` is dated by, and its value: "change the date to
    2024-06-01" on an Obsidian note dated by ``created`` added a ``date`` beside it, and the
    note kept its old day everywhere the vault sorts by ``created``."""
    for name in _OWN_DATES:
        key = _field(name, fields)
        if key is not None and _is_date(fields[key]):
            return key, fields[key]
    return None, None


def _is_date(value: Any) -> bool:
    return isinstance(value, dt.date) or (isinstance(value, str) and bool(_ISO.match(value)))


def _dated(name: str, fields: dict[str, Any]) -> str:
    """The post's date field "the <name> date" names ("the created date": ``created``; "the
    pub date": ``pubDate``), or "" when it has none of that name (no field named, then)."""
    for candidate in (name, f"{name}date", f"{name}_date", f"{name}-date"):
        key = _field(candidate, fields)
        if key is not None and _is_date(fields[key]):
            return key
    return ""


def _field(name: str, fields: dict[str, Any]) -> str | None:
    """The post's own key for ``name``: itself, or its singular or plural among the common
    ones (``_SAME_FIELD``), whatever the case."""
    by_fold = {str(key).casefold(): str(key) for key in fields}
    folded = name.casefold()
    for candidate in (folded, *_SAME_FIELD.get(folded, ())):
        if candidate in by_fold:
            return by_fold[candidate]
    return None


def _listed(raw: str) -> list[str] | None:
    """The items of a list given ("linux, networking"), None when one is a sentence."""
    items = [item.strip(_QUOTES).strip() for item in _LIST_SPLIT.split(raw) if item.strip()]
    return items if all(len(item.split()) <= MAX_ITEM_WORDS for item in items) else None


_ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)


def _date(old: Any, raw: str) -> Any:
    """``raw`` as a date of ``old``'s kind (a day given for a date and time keeps its time
    and offset), or None when it is no date."""
    if not _ISO.fullmatch(raw):
        return None
    try:
        given = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None  # ("2024-13-45")
    has_time = len(raw) > 10
    if isinstance(old, dt.datetime):
        if not has_time:
            given = old.replace(year=given.year, month=given.month, day=given.day)
        elif given.tzinfo is None and old.tzinfo is not None:
            given = given.replace(tzinfo=old.tzinfo)
        return given
    if isinstance(old, dt.date) or old is None:  # (a new one: a date, not a string)
        return given if has_time else given.date()
    if not has_time and isinstance(old, str) and _ISO.match(old):
        return raw + old[10:]  # a string's time and offset kept ("2024-01-01T10:00:00+02:00")
    written = _WRITTEN_TIME.fullmatch(old.strip()) if isinstance(old, str) else None
    if has_time and given.tzinfo is None and written and written["offset"]:
        # a time given without an offset, for a string with one: written as the old one
        # was, its offset kept ("2024-01-12T10:00:00+08:00" set to "2024-06-01 09:30" lost
        # its +08:00, moving the post by eight hours)
        clock = raw[11:]
        if written["seconds"] and clock.count(":") == 1:
            clock += ":00"
        return raw[:10] + written["sep"] + clock + written["offset"]
    if has_time and written and given.tzinfo is None:  # (Obsidian's "2024-01-18T20:00")
        return raw[:10] + written["sep"] + raw[11:]  # its separator kept
    return raw  # a date written as a string stays one, as given


_WRITTEN_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}(?P<sep>[T ])\d{2}:\d{2}(?P<seconds>:\d{2}(?:\.\d+)?)?"
    r"(?P<offset>\s*(?:Z|[+-]\d{2}:?\d{2}))?"
)


def _typed(key: str, old: Any, raw: str) -> FieldSet | None:
    """``raw`` as a value of ``old``'s kind; a refusal for a date given otherwise or a table;
    None when the words are no value of the field's kind (the body's edit, then)."""
    leaf = key.rsplit(".", 1)[-1].casefold()
    if leaf in _DATE_FIELDS and (isinstance(old, dt.date | str) or old is None):
        value = _date(old, raw)
        if value is None:
            return FieldSet(key, refused="value", wanted="a date such as 2024-05-10")
        return FieldSet(key, value)
    if isinstance(old, dict):
        return FieldSet(key, refused="table")
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
        items = _listed(raw)
        return FieldSet(key, items) if items else None
    if old is not None and not isinstance(old, str):
        return None
    if len(raw.split()) > MAX_VALUE_WORDS or (leaf in _ONE_WORD and len(raw.split()) > 1):
        return None  # a sentence, or words where one name goes
    return FieldSet(key, raw)
