"""The event bus: nothing is built for an event nobody listens to; subscribers see it all."""

from __future__ import annotations

from skillrt._io.logs import Redactor
from skillrt.events import Event, EventBus

SECRET = "cfg-secret-value-42"


def test_an_event_nobody_listens_to_builds_nothing() -> None:
    bus = EventBus(clock=lambda: 1.0)
    assert not bus.listening("task:progress")
    assert bus.emit("task:progress", "t1", step=1) is None


def test_subscribers_of_the_type_and_of_everything_get_the_event_redacted() -> None:
    bus = EventBus(clock=lambda: 2.0, redactor=Redactor([SECRET]))
    seen: list[tuple[str, Event]] = []
    off = bus.on("task:progress", lambda e: seen.append(("own", e)))
    bus.on("*", lambda e: seen.append(("all", e)))
    assert bus.listening("task:progress") and bus.listening("task:started")
    event = bus.emit("task:progress", "t1", message=f"using {SECRET}")
    assert event is not None and event.data == {"message": "using ***"}
    assert [who for who, _ in seen] == ["own", "all"]
    assert seen[0][1] is event and event["timestamp"] == 2.0
    off()
    seen.clear()
    bus.emit("task:progress", "t1", step=2)
    assert [who for who, _ in seen] == ["all"]


def test_listening_follows_unsubscribe() -> None:
    bus = EventBus()
    off = bus.on("state:changed", lambda e: None)
    assert bus.listening("state:changed")
    off()
    assert not bus.listening("state:changed")
    assert bus.emit("state:changed", "t1", **{"from": "IDLE", "to": "UNDERSTANDING"}) is None


def test_every_shape_of_a_secret_is_redacted_in_an_events_data() -> None:
    bus = EventBus(clock=lambda: 3.5, redactor=Redactor([SECRET]))
    bus.on("*", lambda e: None)
    plain = bus.emit("task:progress", "t1", step=1, items=["x"])
    assert plain is not None and plain.data == {"step": 1, "items": ["x"]}
    for data in (
        {"message": f"using {SECRET}"},
        {"nested": {"list": [f"a {SECRET} b"]}},
        {"message": f"中文 {SECRET}"},
        {"api_key": "plain-looking", "auth": "Bearer abcdefghijklmnop1234"},
        {"note": "sk-abcdefghijklmnopqrstuvwx"},
    ):
        event = bus.emit("task:progress", "t1", **data)
        assert event is not None
        text = repr(event.to_dict())
        assert SECRET not in text and "abcdefghijklmnop" not in text
        assert "plain-looking" not in text and "***" in text


def test_a_raw_subscriber_gets_the_data_as_emitted_and_the_others_still_redacted() -> None:
    """``on_raw`` is for a subscriber that redacts what it shows itself (the server's journal):
    it gets the data unwalked; every ``on`` subscriber still gets it redacted."""
    bus = EventBus(clock=lambda: 4.0, redactor=Redactor([SECRET]))
    raw: list[Event] = []
    off = bus.on_raw("*", raw.append)
    assert bus.listening("task:progress")
    returned = bus.emit("task:progress", "t1", message=f"using {SECRET}")
    assert raw[0].data == {"message": f"using {SECRET}"} and returned is raw[0]
    shown: list[Event] = []
    bus.on("task:progress", shown.append)
    returned = bus.emit("task:progress", "t1", message=f"again {SECRET}")
    assert raw[1].data == {"message": f"again {SECRET}"}
    assert shown[0].data == {"message": "again ***"} and returned is shown[0]
    assert raw[1].timestamp == shown[0].timestamp == 4.0
    off()
    bus.emit("task:progress", "t1", step=2)
    assert len(raw) == 2 and len(shown) == 2


def test_a_fields_subscriber_gets_every_event_unredacted_and_no_event_is_built() -> None:
    """``on_fields`` (the server's journal): called with ``(type, task_id, data, timestamp)``,
    the data as emitted, for every type; with only such subscribers ``emit`` builds no
    ``Event`` (it returns None) yet ``listening`` is true; the others still get theirs, with
    the same timestamp; one that raises is logged and stops neither the others nor the
    emitter; unsubscribing ends it."""
    bus = EventBus(clock=lambda: 8.0, redactor=Redactor([SECRET]))
    got: list[tuple[str, str | None, dict[str, object], float]] = []
    off = bus.on_fields(lambda *fields: got.append(fields))  # type: ignore[arg-type]
    assert bus.listening("task:progress") and bus.listening("anything")
    assert bus.emit("task:progress", "t1", message=f"using {SECRET}") is None
    assert got == [("task:progress", "t1", {"message": f"using {SECRET}"}, 8.0)]

    def fails(*_: object) -> None:
        raise RuntimeError("broken subscriber")

    bus.on_fields(fails)
    raw: list[Event] = []
    shown: list[Event] = []
    bus.on_raw("*", raw.append)
    bus.on("state:changed", shown.append)
    returned = bus.emit("state:changed", None, to=SECRET)
    assert got[-1] == ("state:changed", None, {"to": SECRET}, 8.0)
    assert raw[0].data == {"to": SECRET} and raw[0].timestamp == 8.0
    assert returned is shown[0] and shown[0].data == {"to": "***"}
    off()
    bus.emit("task:progress", "t1", step=2)
    assert len(got) == 2 and len(raw) == 2
