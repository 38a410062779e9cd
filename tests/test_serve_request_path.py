"""What a call to ``skillrt serve`` costs on its way in and out, made leaner without changing a
byte: the reply's scan for secrets (``Redactor.is_clean``), its text (``Redactor.dump``), the
params' dump, and uvicorn's proxy headers middleware behind the fast routes."""

from __future__ import annotations

import datetime as dt
import enum
import random
import socket
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

pytest.importorskip("fastapi")

from skillrt._io.modeljson import model_data
from skillrt._io.redaction import _FOLDS_TO_ASCII, _SECRET_KEY_WORDS, Redactor
from skillrt.messages import ChatMessage
from skillrt.server.fastroutes import FastRoutes
from skillrt.testing import FunctionModel
from tests.server_support import LiveServer, StepModel, make_runtime

_WORDS = _SECRET_KEY_WORDS  # the words the scan looks for, as the reference reads them


def _was_clean(redactor: Redactor, text: str) -> bool:
    """``is_clean`` as it was written before (a find loop per word): the reference."""
    if not redactor._json_scan:
        return False
    if not text.isascii() and _FOLDS_TO_ASCII.search(text) is not None:
        return False
    if "sk-" in text or "Bearer" in text:
        return False
    if any(secret in text for secret in redactor._secrets):
        return False
    lowered = text.lower()
    for word in _WORDS:
        at = lowered.find(word)
        while at != -1:
            end = at + len(word)
            if lowered.startswith('"', end) or lowered.startswith('\\n"', end):
                return False
            at = lowered.find(word, end)
    return True


def _texts(seed: int, count: int) -> Iterator[str]:
    """JSON-ish texts built of the pieces the scan looks at: the words in any case, quotes,
    escaped newlines, key shapes, the secret, characters that fold to ASCII, Chinese."""
    rng = random.Random(seed)
    pieces = [*_WORDS, "TOKEN", "Token", "ApiKey", "API-KEY", "Secrets", "tokens", "passwords",
              '"', '":', '\\n"', "\\n", "\\", "n", ":", ",", "{", "}", " ", "sk-", "Bearer",
              "abcdefghijklmnop", "s3cret-value-42", "s3cret-value", "\u017f", "\u212a", "\u0131",
              "\u0130", "中文", "é", "x", "y", "key", "api", "_", "-"]  # fmt: skip
    for _ in range(count):
        yield "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))


def test_the_scan_calls_clean_exactly_what_it_called_clean_before() -> None:
    redactor = Redactor(["s3cret-value-42"])
    seen = {True: 0, False: 0}
    for text in _texts(29, 40_000):
        expected = _was_clean(redactor, text)
        assert redactor.is_clean(text) is expected, text
        seen[expected] += 1
    assert min(seen.values()) > 1_000  # both answers were tried
    for text in ('{"token":1}', '{"Token\\n":1}', '{"my_api-key":"v"}', '{"tokens":0}',
                 '{"x":"token"}', '{"secret\\n\\n":1}', '{"PASSWORD":"x"}'):  # fmt: skip
        assert redactor.is_clean(text) is _was_clean(redactor, text), text


def test_a_secret_json_would_escape_still_turns_the_scan_off() -> None:
    redactor = Redactor(['quote"d-secret'])
    assert not redactor.is_clean('{"content":"plain"}')


class _Kind(enum.Enum):
    A = "a"


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"outcome": "done"},
        {"f": 1e300, "g": -0.0, "h": 1.5, "n": 10**30, "b": True, "none": None},
        {"nested": {"list": [1, "two", {"three": [3.0]}], "tuple": (1, 2)}},
        {"path": Path("posts/a.md"), "when": dt.datetime(2026, 11, 27, 16, 0, 1, 5)},
        {"decimal": Decimal("1.10"), "kind": _Kind.A, "set": {1}},
        {"text": "中文 é \u2028 \x00 \ud7ff"},
    ],
)
def test_a_reply_dumps_to_the_text_model_dump_json_gives(data: dict[str, Any]) -> None:
    message = ChatMessage(content="done: x", task_id="abc", state="COMPLETED", data=data,
                          tokens=3, cost=0.25)  # fmt: skip
    text, walked = Redactor().dump(message)
    assert text == message.model_dump_json()
    assert walked is None


def test_a_reply_holding_a_secret_is_still_walked() -> None:
    message = ChatMessage(content="key sk-abcdefghijklmnopqrstu", data={"token": "x"})
    text, walked = Redactor().dump(message)
    assert walked is not None and "sk-abcdefghijklmnopqrstu" not in text
    assert walked["data"] == {"token": "***"} and walked["content"] == "key ***"


class _OwnDump(BaseModel):
    value: int = 1

    def model_dump_json(self, **kwargs: Any) -> str:  # type: ignore[override]
        return '{"own":true}'

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        return {"own": True}


def test_a_model_with_its_own_dump_is_dumped_by_it() -> None:
    assert Redactor().dump(_OwnDump())[0] == '{"own":true}'
    assert model_data(_OwnDump()) == {"own": True}


class _Params(BaseModel):
    topic: str
    when: dt.datetime = dt.datetime(2026, 1, 2, 3, 4, 5)
    path: Path = Path("posts/a.md")
    amount: Decimal = Decimal("1.50")
    kind: _Kind = _Kind.A
    tags: set[str] = {"b"}
    ratio: float = 1e-7
    inner: dict[str, Any] = {"x": (1, 2)}


def test_the_params_dump_is_model_dump_in_json_mode() -> None:
    params = _Params(topic="中文")
    assert model_data(params) == params.model_dump(mode="json")
    assert repr(model_data(params)) == repr(params.model_dump(mode="json"))


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(make_runtime(tmp_path, FunctionModel(StepModel(), chunk_delay=0.001)))
    try:
        yield server
    finally:
        server.stop()


def _raw(port: int, lines: list[str], body: bytes = b"") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(("\r\n".join([*lines, "Connection: close"]) + "\r\n\r\n").encode() + body)
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
    return got


def test_the_fast_routes_stand_in_front_of_the_proxy_headers(live: LiveServer) -> None:
    """uvicorn's proxy headers middleware sits behind the fast routes (a call they answer
    never passes through it), and everything that reaches the app still passes through it:
    a redirect names the scheme a trusted proxy sent."""
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    loaded = live.server.config.loaded_app
    assert isinstance(loaded, FastRoutes)
    assert isinstance(loaded.app, ProxyHeadersMiddleware)
    here = f"127.0.0.1:{live.port}"
    asked = ["GET /v1/tasks/ HTTP/1.1", f"Host: {here}", f"Authorization: Bearer {live.token}"]
    plain = _raw(live.port, asked)
    proxied = _raw(live.port, [*asked, "X-Forwarded-Proto: https", "X-Forwarded-For: 10.1.2.3"])
    assert plain.startswith(b"HTTP/1.1 307"), plain[:200]
    assert f"location: http://{here}/v1/tasks\r\n".encode() in plain.lower()
    assert f"location: https://{here}/v1/tasks\r\n".encode() in proxied.lower()


def test_a_fast_call_from_behind_a_proxy_answers_as_any(live: LiveServer) -> None:
    import json

    here = f"127.0.0.1:{live.port}"
    body = json.dumps({"params": {"topic": "x", "steps": 1}}).encode()
    head = ["POST /v1/skills/Steps/run HTTP/1.1", f"Host: {here}",
            f"Authorization: Bearer {live.token}", "Content-Type: application/json",
            f"Content-Length: {len(body)}"]  # fmt: skip
    for extra in ([], ["X-Forwarded-Proto: https", "X-Forwarded-For: 10.1.2.3"]):
        answer = _raw(live.port, [*head, *extra], body)
        assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
        assert b'"state":"COMPLETED"' in answer
