"""The browsing turn record is typed (issue 21): ``TurnRecord`` validates what the journal holds,
journals written by the untyped dict of earlier versions read as they are, and a record that
is not one is refused with a validation error instead of a KeyError deep in the agent."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from skillrt.skills.browsing.schemas import PlannerOutput
from skillrt.skills.browsing.turns import AgentStep, TurnRecord

OLD_KEYS = {
    "step", "summary", "url", "failures", "memory", "extracted", "pending_answer", "replan",
    "rejected", "nudge", "plan", "repeats", "outcome",
}  # fmt: skip
PLAN = {
    "user_task": "",
    "execution_history": "",
    "current_state": "",
    "challenges_identified": "",
    "step_by_step_reasoning": "open the wiki",
    "proposed_actions": ["search for Atlantis"],
    "task_complete": False,
    "final_answer": "",
}
OLD_RECORD = {  # as skillrt wrote it before the record was typed (the 14 keys with "number")
    "step": {
        "number": 2,
        "url": "http://127.0.0.1:8000/wiki",
        "plan": PLAN,
        "state": None,
        "actions": ["click [3]"],
        "results": ["click [3]: opened http://127.0.0.1:8000/wiki/Atlantis"],
        "error": None,
        "refused": [],
        "nudge": None,
        "recorded": [{"action": {"action": "click", "index": 3}, "success": True}],
    },
    "summary": "Step 2 at http://127.0.0.1:8000/wiki: click [3]: opened …",
    "url": "http://127.0.0.1:8000/wiki/Atlantis",
    "failures": 0,
    "memory": "the wiki has a search box",
    "extracted": ["capital? -> Poseidonis"],
    "pending_answer": None,
    "replan": False,
    "rejected": False,
    "nudge": None,
    "plan": PLAN,
    "repeats": {"ab12": 1},
    "outcome": {
        "success": True,
        "answer": "Poseidonis",
        "reason": "completed",
        "detail": "the planner confirmed the task is complete",
    },
}


def test_an_old_journal_entry_reads_as_a_turn_record() -> None:
    record = TurnRecord.model_validate(OLD_RECORD)
    assert record.url == "http://127.0.0.1:8000/wiki/Atlantis"
    assert record.outcome is not None and record.outcome.answer == "Poseidonis"
    assert record.repeats == {"ab12": 1} and record.extracted == ["capital? -> Poseidonis"]
    step = AgentStep.from_record(record.step, PlannerOutput)
    assert step.number == 2 and step.plan is not None
    assert step.plan.proposed_actions == ["search for Atlantis"]
    assert step.to_record() == record.step  # and back: the same JSON


def test_a_new_record_keeps_the_old_keys_so_both_versions_read_each_other() -> None:
    dumped = TurnRecord.model_validate(OLD_RECORD).model_dump(mode="json")
    assert set(dumped) == OLD_KEYS
    assert dumped == OLD_RECORD


def test_an_older_entry_without_the_later_keys_takes_their_defaults() -> None:
    older = {"step": {"number": 1}, "url": None, "failures": 1, "memory": None}
    record = TurnRecord.model_validate(older)
    assert record.outcome is None and record.rejected is False and record.repeats == {}
    assert AgentStep.from_record(record.step, PlannerOutput).url == ""


def test_a_record_that_is_not_one_is_refused() -> None:
    with pytest.raises(ValidationError):
        TurnRecord.model_validate({"summary": "no step"})
    with pytest.raises(ValidationError):
        TurnRecord.model_validate({**OLD_RECORD, "outcome": {"success": True, "reason": "won"}})
