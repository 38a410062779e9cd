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

__all__ = ["confirms_or_answers", "new_request"]

_START_EN = re.compile(
    r"^(?:(?:please|pls|can you|could you|would you|now)\s+)?(?:"
    r"summari[sz]e|translate|write|draft|edit|rewrite|revise|create|delete|remove|research|"
    r"browse|search|find|list|show|tell|explain|compare|shorten|expand|polish|proofread|"
    r"update|publish|index|undo|"
    r"what|what's|whats|how|why|who|when|where|which|is|are|does|do|did|can|could|should|would"
    r")\b",
    re.I,
)
_START_ZH = re.compile(
    r"^(?:请|帮我|给我|麻烦)|^(?:总结|概括|翻译|写一|起草|编辑|修改|改写|重写|润色|创建|新建|删除|研究|"
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
    if text[-1] in "?？":  # a question of its own, not "the docker one?"
        return len(text.split()) >= 4 or len(_CJK.findall(text)) >= 6
    return False


# What says yes to a confirmation in the words of its action: "delete it", "save it please".
_CONFIRMING = re.compile(
    r"^(?:(?:yes|yeah|ok|okay|sure)[,!.]?\s+)?(?:please\s+)?(?:delete|remove|save|write|apply|"
    r"keep|do)\b|^(?:删除|删掉|保存|写入|确认)",
    re.I,
)


def confirms_or_answers(text: str) -> bool:
    """Whether ``text``, typed where a yes-or-no question was asked ("Delete …? Answer yes or
    no."), is its answer: anything but a new request, and "delete it" (which starts as one)."""
    return not new_request(text) or _CONFIRMING.match(" ".join(text.split())) is not None
