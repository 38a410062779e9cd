"""``Intent``: what a skill declares about an intent it serves, for routing and its questions.

The builtin skills' intents are declared in their sections of ``config/intents.toml``; a skill
made elsewhere (a plugin, an MCP tool registered at run time) declares its own here and hands
them to ``@skill(intents=[...])`` or ``Skill(declares=[...])``. A declaration overrides the
table's section of the same name field by field (a field left at its default keeps the table's)::

    Intent(
        "BOOK_MEETING",
        description="Book a meeting in the calendar",
        effect="write",
        label=("预约会议：{what}", "Book a meeting: {what}"),
        confirm=("要预约「{what}」吗？(y/n)", "Book “{what}”? (y/n)"),
        examples=("book a meeting with Ana on Friday", "帮我约周五和 Ana 开会"),
        cues=(r"\\b(?:meeting|calendar)\\b", "会议|日程"),
        patterns=(r"\\bbook (?:a )?meeting\\b(?P<topic>.*)",),
    )
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from skillrt.exceptions import UserError

__all__ = ["Effect", "Intent"]

Effect = Literal["read", "write", "delete", "web"]
"""What a task of an intent does besides answering: nothing (``read``), write or delete posts,
or reach the web. A route to any but ``read`` that only the model chose asks first under
``llm.router_trust = "low"``; a negation or a question about the action never starts it."""

_TEXTS = ("names", "examples", "cues", "patterns", "not_when", "params")
_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
Pair = tuple[str, str]
"""(Chinese, English)."""


def _pair(value: Pair | None, what: str, name: str) -> None:
    if value is None:
        return
    if not (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(t, str) and t for t in value)
    ):
        raise UserError(f"intent {name}: {what} must be a (Chinese, English) pair of texts")


@dataclass(frozen=True, slots=True)
class Intent:
    """One intent a skill serves, and what routing needs to know of it.

    ``name`` is an UPPER_SNAKE intent type. ``description`` goes into the model's prompt and the
    numbered choices. ``effect``: see ``Effect``. ``label`` is its line among numbered choices
    and ``confirm`` the yes/no question asked before a model-only route runs, each (Chinese,
    English) with ``{what}`` filled in; ``nothing_named`` is ``{what}`` when the request names
    none of ``params``. ``names`` pick it among choices besides its number. ``examples`` are
    requests it serves (the model's prompt, the rephrase reply, the classifier's training set);
    ``cues`` are regular expressions of its keywords (evidence for a model's suggestion);
    ``patterns`` are regular expressions that route to it (named groups become parameters),
    tried after the table's; a request ``not_when`` matches never routes to it. ``params`` are
    the parameters a model may fill; ``text_param`` receives the whole request when nothing
    else fills it. ``offered`` ranks it among the actions offered when nothing in the text
    points elsewhere (0: never); ``prior`` is added to the router's score of a model's
    suggestion of it.
    """

    name: str
    description: str = ""
    effect: Effect | None = None
    label: Pair | None = None
    confirm: Pair | None = None
    nothing_named: Pair | None = None
    names: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    cues: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    not_when: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    text_param: str | None = None
    offered: int | None = None
    prior: float | None = None

    def __post_init__(self) -> None:
        for what in _TEXTS:
            value = getattr(self, what)
            if isinstance(value, list):  # a list is taken as the tuple it stands for
                object.__setattr__(self, what, tuple(value))
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise UserError(f"intent name {self.name!r} must be UPPER_SNAKE (A-Z, 0-9, _)")
        if self.name == "UNKNOWN":
            raise UserError("UNKNOWN is the router's answer when nothing fits: not an intent")
        if self.effect is not None and self.effect not in get_args(Effect):
            raise UserError(
                f"intent {self.name}: effect must be one of {', '.join(get_args(Effect))}"
            )
        for what in ("label", "confirm", "nothing_named"):
            _pair(getattr(self, what), what, self.name)
        for what in _TEXTS:
            value = getattr(self, what)
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                raise UserError(f"intent {self.name}: {what} must be a tuple of texts")
        for regex in (*self.cues, *self.patterns, *self.not_when):
            try:
                re.compile(regex)
            except re.error as exc:
                raise UserError(
                    f"intent {self.name}: bad regular expression {regex!r}: {exc}"
                ) from None
