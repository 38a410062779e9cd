"""The part of a post an instruction names: "the first paragraph", "the second section", "the
Usage section", "the section about testing", "the title", "the conclusion", "第二段", "第三节",
"用法一节", "标题", "结尾".

``named_part(instruction)`` reads the part from the words (a ``PartRef``, or None when the
instruction names none), and ``locate(body, ref)`` finds it in a post's body as a span, so an
edit sends only that part to the model and splices the answer back, everything else byte for
byte. Paragraphs are the body's prose blocks separated by blank lines: headings (``## x`` and
setext ``x`` over ``===`` or ``---``), fenced code, display math (``$$``), HTML blocks
(``<pre>``, ``<!-- -->``, ``<div>``…), thematic breaks and blocks with no prose of their own
(link reference and footnote definitions, template code or HTML tags alone) are not counted.
Sections start at a heading of the body's top level (``##`` in most posts; a lone ``#`` title at
the top of the body does not count) and run to the next one; a section named by its heading
("the Usage section") is the one heading of any level that matches, to the next heading at its
level or above (none, or two alike, and it is not found: the edit is refused, never made on the
whole post). The conclusion is the last section when its heading says so (Conclusion, Summary,
总结, 结论…), else the last paragraph; "结尾" and "the ending" are the last paragraph, and an
Obsidian callout after it is not. The title is not in the body: the skill edits the frontmatter's
``title`` field (or a ``# Title`` line at the top of the body). A byte-order mark before the
body's first line is not part of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "PartRef",
    "Span",
    "code_lines",
    "cut_out",
    "end_matter",
    "indent_width",
    "kept_blocks",
    "locate",
    "named_part",
    "paragraphs",
    "removed_part",
    "sections",
]

Kind = Literal["paragraph", "section", "title", "conclusion"]

_EN_ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "last": -1,
    "final": -1,
    "opening": 1,
}
_ZH_DIGITS = {
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ORDINAL = (
    r"(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final|opening"
    r"|\d+(?:st|nd|rd|th))"
)
_EN_PART = re.compile(rf"\b{_ORDINAL}\s+(paragraph|section|part|heading)s?\b", re.I)
_EN_NUMBERED = re.compile(r"\b(paragraph|section)\s+(\d+)\b", re.I)
_TITLE_ADJ = (
    r"(?:(?:new|better|catchier|shorter|snappier|different|good|great|clearer|stronger|"
    r"punchier|more\s+\w+)\s+)*"
)
_THE_POST = (
    r"(?:the|my|this|that)\s+(?!(?:next|upcoming|future)\b)(?:[^\s,;:]+\s+){0,6}?"
    r"(?:post|article|entry|page)"
)
# "the title", "its headline", "the Rust 1.78.0 post's title", "the title of the post",
# "retitle it", "rename the rust post to …", "suggest a better title for the git post".
_EN_TITLE = re.compile(
    r"\b(?:the|its|this|that|my)\s+(?:(?:[^\s,;:]+\s+){0,6}?(?:post|article|entry|page)"
    r"(?:['’]s)?\s+)?(?:title|headline)\b|\bretitle\b|\brename\s+it\b"
    r"|\brename\s+(?:the|this|that|my)\s+(?:[^\s,;:]+\s+){0,6}?(?:post|article|entry|page)\b"
    # "suggest a better title for the git post", "give the go post a catchier title"; not
    # "add a title to the diagram", "give the table a title", "a title image"
    rf"|\b(?:a|an)\s+{_TITLE_ADJ}(?:title|headline)\s+(?:for|to)\s+(?:it|this|that|{_THE_POST})\b"
    # "suggest a better title", "give me a catchier title": the request's own post
    rf"|\b(?:suggest|propose|give\s+me|come\s+up\s+with|think\s+of|need|want)\s+(?:a|an)\s+"
    rf"{_TITLE_ADJ}(?:title|headline)\s*(?:please\s*)?[?.!]*$"
    rf"|\bgive\s+(?:it|this|that|{_THE_POST})\s+(?:a|an)\s+{_TITLE_ADJ}(?:title|headline)\b"
    r"(?!\s+(?:image|card|tag|section|page)s?\b)",
    re.I,
)
_EN_CONCLUSION = re.compile(r"\bthe\s+(conclusion|ending|closing paragraph)\b", re.I)
_EN_INTRO = re.compile(r"\bthe\s+(intro|introduction|opening)\b(?!\s+(?:paragraph|section))", re.I)
_ZH_PART = re.compile(r"第\s*([一二两三四五六七八九十\d]+)\s*(段|节|部分|小节|章)")
_ZH_LAST = re.compile(r"(最后一|末)(段|节|部分)")
_ZH_FIRST = re.compile(r"(首段|开头|第一段|引言)")
_ZH_TITLE = re.compile(r"标题|题目")
_ZH_CONCLUSION = re.compile(r"结尾|结论|结语|总结部分|小结")
_CONCLUDING = re.compile(
    r"\b(conclusions?|summary|wrap[- ]?up|final thoughts|takeaways|in closing|recap)\b|"
    r"总结|结论|结语|小结|写在最后",
    re.I,
)
# An ATX heading: up to three spaces, one to six "#", its text, closing "#"s aside.
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(\S.*?)(?:[ \t]+#+)?[ \t]*$")
_MATH = re.compile(r"^ {0,3}\$\$")  # a display math block's "$$", to the next one
_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")  # a setext heading's
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_QUOTE = re.compile(r"^ {0,3}>")
_BREAK = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_CALLOUT = re.compile(r"^ {0,3}>[ \t]*\[![^\]\n]+\]")  # Obsidian's "> [!note] Related"
# CommonMark's HTML blocks 1 to 5, each to the line that holds its end …
_HTML_RAW = (
    (
        re.compile(r"^ {0,3}<(?:pre|script|style|textarea)(?:[ \t>]|$)", re.I),
        re.compile(r"</(?:pre|script|style|textarea)>", re.I),
    ),
    (re.compile(r"^ {0,3}<!--"), re.compile(r"-->")),
    (re.compile(r"^ {0,3}<\?"), re.compile(r"\?>")),
    (re.compile(r"^ {0,3}<![A-Za-z]"), re.compile(r">")),
    (re.compile(r"^ {0,3}<!\[CDATA\["), re.compile(r"\]\]>")),
)
# … and 6 and 7, to the next blank line (7, a tag alone on its line, not inside a paragraph).
_HTML_BLOCK = re.compile(
    r"^ {0,3}</?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|"
    r"colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|"
    r"frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|"
    r"noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|"
    r"thead|title|tr|track|ul)(?:[ \t]|/?>|$)",
    re.I,
)
_HTML_TAG_LINE = re.compile(
    r"^ {0,3}(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*"
    r"(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*\s*/?>|</[A-Za-z][A-Za-z0-9-]*\s*>)"
    r"[ \t]*$"
)
# What a block with no prose of its own holds: link reference and footnote definitions
# ("[1]: https://…", "[^1]: …"), template code ({{< comments >}}, {% include x %}), tags.
_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:")
_TEMPLATE = re.compile(r"\{\{[<%].*?[>%]\}\}|\{%.*?%\}|\{\{.*?\}\}", re.S)
_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][^<>]*>", re.S)

Role = Literal["blank", "code", "html", "break", "heading", "text"]


@dataclass(frozen=True, slots=True)
class PartRef:
    """A part named by an instruction: its kind and its number (1-based, -1 the last); a
    section named by its heading has its ``name`` as the instruction wrote it (and number
    0)."""

    kind: Kind
    index: int = 1
    name: str = ""
    # A "part" named ("the usage part"), which a heading may or may not hold: found, it is
    # edited as a section; not found, the edit is the whole body's (not refused)
    loose: bool = False
    # The section a paragraph is counted in ("the first paragraph of the Usage section"), or
    # None: the body's
    within: PartRef | None = None

    def describe(self) -> str:
        if self.kind in ("title", "conclusion"):
            return f"the {self.kind}"
        if self.name:
            return f"the {self.name} {self.kind}"
        nth = "last" if self.index == -1 else _ordinal_word(self.index)
        of = f" of {self.within.describe()}" if self.within is not None else ""
        return f"the {nth} {self.kind}{of}"


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int


def _ordinal_word(n: int) -> str:
    for word, value in _EN_ORDINALS.items():
        if value == n and word not in ("final", "opening"):
            return word
    return f"{n}th"


def _zh_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if text.startswith("十"):
        return 10 + _ZH_DIGITS.get(text[1:], 0)
    if text.endswith("十"):
        return 10 * _ZH_DIGITS.get(text[:-1], 1)
    if "十" in text:
        tens, ones = text.split("十", 1)
        return 10 * _ZH_DIGITS.get(tens, 1) + _ZH_DIGITS.get(ones, 0)
    return _ZH_DIGITS.get(text, 0)


def _en_index(word: str) -> int:
    word = word.casefold()
    if word in _EN_ORDINALS:
        return _EN_ORDINALS[word]
    return int(re.sub(r"\D", "", word) or 0)


# --- a section named by its heading -----------------------------------------------------------

# Words before "section" that say which one without naming it ("the whole section", "the next
# section"), or say nothing of which ("this section").
_NOT_NAMES = (
    r"whole|entire|next|previous|following|preceding|same|above|below|new|other|current|each|"
    r"every|one|relevant|said|corresponding|main|top|bottom|middle|earlier|later|latter|former|"
    r"empty|short|long|longest|shortest|another|any|first|second|third|fourth|fifth|sixth|"
    r"seventh|eighth|ninth|tenth|last|final|opening|closing|\d+(?:st|nd|rd|th)?"
)
_NAME_WORD = r"(?!(?:the|a|an|this|that|these|those|my|its|your|sections?)\b)[^\s,;:.!?\"“”()]+"
_QUOTED_NAME = r"[\"“'‘]([^\"”'’\n]{1,60})[\"”'’]"
# "the Usage section", "the getting started section", "the 'Getting started' section"
_EN_NAMED = re.compile(
    rf"\b(?:the|this|that|my|its|your)\s+(?:post['’]s\s+)?"
    rf"(?:{_QUOTED_NAME}|((?:{_NAME_WORD}\s+){{0,3}}?{_NAME_WORD}))\s+(section|part)\b(?!['’]?s\b)",
    re.I,
)
# "the section about usage", "the section called "Setup"", "the section on testing"
_ON = (
    r"about|on|called|titled|named|headed|for|covering|describing|explaining|that\s+covers|"
    r"dealing\s+with|(?:with|under)\s+the\s+heading"
)
_EN_SECTION_ON = re.compile(
    rf"\bthe\s+(section|part)\s+(?:(?:{_ON})\s+)?{_QUOTED_NAME}"
    rf"|\bthe\s+(section|part)\s+(?:{_ON})\s+((?:[^\s,;:.!?\"“”()]+\s+){{0,5}}[^\s,;:.!?\"“”()]+)",
    re.I,
)
# Where the words after "the section about" stop naming it: "the section about usage to be
# friendlier", "… usage clearer", "… usage so that …".
_NAME_ENDS = re.compile(
    r"\s+(?:to|so|but|that|which|because|please|into|by|as|more|less|much|a\s+bit|a\s+little|"
    r"again|clearer|friendlier|shorter|longer|simpler|better|easier|tighter|punchier|cleaner|"
    r"nicer|stronger|smoother|briefer|crisper|livelier)\b.*",
    re.I,
)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+(?=\S)", re.I)  # "… about the second part": not "the the …"
# A verb that takes a section whole ("remove the Usage section", "move the section on tests
# up", "add the section about aliases"): the edit is the whole body's, as it was.
_WHOLE_SECTION_VERB = re.compile(
    r"\b(?:remove|delete|drop|cut|move|swap|reorder|rearrange|merge|combine|split|duplicate|"
    r"take\s+out|get\s+rid\s+of|add|write|insert|create|append|include|put)\s+$",
    re.I,
)
# "“用法”一节", "关于用法的部分", "把 Usage 这一节", "用法部分"
_ZH_MARK = r"\s*(?:这|那)?一?(?:节|部分|小节|章节)"
_ZH_NAMED = (
    re.compile(rf"[“「『\"‘']([^”」』\"’'\n]{{1,40}})[”」』\"’']{_ZH_MARK}"),
    re.compile(rf"关于\s*([^，。,.\s的]{{1,20}})\s*的{_ZH_MARK}"),
    re.compile(
        r"(?:^|(?<=[把将对给让在请\s，,。：:、]))"
        rf"([A-Za-z0-9\u4e00-\u9fff][\w\u4e00-\u9fff .+#-]{{0,19}}?){_ZH_MARK}"
    ),
)
# (the verbs before the one character: "改写用法一节" was named "写用法", and refused)
_ZH_LEADING = re.compile(r"^(?:重写|改写|修改|缩短|精简|扩写|润色|优化|[把将对给让在请改])+\s*")
_ZH_OWNER = re.compile(r"^(?:它|这篇(?:文章)?|那篇(?:文章)?|文章)的\s*")  # 把它的用法一节
_ZH_NOT_NAMES = re.compile(
    r"^(?:它|他|她|这|那|此|该|本|每|各|整|全|其|剩|所有|大|小|前|后|上|下|中间|开头|结尾|另|下一|上一)"
    r"|^(?:加|添|补|插|新增|增|写|删|去掉|移|合并|拆|调)|[一个的]$"
)
# (and a section added: "给它加一节关于错误处理的内容" named the section "它加")
_ZH_WHOLE_SECTION_VERB = re.compile(
    r"删|去掉|移到|移动|挪|合并|拆分|调换|(?:加|添|增|补|插入?|写|新)\s*[一几个]*\s*(?:节|部分|小节|章节)"
)


def _named_section(instruction: str) -> PartRef | None:
    """A section the instruction names by its heading, or None: "make the Usage section
    clearer" was a whole-body edit, and the model's answer, the Usage section alone (as
    asked), replaced the 445-word post. Not when a verb takes the section whole ("remove
    the Usage section", "add a section about aliases")."""
    for found in _EN_NAMED.finditer(instruction):
        name = found.group(1) or re.sub(
            rf"^(?:(?:{_NOT_NAMES})\s+)+", "", found.group(2), flags=re.I
        )
        if name and not re.fullmatch(_NOT_NAMES, name, re.I):
            return _unless_whole(instruction, found, name, loose=found.group(3) == "part")
    if about := _EN_SECTION_ON.search(instruction):
        noun = about.group(1) or about.group(3)
        return _unless_whole(
            instruction,
            about,
            about.group(2) or _NAME_ENDS.sub("", _ARTICLE.sub("", about.group(4))),
            loose=noun.casefold() == "part",
        )
    if _ZH_WHOLE_SECTION_VERB.search(instruction):
        return None
    for pattern in _ZH_NAMED:
        for zh in pattern.finditer(instruction):
            name = _ZH_OWNER.sub("", _ZH_LEADING.sub("", zh.group(1).strip()))
            if name and not (pattern is _ZH_NAMED[2] and _ZH_NOT_NAMES.search(name)):
                return PartRef("section", 0, name)
    return None


def _unless_whole(
    instruction: str, found: re.Match[str], name: str, *, loose: bool = False
) -> PartRef | None:
    """The section named, unless a verb right before it takes it whole. ``loose``: named a
    "part" ("make the usage part clearer"), which may be no heading's: then the edit is the
    whole body's (``PartRef.loose``)."""
    if _WHOLE_SECTION_VERB.search(instruction[: found.start()]):
        return None
    return PartRef("section", 0, name.strip(), loose=loose)


_WORD = re.compile(r"[^\W_]+")
_HAN = re.compile(r"[\u3400-\u9fff]")
_STOP_WORDS = frozenset(
    re.findall(r"\w+", "a an the of and or to for on in with about how your my")
)


def _words(text: str) -> list[str]:
    """The words a heading or a name is matched by: a link's address, numbers ("1.", "Step
    2:"… unless there is nothing else) and short common words aside."""
    text = re.sub(r"\]\([^)]*\)", "]", text)
    words = [w.casefold() for w in _WORD.findall(text)]
    words = [w for w in words if w not in _STOP_WORDS] or words
    return [w for w in words if not w.isdigit()] or words


def _alike(a: str, b: str) -> bool:
    """Two words of one stem ("test", "tests", "testing"; "install", "installation")."""
    if a == b:
        return True
    common = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    shorter = min(len(a), len(b))
    return (
        common >= 5
        or (common >= 3 and common == shorter)
        or (common >= 4 and common >= shorter - 1)
    )


def _within(some: list[str], others: list[str]) -> bool:
    return bool(some) and all(any(_alike(w, o) for o in others) for w in some)


def _match(name: str, heading: str) -> int:
    """How well a heading answers to a name: 2 the same words (a word's forms alike), 1 the
    one's words all among the other's, 0 not. A name in Chinese script is matched by the
    heading's text at its end ("把用法" is the heading 用法)."""
    if _HAN.search(name) or _HAN.search(heading):
        said, title = (
            "".join(_WORD.findall(name)).casefold(),
            "".join(_WORD.findall(heading)).casefold(),
        )
        return 2 if said == title else 1 if title and said.endswith(title) else 0
    said_words, title_words = _words(name), _words(heading)
    if _within(said_words, title_words) and _within(title_words, said_words):
        return 2
    return 1 if _within(said_words, title_words) or _within(title_words, said_words) else 0


# What puts a paragraph in a section: "the first paragraph of the Usage section", "… in the
# second section"; "用法一节的第一段", "第二节里的第一段".
_EN_OF_SECTION = re.compile(r"\s+(?:of|in|under|from)\s+(?=(?:the|this|that|my|its|your)\b)", re.I)
_ZH_OF_SECTION = re.compile(r"(?:的|里的?|中的?)\s*$")


def _in_section(paragraph: PartRef, section: str) -> PartRef:
    """``paragraph`` counted in the section ``section`` (the words after "of") names, if it
    names one: "fix the typos in the first paragraph of the Usage section" edited the post's
    first paragraph, a section away from the one named."""
    within = _section_ref(section)
    if within is None:
        return paragraph
    return PartRef("paragraph", paragraph.index, within=within)


def _section_ref(words: str) -> PartRef | None:
    """The section ``words`` name by number or by heading, or None."""
    found = named_part(words)
    return found if found is not None and found.kind == "section" else None


def _holds(named: re.Match[str], numbered: re.Match[str]) -> bool:
    """Whether the words ``numbered`` matched ("the second part", "第二部分") are in the name
    of the section ``named`` matched ("the section about the second part", "关于第二部分的
    那一节"): the heading's words, not a count. "delete the section about the second part"
    cut out the post's second section, "## The first part", and kept "## The second part"."""
    return named.start() < numbered.start() and numbered.end() <= named.end()


def _zh_numbered(instruction: str) -> PartRef | None:
    """The paragraph or section a Chinese instruction names by number ("第二段", "第三节"),
    in its section when one is named before it ("第二节的第一段", "用法一节的第一段")."""
    found = list(_ZH_PART.finditer(instruction))
    about = _ZH_NAMED[1].search(instruction)  # "关于第二部分的那一节": a heading's words
    if about is not None and _holds(about, found[0]):
        return _named_section(instruction)
    for match in found:
        number = _zh_number(match.group(1))
        before = instruction[: match.start()]
        if number and match.group(2) == "段" and _ZH_OF_SECTION.search(before):
            return _in_section(PartRef("paragraph", number), _ZH_OF_SECTION.sub("", before))
    number = _zh_number(found[0].group(1))
    kind: Kind = "paragraph" if found[0].group(2) == "段" else "section"
    return PartRef(kind, number) if number else None


def named_part(instruction: str) -> PartRef | None:
    """The part of the post ``instruction`` names, or None (then it is about the whole body)."""
    if _ZH_PART.search(instruction):
        return _zh_numbered(instruction)
    if match := _ZH_LAST.search(instruction):
        return PartRef("paragraph" if match.group(2) == "段" else "section", -1)
    if _ZH_FIRST.search(instruction):
        return PartRef("paragraph", 1)
    if _ZH_TITLE.search(instruction):
        return PartRef("title")
    if _ZH_CONCLUSION.search(instruction):
        return PartRef("conclusion")
    if match := _EN_PART.search(instruction):
        if (about := _EN_SECTION_ON.search(instruction)) is not None and _holds(about, match):
            return _named_section(instruction)  # "the section about the second part"
        word = match.group(2).casefold()
        kind: Kind = "paragraph" if word == "paragraph" else "section"
        index = _en_index(match.group(1))
        if not index:
            return None
        rest = instruction[match.end() :]
        if kind == "paragraph" and (of := _EN_OF_SECTION.match(rest)):
            return _in_section(PartRef(kind, index), rest[of.end() :])
        return PartRef(kind, index)
    if match := _EN_NUMBERED.search(instruction):
        kind = "paragraph" if match.group(1).casefold() == "paragraph" else "section"
        return PartRef(kind, int(match.group(2))) if int(match.group(2)) else None
    if _EN_TITLE.search(instruction):
        return PartRef("title")
    if match := _EN_CONCLUSION.search(instruction):
        return (
            PartRef("conclusion")
            if "conclusion" in match.group(1).casefold()
            else PartRef("paragraph", -1)
        )
    if named := _named_section(instruction):
        return named
    if _EN_INTRO.search(instruction):
        return PartRef("paragraph", 1)
    return None


# --- a part removed -----------------------------------------------------------------------

# "remove the second section", "delete the first paragraph of the Usage section", "drop
# section 3", "get rid of the section about testing"; "删掉第二节", "把用法一节删除",
# "去掉最后一段".
_EN_REMOVE = re.compile(
    r"^\s*(?:please\s+)?(?:remove|delete|drop|cut|take\s+out|get\s+rid\s+of)\s+(?P<part>.+?)"
    r"(?:\s+(?:from|in)\s+(?:the|this|my)\s+(?:post|article|note|page))?\s*(?:,?\s*please)?"
    r"\s*[.!]?\s*$",
    re.I,
)
_NOT_A_NAME = r"(?!(?:in|of|from|with|and|or|to|at|the|a|an|all|any|some|every|each)\b)"
# What the words after the verb must be, whole: a part, not something in one ("remove the
# jargon in the second section" is the model's edit of that section's words).
_EN_REMOVED = re.compile(
    rf"(?:the\s+)?{_ORDINAL}\s+(?:paragraph|section)"
    rf"(?:\s+(?:of|in)\s+the\s+(?:{_ORDINAL}\s+|(?:{_NOT_A_NAME}\S+\s+){{1,4}})section)?"
    r"|(?:paragraph|section)\s+\d+"
    rf"|(?:the|its)\s+(?:{_QUOTED_NAME}\s+|(?:{_NOT_A_NAME}\S+\s+){{1,4}})section"
    r"|the\s+section\s+(?:about|on|called|titled|named)\s+\S+(?:\s+\S+){0,4}"
    r"|the\s+(?:conclusion|ending|intro(?:duction)?)",
    re.I,
)
_ZH_REMOVE = (
    re.compile(
        r"^\s*请?\s*(?:把|将)\s*(?P<part>\S+?)\s*(?:删掉|删除|去掉|删了|拿掉)吧?[。！!.]?\s*$"
    ),
    re.compile(r"^\s*请?\s*(?:删掉|删除|去掉)\s*(?P<part>\S+?)\s*[。！!.]?\s*$"),
)
_ZH_REMOVED = re.compile(r"[^，。,.\s]{1,30}(?:段|节|部分|小节|结尾|结论|结语)")


def removed_part(instruction: str) -> PartRef | None:
    """The part an instruction asks to remove, and nothing more ("remove the second section",
    "把用法一节删掉"), or None. It is cut out as it stands, with no model: sent alone, "remove
    the second section" got the section back to remove, and the empty answer was refused;
    "remove the Usage section" sent the whole post, for a small model to give back whole
    but one section."""
    found = _EN_REMOVE.match(instruction)
    if found is not None and _EN_REMOVED.fullmatch(found.group("part")):
        return _removable(named_part(found.group("part")))
    for pattern in _ZH_REMOVE:
        if (zh := pattern.match(instruction)) and _ZH_REMOVED.fullmatch(zh.group("part")):
            return _removable(named_part(zh.group("part")))
    return None


def _removable(ref: PartRef | None) -> PartRef | None:
    """``ref`` when it is in the body (not the title, which is the frontmatter's)."""
    return ref if ref is not None and ref.kind != "title" else None


def cut_out(body: str, span: Span) -> str:
    """``body`` without ``span`` and the blank lines after it (before it, when it is the
    body's last part, whose line end stays); every other byte as it was."""
    before, after = body[: span.start], body[span.end :]
    if after.strip():
        after = re.sub(r"^(?:[ \t]*\r?\n)+", "", after)
    else:
        before = re.sub(r"(?:\r?\n[ \t]*)+$", "", before)
    return before + after


# --- the body's blocks ------------------------------------------------------------------------


def code_lines(body: str) -> list[tuple[int, str, bool]]:
    """Each line of ``body``: its offset, its text (no line break) and whether it is in code.
    A fence opens at up to three columns past the margin, or past the content of the list
    item it is in (``_fence_opens``): a fence indented four spaces under "1. Install it:"
    was prose, and "replace 'docker' with 'podman'" rewrote the ``docker pull`` in it."""
    out: list[tuple[int, str, bool]] = []
    fence: str | None = None
    base = 0  # the column the open fence's container starts at (a list item's content)
    item: int | None = None  # the column the content of the list item read last starts at
    after_blank = False
    offset = 0
    for raw in body.splitlines(keepends=True):
        text = raw.rstrip("\r\n")
        match = _ANY_FENCE.match(text)
        if fence is None:
            item = _item_column(text, item, after_blank)
            opens = match is not None and _fence_opens(match, item)
            if opens and match is not None:
                fence = match.group(2)
                base = 0 if indent_width(match.group(1)) <= 3 else item or 0
            out.append((offset, text, opens))
        else:
            if (
                match
                and match.group(2)[0] == fence[0]
                and len(match.group(2)) >= len(fence)
                and not text.strip().strip(fence[0])
                and indent_width(match.group(1)) <= base + 3
            ):
                fence = None
            out.append((offset, text, True))
        after_blank = not text.strip()
        offset += len(raw)
    return out


# (a backtick fence's info has no backtick, as CommonMark has it: "```js``` is how a fence
# starts" opened one, and the rest of the post was code: no paragraph, no section, no word to
# replace; ``skillrt.blog.markdown``'s ``_NOT_TAGS`` reads it so too)
_ANY_FENCE = re.compile(r"^([ \t]*)(`{3,}(?![^\n]*`)|~{3,})")
_ITEM_START = re.compile(r"^([ \t]*)([-+*]|\d{1,9}[.)])([ \t]+|$)")


def indent_width(space: str) -> int:
    """The columns a line's leading spaces and tabs take (a tab to the next multiple of 4)."""
    return len(space.expandtabs(4))


def _item_column(text: str, item: int | None, after_blank: bool) -> int | None:
    """The column the content of the list item ``text`` is in starts at (``item`` the one
    before it), or None outside a list: a new item's, the one before while a line is
    indented to it (or, with no blank line before it, continues its paragraph)."""
    if not text.strip():
        return item
    indent = indent_width(text[: len(text) - len(text.lstrip(" \t"))])
    listed = _ITEM_START.match(text)
    if listed is not None and indent < (item or 0) + 4:
        gap = indent_width(listed.group(3)) if listed.group(3) else 1
        return indent + len(listed.group(2)) + (gap if gap <= 4 else 1)
    if item is not None and after_blank and indent < item:
        return None  # a line at the margin after a blank one: the list is over
    return item


def _fence_opens(match: re.Match[str], item: int | None) -> bool:
    """Whether a fence line opens code: indented at most three columns past the margin, or
    past the content of the list item it is in (four are an indented code block's)."""
    indent = indent_width(match.group(1))
    return indent <= 3 or (item is not None and item <= indent <= item + 3)


@dataclass(frozen=True, slots=True)
class _Line:
    offset: int
    text: str
    role: Role


@dataclass(frozen=True, slots=True)
class _Heading:
    start: int
    level: int
    title: str


def _html_opens(text: str, in_paragraph: bool) -> tuple[re.Pattern[str] | None, bool] | None:
    """Whether ``text`` opens an HTML block: None if not, else the end it runs to (None: ended
    on this line) and whether it runs to the next blank line instead."""
    for opening, closing in _HTML_RAW:
        if found := opening.match(text):
            return (None if closing.search(text, found.end()) else closing), False
    if _HTML_BLOCK.match(text) or (not in_paragraph and _HTML_TAG_LINE.match(text)):
        return None, True
    return None


def _setext(lines: list[_Line], paragraph: list[int], underline: str) -> bool:
    """Whether the paragraph above an underline is a setext heading's text: not a list item's
    or a quote's (their ``---`` is a break), nor, under ``---``, a table's header row."""
    texts = [lines[i].text for i in paragraph]
    if any(_LIST_ITEM.match(t) or _QUOTE.match(t) for t in texts):
        return False
    return "=" in underline or not any("|" in t for t in texts)


def _scan(body: str) -> tuple[list[_Line], list[_Heading]]:
    """Each line of ``body`` with what it is, and the body's headings, ATX ("## x") and setext
    (a paragraph over "===" or "---": it was a paragraph, edited as "the second paragraph",
    and setext posts had no sections). HTML blocks are not prose ("<pre>", "<!--" were
    paragraphs, and a "# root prompt" in a <pre> a section), nor are display math blocks
    (``$$`` to ``$$``: one was "the second paragraph"), nor is a byte-order mark before the
    first line (it was sent, and lost, with a post's "# Docker notes" line as its first
    paragraph)."""
    lines: list[_Line] = []
    headings: list[_Heading] = []
    until: re.Pattern[str] | None = None  # the end of an HTML block 1 to 5
    to_blank = False  # in an HTML block 6 or 7
    math = False  # in a "$$" block
    paragraph: list[int] = []  # the lines of the paragraph read so far
    role: Role
    for offset, text, in_code in code_lines(body):
        if offset == 0 and text.startswith("\ufeff"):
            offset, text = 1, text[1:]
        blank = not text.strip()
        if in_code:
            role = "code"
        elif math or _MATH.match(text):
            role = "code"  # (not prose: it was "the second paragraph", and no heading either)
            math = "$$" not in (text if math else _MATH.sub("", text, count=1))
        elif until is not None or (to_blank and not blank):
            role = "html"
            if until is not None and until.search(text):
                until = None
        elif blank:
            role, to_blank = "blank", False
        elif (html := _html_opens(text, bool(paragraph))) is not None:
            role = "html"
            until, to_blank = html
        elif heading := _HEADING.match(text):
            role = "heading"
            headings.append(_Heading(offset, len(heading.group(1)), heading.group(2)))
        elif (
            paragraph
            and (underline := _UNDERLINE.match(text))
            and _setext(lines, paragraph, underline.group(1))
        ):
            role = "heading"
            level = 1 if underline.group(1)[0] == "=" else 2
            title = " ".join(lines[i].text.strip() for i in paragraph)
            headings.append(_Heading(lines[paragraph[0]].offset, level, title))
            for i in paragraph:
                lines[i] = _Line(lines[i].offset, lines[i].text, "heading")
        elif _BREAK.match(text):
            role = "break"
        else:
            role = "text"
        lines.append(_Line(offset, text, role))
        paragraph = [*paragraph, len(lines) - 1] if role == "text" else []
    return lines, headings


def _aside(block: str) -> bool:
    """Whether a block has no prose of its own: link reference or footnote definitions, or
    template code and HTML tags alone. A post that ended with "[1]: https://…" had that edited
    as its conclusion, and its links broke."""
    lines = block.splitlines()
    if _DEFINITION.match(lines[0]) and all(_DEFINITION.match(t) or t[:1] in " \t" for t in lines):
        return True
    return not _TAG.sub("", _TEMPLATE.sub("", block)).strip()


def _blocks(lines: list[_Line]) -> list[tuple[Span, Role]]:
    """The runs of lines of one role, blank lines apart, as spans without line breaks."""
    out: list[tuple[Span, Role]] = []
    previous: Role = "blank"
    for line in lines:
        end = line.offset + len(line.text)
        if line.role != "blank" and out and previous == line.role:
            out[-1] = (Span(out[-1][0].start, end), line.role)
        elif line.role != "blank":
            out.append((Span(line.offset, end), line.role))
        previous = line.role
    return out


def kept_blocks(body: str) -> list[str]:
    """The display math (``$$`` to ``$$``) and HTML blocks of ``body``: text an edit of the
    prose around them leaves as it was (fenced code is ``checks.code_kept``'s)."""
    return [
        body[span.start : span.end]
        for span, role in _blocks(_scan(body)[0])
        if role == "html" or (role == "code" and _MATH.match(body[span.start : span.end]))
    ]


def paragraphs(body: str) -> list[Span]:
    """The prose blocks of ``body`` (see the module docstring), as spans without line breaks."""
    lines, _ = _scan(body)
    return [
        span
        for span, role in _blocks(lines)
        if role == "text" and not _aside(body[span.start : span.end])
    ]


def _section_span(body: str, start: int, stop: int) -> Span:
    """A section from ``start`` to ``stop`` (a heading, or the body's end), its trailing blank
    lines aside; the last section's blocks with no prose of their own at its end aside too
    (the reference definitions, ``{{< comments >}}`` or HTML after a post's last section,
    which "the conclusion" sent to the model), unless it would keep nothing but its heading."""
    end = start + len(body[start:stop].rstrip())
    if stop < len(body):
        return Span(start, end)
    blocks = _blocks([line for line in _scan(body)[0] if line.offset >= start])
    kept = _prose_blocks(body, blocks, least=1)
    if kept < len(blocks) and any(role in ("text", "code") for _, role in blocks[:kept]):
        return Span(start, blocks[kept - 1][0].end)
    return Span(start, end)


def _prose_blocks(
    body: str, blocks: list[tuple[Span, Role]], *, least: int = 0, html: bool = True
) -> int:
    """How many of ``blocks`` come before the blocks with no prose of their own at their end
    (HTML blocks unless not ``html``, reference and footnote definitions, template code),
    ``least`` at least."""
    kept = len(blocks)
    while kept > least and (
        (html and blocks[kept - 1][1] == "html")
        or (
            blocks[kept - 1][1] == "text"
            and _aside(body[blocks[kept - 1][0].start : blocks[kept - 1][0].end])
        )
    ):
        kept -= 1
    return kept


def end_matter(body: str) -> int:
    """Where the reference and footnote definitions and template code (``{{< comments >}}``)
    that end ``body`` start: ``len(body)`` when there are none. (Not an HTML block: a
    ``<figure>`` at the end may be the last section's.)"""
    blocks = _blocks(_scan(body)[0])
    kept = _prose_blocks(body, blocks, html=False)
    return blocks[kept][0].start if kept < len(blocks) else len(body)


def _section_headings(body: str) -> tuple[list[_Heading], bool]:
    """The body's headings, and whether its first is a lone "# Title" above the sections."""
    headings = _scan(body)[1]
    levels = [heading.level for heading in headings]
    lone = len(levels) > 1 and levels[0] == 1 and levels.count(1) == 1
    if lone:  # (a "# Part one" under the intro is a section, not a title)
        lines = _scan(body)[0]
        lone = all(line.role == "blank" for line in lines if line.offset < headings[0].start)
    return headings, lone


def sections(body: str) -> list[tuple[Span, str]]:
    """The sections of ``body`` at its top heading level, with their headings."""
    headings, lone = _section_headings(body)
    if not headings:
        return []
    top = min(h.level for h in headings[1:]) if lone else min(h.level for h in headings)
    spans: list[tuple[Span, str]] = []
    for heading in headings:
        if heading.level != top:
            continue
        after = [h.start for h in headings if h.start > heading.start and h.level <= top]
        stop = after[0] if after else len(body)
        spans.append((_section_span(body, heading.start, stop), heading.title))
    return spans


def _named(body: str, name: str) -> Span | None:
    """The section whose heading (of any level) ``name`` names, to the next heading at its
    level or above; None when none does or two do alike (the edit is refused: the whole body
    was edited, and an answer of that section alone replaced it). "The intro section", with
    no such heading, is the text above the first section."""
    headings, lone = _section_headings(body)
    named = headings[1:] if lone else headings
    scores = [_match(name, heading.title) for heading in named]
    best = max(scores, default=0)
    found = [heading for heading, score in zip(named, scores, strict=True) if score == best]
    if best == 0 or len(found) != 1:
        if best == 0 and _words(name) in (["intro"], ["introduction"]):
            return _intro(body)
        return None
    heading = found[0]
    after = [h.start for h in headings if h.start > heading.start and h.level <= heading.level]
    return _section_span(body, heading.start, after[0] if after else len(body))


def _intro(body: str) -> Span | None:
    """The paragraphs above the body's first section, as one span."""
    found = sections(body)
    first = found[0][0].start if found else len(body)
    above = [span for span in paragraphs(body) if span.end <= first]
    return Span(above[0].start, above[-1].end) if above else None


def _nth(items: list[Span], index: int) -> Span | None:
    if index == -1:
        return items[-1] if items else None
    return items[index - 1] if 0 < index <= len(items) else None


def _nth_paragraph(body: str, index: int) -> Span | None:
    """The paragraph numbered ``index``; the first and the last are the prose's, an Obsidian
    callout before or after it aside (a note's closing "> [!note] Related" was edited as its
    ending)."""
    found = paragraphs(body)
    if index in (1, -1):
        found = [s for s in found if not _CALLOUT.match(body[s.start : s.end])] or found
    return _nth(found, index)


def locate(body: str, ref: PartRef) -> Span | None:
    """Where the part is in ``body``; None when the body has no such part (or for the title,
    which is not in the body)."""
    if ref.kind == "paragraph" and ref.within is not None:
        section = locate(body, ref.within)
        if section is None:
            return None
        inside = [s for s in paragraphs(body) if section.start <= s.start and s.end <= section.end]
        return _nth(inside, ref.index)
    if ref.kind == "paragraph":
        return _nth_paragraph(body, ref.index)
    if ref.kind == "section" and ref.name:
        return _named(body, ref.name)
    if ref.kind == "section":
        return _nth([span for span, _ in sections(body)], ref.index)
    if ref.kind == "conclusion":
        found = sections(body)
        if found and _CONCLUDING.search(found[-1][1]):
            return found[-1][0]
        return _nth_paragraph(body, -1)
    return None
