"""A durable step's JSON round trip (``skill.context._as_json``): the value a step returns is
the one ``json.loads(json.dumps(result, ensure_ascii=False, allow_nan=False))`` gives, and a
result ``json.dumps`` refuses is refused with the same words, however the round trip is
made."""

from __future__ import annotations

import enum
import json
import math
import random
from typing import Any

import pytest

from skillrt.exceptions import UserError
from skillrt.skill.context import _as_json


class _Colour(enum.IntEnum):
    RED = 1


class _Name(str):
    pass


def _values(seed: int, count: int) -> list[Any]:
    """Nested dicts and lists of the kinds steps return, with keys json.dumps turns to text
    (ints, floats, bools, None), tuples, subclasses of int and str, unicode and big ints."""
    rng = random.Random(seed)
    leaves = ["", "plain", "é 正文 \u2028 \"q\" \\", 0, -1, 2**80, 1.5, -0.0, 1e300, 5e-324, True,
              False, None, _Colour.RED, _Name("named"), "\U0001f600"]  # fmt: skip
    keys: list[Any] = ["a", "topic", "é", 1, 2.5, True, None, _Name("k")]

    def make(depth: int) -> Any:
        kind = rng.random()
        if depth > 3 or kind < 0.4:
            return rng.choice(leaves)
        if kind < 0.7:
            return {rng.choice(keys): make(depth + 1) for _ in range(rng.randint(0, 4))}
        items = [make(depth + 1) for _ in range(rng.randint(0, 4))]
        return tuple(items) if kind < 0.8 else items

    return [make(0) for _ in range(count)]


def test_a_steps_value_is_its_json_round_trip() -> None:
    for value in _values(39, 3_000):
        expected = json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))
        got = _as_json("step", value, typed=False)
        assert got == expected
        assert json.dumps(got) == json.dumps(expected)  # (1 and True, 1.0 and 1 told apart)


@pytest.mark.parametrize(
    "value",
    [math.nan, [math.inf], {"x": object()}, {(1,): 2}, {"s": {1, 2}}, b"bytes"],
    ids=["nan", "inf", "object", "tuple-key", "set", "bytes"],
)
def test_what_json_dumps_refuses_a_step_refuses_in_its_words(value: Any) -> None:
    with pytest.raises((TypeError, ValueError)) as refused:
        json.dumps(value, ensure_ascii=False, allow_nan=False)
    with pytest.raises(UserError) as caught:
        _as_json("step", value, typed=False)
    assert str(refused.value) in str(caught.value)


def test_a_circular_result_is_refused_and_the_next_step_is_not_affected() -> None:
    circular: list[Any] = [1]
    circular.append(circular)
    with pytest.raises(UserError, match="Circular reference"):
        _as_json("step", circular, typed=False)
    shared = {"a": 1}
    assert _as_json("next", [shared, shared], typed=False) == [{"a": 1}, {"a": 1}]


def test_the_c_encoder_is_the_one_in_use_here() -> None:
    """On this CPython the round trip goes through the C encoder as ``_json_text`` calls it
    (checked at import; another CPython falls back to ``JSONEncoder.encode``), so the tests
    above compared that path, not the fallback."""
    from skillrt.skill import context

    assert context._MAKE_ENCODER is not None
    assert context._json_text({"a": (1, 2.5)}) == '{"a": [1, 2.5]}'
