"""What the runtime does when it is not sure what an input means.

- ``is_noise``: an input that is mostly control characters (a pasted escape sequence, a stray
  key) is not a request at all.
- ``is_small_talk``: a greeting, thanks or an acknowledgement routes to the ``CHAT`` intent.
  Greetings and thanks (``is_greeting``) go to a chat skill when one is registered; an
  acknowledgement (``ok``, ``好的``, ``嗯``) or any other one short word (``clear``) starts no
  task at all, not even a chat: the runtime replies briefly.
- ``score_suggestion``: the router's own score for an intent a model suggested, from the
  evidence in the text (keywords of that intent, a weak pattern match agreeing, length), never
  from the model's self-reported confidence: a 135M model saying 1.0 means nothing.
- ``RouteQuestion``: what is asked instead of guessing. ``confirm`` is a yes/no question
  before a model-only route reaches the web, deletes or writes under ``llm.router_trust =
  "low"``; ``choose`` offers the likeliest two or three actions as numbered choices.

What is said of an intent (its effect, its label among choices, its yes/no question, the words
that pick it) is the intent's own (``IntentSpec``: its section of the table, or what the skill
serving it declares): this module names no intent.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from skillrt._routing.prefilter import Keywords, required_clauses, required_literals

if TYPE_CHECKING:
    from skillrt._routing.intent_table import IntentSpec

__all__ = [
    "Choice",
    "RouteQuestion",
    "choose_question",
    "confirm_question",
    "holds_back",
    "is_greeting",
    "is_noise",
    "is_one_short_word",
    "is_small_talk",
    "score_suggestion",
]

# --- noise and small talk -----------------------------------------------------------------------

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_JUNK_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})


def is_noise(text: str) -> bool:
    """Whether ``text`` is mostly control characters (escape sequences count whole), so that
    what is left is no request anyone typed."""
    if "\ufffd" not in text and text.isprintable():
        return False  # no control character, no escape sequence: nothing junk (in C)
    stripped = _ANSI.sub(lambda m: "\x00" * len(m.group()), text)
    junk = visible = 0
    for ch in stripped:
        if ch in "\t\n\r ":
            continue
        if ch == "\ufffd" or unicodedata.category(ch) in _JUNK_CATEGORIES:
            junk += 1
        else:
            visible += 1
    if junk == 0:
        return False
    return junk >= visible or not any(ch.isalnum() for ch in _ANSI.sub("", text))


_GREETING = (
    r"hi|hello|hey|hiya|yo|howdy|greetings|good\s+(?:morning|afternoon|evening|night)|"
    r"thanks?(?:\s+(?:you|a\s+lot|so\s+much))?(?:\s+(?:very|so)\s+much)?|thank\s+you(?:\s+very\s+much)?|"
    r"thx|ty|cheers|bye|goodbye|see\s+you|cya|good\s+job|well\s+done|"
    r"how\s+are\s+you(?:\s+doing)?|what'?s\s+up|who\s+are\s+you|"
    # Pass 5: asking after the assistant ("how's it going", "最近怎么样") is small talk too.
    r"how['’]?s\s+it\s+going(?:\s+on\s+your\s+(?:end|side))?|how\s+have\s+you\s+been|"
    r"how\s+(?:are|is)\s+(?:things|everything|life)(?:\s+on\s+your\s+(?:end|side))?|"
    r"how['’]?s\s+your\s+day(?:\s+going)?|how\s+was\s+your\s+day|"
    r"最近(?:怎么样|如何|还好吗?|好吗)|你(?:今天|最近)?过得(?:怎么样|如何|好吗|还好吗)|"
    r"你好|您好|嗨|哈喽|早上好|晚上好|下午好|早安|晚安|谢谢(?:你|您)?|多谢|感谢|辛苦了|"
    r"再见|拜拜|你是谁|你好吗|在吗"
)
# Praise for what was done (round 7): "改得不错" (the verb of what was done, then how well), and
# "nice edit" (how good, then what was done). Small talk when it is the whole input, and it
# holds back a request it opens (``_PRAISE``).
_DONE_WELL_ZH = r"(?:改|写|翻|译|翻译|总结|删|弄|做|整|润色)得(?:真|很|挺|太|蛮|非常)?"
_WELL = r"(?:nice|great|good|excellent|perfect|lovely|awesome|solid)"
_WORK = r"(?:edit|edits|job|work|rewrite|translation|summary)"
_ACKNOWLEDGEMENT = (
    r"ok(?:ay)?|k|kk|cool|nice|great|got\s+it|sure|fine|alright|yes|no|yeah|nope|"
    r"lol|haha|hmm+|um+|uh+|"
    r"好的|好|行|[嗯哦噢啊哈呃额]+|收到|明白了?|知道了|不错|很好|太好了|"
    # With a post in focus, "改得不错，谢谢" started an edit of it without a yes (round 7).
    rf"{_DONE_WELL_ZH}(?:不错|好|漂亮|棒|到位|专业)(?:了|啊|呀|哦)?|"
    rf"(?:(?:really|very)\s+)?(?:{_WELL}|neat)\s+(?:{_WORK}|one|post|article)|"
    r"(?:that|this|it)?\s*looks?\s+(?:really\s+)?(?:good|great|fine|perfect|nice)|"
    r"well\s+(?:written|put|done)|perfect|excellent|awesome|love\s+it"
)
_END_PUNCT = r"[\s!！.。~～?？,，、]*"
# Up to three of them in a row ("okay cool", "ok, thanks!", "好的谢谢"), pass 6; English words
# need a space or a comma between them.
_TALK = f"(?:{_GREETING}|{_ACKNOWLEDGEMENT})"
_SMALL_TALK = re.compile(
    f"{_TALK}(?:(?:[\\s,，、!！.。~～]+|(?<=[^\\x00-\\x7f])){_TALK}){{0,2}}{_END_PUNCT}"
)
_GREETING_TALK = re.compile(f"(?:{_GREETING}){_END_PUNCT}")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]{0,15}")
_CJK_WORD = re.compile(r"[\u3400-\u9fff]{1,3}")
_END = "!！.。~～?？,，、 "


def _characters(items: Any, c: Any, out: set[str]) -> bool:
    """Add to ``out`` every character a match of the parse tree ``items`` can consume (the
    space category as the characters ``str.isspace`` tells); False when that cannot be told
    (a class negated or of another category, any character)."""
    for op, av in items:
        if op is c.LITERAL:
            out.add(chr(av))
        elif op is c.IN:
            for op2, av2 in av:
                if op2 is c.LITERAL:
                    out.add(chr(av2))
                elif op2 is c.RANGE and av2[1] - av2[0] < 1024:
                    out.update(map(chr, range(av2[0], av2[1] + 1)))
                elif op2 is c.CATEGORY and av2 is c.CATEGORY_SPACE:
                    out.update(_SPACES)
                else:
                    return False
        elif op in (c.ASSERT, c.ASSERT_NOT, c.AT):
            continue  # zero width: consumes nothing
        elif op is c.SUBPATTERN:
            if not _characters(av[-1], c, out):
                return False
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            if not _characters(av[2], c, out):
                return False
        elif op is c.BRANCH:
            if not all(_characters(branch, c, out) for branch in av[1]):
                return False
        else:
            return False
    return True


_SPACES = frozenset(chr(i) for i in range(0x3001) if chr(i).isspace())  # (none above 0x3000)


def _consumed(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """The characters a match of ``pattern`` (no IGNORECASE) can consume, or None when that
    cannot be told: text holding any other cannot be a match of it as a whole."""
    try:
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser as sre  # type: ignore[attr-defined]

        tree = sre.parse(pattern.pattern, pattern.flags)
    except Exception:  # a future Python without these internals: not told
        return None
    if pattern.flags & re.IGNORECASE:
        return None
    found: set[str] = set()
    return frozenset(found) if _characters(list(tree), c, found) else None


# Most Chinese requests hold a character no small talk has (写, 文, 章...): for text other than
# ASCII, that one check (in C) stands for the fullmatch of the long alternation, which is about
# five times dearer. (ASCII small talk uses most letters: it is not checked there.)
_TALK_CHARACTERS = _consumed(_SMALL_TALK)


def is_small_talk(text: str) -> bool:
    """A greeting, thanks or acknowledgement, in Chinese or English (the whole input)."""
    folded = text.casefold()
    if (
        _TALK_CHARACTERS is not None
        and not folded.isascii()
        and not _TALK_CHARACTERS.issuperset(folded)
    ):
        return False  # a character no match consumes
    return _SMALL_TALK.fullmatch(folded) is not None


def is_greeting(text: str) -> bool:
    """A greeting, thanks, a farewell or a social question (``who are you``): small talk a chat
    skill answers. An acknowledgement (``ok``, ``好的``) is not one."""
    return _GREETING_TALK.fullmatch(text.casefold()) is not None


def is_one_short_word(text: str) -> bool:
    """One short word and nothing else: ``clear``, ``ok``, ``吃饭`` (the caller checks first that
    no pattern of the table matches it)."""
    core = text.strip(_END)
    return bool(core) and (
        _WORD.fullmatch(core) is not None or _CJK_WORD.fullmatch(core) is not None
    )


# --- negations and questions about an action ---------------------------------------------------

# What may come before a question's first word ("and did I…", "ok, can you…").
_OPENER = r"^(?:(?:and|so|but|ok|hey)[, ]+)?"
# Having done something, in Chinese ("写过", "删过"): a question about the blog's history.
_DONE_ZH = r"(?:写|删|发|搜|翻译|建)过"
_NEGATION = re.compile(
    # "I don't need posts/x.md anymore, delete it", "这篇不要了，删掉吧": no longer wanting a
    # post is why it goes, not a negation of the action (pass 5).
    r"\b(?:don['’]?t|do\s+not)\b(?!\s+(?:need|want)\b[^,;!?，。；！？]*\bany\s*more\b)|"
    r"\b(?:doesn['’]?t|no\s+need|never|stop|instead\s+of|rather\s+than)\b|"
    r"不用|不要(?!了)|不需要|没必要|无需|甭|先别|"
    # 别 alone is "don't"; in 错别字 (a typo), 特别, 区别, 分别… it is no negation.
    r"(?<![特区分类识告级派性差个辨鉴离道错])别(?![人的处名称致扭])",
    re.IGNORECASE,
)
# "write an article about how to brew tea", "a post on how do you pick a laptop": the how is
# the topic's, not a question about the action (stop 45: it asked "Which did you mean?").
_TOPIC_BEFORE = (
    r"(?<!\babout\s)(?<!\bon\s)(?<!\bof\s)(?<!\bexplaining\s)(?<!\bshowing\s)"
    r"(?<!\bdescribing\s)(?<!\bcovering\s)(?<!:\s)"
)
_ASKS_ABOUT = re.compile(
    rf"{_OPENER}(?:have|has|had|did|do|does|was|were|is|are|am)"
    r"\s+(?:i|we|my|there)\b|"
    # "did you delete it?", "have you written it yet?": a question about what was done (pass 6:
    # it deleted the post in focus, at 0.999).
    rf"{_OPENER}(?:did|have|had|was|were)\s+you\b|"
    rf"{_TOPIC_BEFORE}\bhow\s+(?:do|can|should|would|could|does)\s+(?:i|we|you|one)\b|"
    # "google how to fix X": what to search for, not a question about the search (pass 6).
    r"(?<!\bgoogle\s)(?<!\bsearch\s)(?<!\bsearch\sfor\s)(?<!\blook\sup\s)"
    rf"{_TOPIC_BEFORE}\bhow\s+to\b|"
    r"\bwhat\s+(?:did|have|has)\s+(?:i|we)\b|\b(?:whether|if)\s+i\s+(?:have|had|wrote|did)\b|"
    rf"有没有|是不是|有无|{_DONE_ZH}|"
    r"(?<!关于)(?<!介绍)(?<!讲讲)(?<!讲解)(?:怎么|如何|怎样|咋)\s*(?:才能|能|去|来)?\s*"
    r"(?:写|删|搜|翻译|新建|创建|发|write|delete|search|translate)",
    re.IGNORECASE,
)
# A question about what the runtime can do ("can you write posts in Chinese too?", "你会翻译
# 文章吗"): an answer about the runtime, never the action itself without a yes; small talk is
# among the choices it gets (pass 6: "can you translate posts too?" was offered Translate,
# Delete and Update the graph).
_ABOUT_ME = re.compile(
    rf"{_OPENER}(?:can|could|do|will)\s+you\s+(?:also\s+|even\s+)?"
    r"(?:\w+\s+){1,4}?(?:too|also|as\s+well|at\s+all|in\s+general)\s*[?？]?$|"
    r"\b(?:are\s+you\s+able\s+to|do\s+you\s+know\s+how\s+to|is\s+it\s+possible\s+to)\b|"
    r"^你(?:也|还)?(?:会|懂得?|支持)\s*(?:写|删|搜|翻译|新建|创建|发|改|总结)",
    re.IGNORECASE,
)


# Praise for what was done, before anything else is asked ("great job on the translation",
# "改得不错，再…"): a verdict on the last action, never a new one without a yes (round 7).
_PRAISE = re.compile(
    # Thanks first ("thanks, that translation was spot on", round 8: it translated again).
    r"^(?:thanks|thank\s+you|thx|ty|cheers|lol|haha|wow)\b|^(?:谢谢|多谢|感谢|哈哈)|"
    rf"^(?:(?:really|very)\s+)?{_WELL}\s+{_WORK}\b|"
    rf"^{_DONE_WELL_ZH}(?:不错|好|漂亮|棒|到位)",
    re.IGNORECASE,
)


# What a request says it leaves alone, which is the action's own nature and no negation of it
# (round 7): a translation leaves the original be ("…，原文别动", "don't touch the original"),
# a new empty post has no body yet ("不用写内容", "别帮我写正文"), a web search goes past the blog
# ("不要只看我的博客，去网上查").
_LEAVES_ALONE = re.compile(
    r"(?:原文|原稿|原来的(?:文章)?)\s*(?:别|不要|不用|不必)\s*(?:动|改|碰)|"
    r"(?:别|不要|不用)\s*(?:动|改|碰)\s*(?:原文|原稿)(?!以外|之外|外)|"
    r"\b(?:don['’]?t|do\s+not)\s+(?:touch|change|modify|overwrite|edit)\s+the\s+original\b|"
    r"(?:不用|不要|别|无需|不必)\s*(?:帮我|帮忙)?\s*(?:写|填)\s*(?:内容|正文)|"
    r"(?:内容|正文)\s*(?:先|暂时|就)?\s*(?:不用|不要|别|无需|不必)\s*(?:写|填|生成)|"
    r"\b(?:don['’]?t|do\s+not|no\s+need\s+to)\s+(?:write|fill\s+in|generate)\s+"
    r"(?:the\s+|any\s+)?(?:body|content|text|anything)\b(?:\s+in\s+it)?|"
    r"(?:不要|别|不用)\s*只\s*(?:看|查|搜|用)\s*(?:我的)?\s*(?:博客|文章)|"
    r"\b(?:don['’]?t|do\s+not)\s+(?:just|only)\s+(?:use|look\s+at|search|check)\s+my\s+"
    r"(?:blog|posts)\b",
    re.IGNORECASE,
)
# A web search named first: what follows is what to look up, and its question words
# ("网上查查 SQLite 有没有…", "search the web to check whether…") ask nothing of the runtime.
_SEARCH_FIRST = re.compile(
    r"^(?:请|帮我|麻烦|你)?\s*(?:去|到)?\s*(?:上网|网上|在网上|google|谷歌|百度)\s*"
    r"(?:查|搜|搜索|查询|找|研究|调研)|"
    r"^(?:(?:please|pls|can\s+you|could\s+you)\s+)?(?:search|look\s+up|check)\s+"
    r"(?:the\s+web|online|the\s+internet)\b|"
    # A page to read named first: what follows is what to find there ("open https://… and
    # tell me how to detach" was held back as a question about the browsing, and the chat
    # asked whether to browse, talk or answer from the blog). Not when it speaks of deleting,
    # cancelling or paying: "… tell me how to delete my account" is still held back.
    r"^(?:(?:please|pls|can\s+you|could\s+you)\s+)?(?:open|read|visit|load|go\s+to|check)\s+"
    r"(?:the\s+)?(?:(?:web\s*)?page\s+)?https?://\S+\s+and\s+(?:then\s+)?(?:tell|show|explain|"
    r"let\s+me\s+know|find(?:\s+out)?)\b(?![^\n]*\b(?:delete|remove|erase|cancel|close|"
    r"deactivate|unsubscribe|pay|buy|purchase|order)\b)|"
    r"^(?:请|帮我|麻烦|你)?\s*(?:打开|访问|读一下|看一下|看看)\s*https?://\S+?\s*[，,]?\s*"
    r"(?:然后)?\s*(?:告诉我|跟我说|看看|找找|找一下)(?![^\n]*(?:删|注销|取消|付款|支付|购买|下单))|"
    # "how do I detach according to https://…": a question on that page, which only reads.
    r"^(?:how|what|which|why|when|where|who|is|are|does|do|did|can|could|should|will)\b"
    r"[^\n]{0,200}?\baccording\s+to\s+https?://\S+\s*[?.!？]*$",
    re.IGNORECASE,
)


def holds_back(text: str) -> bool:
    """Whether ``text`` holds back from an action: a negation ("don't", "不用", "别", "不要")
    or a question about it ("have I written…?", "how do I…?", "我有没有写过…"), or praise
    for what was done ("great job on the translation", "改得不错，…"). A route to a
    write, delete or web task from such a request never starts without a yes, however sure
    the router is: "don't delete posts/x.md, just change its title" deletes nothing."""
    text = text.strip()
    # The keywords of the costlier searches, found in one pass: a search none of whose
    # keywords is in the text cannot match and is skipped (the same answer, sooner).
    gates = _holding()
    lowered = None if _case_odd(text) else text.lower()
    held = None if lowered is None else gates.keywords.holds(lowered)
    said = text
    if _may_match(gates.leaves_alone, held, lowered):
        said = _LEAVES_ALONE.sub(" ", text).strip()
        if said != text:
            held = None  # keywords were told for the text, not for what is left of it
    searching = _SEARCH_FIRST.search(text) is not None
    return (
        (_may_match(gates.negation, held, lowered) and _NEGATION.search(said) is not None)
        or (
            not searching
            and _may_match(gates.asks_about, held, lowered)
            and _ASKS_ABOUT.search(said) is not None
        )
        or (_may_match(gates.about_me, held, lowered) and asks_what_it_can_do(text))
        or _PRAISE.search(text) is not None
    )


class _Gate(NamedTuple):
    """What a text must hold for one of ``holds_back``'s searches to match: one of ``words``
    (None: not told), and for some alternative of the pattern, a string of each of its sets
    (``prefilter.required_clauses``; ``ascii`` the alternatives an ASCII text may match,
    whose every set has an ASCII string; None: not told)."""

    words: frozenset[str] | None
    alternatives: tuple[tuple[frozenset[str], ...], ...] | None
    ascii: tuple[tuple[frozenset[str], ...], ...] | None


class _Gates(NamedTuple):
    leaves_alone: _Gate
    negation: _Gate
    asks_about: _Gate
    about_me: _Gate
    keywords: Keywords  # one scan for the ``words`` of them all


@functools.cache
def _holding() -> _Gates:
    """The gate of each search ``holds_back`` may skip, and one scan for their keywords (built
    at the first call, not when the package is imported). A gate is kept in a named field, not
    in a dict keyed by its pattern: hashing a compiled pattern hashes its whole code, several
    microseconds for these."""

    def gate(regex: re.Pattern[str]) -> _Gate:
        alternatives = required_clauses(regex.pattern)
        ascii_ones = None
        if alternatives is not None:
            ascii_ones = tuple(
                sets for sets in alternatives if all(any(s.isascii() for s in o) for o in sets)
            )
        return _Gate(required_literals(regex.pattern), alternatives, ascii_ones)

    leaves, negation, asks, about = map(gate, (_LEAVES_ALONE, _NEGATION, _ASKS_ABOUT, _ABOUT_ME))
    words = (w for g in (leaves, negation, asks, about) for w in g.words or ())
    return _Gates(leaves, negation, asks, about, Keywords(words))


# Characters that match an ASCII letter under IGNORECASE while their ``lower()`` is not that
# letter (İ and ı match "i", ſ matches "s"): with one in the text, no search is skipped.
_CASE_ODD = ("\u0130", "\u0131", "\u017f")


def _case_odd(text: str) -> bool:
    return not text.isascii() and ("\u0130" in text or "\u0131" in text or "\u017f" in text)


def _may_match(gate: _Gate, held: set[str] | None, lowered: str | None) -> bool:
    """Whether the search of ``gate`` may match a text holding the keywords ``held`` (None:
    not told), ``lowered`` the text lowercased: one of its words is there, and some
    alternative of the pattern has a string of each of its sets in the text."""
    if held is None or lowered is None:
        return True
    if gate.words is not None and gate.words.isdisjoint(held):
        return False
    alternatives = gate.ascii if lowered.isascii() else gate.alternatives
    if alternatives is None:
        return True
    holds = lowered.__contains__
    for sets in alternatives:
        for options in sets:
            if not any(map(holds, options)):
                break  # this alternative cannot match: none of these strings is there
        else:
            return True  # every set of this alternative has a string in the text
    return False


_WAS_DONE = re.compile(
    rf"{_OPENER}(?:did|have|has|had|was|were)\s+(?:i|we|you|my|our)\b|{_DONE_ZH}",
    re.IGNORECASE,
)


def asks_what_was_done(text: str) -> bool:
    """Whether ``text`` asks whether something was done ("did I delete the post about X?",
    "我删过讲 X 的那篇吗"): a question about the blog and its history, never the action."""
    return _WAS_DONE.search(text.strip()) is not None


def asks_what_it_can_do(text: str) -> bool:
    """Whether ``text`` asks what the runtime can do ("can you translate posts too?", "你会翻译
    文章吗"): it holds back, and small talk is among the actions it is offered."""
    return _ABOUT_ME.search(text.strip()) is not None


# --- scoring a model's suggestion ---------------------------------------------------------------


def score_suggestion(
    intent: str,
    text: str,
    *,
    cues: Iterable[str],
    hint: str | None,
    prior: float = 0.0,
) -> float:
    """The router's confidence in a model's suggested ``intent`` for ``text``.

    ``cues`` are the intents whose keywords appear in the text; ``hint`` is the intent a weak
    pattern of the table matched (below the router's trust in its patterns), if any. A
    suggestion with no evidence scores 0.3, under the default threshold of 0.6, so it is asked
    about rather than run; one whose keywords appear scores about 0.75. ``prior`` is the
    intent's own (``prior`` in its section of the table).
    """
    cue_set = set(cues)
    score = 0.3 + prior
    if intent in cue_set:
        score += 0.45
    elif cue_set:
        score -= 0.15  # the text has another intent's words, none of this one's
    if hint == intent:
        score += 0.15
    elif hint is not None:
        score -= 0.1
    core = text.strip(_END)
    if len(core) < 4 or (core.isascii() and " " not in core):
        score -= 0.15
    return round(min(max(score, 0.0), 0.95), 3)


# --- questions instead of guesses ---------------------------------------------------------------

_YES = frozenset(
    {"y", "yes", "yeah", "yep", "yup", "sure", "ok", "okay", "go", "go ahead", "do it",
     "please do", "yes please", "是", "是的", "好", "好的", "要", "对", "对的", "可以", "行",
     "确定", "确认", "去吧", "搜吧", "没问题"}
)  # fmt: skip
_NO = frozenset(
    {"n", "no", "nope", "nah", "cancel", "stop", "never", "0", "never mind", "no thanks",
     "don't", "dont", "不", "不要", "否", "不用", "算了", "取消", "别", "不是", "不对", "停"}
)  # fmt: skip
_ORDINALS = {
    "1": 0, "2": 1, "3": 2, "一": 0, "二": 1, "三": 2, "第一": 0, "第二": 1, "第三": 2,
    "第一个": 0, "第二个": 1, "第三个": 2, "first": 0, "second": 1, "third": 2,
    "one": 0, "two": 1, "three": 2,
}  # fmt: skip
_NUMBER = re.compile(
    r"^(?:#|no\.?\s*|option\s+|选项?\s*|选择?\s*|第)?(\d{1,2}|[一二三])\s*(?:个|号)?$"
)


@dataclass(frozen=True, slots=True)
class Choice:
    """One action offered: an intent, the parameters it runs with, how it is shown, and the
    words that name it in an answer (besides its number)."""

    intent: str
    parameters: dict[str, Any]
    label: str
    names: tuple[str, ...] = ()


@dataclass(slots=True)
class RouteQuestion:
    """A question the router's uncertainty made the runtime ask, and how to read the answer."""

    kind: Literal["confirm", "choose"]
    text: str
    choices: list[Choice] = field(default_factory=list)

    def interpret(self, answer: str) -> Choice | Literal["no"] | None:
        """The chosen action, ``"no"``, or None when the answer is neither (a new request)."""
        norm = unicodedata.normalize("NFKC", answer).casefold().strip().strip(_END).strip()
        norm = " ".join(norm.split())
        if not norm:
            return "no"
        if self.kind == "confirm":
            if norm in _YES or norm == "1":
                return self.choices[0]
            if norm in _NO:
                return "no"
            return None
        if norm in _NO:
            return "no"
        index = _ORDINALS.get(norm)
        if index is None:
            m = _NUMBER.match(norm)
            if m is not None:
                digits = m.group(1)
                index = int(digits) - 1 if digits.isdigit() else _ORDINALS[digits]
        if index is not None:
            return self.choices[index] if 0 <= index < len(self.choices) else "no"
        named = [
            c
            for c in self.choices
            if norm == c.intent.casefold() or norm == c.label.casefold() or norm in c.names
        ]
        if len(named) == 1:
            return named[0]
        return None


# --- building the questions ---------------------------------------------------------------------

_MAIN_PARAM = ("topic", "question", "instruction", "task", "title", "path", "url")


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _what(params: Mapping[str, Any], text: str) -> str:
    for name in _MAIN_PARAM:
        value = params.get(name)
        if isinstance(value, str) and value.strip():
            return _short(value)
    return _short(text)


def _said(pair: tuple[str, str], language: str, **values: object) -> str:
    return (pair[0] if language == "zh" else pair[1]).format(**values)


def confirm_question(
    spec: IntentSpec,
    params: dict[str, Any],
    text: str,
    language: str,
    *,
    current: str | None = "",
) -> RouteQuestion:
    """The yes/no question asked before a model-only route to an intent with an effect runs.
    ``current``, when the request names none of the intent's params: the post open or in
    focus, named; "" (not known): its ``nothing_named``, "the current post"; None (no post is
    open or in focus): the request's own words, never a post that is not there."""
    from skillrt.skill.replies import reply

    what = _what(params, text)
    unnamed = spec.nothing_named is not None and not any(params.get(p) for p in spec.params)
    if unnamed and spec.nothing_named is not None and current is not None:
        what = current or _said(spec.nothing_named, language)
    choice = Choice(spec.name, params, what, spec.names)
    if spec.confirm is not None:
        question = _said(spec.confirm, language, what=what)
    else:
        question = reply("confirm_action", language, action=_label(spec, what, language))
    return RouteQuestion("confirm", question, [choice])


def _label(spec: IntentSpec, what: str, language: str) -> str:
    if spec.label is not None:
        return _said(spec.label, language, what=what)
    return f"{spec.description}: {what}"


def choose_question(
    options: Iterable[tuple[IntentSpec, dict[str, Any]]], text: str, language: str
) -> RouteQuestion:
    """Numbered choices: ``options`` are (the intent, the parameters it would run with)."""
    from skillrt.skill.replies import reply

    choices: list[Choice] = []
    for spec, params in options:
        label = _label(spec, _what(params, text), language)
        choices.append(Choice(spec.name, params, label, spec.names))
    lines = [reply("choose", language)]
    lines += [f"{i}. {c.label}" for i, c in enumerate(choices, 1)]
    lines += ["", reply("choose_more", language)]  # its own paragraph when rendered
    return RouteQuestion("choose", "\n".join(lines), choices)
