"""Skills: a name, a description, intents, a params model, replies and ``async run(ctx, params)``.

``Skill.run`` is the one place where a skill's refusals become replies: it checks the params'
declared limits (``skillrt.skill.params``) with the task's config, binds the skill's ``Replies`` to
the context (``ctx.reply``), and answers the errors a user can fix (``skillrt.skill.refusals``) with
``SkillResult(success=False)`` in the user's language.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from skillrt.skill.intent import Intent
from skillrt.skill.params import Chars, param_checks
from skillrt.skill.refusals import REFUSED, refusal
from skillrt.skill.replies import Replies

if TYPE_CHECKING:
    from skillrt.skill.context import SkillContext

__all__ = ["Skill", "SkillResult", "skill"]

P = TypeVar("P", bound=BaseModel)


class SkillResult(BaseModel):
    """What a skill returns. ``message`` is Markdown for the user, in the user's language."""

    model_config = ConfigDict(extra="forbid")

    success: bool = True
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    tokens: int = 0
    cost: float = 0.0
    next_steps: list[str] = Field(default_factory=list)


SkillFn = Callable[["SkillContext", P], Awaitable[SkillResult]]


@dataclass(eq=False)
class Skill(Generic[P]):
    """A registered capability. Build one with the ``@skill`` decorator or directly.

    ``intents`` are the names of the intent types it serves; ``declares`` are ``Intent``
    declarations of (some of) them, with their labels, questions, examples and patterns (each
    declared name is added to ``intents``). ``pattern`` is an optional regex that matches raw
    input when no intent type does. ``watchdog_s`` overrides the runtime's watchdog for this
    skill's working states. ``replies`` are the skill's words, read with
    ``ctx.reply(key, **values)``.
    """

    name: str
    description: str
    params: type[P]
    fn: SkillFn[P]
    intents: list[str] = field(default_factory=list)
    pattern: re.Pattern[str] | None = None
    watchdog_s: float | None = None
    replies: Replies = field(default_factory=Replies)
    declares: Sequence[Intent] = ()
    _checks: list[tuple[str, Chars]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._checks = param_checks(self.params)
        self.declares = tuple(self.declares)
        for declared in self.declares:
            if not isinstance(declared, Intent):
                raise TypeError(f"skill {self.name}: declares takes Intent objects")
            if declared.name not in self.intents:
                self.intents = [*self.intents, declared.name]

    async def run(self, ctx: SkillContext, params: P) -> SkillResult:
        """Run the skill: its params checked, its replies bound to ``ctx``, and an error the
        user can fix (``skillrt.skill.refusals.REFUSED``) answered as a refusal."""
        outer = ctx.replies
        ctx.replies = self.replies
        try:
            for name, chars in self._checks:
                chars.check(name, getattr(params, name), ctx.config)
            return await self.fn(ctx, params)
        except REFUSED as exc:
            refused = refusal(ctx, exc)
            return SkillResult(success=False, message=refused.message, data=refused.data)
        finally:
            ctx.replies = outer

    def parse_params(self, raw: dict[str, Any]) -> P:
        """Validate parameters from routing or a caller (unknown keys are ignored)."""
        fields = self.params.__pydantic_fields__  # model_fields, without its class property
        known = {k: v for k, v in raw.items() if k in fields}
        return self.params.model_validate(known)


def skill(
    *,
    name: str,
    params: type[P],
    description: str = "",
    intents: Sequence[str | Intent] | None = None,
    pattern: str | None = None,
    watchdog_s: float | None = None,
    replies: Replies | None = None,
) -> Callable[[SkillFn[P]], Skill[P]]:
    """Turn ``async def fn(ctx, params) -> SkillResult`` into a ``Skill``.

    ``intents``: names of intent types, or ``Intent`` declarations (``skillrt.skill.Intent``).
    ``replies``: the module's ``Replies`` table, which ``ctx.reply(key, **values)`` reads in the
    user's language while the skill runs.
    """

    _check_params(name, params)

    def wrap(fn: SkillFn[P]) -> Skill[P]:
        if not _is_async(fn):  # it was taken, then failed at run time: "object SkillResult
            # can't be used in 'await' expression"
            raise TypeError(f"@skill {name}: the function must be an async def")
        return Skill(
            name=name,
            description=description or (fn.__doc__ or "").strip().split("\n")[0],
            params=params,
            fn=fn,
            intents=[i.name if isinstance(i, Intent) else i for i in intents or ()],
            declares=[i for i in intents or () if isinstance(i, Intent)],
            pattern=re.compile(pattern, re.IGNORECASE) if pattern else None,
            watchdog_s=watchdog_s,
            replies=replies if replies is not None else Replies(),
        )

    return wrap


def _check_params(name: str, params: object) -> None:
    """``params`` must be a pydantic model class: ``params=dict`` raised AttributeError
    ("type object 'dict' has no attribute 'model_fields'")."""
    if not (isinstance(params, type) and issubclass(params, BaseModel)):
        shown = params.__name__ if isinstance(params, type) else type(params).__name__
        raise TypeError(f"@skill {name}: params must be a pydantic BaseModel class, not {shown}")


def _is_async(fn: object) -> bool:
    """An async def, or an object whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004
    )
