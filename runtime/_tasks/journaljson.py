"""``JournalJSON``: a task's journalled steps as its checkpoints write them, each made once.

A checkpoint holds the task's whole journal. Serialising and scanning it again at every step
made a task of many steps quadratic on the event loop (200 steps of 20 KB each: 4.7 s of the
loop's CPU, every other task stalled meanwhile). Once a task's JSON is large, each step's JSON
member is made and scanned for secrets once, at its first checkpoint, and later checkpoints
splice the members they already have (``checkpoint_text``).

Below that size a checkpoint's text is made whole, but scanned for secrets only from where
it differs from the task's last checkpoint found clean (``clean``): a step's checkpoint is
the one before with its new step and a few fields after it.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import to_json

from skillrt._io.logs import Redactor

__all__ = ["LARGE", "JournalJSON", "holds_secret"]

# A record's JSON from which its checkpoints splice the journal's members instead of
# serialising it whole: below, one dump and one scan are cheaper than the members' bookkeeping.
LARGE = 16 * 1024
# What follows the journal in a record's JSON (its last member, or its opening brace, ends
# just before): where a checkpoint's text starts to differ from the task's last one.
_AFTER_JOURNAL = '},"progress":'


def holds_secret(redactor: Redactor, value: Any) -> bool:
    """Whether redacting ``value`` would change it (a checkpoint keeps it out instead)."""
    return bool(redactor(value) != value)


class JournalJSON:
    """Each step's ``"name":value`` JSON member and whether its value holds a secret, by name,
    kept while the step's value is the same object; ``large`` once the task's checkpoints
    splice them."""

    __slots__ = ("_clean", "_made", "large")

    def __init__(self) -> None:
        self._made: dict[str, tuple[Any, str, bool]] = {}
        self.large = False
        # The text of the task's last checkpoint found clean, with the redactor's
        # ``scan_key`` at the time (None: none yet, or the last one was not clean).
        self._clean: tuple[tuple[int], str] | None = None

    def clean(self, text: str, redactor: Redactor) -> bool:
        """``redactor.is_clean(text)`` for the task's next checkpoint text, scanned from where
        it may differ from the last one found clean (``Redactor.clean_after``): a step's
        checkpoint is the one before with a step more, at the end of the journal, and a few
        later fields changed."""
        key, last = redactor.scan_key, self._clean
        if key is None:  # (the redactor calls nothing clean)
            return False
        if last is not None and last[0] is key:
            before = last[1]  # alike, as a rule, up to the end of its last step
            clean = redactor.clean_after(before, text, before.rfind(_AFTER_JOURNAL), key)
        else:
            clean = redactor.is_clean(text)
        self._clean = (key, text) if clean else None
        return clean

    def members(self, steps: dict[str, Any], redactor: Redactor) -> list[str]:
        """The journal's JSON members in order, up to the first step holding a secret (that
        step and the ones after it run again on resume). A skill that changes a step's value
        in place after the step returned does not change the journal."""
        made = self._made
        members: list[str] = []
        for name, value in steps.items():
            known = made.get(name)
            if known is None or known[0] is not value:
                member = f"{to_json(name).decode()}:{to_json(value).decode()}"
                secret = not redactor.is_clean(member) and holds_secret(redactor, value)
                known = made[name] = (value, member, secret)
            if known[2]:
                break
            members.append(known[1])
        if len(made) > len(steps):  # steps dropped (a task started over): forget theirs
            for name in [n for n in made if n not in steps]:
                del made[name]
        return members
