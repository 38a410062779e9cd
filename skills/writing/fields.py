"""A post's description, set as the request writes it, with no model.

"add a description to the rust 1.77 post: A release with C-string literals", "set the
description of the go post to "Goroutines in practice"", "把描述改成“一篇入门文章”", "给这篇文章
加上描述：……": the words are the user's, so they are set as written, in the field the post
already uses for it (``description``, else ``summary``, else ``excerpt``; a post with none
gets ``description``, which Hugo, Zola, Jekyll and Hexo all read), in the frontmatter's own
format; every other byte stays. The embedded model, sent such a request as an edit of the
body, wrote the body's first lines again and was refused.

Unquoted, only a capital, a digit or a colon before it starts a description written out:
"change the description to something catchier" describes one, and is left to the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from skillrt.blog.frontmatter import Frontmatter, split_frontmatter

from .languages import language_code

__all__ = [
    "DESCRIPTION_KEYS",
    "MAX_DESCRIPTION_CHARS",
    "description_field",
    "given_description",
    "only_field_set",
    "others_kept",
]

MAX_DESCRIPTION_CHARS = 300
DESCRIPTION_KEYS = ("description", "summary", "excerpt")

_WORD = r"(?:meta\s+)?(?:description|summary|excerpt|blurb)"
_GIVEN = re.compile(
    rf"\b(?:add|set|change|update|give|write|use|put|replace|make)\b.*?\b{_WORD}\b"
    r"(?:\s+(?:of|for|to|on|in)\s+(?:[\"“][^\"”]*[\"”]|[^\"“”:：])+?)?"
    r"\s*(?:(?P<colon>[:：])|\b(?:to|as|into)\b\s*(?P<colon2>[:：])?)\s*(?P<value>.+?)\s*$"
    r"|(?:描述|简介|摘要)\s*(?:改成|改为|换成|设为|设置为|写成)\s*(?P<zcolon>[:：])?\s*"
    r"(?P<zh>.+?)\s*$"
    r"|(?:加上|添加|加|写上|补上|补充)(?:一个|一段|一句)?(?:描述|简介|摘要)\s*[:：]\s*(?P<zh2>.+?)\s*$",
    re.I,
)
_QUOTES = "\"'“”‘’《》「」『』`"
_DESCRIBES = re.compile(
    r"^(?:something|a|an|one|more|less|be|make|sound|reflect|mention|include|better|it|the)\b",
    re.I,
)


# Where in the body a text goes: "add a summary to the end of the post: …" is a paragraph.
_IN_THE_BODY = re.compile(
    r"\b(?:end|bottom|top|beginning|start|intro\w*|paragraphs?|sections?|conclusion|body|"
    r"after|before|below|above)\b|末尾|结尾|开头|段|小节|正文",
    re.I,
)
# A summary or an excerpt is the frontmatter's only when it is set or changed ("add a summary:
# …" may well be a paragraph); a description always is.
_SUMMARY_ADDED = re.compile(r"\b(?:add|write|give|put|make)\b.*?\b(?:summary|excerpt)\b", re.I)


# A quoted value that ends the request: "… to "Containers from zero"" (the post's name before
# it may hold "to", "as" or "with").
_QUOTED_END = re.compile(
    r"(?:\b(?:to|as|into)|[:：])\s*(?P<q>[\"“'‘「『《])(?P<value>[^\"”'’」』》\n]{1,300})"
    r"[\"”'’」』》]\s*[.!。！]?\s*$",
    re.I,
)
# Another field named before the description word: "change the title to "Excerpt: one"".
_OTHER_FIELD = re.compile(r"\b(?:title|headline|tags?|heading|date|slug)\b|标题|标签", re.I)
# What starts an instruction, not a description: "update the description: make it mention X"
# ("Write better commit messages", capitalised and not about "it", is a description).
_VERBS = (
    r"(?:make|add|remove|mention|use|write|include|say|keep|change|fix|improve|rewrite|"
    r"shorten|expand|translate|turn|put)"
)
_ASKS_ABOUT_IT = re.compile(rf"^{_VERBS}\s+(?:it|this|that|sure)\b", re.I)
_ASKS_LOWER = re.compile(rf"^{_VERBS}\b")
_ASKS_ZH = re.compile(r"^(?:改|写|加|删|让|把)")
# Text in double or CJK quotes (an apostrophe is no quote: "the rust post's description").
_QUOTED_SPAN = re.compile(r"[\"“「『《][^\"”」』》\n]*[\"”」』》]")
# A name in single quotes (not an apostrophe): "In the 'Intro to Go' post, …".
_NAMED = re.compile(r"(?<!\w)['‘][^'’\n]{1,80}['’](?!\w)")
# Another field set after the description in the same request: "… and the title to "Go"".
_AND_ANOTHER = re.compile(r"\band\s+(?:the\s+|its\s+)?(?:title|headline|tags?|date|slug)\b", re.I)


def _is_instruction(value: str) -> bool:
    return bool(_ASKS_ABOUT_IT.match(value) or _ASKS_LOWER.match(value) or _ASKS_ZH.match(value))


def given_description(instruction: str) -> str | None:
    """The description the instruction writes out (see the module docstring), or None."""
    text = " ".join(instruction.split())
    spans = [m.span() for m in _QUOTED_SPAN.finditer(text)]
    word = next(
        (
            m
            for m in re.finditer(rf"\b{_WORD}\b|描述|简介|摘要", text, re.I)
            if not any(a < m.start() < b for a, b in spans)  # (not a word of a quoted value)
        ),
        None,
    )
    if word is None or _OTHER_FIELD.search(_QUOTED_SPAN.sub(" ", text[: word.start()])):
        return None  # no description word, or another field is the one set
    # the request's words, its values aside ("… to the start of the post: Hello" is a place)
    ask = (
        _NAMED.sub(" ", _QUOTED_SPAN.sub(" ", text[: word.start()]))
        + re.split(r"[:：“\"「]", text[word.start() :], maxsplit=1)[0]
    )
    if _IN_THE_BODY.search(ask) or _SUMMARY_ADDED.search(ask) or "加上摘要" in ask:
        return None
    quoted_end = _QUOTED_END.search(text, word.end())
    if quoted_end is not None:
        if _AND_ANOTHER.search(text, word.end(), quoted_end.start()):
            return None  # "… to "A guide" and the title to "Go"": not one field's request
        value = quoted_end.group("value").strip()
        return value if value and len(value) <= MAX_DESCRIPTION_CHARS else None
    found = _GIVEN.search(text, word.start() - min(word.start(), 200))
    if found is None:
        return None
    raw = (found.group("value") or found.group("zh") or found.group("zh2") or "").strip()
    colon = bool(found.group("colon") or found.group("colon2") or found.group("zcolon"))
    colon = colon or found.group("zh2") is not None
    if _is_instruction(raw) or language_code(raw.strip(_QUOTES + "。.!")) is not None:
        return None  # an instruction ("make it mention Docker") or a language ("English")
    quoted = len(raw) >= 2 and raw[0] in _QUOTES and raw[-1] in _QUOTES
    value = raw[1:-1].strip() if quoted else raw
    if not value or len(value) > MAX_DESCRIPTION_CHARS or "\n" in value:
        return None
    if quoted or colon:
        return value
    if not (value[0].isupper() or value[0].isdigit()) or _DESCRIBES.match(value):
        return None
    return value


def description_field(fields: Mapping[str, Any]) -> str:
    """The frontmatter key a post's description goes in: the one it has, else
    ``description``."""
    for key in DESCRIPTION_KEYS:
        if key in fields:
            return key
    return "description"


def others_kept(before: Mapping[str, Any], after: Mapping[str, Any], key: str) -> bool:
    """Whether every field but ``key`` is as it was."""
    return {k: v for k, v in after.items() if k != key} == {
        k: v for k, v in before.items() if k != key
    }


def only_field_set(post: Frontmatter, new_text: str, path: str, key: str) -> bool:
    """Whether ``new_text`` is ``post`` with only its field ``key`` changed: the body as it
    was (a post without frontmatter gets a block, and a blank line after it) and every other
    field too."""
    kept = split_frontmatter(new_text, path)
    if post.format:
        body_kept = kept.body == post.body
    else:  # (a byte-order mark goes before the new block; a CRLF post's blank line is CRLF)
        body = post.body.removeprefix("\ufeff")
        body_kept = kept.body in (body, "\n" + body, "\r\n" + body)
    return body_kept and others_kept(post.fields(), kept.fields(), key)
