"""Telling an answer to a skill's question from a new request typed in its place.

A skill asks ("Which post should I summarise?", "Delete it?") and the session's next input is
its answer, unless the skill's ``accepts`` (``ctx.ask(question, accepts=...)``) says the input
is something else: then the runtime ends the asking task, nothing more done, and routes the
input as any request. "what tags does the docker post have?", typed where a post was asked for,
was read as a post's name before, matched none, and the request was lost.

``new_request`` is kept narrow: an input that starts as a request or a question does
("summarise …", "what …", "总结…", "请…"), or is a question of a few words ("… have?",
"…有哪些标签？"). A short word or a name ("the docker one", "no", "rust, async") stays an answer.
"""

from __future__ import annotations

import re

__all__ = [
    "DELETE_IT",
    "SAVE_IT",
    "confirms_or_answers",
    "is_no",
    "is_yes",
    "new_request",
    "saves",
    "tags_or_request",
]

_START_EN = re.compile(
    r"^(?:(?:please|pls|can you|could you|would you|now)\s+)?(?:"
    r"summari[sz]e|translate|write|draft|edit|rewrite|revise|create|delete|remove|research|"
    r"browse|search|find|list|show|tell|explain|compare|shorten|expand|polish|proofread|"
    r"update|publish|index|undo|"
    r"what|what's|whats|how|why|who|when|where|which|is|are|does|do|did|can|could|should|would"
    r")\b",
    re.I,
)
# Verbs that start a request of three words or more ("suggest tags for it", typed where a
# post was asked for, was read as a post's name, named none, and was lost); shorter, "add
# it" is an answer.
_CHANGE_VERBS = "suggest|add|change|set|rename|retag|untag|move|unpublish|fix|replace"
"""Verbs that start a request of their own (a change to a post), here and where only yes or
no is asked (``_ASKS_EN``, which takes more)."""
_START_EN_LONGER = re.compile(
    rf"^(?:(?:please|pls|can you|could you|would you|now)\s+)?(?:{_CHANGE_VERBS})\s+\S+\s+\S",
    re.I,
)
_START_ZH = re.compile(
    r"^(?:请|帮我|给我|麻烦|把|给它)|^(?:总结|概括|翻译|写一|起草|编辑|修改|改写|重写|润色|创建|新建|删除|研究|"
    r"搜索|查找|列出|告诉|解释|比较|缩短|扩写|更新|发布)"
)
_QUESTION_ZH = re.compile(r"什么|怎么|为什么|如何|哪些|哪篇|多少|吗\s*[？?]?\s*$")
_CJK = re.compile("[\u3400-\u9fff]")


def new_request(text: str) -> bool:
    """Whether ``text``, typed where a skill asked a question, is a new request instead."""
    text = " ".join(text.split())
    if not text:
        return False
    if _START_EN.match(text) or _START_ZH.match(text) or _QUESTION_ZH.search(text):
        return True
    if _START_EN_LONGER.match(text):
        return True
    if text[-1] in "?？":  # a question of its own, not "the docker one?"
        return len(text.split()) >= 4 or len(_CJK.findall(text)) >= 6
    return False


# A yes in the words of the question's action, and nothing more: "delete it", "yes, save it",
# "请删除", "好的，删掉吧". ("delete the docker post instead" is a request of its own.)
_EN_YES = r"(?:(?:yes|yeah|yep|ok|okay|sure)\W*\s*)?(?:please\s+)?"
_EN_IT = r"(?:\s+(?:it|this|that|them|the\s+(?:post|article|file|change|changes|edit)))?"
_ZH_YES = r"(?:好的?|是的?|对|行|确认|确定|嗯)?\W*(?:请|帮我|麻烦)?(?:你)?(?:把它|将它)?"
_ZH_IT = r"(?:它|吧|掉|掉吧|它吧|掉它|这篇|这篇文章|文章)?"


def _says_yes_by(verbs_en: str, verbs_zh: str) -> re.Pattern[str]:
    return re.compile(
        rf"^{_EN_YES}(?:{verbs_en}){_EN_IT}(?:\s+please)?\W*$|^{_ZH_YES}(?:{verbs_zh}){_ZH_IT}\W*$",
        re.I,
    )


DELETE_IT = _says_yes_by("delete|remove|trash", "删除|删掉|删|移除")
"""A yes to "Delete …?" in its words: "delete it", "yes, remove it", "请删除", "好的，删掉吧"."""
SAVE_IT = _says_yes_by("save|write|apply", "保存|写入|应用")  # (not "keep it": which?)
"""A yes to an edit's "Write this change?": "save it", "apply the changes", "保存吧"."""


_YES = frozenset(
    {"y", "yes", "是", "是的", "确认", "确定", "好", "好的", "删除", "ok", "okay", "sure"}
    # (said with their spaces taken out: "go ahead", "make it so", "add them all"; a verb
    # of its own ends a question, so a yes in one's words is said here)
    | {"yep", "yeah", "yesplease", "goahead", "doit", "makeitso", "pleasedo", "soundsgood",
       "looksgood", "lgtm", "可以", "行", "没问题"}
)  # fmt: skip
_ADD_YES = frozenset({"addit", "addthem", "addthemall", "putitin", "addthose"})
"""A yes to a change that adds (tags): "add them all", "put it in" (not to a delete)."""
_PUNCT = re.compile(r"[\s!！.。,，~～]+")


def is_yes(answer: str) -> bool:
    """Whether an answer to a confirmation means yes (yes/y/是/确认..., nothing else)."""
    return _PUNCT.sub("", answer).casefold() in _YES


_NO = frozenset(
    {"no", "nope", "none", "neither", "cancel", "stop", "forgetit", "nevermind", "noneofthem",
     "不", "不要", "不用", "不是", "算了", "取消", "都不是", "都不要"}
)  # fmt: skip
"""(said with their spaces taken out, as ``_YES``: "never mind", "none of them")"""


def is_no(answer: str) -> bool:
    """Whether an answer declines what was asked (no/none/cancel/算了…, nothing else): "no"
    where a post was asked for was found in a listed post's path and picked it."""
    return _PUNCT.sub("", answer).casefold() in _NO


def saves(answer: str) -> bool:
    """A yes to "write this change?": yes, y, 是… (``is_yes``), "save it", "apply it", "保存",
    or "add them all", "put it in"."""
    return (
        is_yes(answer)
        or _PUNCT.sub("", answer).casefold() in _ADD_YES
        or SAVE_IT.match(" ".join(answer.split())) is not None
    )


# Where only yes or no is asked, a request that starts with a verb of its own is one too:
# "把它的分类改成 工具", typed where a tag change waited for its yes, was read as a no, and
# the request was lost ("好的，…没有改动"). (Not where a post or a title is asked for: "make
# it shorter" may be a post's title.)
_ASKS_EN = re.compile(
    r"^(?:(?:please|pls|can you|could you|would you|now|then|instead)\s+)?(?:"
    rf"{_CHANGE_VERBS}|make|tag|open|insert|append|give|put|turn|convert|mark|cut|trim|split|"
    r"merge|generate)\b",
    re.I,
)
_ASKS_ZH = re.compile(
    r"^(?:请|帮我|麻烦|你)?(?:把|将|给|改成|改为|加上|添加|设置|设为|换成|重命名|打开|"
    r"移到|移动到|标记|取消发布|生成|建议)"
)


def _asks_something_else(said: str) -> bool:
    if _ASKS_EN.match(said):
        return len(said.split()) >= 3
    return bool(_ASKS_ZH.match(said)) and len(_CJK.findall(said)) >= 4


def confirms_or_answers(text: str) -> bool:
    """Whether ``text``, typed where a yes-or-no question was asked ("Delete …? Answer yes or
    no."), is its answer: anything but a new request (``new_request``, or a request of a few
    words that starts with a verb of its own: "change its category to linux", "把它的分类改成
    工具"), and a yes in the action's words (``DELETE_IT``, ``SAVE_IT``), which starts as
    one."""
    said = " ".join(text.split())
    if DELETE_IT.match(said) or SAVE_IT.match(said) or saves(said):
        return True  # ("make it so", "add them all": a yes, though it starts with a verb)
    return not new_request(said) and not _asks_something_else(said)


def tags_or_request(text: str) -> bool:
    """Whether ``text``, typed where "which tags?" was asked, is tags (True) rather than a new
    request: tags may well be "how-to", "search", "draft, update", "翻译", so only a question
    or a request of a few words with no list in it is a request."""
    said = " ".join(text.split())
    if not said:
        return True
    if said[-1] in "?？":
        return False
    if re.search(r"[,，、;；]", said):
        return True
    if _START_EN.match(said) or _START_ZH.match(said) or _QUESTION_ZH.search(said):
        return len(said.split()) < 3 and len(_CJK.findall(said)) < 4
    return True
