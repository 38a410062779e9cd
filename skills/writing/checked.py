"""A model's text, checked before it is used: asked, checked, asked once more with the reason.

``checked(ctx, name, generate, checks)`` runs ``generate`` as the durable step ``name`` and the
checks (``checks.py``) on what it returned. When a check fails, ``generate`` is asked again, as
the step ``name:retry``, with the reasons appended to its prompt (``prompts.RETRY_NOTE``); when
that fails too, the skill refuses with ``refuse_unchecked``: nothing is saved, the task does not
end as done, and the reply says which check failed and why and shows the model's text. Both
answers are journalled, so a resumed task checks the same texts again and decides the same.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from pydantic import model_validator

from skillrt import Replies, SkillContext, SkillResult

from .checks import Check, CheckRecord, Generated, Verdict, run_checks
from .prompts import RETRY_NOTE, clip

__all__ = ["REPLIES", "Checked", "checked", "quality_report", "refuse_unchecked"]

MAX_SHOWN_CHARS = 4000

REPLIES = Replies(
    {
        "checks_failed": (
            "模型的文字没有通过检查「{check}」：{reason}。已带着这个原因重试过一次，仍未通过，"
            "所以没有保存任何内容。模型写的是：\n\n{shown}",
            "The model's text did not pass the check “{check}”: {reason}. It was asked again "
            "once with that reason and failed again, so nothing was saved. This is what the "
            "model wrote:\n\n{shown}",
        ),
        "retrying": ("检查未通过，重试：{reason}", "A check failed, asking again: {reason}"),
    }
)


class _Generated(Generated):
    """``Generated``, also from a journal of old that holds the text alone."""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        return {"text": value} if isinstance(value, str) else value


@dataclass(frozen=True, slots=True)
class Checked:
    """The outcome: the text (fixed by the checks), whether it passed, after how many
    attempts, the last attempt's verdicts and the model's own text of that attempt, and
    whether that text ends where the model began to loop (``Generated.stopped``)."""

    text: str
    passed: bool
    attempts: int
    verdicts: tuple[Verdict, ...]
    raw: str
    stopped: bool = False

    @property
    def failed(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if not v.passed)

    def records(self) -> list[CheckRecord]:
        return [CheckRecord(name=v.name, passed=v.passed, reason=v.reason) for v in self.verdicts]


def _reasons(verdicts: Sequence[Verdict], language: str = "en") -> str:
    """The failed checks' reasons, in ``language`` where a check has them in it (the status
    line of a Chinese session; the model's retry note is always English)."""
    return "; ".join(f"{v.name}: {v.reason_in(language)}" for v in verdicts if not v.passed)


async def checked(
    ctx: SkillContext,
    name: str,
    generate: Callable[[str], Awaitable[Generated]],
    checks: Sequence[Check],
    *,
    retry: str = RETRY_NOTE,
) -> Checked:
    """Ask (``generate(note)``, ``note`` empty the first time), check, and ask once more with
    the reasons in ``retry`` (an article's in its own language) when a check fails (see the
    module docstring)."""
    first = await ctx.step(name, partial(generate, ""), returns=_Generated)
    fixed, verdicts = run_checks(first, checks)
    if all(v.passed for v in verdicts):
        return Checked(fixed.text, True, 1, tuple(verdicts), first.text, first.stopped)
    reasons = _reasons(verdicts)
    shown = _reasons(verdicts, ctx.input.language)
    ctx.events.emit("agent:status", message=ctx.reply("retrying", reason=clip(shown, 300)))
    note = retry.format(reason=clip(reasons, 600))
    second = await ctx.step(f"{name}:retry", partial(generate, note), returns=_Generated)
    fixed, verdicts = run_checks(second, checks)
    passed = all(v.passed for v in verdicts)
    return Checked(fixed.text, passed, 2, tuple(verdicts), second.text, second.stopped)


# In the data of a finished result whose texts passed their checks: ``not_degenerate`` refused
# any loop the repetition guard cut, so the runtime's note that the text above stops where the
# model started repeating itself would be wrong (a looping first answer was asked again).
CHECKED: dict[str, Any] = {"truncated_repetition": False}


def quality_report(results: Sequence[Checked]) -> list[dict[str, Any]]:
    """The reply's ``data["checks"]``: each check that ran, passed when it passed everywhere
    (every section of an article), with its reasons and how many attempts it took."""
    merged: dict[str, dict[str, Any]] = {}
    for result in results:
        for record in result.records():
            entry = merged.setdefault(
                record.name, {"name": record.name, "passed": True, "reason": "", "attempts": 1}
            )
            entry["passed"] = entry["passed"] and record.passed
            entry["attempts"] = max(entry["attempts"], result.attempts)
            if record.reason and record.reason not in entry["reason"]:
                sep = "; " if entry["reason"] else ""
                entry["reason"] = clip(entry["reason"] + sep + record.reason, 500)
    return list(merged.values())


def refuse_unchecked(ctx: SkillContext, result: Checked, **data: Any) -> SkillResult:
    """The refusal of a text that failed its checks twice: nothing was saved."""
    failed = result.failed[0]
    fence = "````" if "```" in result.raw else "```"
    shown = f"{fence}text\n{clip(result.raw, MAX_SHOWN_CHARS)}\n{fence}"
    return SkillResult(
        success=False,
        message=ctx.reply(
            "checks_failed",
            check=failed.name,
            reason=failed.reason_in(ctx.input.language),
            shown=shown,
        ),
        data={
            **data,
            "error": "checks_failed",
            "check": failed.name,
            "reason": failed.reason,
            "checks": quality_report([result]),
            "model_text": result.raw,
            "saved": False,
        },
    )
