"""A post's frontmatter block as written: split off byte for byte, read, changed in its format.

Static-site generators put a post's fields in one of three formats at the top of the file:

======  ==========================================  ====================================
format  delimiters                                  used by
======  ==========================================  ====================================
yaml    ``---`` ... ``---`` (or ``...``)            Jekyll, Hugo, Hexo, Obsidian, VitePress
toml    ``+++`` ... ``+++``                         Zola, Hugo
json    a JSON object, ``{`` alone on the first     Hugo
        line, up to its closing ``}``
json    the object's members without braces, up to  Hexo
        a ``;;;`` line (optionally after one)
yaml    no opening ``---``: fields from the first   Hexo (``source/_posts/``,
        line up to a ``---`` line                   ``source/_drafts/``)
======  ==========================================  ====================================

``split_frontmatter(text)`` cuts a post into ``Frontmatter(block, format, body)`` where
``block`` is the frontmatter exactly as written (a byte-order mark, the delimiters and the line
break after the closing one included) and ``body`` everything after it, so ``fm.text ==
text`` always: a skill that edits the body writes ``fm.block`` back untouched, and the model
never sees it. ``fm.fields()`` reads the fields (PyYAML, tomllib, json). ``fm.with_fields()``
changes some fields and keeps the format, the key order and the comments: TOML through
tomlkit, YAML by rewriting only the lines of the keys changed, JSON with its indent kept.
``strip_frontmatter(reply)`` takes a frontmatter block off the front of a model's reply, so
a reply is never written as a post's frontmatter.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from skillrt.exceptions import FrontmatterNotKept, InvalidFrontmatter

__all__ = [
    "FORMATS",
    "Format",
    "Frontmatter",
    "JsonStyle",
    "ListStyle",
    "json_style",
    "render_frontmatter",
    "split_frontmatter",
    "strip_frontmatter",
    "yaml_list_style",
]

Format = Literal["yaml", "toml", "json"]
ListStyle = Literal["block", "flow", "quoted"]
JsonStyle = Literal["braced", "members", "fenced"]
"""How JSON frontmatter is written: an object in braces (Hugo), or Hexo's bare members up to a
``;;;`` line (``fenced``: after a ``;;;`` line too)."""
"""How YAML lists are written: one ``- item`` a line, ``[a, b]``, or ``["a", "b"]``."""
FORMATS: tuple[Format, ...] = ("yaml", "toml", "json")

_BOM = "\ufeff"
_YAML_OPEN = re.compile(r"---[ \t]*\r?\n")
_YAML_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_TOML_OPEN = re.compile(r"\+\+\+[ \t]*\r?\n")
_TOML_CLOSE = re.compile(r"^\+\+\+[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_JSON_OPEN = re.compile(r"\{[ \t]*(?:\r?\n|\"|\})")  # not "{{< shortcode >}}" nor "{% liquid %}"
_LINE_END = re.compile(r"[ \t]*(?:\r?\n|\Z)")
# Hexo's JSON without braces: members from the first line (or after a ``;;;`` line) up to a
# ``;;;`` line. Only a block whose members parse as a JSON object counts.
_HEXO_OPEN = re.compile(r"(;{3,}[ \t]*\r?\n)?(?=[ \t]*\"[^\"\r\n]*\"[ \t]*:)")
_HEXO_SEP = re.compile(r";{3,}[ \t]*\r?\n")
_HEXO_CLOSE = re.compile(r"^;{3,}[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
# Hexo's YAML without its opening "---" ("Prefixing separators are optional", hexo-front-matter
# says; Hexo 2's scaffolds wrote it): fields from the first line up to a line of dashes. Read
# so only in a Hexo site's posts (``_hexo_post``), and only fields (``_hexo_fields``).
_HEXO_PATH = re.compile(r"(?:^|/)source/_(?:posts|drafts)/")
_HEXO_YAML_CLOSE = re.compile(r"^-{3,}[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_HEXO_FIELDS = frozenset(
    {"title", "date", "updated", "tags", "categories", "layout", "permalink", "comments"}
)
_SIMPLE_KEY = re.compile(r"[A-Za-z_][\w-]*")
_YAML_KEY = re.compile(
    r"""^(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#:'"\-?][^:\n]*?))[ \t]*:(?:[ \t]|\r?$)"""
)


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """A post cut in two: ``block`` (the frontmatter as written, or ``""``) and ``body``.

    ``format`` is ``"yaml"``, ``"toml"``, ``"json"``, or None when the post has none.
    """

    block: str
    format: Format | None
    body: str
    path: str = ""

    @property
    def text(self) -> str:
        """The post again, byte for byte."""
        return self.block + self.body

    @property
    def inner(self) -> str:
        """The fields' source: the block without its delimiters (JSON: the object)."""
        start, stop = self._inner_span()
        return self.block[start:stop]

    def _inner_span(self) -> tuple[int, int]:
        if self.format is None:
            return 0, 0
        skip = len(_BOM) if self.block.startswith(_BOM) else 0
        if self.format == "json":
            if self.block.startswith("{", skip):
                return skip, self.block.rindex("}") + 1
            opening = _HEXO_SEP.match(self.block, skip)  # Hexo's ";;;" style
            start = opening.end() if opening else skip
            closing = _HEXO_CLOSE.search(self.block, start)
            if closing is None:
                raise InvalidFrontmatter(self.path, "not a json frontmatter block")
            return start, closing.start()
        opening = (_YAML_OPEN if self.format == "yaml" else _TOML_OPEN).match(self.block, skip)
        if opening is None and self.format == "yaml":  # Hexo's, without its opening "---"
            closing = _HEXO_YAML_CLOSE.search(self.block, skip)
            if closing is not None and closing.end() == len(self.block):
                return skip, closing.start()
        close = _YAML_CLOSE if self.format == "yaml" else _TOML_CLOSE
        closing = close.search(self.block, opening.end()) if opening else None
        if opening is None or closing is None:
            raise InvalidFrontmatter(self.path, f"not a {self.format} frontmatter block")
        return opening.end(), closing.start()

    def fields(self) -> dict[str, Any]:
        """The fields, parsed (TOML and YAML dates as ``datetime.date``/``datetime``).

        Raises ``InvalidFrontmatter`` when the block is not valid in its format or is not a
        mapping of fields.
        """
        if self.format is None:
            return {}
        data = _parse(self.format, self.inner, self.path, self.block)
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise InvalidFrontmatter(
                self.path, f"expected a mapping of fields, got {type(data).__name__}"
            )
        return {str(k): v for k, v in data.items()}

    def with_body(self, body: str) -> Frontmatter:
        return replace(self, body=body)

    def with_nested(self, table: str, key: str, value: Any) -> Frontmatter | None:
        """The post with ``key`` of the ``table`` field set to ``value`` (Hugo's ``params``,
        Zola's ``extra``), every other byte kept: TOML through tomlkit; YAML by rewriting that
        key's one line (its quotes and comment kept); None when that cannot be done so (JSON,
        a list or a table as the value, a value of more than one line, no such one-line
        key)."""
        fields = self.fields()
        inside = fields.get(table)
        if not isinstance(inside, dict):
            return None
        if self.format == "toml":
            return self.with_fields({table: {**inside, key: value}})
        if self.format != "yaml" or isinstance(value, list | dict) or key not in inside:
            return None
        start, stop = self._inner_span()
        new_inner = _yaml_nested_set(self.block[start:stop], table, key, value)
        if new_inner is None:
            return None
        changed = replace(self, block=self.block[:start] + new_inner + self.block[stop:])
        _verify(changed, {**fields, table: {**inside, key: value}})
        return changed

    def with_fields(
        self,
        changes: Mapping[str, Any],
        *,
        remove: Iterable[str] = (),
        lists: ListStyle | None = None,
    ) -> Frontmatter:
        """The post with ``changes`` set and ``remove`` dropped, in the block's own format:
        other keys keep their order, their values as written and their comments. A post
        without frontmatter gets a YAML block.

        A YAML key that is new and holds a list is written in the ``lists`` style, or, left
        None, in the style most of the block's own lists have (``yaml_list_style``; one item a
        line when it has none); a key set again keeps its own style."""
        removed = [key for key in remove if key not in changes]
        if self.format is None:
            if not changes:
                return self
            # (a byte-order mark stays first, before the new block, and a CRLF post's new
            # block and blank line are CRLF: the mark was left at the start of the body,
            # where it broke the first heading)
            bom = _BOM if self.body.startswith(_BOM) else ""
            body = self.body[len(bom) :]
            newline = "\r\n" if "\r\n" in body else "\n"
            body = body if body.startswith(("\n", "\r\n")) else newline + body
            block = bom + render_frontmatter(changes, "yaml", newline, lists=lists or "block")
            return replace(self, block=block, format="yaml", body=body)
        before = self.fields()  # refuses a block that cannot be read
        start, stop = self._inner_span()
        inner = self.block[start:stop]
        if self.format == "toml":
            new_inner = _toml_set(inner, changes, removed)
        elif self.format == "json" and not _braced(inner):
            new_inner = _members_set(inner, changes, removed)
        elif self.format == "json":
            new_inner = _json_set(inner, changes, removed)
        else:
            style = lists or yaml_list_style(inner) or "block"
            new_inner = _yaml_set(inner, changes, removed, lists=style)
        new_block = self.block[:start] + new_inner + self.block[stop:]
        changed = replace(self, block=new_block)
        expected = {k: v for k, v in before.items() if k not in removed}
        for key, value in changes.items():
            if value is None:
                expected.pop(key, None)
            else:
                expected[key] = _set(value)
        _verify(changed, expected)
        return changed


def _set(value: Any) -> Any:
    """A value set, as it reads back: a None inside a table set is no key (a None at the top
    level of the changes drops its key; a field already empty in the block stays None)."""
    if isinstance(value, Mapping):
        return {k: _set(v) for k, v in value.items() if v is not None}
    return value


def _verify(changed: Frontmatter, expected: Mapping[str, Any]) -> None:
    """Raise ``FrontmatterNotKept`` unless ``changed`` reads as ``expected`` (an empty field is
    None in both): every change is read back before it may be written. A YAML key said twice was
    set where PyYAML does not read it (publishing said "Published" of a post still a draft),
    and an anchor's alias was left dangling."""
    want = dict(expected)
    try:
        got = changed.fields()
    except InvalidFrontmatter as exc:
        raise FrontmatterNotKept(
            changed.path, f"the change would leave it unreadable ({exc.reason})"
        ) from exc
    wrong = sorted(
        str(k)
        for k in set(want) | set(got)
        if k not in want or k not in got or not _same(want[k], got[k])
    )
    if wrong:
        raise FrontmatterNotKept(
            changed.path,
            "the change could not be made in it as written without changing other values "
            f"(read back, these differ: {', '.join(wrong[:5])})",
        )


def _same(want: Any, got: Any) -> bool:
    """Whether a value read back is the one set: equal, or a number written as it was where
    the value set is its text (a tag ``1.10`` kept as written, read as 1.1), a date as its
    ISO text (JSON), a tomlkit value as the plain one."""
    if want == got:
        return True
    if isinstance(want, float) and isinstance(got, float) and want != want and got != got:
        return True  # (.nan, read back: nan is never equal to itself)
    if isinstance(want, Mapping) and isinstance(got, Mapping):
        return set(want) == set(got) and all(_same(want[k], got[k]) for k in want)
    if isinstance(want, list | tuple) and isinstance(got, list | tuple):
        return len(want) == len(got) and all(map(_same, want, got))
    if isinstance(want, str) and isinstance(got, int | float) and not isinstance(got, bool):
        return _yaml_scalar(want) == got or str(got) == want
    if isinstance(want, dt.date) and isinstance(got, str):
        return want.isoformat() == got
    return False


def split_frontmatter(text: str, path: str = "", *, hexo: bool | None = None) -> Frontmatter:
    """``text`` cut into its frontmatter block and body, so that ``.text == text``.

    A post that opens a ``---`` or ``+++`` block and never closes it raises
    ``InvalidFrontmatter`` (its text would otherwise be taken as body and rewritten).

    ``hexo``: whether the post is a Hexo site's, whose YAML may go without its opening
    ``---`` (``_hexo_block``); None tells by ``path`` (under ``source/_posts/`` or
    ``source/_drafts/``).
    """
    bom = _BOM if text.startswith(_BOM) else ""
    rest = text[len(bom) :]
    for fmt, opening, closing in (
        ("yaml", _YAML_OPEN, _YAML_CLOSE),
        ("toml", _TOML_OPEN, _TOML_CLOSE),
    ):
        opened = opening.match(rest)
        if opened is None:
            continue
        closed = closing.search(rest, opened.end())
        if closed is None:
            delimiter = "---" if fmt == "yaml" else "+++"
            raise InvalidFrontmatter(path, f"the '{delimiter}' block is never closed")
        end = len(bom) + closed.end()
        return Frontmatter(text[:end], fmt, text[end:], path)  # type: ignore[arg-type]
    members_open = _HEXO_OPEN.match(rest)
    if members_open is not None:
        closed = _HEXO_CLOSE.search(rest, members_open.end())
        members = rest[members_open.end() : closed.start()] if closed else ""
        if closed is not None and isinstance(_members(members), dict):
            end = len(bom) + closed.end()
            return Frontmatter(text[:end], "json", text[end:], path)
        if members_open.group(1):  # it opened with ";;;": a block, but not one that can be read
            reason = "is never closed" if closed is None else "does not hold JSON members"
            raise InvalidFrontmatter(path, f"the ';;;' block {reason}")
    if _JSON_OPEN.match(rest):
        try:
            _, stop = json.JSONDecoder().raw_decode(rest)
        except json.JSONDecodeError as exc:
            raise InvalidFrontmatter(path, f"invalid JSON at line {exc.lineno}: {exc.msg}") from exc
        tail = _LINE_END.match(rest, stop)
        end = len(bom) + (tail.end() if tail else stop)
        return Frontmatter(text[:end], "json", text[end:], path)
    if hexo or (hexo is None and _HEXO_PATH.search(path) is not None):
        block = _hexo_block(rest)
        if block:
            end = len(bom) + len(block)
            return Frontmatter(text[:end], "yaml", text[end:], path)
    return Frontmatter("", None, text, path)


def _hexo_block(text: str) -> str:
    """The YAML fields at the start of a Hexo post that has no opening ``---``, up to and
    with the ``---`` line that closes them, or "". A Hexo post written so ("title: Hello
    Hexo\ndate: ...\ntags: [hexo, blog]\n---\n\nBody") had its fields taken as body: sent
    to the model to make "more concise", and saved as one line with no frontmatter, said
    unchanged. Only fields count (``_hexo_fields``): a body that opens with "Note: this" and
    has a ``---`` rule further down is the body it is."""
    if not text[:1].strip() or _yaml_key(text.partition("\n")[0]) is None:
        return ""
    closing = _HEXO_YAML_CLOSE.search(text)
    if closing is None or not _hexo_fields(text[: closing.start()]):
        return ""
    return text[: closing.end()]


def _hexo_fields(inner: str) -> bool:
    """Whether ``inner`` is a post's fields and nothing else: each line a top-level
    ``key:``, a value's continuation (``_continues``), a comment or blank; read as a mapping
    of plain keys (``title``, ``date``), one of them a field Hexo itself sets
    (``_HEXO_FIELDS``)."""
    for line in inner.splitlines():
        field = not line.strip() or line.startswith("#") or _continues(line)
        if not field and _yaml_key(line) is None:
            return False
    try:
        data = _parse("yaml", inner, "", inner)
    except InvalidFrontmatter:
        return False
    return (
        isinstance(data, dict)
        and all(isinstance(key, str) and _SIMPLE_KEY.fullmatch(key) for key in data)
        and not _HEXO_FIELDS.isdisjoint(data)
    )


def strip_frontmatter(reply: str) -> tuple[str, bool]:
    """A model's reply without a frontmatter block at its start (and the blank lines after
    it), and whether one was there. Only a block of fields counts: text between two ``---``
    rules (a paragraph set off by thematic breaks) is the reply's own and stays."""
    lead = len(reply) - len(reply.lstrip())
    try:
        found = split_frontmatter(reply[lead:])
        fields = found.fields()
    except InvalidFrontmatter:
        return reply, False
    if found.format is None or (not fields and found.inner.strip()):
        return reply, False
    return found.body.lstrip("\r\n"), True


def render_frontmatter(
    fields: Mapping[str, Any],
    fmt: Format,
    newline: str = "\n",
    *,
    lists: ListStyle = "block",
    json_as: JsonStyle = "braced",
) -> str:
    """A new frontmatter block (delimiters and the closing line break included) in ``fmt``.
    Keys keep their order; ``None`` values are left out. ``lists``: how YAML lists of plain
    values are written, as the blog writes them (``PostStyle.lists``); ``json_as``: JSON as an
    object in braces or as Hexo's members and ``;;;`` (``JsonStyle``)."""
    data = {k: v for k, v in fields.items() if v is not None}
    if fmt == "toml":
        import tomlkit

        inner = tomlkit.dumps(_toml_ready(data)) if data else ""
        text = f"+++\n{inner}+++\n"
    elif fmt == "json" and json_as != "braced":
        text = _hexo_members(data, fenced=json_as == "fenced")
    elif fmt == "json":
        text = json.dumps(_json_ready(data), ensure_ascii=False, indent=2) + "\n"
    else:
        inner = _yaml_dump(data, lists=lists) if data else ""
        text = f"---\n{inner}---\n"
    return text.replace("\n", newline) if newline != "\n" else text


def _hexo_members(data: Mapping[str, Any], *, fenced: bool) -> str:
    """Hexo's JSON frontmatter as its own ``stringify`` writes it: the members one a line, no
    braces, then ``;;;`` (``fenced``: a ``;;;`` line first too). hexo-front-matter reads
    only a ``---`` or ``;;;`` block: a new post in braces on a Hexo blog was published
    untitled, its JSON printed as its body."""
    lines = [
        f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"
        for key, value in _json_ready(dict(data)).items()
    ]
    text = ",\n".join(lines) + "\n" + ";;;\n"
    return ";;;\n" + text if fenced else text


def json_style(found: Frontmatter) -> JsonStyle | None:
    """How a post's JSON frontmatter is written (``JsonStyle``), or None when it is no JSON."""
    if found.format != "json":
        return None
    start = found.block.removeprefix(_BOM)
    if start.startswith("{"):
        return "braced"
    return "fenced" if _HEXO_SEP.match(start) else "members"


# --- parsing -----------------------------------------------------------------------------


def _parse(fmt: Format, inner: str, path: str, block: str) -> Any:
    if fmt == "toml":
        try:
            return tomllib.loads(inner)
        except tomllib.TOMLDecodeError as exc:
            reason = " ".join(str(exc).split())[:200]
            raise InvalidFrontmatter(path, f"invalid TOML: {reason}") from exc
    if fmt == "json":
        try:
            return json.loads(inner if _braced(inner) else "{" + inner + "}")
        except json.JSONDecodeError as exc:
            raise InvalidFrontmatter(path, f"invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    import yaml  # here: a process that reads no YAML block does not load it

    try:
        return yaml.load(inner, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
            before = block[: block.find(inner)] if inner else block
            line = exc.problem_mark.line + before.count("\n") + 1
            reason = f"invalid YAML at line {line}: {exc.problem or exc.context or 'syntax error'}"
        else:
            reason = "invalid YAML: " + " ".join(str(exc).split())[:200]
        raise InvalidFrontmatter(path, reason) from exc


# --- changing fields in each format --------------------------------------------------------


def _toml_ready(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _toml_ready(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_toml_ready(v) for v in value if v is not None]
    return value


def _toml_set(inner: str, changes: Mapping[str, Any], removed: list[str]) -> str:
    import tomlkit  # here: only a TOML block's edit needs it

    doc = tomlkit.parse(inner)
    for key in removed:
        if key in doc:
            del doc[key]
    _toml_merge(doc, changes)
    dumped = tomlkit.dumps(doc)
    if "\r\n" in inner and "\n" not in inner.replace("\r\n", ""):
        # (tomlkit writes a new key's line with LF: a CRLF block got mixed line ends)
        dumped = dumped.replace("\r\n", "\n").replace("\n", "\r\n")
    return dumped


def _toml_merge(table: Any, changes: Mapping[str, Any]) -> None:
    """Set ``changes`` in a tomlkit table. A mapping set over a table changes the table's own
    keys (a key left out is dropped), so the keys whose values stay keep their comments: tags
    added to Zola's ``[taxonomies]`` leave its other lines as written."""
    for key, value in changes.items():
        if value is None:
            if key in table:
                del table[key]
        elif isinstance(value, Mapping) and isinstance(table.get(key), dict):
            inner = table[key]
            for gone in [k for k in inner if k not in value]:
                del inner[gone]
            _toml_merge(inner, {k: v for k, v in value.items() if inner.get(k) != v})
        elif _scalars(value) and _scalars(old := table.get(key)) and not isinstance(old, str):
            # (an array changed item by item: its comments and its layout stay; set anew,
            # "rust",  # the language" lost its comment and the array its lines)
            for tag, i1, i2, j1, j2 in reversed(_list_edits(list(old), list(value))):
                if tag == "equal":
                    continue
                del old[i1:i2]
                for n, item in enumerate(value[j1:j2]):
                    old.insert(i1 + n, item)
        else:
            table[key] = _toml_ready(value)


def _scalars(value: Any) -> bool:
    """Whether ``value`` is a list of strings and numbers (tags, categories)."""
    return isinstance(value, list | tuple) and all(
        isinstance(item, str | int | float) and not isinstance(item, bool) for item in value
    )


def _list_edits(old: Sequence[Any], new: Sequence[Any]) -> Sequence[tuple[str, int, int, int, int]]:
    """``difflib``'s opcodes from ``old`` to ``new``, items compared as text (a tag ``1.10``
    is the number 1.1 read)."""
    key = [str(item) for item in old]
    matcher = difflib.SequenceMatcher(None, key, [str(item) for item in new], autojunk=False)
    return matcher.get_opcodes()


def _json_ready(value: Any) -> Any:
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    return value


def _json_changed(
    data: dict[str, Any], changes: Mapping[str, Any], removed: list[str]
) -> dict[str, Any]:
    """JSON fields with ``removed`` dropped and ``changes`` set (None drops a key too)."""
    for key in removed:
        data.pop(key, None)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = _json_ready(value)
    return data


_DECODER = json.JSONDecoder()
_JSON_SPACE = re.compile(r"[ \t\r\n]*")


def _json_members(inner: str) -> list[tuple[str, int, int, int]] | None:
    """The top-level members of a JSON object, each as (key, where its key starts, where its
    value starts, where its value ends); None when ``inner`` is not one object (or says a
    key twice)."""
    at = _JSON_SPACE.match(inner, 0).end()  # type: ignore[union-attr]
    if not inner.startswith("{", at):
        return None
    at = _JSON_SPACE.match(inner, at + 1).end()  # type: ignore[union-attr]
    members: list[tuple[str, int, int, int]] = []
    try:
        while not inner.startswith("}", at):
            key, after = _DECODER.raw_decode(inner, at)
            colon = _JSON_SPACE.match(inner, after).end()  # type: ignore[union-attr]
            if not isinstance(key, str) or not inner.startswith(":", colon):
                return None
            start = _JSON_SPACE.match(inner, colon + 1).end()  # type: ignore[union-attr]
            _, end = _DECODER.raw_decode(inner, start)
            members.append((key, at, start, end))
            at = _JSON_SPACE.match(inner, end).end()  # type: ignore[union-attr]
            if inner.startswith(",", at):
                at = _JSON_SPACE.match(inner, at + 1).end()  # type: ignore[union-attr]
            elif not inner.startswith("}", at):
                return None
    except json.JSONDecodeError:
        return None
    if len({key for key, *_ in members}) != len(members) or inner[at + 1 :].strip():
        return None
    return members


def _json_spliced(inner: str, changes: Mapping[str, Any], removed: list[str]) -> str | None:
    """``inner`` with ``changes`` set and ``removed`` dropped, every other byte as it was: a
    value set again in its place, a new member after the last (on a line of its own, indented
    as the first, when the members are one a line), a dropped one with its comma. None when
    the object cannot be read that way (the caller writes it anew)."""
    members = _json_members(inner)
    if members is None or not members:
        return None
    drop = set(removed) | {key for key, value in changes.items() if value is None}
    edits: list[tuple[int, int, str]] = []  # (start, end, text), none overlapping
    i = 0
    while i < len(members):
        key, key_at, start, end = members[i]
        if key not in drop:
            if key in changes:
                value = json.dumps(_json_ready(changes[key]), ensure_ascii=False)
                edits.append((start, end, value))
            i += 1
            continue
        j = i  # a run of dropped members, i..j, goes as one
        while j + 1 < len(members) and members[j + 1][0] in drop:
            j += 1
        if j + 1 < len(members):  # up to the next key kept
            edits.append((key_at, members[j + 1][1], ""))
        elif i:  # the last ones: from the end of the one before (its comma with them)
            edits.append((members[i - 1][3], members[j][3], ""))
        else:  # every member
            edits.append((key_at, members[j][3], ""))
        i = j + 1
    known = {key for key, *_ in members}
    new = [(k, v) for k, v in changes.items() if k not in known and v is not None]
    if new:
        first = members[0][1]
        line_start = inner.rfind("\n", 0, first) + 1
        lead = inner[line_start:first]
        newline = "\r\n" if "\r\n" in inner else "\n"
        sep = "," + (newline + lead if lead.strip() == "" and line_start else " ")
        last = max((m for m in members if m[0] not in drop), key=lambda m: m[3], default=None)
        if last is None:
            return None
        added = "".join(
            f"{sep}{json.dumps(k, ensure_ascii=False)}: "
            f"{json.dumps(_json_ready(v), ensure_ascii=False)}"
            for k, v in new
        )
        edits.append((last[3], last[3], added))
    text = inner
    for start, end, piece in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + piece + text[end:]
    expected = _json_changed(json.loads(inner), changes, removed)
    try:
        if json.loads(text) != expected:  # (never seen: the object is then written anew)
            return None
    except json.JSONDecodeError:
        return None
    return text


def _json_set(inner: str, changes: Mapping[str, Any], removed: list[str]) -> str:
    spliced = _json_spliced(inner, changes, removed)
    if spliced is not None:
        return spliced
    data = _json_changed(json.loads(inner), changes, removed)
    indent_match = re.search(r"\n([ \t]+)\S", inner)
    indent: str | int | None = indent_match.group(1) if indent_match else None
    if indent is None and "\n" in inner:
        indent = 2
    newline = "\r\n" if "\r\n" in inner else "\n"
    dumped = json.dumps(data, ensure_ascii=False, indent=indent)
    return dumped.replace("\n", newline) if newline != "\n" else dumped


def _braced(inner: str) -> bool:
    """Whether JSON frontmatter is an object in braces (Hugo), not bare members (Hexo)."""
    return inner.lstrip().startswith("{")


def _members(inner: str) -> Any:
    """Hexo's bare JSON members parsed as an object, or None when they are not JSON."""
    try:
        return json.loads("{" + inner + "}")
    except json.JSONDecodeError:
        return None


def _members_set(inner: str, changes: Mapping[str, Any], removed: list[str]) -> str:
    """Hexo's bare members changed in place, every other byte kept (as a braced object's
    are: one author set rewrote every member, a list onto one line and ``\\u00e9`` as
    é); written anew, one member a line, when they cannot be read so."""
    spliced = _json_spliced("{\n" + inner + "}", changes, removed)
    if spliced is not None and spliced.startswith("{\n") and spliced.endswith("}"):
        return spliced[2:-1]
    data = _json_changed(_members(inner) or {}, changes, removed)
    newline = "\r\n" if "\r\n" in inner else "\n"
    lines = [f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
             for k, v in data.items()]  # fmt: skip
    return ("," + newline).join(lines) + (newline if lines else "")


def _yaml_dump(data: Mapping[str, Any], *, lists: ListStyle = "block") -> str:
    import yaml

    ready = _yaml_ready(dict(data))
    return yaml.dump(
        ready,
        Dumper=_dumper(lists),
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        # (never folded: a long one-line value set again keeps its line and its comment; a
        # list in flow style stays on its key's line)
        width=1_000_000,
    )


_DUMPERS: dict[ListStyle, Any] = {}


def _dumper(lists: ListStyle) -> Any:
    """PyYAML's safe dumper that never writes an anchor and an alias, and writes a datetime
    with an offset as ISO 8601 does (``2026-11-30T09:15:00+08:00``). A new post's date fields
    all held the same date object, written ``date: &id001 2026-11-30`` / ``publishDate:
    *id001`` (Hugo and Jekyll read an alias, but no one writes one, and Obsidian shows it as
    text); go-yaml (Hugo) reads a timestamp with a space before its offset as no timestamp.

    ``lists``: a list of plain values in flow style (``[a, b]``; ``quoted``: its strings in
    double quotes) or one item a line (``block``), everything else as ``safe_dump`` does."""
    if lists not in _DUMPERS:
        import yaml

        class Dumper(yaml.SafeDumper):
            def ignore_aliases(self, data: Any) -> bool:
                return True

        def represent_datetime(dumper: Any, data: dt.datetime) -> Any:
            value = data.isoformat("T" if data.tzinfo is not None else " ")
            return dumper.represent_scalar("tag:yaml.org,2002:timestamp", value)

        def represent_list(dumper: Any, data: list[Any]) -> Any:
            if not all(isinstance(item, str | int | float | bool) for item in data):
                return dumper.represent_sequence("tag:yaml.org,2002:seq", data)
            if lists == "quoted" and all(isinstance(item, str) for item in data):
                items = [yaml.ScalarNode("tag:yaml.org,2002:str", i, style='"') for i in data]
                return yaml.SequenceNode("tag:yaml.org,2002:seq", items, flow_style=True)
            return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)

        Dumper.add_representer(dt.datetime, represent_datetime)
        if lists != "block":
            Dumper.add_representer(list, represent_list)
        _DUMPERS[lists] = Dumper
    return _DUMPERS[lists]


_YAML_BLOCK_LIST = re.compile(
    r"^[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\r?\n(?:[ \t]*\r?\n)*[ \t]*- ", re.M
)


def yaml_list_style(inner: str) -> ListStyle | None:
    """How a YAML block writes most of its top-level lists, or None when it has none."""
    flows = [found for line in inner.splitlines(keepends=True) if (found := _YAML_FLOW.match(line))]
    block = len(_YAML_BLOCK_LIST.findall(inner))
    if not flows and not block:
        return None
    if block >= len(flows):
        return "block"
    quoted = sum('"' in found.group("items") for found in flows)
    return "quoted" if quoted * 2 > len(flows) else "flow"


def _yaml_ready(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _yaml_ready(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_yaml_ready(v) for v in value if v is not None]
    return value


def _yaml_key(line: str) -> str | None:
    match = _YAML_KEY.match(line)
    if match is None:
        return None
    return next(g for g in match.groups() if g is not None).strip()


def _continues(line: str) -> bool:
    """Whether a line belongs to the value of the key above it (indented, or a list item)."""
    return line[:1] in (" ", "\t") or line.startswith("- ") or line.rstrip() == "-"


_BLOCK_SCALAR = re.compile(r":[ \t]*[|>][-+0-9]*[ \t]*(?:#[^\n]*)?\r?\n?$")


def _value_end(lines: Sequence[str], j: int) -> int:
    """Where the value of the top-level key on line ``j - 1`` ends: after its last
    continuation line (``_continues``), over the blank and comment lines between them (a
    ``|`` block of two paragraphs, a tags list with ``# - python`` in it), not the blank or
    comment lines after the last (a comment under a one-line value stays where it is). In a
    ``|`` or ``>`` block, an indented line that starts with ``#`` is text, not a comment."""
    block = _BLOCK_SCALAR.search(lines[j - 1]) is not None
    end = j
    while j < len(lines):
        line = lines[j]
        comment = line.lstrip(" \t").startswith("#") and not (block and _continues(line))
        if not line.strip() or comment:
            j += 1
            continue
        if not _continues(line):
            break
        j += 1
        end = j
    return end


_YAML_FLOW = re.compile(
    r"^(?P<key>[^\n]*?:[ \t]*)\[(?P<items>[^\]\n]*)\](?P<rest>[ \t]*(?:#[^\r\n]*)?)\r?\n?$"
)
_YAML_PLAIN = re.compile(r"^[^\s\"'\[\]{}#,:&*!|>%@`-][^\[\]{}#,:\n]*$")


def _yaml_flow(line: str, value: Any) -> str | None:
    """``value`` (a list of strings) written as the flow list on ``line`` was (``tags: [a,
    b]``), its items quoted as that list's were; None when the line holds no flow list."""
    found = _YAML_FLOW.match(line)
    if found is None or not isinstance(value, list | tuple):
        return None
    if not all(isinstance(item, str) for item in value):
        return None
    quoted = '"' in found.group("items")
    # A number written among the old items stays as written: ``[go, 1.20]`` is read
    # ``1.2``, and was written back as "1.2".
    numbers: dict[str, str] = {}
    for written in found.group("items").split(","):
        read = _yaml_scalar(written.strip())
        if isinstance(read, int | float) and not isinstance(read, bool):
            numbers[str(read)] = numbers[written.strip()] = written.strip()

    def item(text: str) -> str:
        if text in numbers:
            return numbers[text]
        plain = not quoted and _YAML_PLAIN.match(text) and text == text.strip()
        if plain and _yaml_scalar(text) == text:
            return text
        return json.dumps(text, ensure_ascii=False)

    items = ", ".join(item(text) for text in value)
    return found.group("key") + "[" + items + "]" + found.group("rest")  # (a comment kept)


_YAML_ITEM = re.compile(r"^(?P<indent>[ \t]*)- (?P<item>[^\r\n]*)\r?\n$")
_YAML_BARE_KEY = re.compile(r"^[^\n]*:[ \t]*(?:#[^\r\n]*)?\r?\n$")


def _yaml_block_list(span: list[str], value: Any, newline: str) -> str | None:
    """``value`` (a list of strings) written as the block list in ``span`` (its key's line,
    then one ``- item`` line each) was: the key's line, every item kept as written (its
    quotes, its comment), and the comment and blank lines between them where they were; an
    item renamed takes its old one's line, new items go after the last at the old items'
    indent and in their quotes. None when ``span`` is no such list (a nested value, mixed
    indents). (A comment line in the list gave it up, and the list was written anew without
    its comments, a commented-out tag among them.)"""
    if not isinstance(value, list | tuple) or not all(isinstance(i, str) for i in value):
        return None
    if not value or len(span) < 2 or not _YAML_BARE_KEY.match(span[0]):
        return None
    # Each item's line, with the comment and blank lines before it (``before``); the lines
    # after the last item are ``tail``.
    items: list[tuple[tuple[str, ...], str, list[str]]] = []  # (read as, line, before)
    before: list[str] = []
    indent = None
    for line in span[1:]:
        if not line.strip() or line.lstrip(" \t").startswith("#"):
            before.append(line)
            continue
        found = _YAML_ITEM.match(line)
        if found is None or (indent is not None and found.group("indent") != indent):
            return None
        indent = found.group("indent")
        written = found.group("item")
        written = written[: len(written) - len(_yaml_comment(written))].rstrip()
        read = _yaml_scalar(written)
        if isinstance(read, int | float) and not isinstance(read, bool):
            # ("- 1.10": the tag "1.10", read as the number 1.1, which a list of tags may
            # carry as "1.1": either is this line, kept as written)
            items.append(((written, str(read)), line, before))
        elif not isinstance(read, str):
            return None
        else:
            items.append(((read,), line, before))
        before = []
    if not items or indent is None:
        return None
    quotes = [line.lstrip(" \t")[2:3] for _, line, _ in items]
    quote = max("\"'", key=quotes.count)
    quoted = quotes.count(quote) * 2 > len(items)

    def new_line(item: str) -> str:
        if not quoted and _YAML_PLAIN.match(item) and _yaml_scalar(item) == item:
            written = item
        elif quote == "'" and quoted:
            written = "'" + item.replace("'", "''") + "'"
        else:
            written = json.dumps(item, ensure_ascii=False)
        return f"{indent}- {written}{newline}"

    # Old items as the value names them (the written text, for a number kept as written).
    named = [next((v for v in value if v in read), read[0]) for read, _, _ in items]
    out = [span[0]]
    for tag, i1, i2, j1, j2 in _list_edits(named, list(value)):
        for n in range(i1, i2):  # the lines before an old item stay, kept or not
            out.extend(items[n][2])
            if tag == "equal":
                out.append(items[n][1])
        if tag != "equal":
            out.extend(new_line(item) for item in value[j1:j2])
    return "".join(out + before)


def _yaml_comment(line: str) -> str:
    """The comment at the end of a one-line ``key: value`` (with the spaces before it), or
    "": a ``#`` after a space, outside quotes (a plain scalar cannot hold `` #``)."""
    quote = ""
    body = line.rstrip("\r\n")
    skip = -1
    for i, char in enumerate(body):
        if i == skip:
            continue
        if quote == "'" and char == "'" and body[i + 1 : i + 2] == "'":
            skip = i + 1  # a doubled '' is one quote inside the scalar
        elif quote == '"' and char == "\\":
            skip = i + 1  # an escaped character
        elif quote:
            if char == quote:
                quote = ""
        elif char in "\"'" and (i == 0 or body[i - 1] in " \t:[,{"):
            quote = char
        elif char == "#" and i > 0 and body[i - 1] in " \t":
            start = i
            while start > 0 and body[start - 1] in " \t":
                start -= 1
            return body[start:]
    return ""


_YAML_QUOTED = re.compile(r"""^(?P<key>[^\s#'"][^:#]*:[ \t]+)(?P<quote>["'])""")


def _yaml_quoted_as_before(line: str, value: Any) -> str | None:
    """``key: "value"`` in the quotes ``line`` had its old value in, or None (the line's value
    was not quoted, or ``value`` is no one-line string)."""
    found = _YAML_QUOTED.match(line)
    if found is None or not isinstance(value, str) or "\n" in value or "\r" in value:
        return None
    if found.group("quote") == '"':
        return found.group("key") + json.dumps(value, ensure_ascii=False)
    return found.group("key") + "'" + value.replace("'", "''") + "'"


_YAML_T_DATE = re.compile(r"^(?P<key>[^\s#'\"][^:#]*:[ \t]+)\d{4}-\d{2}-\d{2}T")


def _yaml_date_as_before(line: str, value: Any) -> str | None:
    """``key: 2024-06-01T10:00:00+02:00`` for a date and time set on a line that wrote its
    old one with a ``T`` (Hugo's way; PyYAML writes a space), or None."""
    found = _YAML_T_DATE.match(line)
    if found is None or not isinstance(value, dt.datetime):
        return None
    return found.group("key") + value.isoformat()


def _yaml_scalar(text: str) -> Any:
    """What YAML reads ``text`` as, unquoted (``yes`` is True, ``1.0`` a number)."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def _yaml_one_line(line: str, value: Any, dumped: str) -> str:
    """``key: value`` set again on ``line`` (no line end): in the quotes its old value had, or
    with a ``T`` date as it had, else as ``dumped``; the line's comment kept."""
    text = _yaml_quoted_as_before(line, value) or _yaml_date_as_before(line, value) or dumped
    return text + _yaml_comment(line)


def _yaml_nested_set(inner: str, table: str, key: str, value: Any) -> str | None:
    """``inner`` with the one-line ``key`` directly under the top-level ``table`` set to
    ``value`` (quotes, a ``T`` date and a comment kept as ``_yaml_set`` keeps them); None when
    there is no such line."""
    newline = "\r\n" if "\r\n" in inner else "\n"
    lines = inner.splitlines(keepends=True)
    top = next(
        (n for n, line in enumerate(lines) if line[:1] not in " \t" and _yaml_key(line) == table),
        None,
    )
    if top is None:
        return None
    stop = top + 1
    while stop < len(lines) and (lines[stop][:1] in (" ", "\t") or not lines[stop].strip()):
        stop += 1
    depths = [len(line) - len(line.lstrip(" \t")) for line in lines[top + 1 : stop] if line.strip()]
    if not depths:
        return None
    child = depths[0]
    for n in range(top + 1, stop):
        line = lines[n]
        written = line.lstrip(" \t")
        if len(line) - len(written) != child or _yaml_key(written) != key:
            continue
        after = next((later for later in lines[n + 1 : stop] if later.strip()), "")
        if after and len(after) - len(after.lstrip(" \t")) > child:
            return None  # (a value on the lines below: no one-line value)
        dumped = _yaml_dump({key: value}).rstrip("\n")
        if "\n" in dumped:
            return None
        lines[n] = line[:child] + _yaml_one_line(written, value, dumped) + newline
        return "".join(lines)
    return None


def _yaml_set(
    inner: str, changes: Mapping[str, Any], removed: list[str], *, lists: ListStyle = "block"
) -> str:
    """Rewrite only the lines of the top-level keys changed; append new keys at the end
    (their lists written in the ``lists`` style)."""
    newline = "\r\n" if "\r\n" in inner else "\n"
    lines = inner.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += newline
    # Each top-level key: the range of lines its value takes (continuation lines are indented
    # or list items at column 0, with the blank lines between them: a ``|`` block's blank line
    # ended it, and the new value was written above the old text's second paragraph). A key
    # said twice is set where PyYAML reads it, the last time, and removed each time.
    spans: dict[str, tuple[int, int]] = {}
    earlier: dict[str, list[tuple[int, int]]] = {}
    i = 0
    while i < len(lines):
        key = _yaml_key(lines[i])
        j = i + 1
        if key is not None:
            j = _value_end(lines, j)
            if key in spans:
                earlier.setdefault(key, []).append(spans[key])
            spans[key] = (i, j)
        i = j
    replaced: dict[int, tuple[int, str]] = {}
    appended: list[str] = []
    for key in removed:
        for start, stop in [*earlier.get(key, []), *([spans[key]] if key in spans else [])]:
            replaced[start] = (stop, "")
    for key, value in changes.items():
        style: ListStyle = "block" if key in spans else lists
        text = "" if value is None else _yaml_dump({key: value}, lists=style)
        text = text.replace("\n", newline)
        if key in spans:
            start, stop = spans[key]
            if stop == start + 1 and (flow := _yaml_flow(lines[start], value)) is not None:
                text = flow + newline  # ``tags: [a, b]`` stays on its line, in its style
            elif (block := _yaml_block_list(lines[start:stop], value, newline)) is not None:
                text = block  # ``tags:`` then ``  - a``: its indent, quotes and comments kept
            elif stop == start + 1 and text.count(newline) == 1:
                # ``title: X  # a comment``: the comment stays (it was dropped with the value),
                # and a quoted string stays in its quotes (``title: "X"`` is not ``'X'``)
                text = _yaml_one_line(lines[start], value, text[: -len(newline)]) + newline
            replaced[start] = (stop, text)
        elif text:
            appended.append(text)
    out: list[str] = []
    i = 0
    while i < len(lines):
        if i in replaced:
            stop, text = replaced[i]
            out.append(text)
            i = stop
        else:
            out.append(lines[i])
            i += 1
    return "".join(out) + "".join(appended)
