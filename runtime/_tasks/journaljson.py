"""``JournalJSON``: a task's journalled steps as its checkpoints write them, each made once.

A checkpoint holds the task's whole journal. Serialising and scanning it again at every step
made a task of many steps quadratic on the event loop (200 steps of 20 KB each: 4.7 s of the
loop's CPU, every other task stalled meanwhile). Once a task's JSON is large, each step's JSON
member is made and scanned for secrets once, at its first checkpoint, and later checkpoints
splice the members they already have (``checkpoint_text``).
"""

from __future__ import annotations

from typing import Any

from pydantic_core import to_json

from skillrt._io.logs import Redactor

__all__ = ["LARGE", "JournalJSON", "holds_secret"]

# A record's JSON from which its checkpoints splice the journal's members instead of
# serialising it whole: below, one dump and one scan are cheaper than the members' bookkeeping.
LARGE = 16 * 1024


def holds_secret(redactor: Redactor, value: Any) -> bool:
    """Whether redacting ``value`` would change it (a checkpoint keeps it out instead)."""
    return bool(redactor(value) != value)


class JournalJSON:
    """Each step's ``"name":value`` JSON member and whether its value holds a secret, by name,
    kept while the step's value is the same object; ``large`` once the task's checkpoints
    splice them."""

    __slots__ = ("_made", "large")

    def __init__(self) -> None:
        self._made: dict[str, tuple[Any, str, bool]] = {}
        self.large = False

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
