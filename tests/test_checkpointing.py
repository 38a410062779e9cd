"""``checkpoint_copy``: secrets are kept out of a checkpoint, never replaced by ``***`` in what
a resumed skill reads back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillrt._io.logs import Redactor
from skillrt._state.embedded.checkpoints import MemoryCheckpointStore
from skillrt._state.records import RecordText, TaskRecord
from skillrt._tasks.checkpointing import checkpoint_copy, checkpoint_text
from skillrt._tasks.journaljson import LARGE, JournalJSON

from .stores import StoreKind

SECRET = "cfg-secret-value-42"
KEY = "sk-proj-abcdefghijklmnopqrstuvwx1234"


def record(**fields: Any) -> TaskRecord:
    base: dict[str, Any] = {"id": "t1", "session_id": "s", "state": "EXECUTING"}
    return TaskRecord(created_at=1.0, updated_at=1.0, **{**base, **fields})


def test_a_clean_record_is_copied_whole_and_independent() -> None:
    rec = record(raw_input="write about rust", steps={"outline": {"title": "Rust"}})
    copy = checkpoint_copy(rec, Redactor([SECRET]))
    assert copy == rec
    assert copy is not None
    rec.steps["more"] = 1
    assert "more" not in copy.steps


def test_the_journal_stops_before_the_first_step_holding_a_secret() -> None:
    steps = {"read": {"path": "a.md"}, "edit": f"export K={KEY}", "save": {"hash": "ab"}}
    copy = checkpoint_copy(record(steps=steps), Redactor())
    assert copy is not None
    assert copy.steps == {"read": {"path": "a.md"}}  # edit and what follows run again
    assert "***" not in copy.model_dump_json()


def test_fields_only_people_see_are_redacted() -> None:
    rec = record(
        last_error=f"boom {SECRET}",
        progress={"message": f"using {KEY}"},
        result={"message": SECRET},
        question=f"is {SECRET} right?",
    )
    copy = checkpoint_copy(rec, Redactor([SECRET]))
    assert copy is not None
    text = copy.model_dump_json()
    assert SECRET not in text and KEY not in text
    assert copy.last_error == "boom ***"


def test_a_request_holding_a_secret_is_not_checkpointed() -> None:
    redactor = Redactor([SECRET])
    assert checkpoint_copy(record(raw_input=f"log in with {SECRET}"), redactor) is None
    assert checkpoint_copy(record(params={"path": KEY}), redactor) is None
    assert checkpoint_copy(record(context={"selected_text": KEY}), redactor) is None


def test_checkpoint_text_is_the_copy_as_json_and_stores_read_it_back(
    tmp_path: Path, store_kind: StoreKind
) -> None:
    """What the runtime queues (JSON text, not validated again) is exactly the copy's JSON,
    secrets handled alike, and each store (in memory, and SQLite or PostgreSQL) reads it back
    as that record."""
    redactor = Redactor([SECRET])
    cases = [
        record(raw_input="write about rust", steps={"outline": {"title": "Rust"}}),
        record(steps={"read": {"path": "a.md"}, "edit": f"export K={KEY}"}),
        record(last_error=f"boom {SECRET}", result={"message": SECRET}),
        record(raw_input=f"log in with {SECRET}"),
    ]
    for i, rec in enumerate(cases):
        rec.id = f"t{i}"
        copy, text = checkpoint_copy(rec, redactor), checkpoint_text(rec, redactor)
        if copy is None:
            assert text is None
            continue
        assert text == RecordText.of(copy)
        memory = MemoryCheckpointStore()
        memory.apply([text], [])
        assert memory.get(rec.id) == copy
        with store_kind.open(tmp_path / f"state{i}") as store:
            store.apply([text], [])
            assert store.get(rec.id) == copy


def test_a_large_journal_checkpoints_the_same_record_step_after_step() -> None:
    """A record past ``LARGE`` splices its steps' JSON members, made once each: every
    checkpoint still reads back as ``checkpoint_copy`` of the record, through steps added,
    one replaced, a secret that cuts the journal, non-ASCII text and steps dropped."""
    redactor = Redactor([SECRET])
    journal = JournalJSON()
    rec = record(raw_input="研究 rust", result={"message": f"saw {SECRET}"})
    page = "正文 " * 2000  # ~8 KB of JSON each: large from the third step on
    expected_large = False
    for i in range(8):
        rec.steps[f"page{i}"] = {"url": f"https://example.org/{i}", "text": f"{i} {page}"}
        if i == 5:
            rec.steps["page2"] = {"url": "replaced", "text": page}  # a new object: made again
        if i == 6:
            rec.steps["login"] = f"token {KEY}"  # this and what follows stay in memory only
        text = checkpoint_text(rec, redactor, journal)
        copy = checkpoint_copy(rec, redactor)
        assert text is not None and copy is not None
        assert TaskRecord.model_validate_json(text.text) == copy
        assert SECRET not in text.text and KEY not in text.text
        expected_large = expected_large or len(rec.model_dump_json()) >= LARGE
        assert journal.large == expected_large
    assert journal.large
    assert "login" not in TaskRecord.model_validate_json(text.text).steps
    rec.steps = {"page0": rec.steps["page0"]}  # started over
    text = checkpoint_text(rec, redactor, journal)
    assert text is not None
    assert TaskRecord.model_validate_json(text.text).steps == rec.steps


def test_a_large_journals_steps_are_made_once() -> None:
    """Once large, a step's JSON is made at its first checkpoint and reused by the later ones
    (what made a task of many steps quadratic): a value changed in place afterwards is not
    serialised again, while a step given a new value is."""
    redactor = Redactor()
    journal = JournalJSON()
    rec = record(steps={"big": "x" * LARGE, "notes": {"n": 1}})
    first = checkpoint_text(rec, redactor, journal)
    assert first is not None and journal.large
    rec.steps["notes"]["n"] = 2  # in place: the member made at the first checkpoint stands
    again = checkpoint_text(rec, redactor, journal)
    assert again is not None
    assert TaskRecord.model_validate_json(again.text).steps["notes"] == {"n": 1}
    rec.steps["notes"] = {"n": 3}  # a new value: made again
    third = checkpoint_text(rec, redactor, journal)
    assert third is not None
    assert TaskRecord.model_validate_json(third.text).steps["notes"] == {"n": 3}


def test_a_large_request_holding_a_secret_is_still_not_checkpointed() -> None:
    journal = JournalJSON()
    rec = record(raw_input=f"log in with {SECRET}", steps={"big": "y" * LARGE})
    assert checkpoint_text(rec, Redactor([SECRET]), journal) is None
    rec.raw_input = "log in"
    text = checkpoint_text(rec, Redactor([SECRET]), journal)
    assert text is not None and journal.large
    assert TaskRecord.model_validate_json(text.text) == rec
