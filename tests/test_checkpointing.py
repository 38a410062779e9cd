"""``checkpoint_copy``: secrets are kept out of a checkpoint, never replaced by ``***`` in what
a resumed skill reads back."""

from __future__ import annotations

import random
from copy import deepcopy
from pathlib import Path
from typing import Any

from skillrt._io.logs import Redactor
from skillrt._state.embedded.checkpoints import MemoryCheckpointStore
from skillrt._state.records import RecordText, TaskRecord, listing_of
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


def _plain(rec: TaskRecord, redactor: Redactor) -> RecordText | None:
    """What ``checkpoint_text`` gave before a task's journal kept its last clean text: the
    record's whole JSON scanned whole, or the copy with its secrets kept out."""
    text = rec.model_dump_json()
    if redactor.is_clean(text):
        return RecordText(rec.id, rec.state, rec.updated_at, text, listing_of(rec))
    copy = checkpoint_copy(rec, redactor)
    return None if copy is None else RecordText.of(copy)


_ODD: list[Any] = [
    "plain", "", "é \u2028 \"quoted\" \\ 正文", {"nested": {"a": [1, 2.5, None, True]}},
    [], {}, 2**70, -0.0, 1e300, "\U0001f600", {"token": "value"}, {"Secret\n": "x"},
    f"export K={KEY}", f"uses {SECRET} here", "sk-", "Bearer", "ſecret", {"k": "K"},
    "cfg-secret-value-4", "2 cfg-secret-value-42", ",{}", "İ", 'token"', "x" * 300,
]  # fmt: skip


def test_a_tasks_checkpoints_are_byte_for_byte_the_plain_ones() -> None:
    """The journal's scan of only what changed since the task's last clean checkpoint gives
    every checkpoint exactly as the whole record's text and scan gave it: the same text,
    listing, and secrets kept out, through odd step values, unicode, secrets (in a step, in
    what only people see, in the request), earlier fields changed, a step's value changed in
    place, steps started over, a secret added to the redactor mid-task, and resumed tasks."""
    rng = random.Random(39)
    compared = {True: 0, False: 0}
    for trial in range(400):
        redactor = Redactor([SECRET] if rng.random() < 0.7 else [])
        rec = record(id=f"t{trial}", raw_input=rng.choice(["write about rust", "写 rust", "x"]))
        journal = JournalJSON()
        for n in range(rng.randint(1, 9)):
            change = rng.random()
            if change < 0.6:
                rec.steps[f"s{n}"] = deepcopy(rng.choice(_ODD))
            elif change < 0.65:
                rec.raw_input = rng.choice(["changed", f"now {SECRET}", "é"])
            elif change < 0.7:
                rec.progress = {"message": rng.choice(["half", f"using {KEY}", "正文"])}
            elif change < 0.75:
                rec.state = rng.choice(["PAUSED", "WAITING_INPUT", "EXECUTING"])
            elif change < 0.8:
                rec.last_error = rng.choice([None, "boom", f"boom {SECRET}"])
            elif change < 0.85 and rec.steps:
                value = next(iter(rec.steps.values()))
                if isinstance(value, dict):
                    value["changed"] = "in place"  # the whole text shows it, as before
            elif change < 0.88:
                rec.steps = {}  # started over
            elif change < 0.91:
                redactor.add(rng.choice(["plain", "write", "in place", "rust-new-secret"]))
            elif change < 0.95:  # resumed: read back from its last checkpoint, a new journal
                last = _plain(rec, redactor)
                if last is not None:
                    rec, journal = TaskRecord.model_validate_json(last.text), JournalJSON()
            rec.updated_at += 1.5
            rec.tokens += rng.choice([0, 7])
            expected = _plain(rec, redactor)
            assert checkpoint_text(rec, redactor, journal) == expected
            compared[expected is not None and redactor.is_clean(expected.text)] += 1
    assert min(compared.values()) > 200  # clean and not clean both came up, many times


class _Scans(Redactor):
    """A redactor that notes how much text each ``is_clean`` was given."""

    def __init__(self) -> None:
        super().__init__()
        self.scanned: list[int] = []

    def is_clean(self, json_text: str) -> bool:
        self.scanned.append(len(json_text))
        return super().is_clean(json_text)


def test_a_tasks_next_checkpoint_is_scanned_from_its_new_step_on() -> None:
    """The first checkpoint of a task is scanned whole; the next ones only from where they
    differ from the last (the new step and the fields after the journal), not again whole."""
    redactor = _Scans()
    journal = JournalJSON()
    rec = record(raw_input="write an article about topic 0", intent={"type": "WRITE_ARTICLE"})
    sizes = []
    for name, value in [("context", {"topic": "topic 0"}), ("outline", "outline"), ("b", "c")]:
        rec.steps[name] = value
        rec.updated_at += 0.25
        text = checkpoint_text(rec, redactor, journal)
        assert text is not None
        sizes.append(len(text.text))
    assert redactor.scanned[0] == sizes[0]
    assert len(redactor.scanned) == 3
    for scanned, size in zip(redactor.scanned[1:], sizes[1:], strict=True):
        assert scanned < size / 2
