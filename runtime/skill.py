"""Skills: a name, a description, intents, a params model and ``async run(ctx, params)``."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from skillrt.context import SkillContext

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

    ``intents`` are intent types (``WRITE_ARTICLE``); ``pattern`` is an optional regex that
    matches raw input when no intent type does. ``watchdog_s`` overrides the runtime's
    watchdog for this skill's working states.
    """

    name: str
    description: str
    params: type[P]
    fn: SkillFn[P]
    intents: list[str] = field(default_factory=list)
    pattern: re.Pattern[str] | None = None
    watchdog_s: float | None = None

    async def run(self, ctx: SkillContext, params: P) -> SkillResult:
        return await self.fn(ctx, params)

    def parse_params(self, raw: dict[str, Any]) -> P:
        """Validate parameters from routing or a caller (unknown keys are ignored)."""
        known = {k: v for k, v in raw.items() if k in self.params.model_fields}
        return self.params.model_validate(known)


def skill(
    *,
    name: str,
    params: type[P],
    description: str = "",
    intents: list[str] | None = None,
    pattern: str | None = None,
    watchdog_s: float | None = None,
) -> Callable[[SkillFn[P]], Skill[P]]:
    """Turn ``async def fn(ctx, params) -> SkillResult`` into a ``Skill``."""

    def wrap(fn: SkillFn[P]) -> Skill[P]:
        return Skill(
            name=name,
            description=description or (fn.__doc__ or "").strip().split("\n")[0],
            params=params,
            fn=fn,
            intents=list(intents or []),
            pattern=re.compile(pattern, re.IGNORECASE) if pattern else None,
            watchdog_s=watchdog_s,
        )

    return wrap
