"""``Redactor.is_clean``: the cheap scan that lets a checkpoint save skip the redaction walk
must never say "clean" when the walk would have changed something."""

from __future__ import annotations

import random

import pytest

from skillrt._io.logs import Redactor
from skillrt._state.records import TaskRecord


def record(**fields: object) -> TaskRecord:
    base: dict[str, object] = {
        "id": "t1",
        "session_id": "s",
        "state": "EXECUTING",
        "raw_input": "write an article about Rust ownership",
        "intent": {"type": "WRITE_ARTICLE", "confidence": 0.9, "tokens": 0},
        "steps": {"outline": "1. intro", "n": [1, 2.5, None, True]},
        "created_at": 1.0,
        "updated_at": 2.0,
    }
    base.update(fields)
    return TaskRecord.model_validate(base)


def walked(redactor: Redactor, rec: TaskRecord) -> TaskRecord:
    return TaskRecord.model_validate(redactor(rec.model_dump()))


def test_a_plain_record_is_clean_and_the_walk_would_not_change_it() -> None:
    redactor = Redactor(["cfg-secret-value-42"])
    rec = record()
    assert redactor.is_clean(rec.model_dump_json())
    assert walked(redactor, rec) == rec


@pytest.mark.parametrize(
    "fields",
    [
        {"raw_input": "use cfg-secret-value-42 please"},
        {"steps": {"a": ["x", {"deep": "…cfg-secret-value-42…"}]}},
        {"raw_input": "my key is sk-abcdefghijklmnopqrstuvwxyz"},
        {"context": {"header": "Bearer abcdefghijklmnopqrstuvwxyz"}},
        {"context": {"api_key": "v"}},
        {"context": {"OPENAI-API-KEY": "v"}},
        {"params": {"Authorization": "v"}},
        {"steps": {"db_password": "v"}},
        {"steps": {"client_secret": "v"}},
        {"progress": {"refresh_token": "v"}},
        {"progress": {"token\n": "v"}},  # the key regex's $ matches before a final newline
        {"result": {"nested": {"ApiKey": "v"}}},
        {"result": {"nested": {"X-API_KEY": "v"}}},
        {"context": {"paſſword": "v"}},  # re.IGNORECASE folds ſ to s; lower() does not
        {"context": {"apİkey": "v"}},  # İ to i
        {"context": {"apıkey": "v"}},  # ı to i
        {"context": {"toKen": "v"}},  # the Kelvin sign to k
        {"raw_input": "用 cfg-secret-value-42 登录"},
        {"context": {"密码_token": "v"}},
    ],
)
def test_anything_the_walk_would_redact_is_not_clean(fields: dict[str, object]) -> None:
    redactor = Redactor(["cfg-secret-value-42"])
    rec = record(**fields)
    assert walked(redactor, rec) != rec  # the walk does redact something here
    assert not redactor.is_clean(rec.model_dump_json())


def test_secrets_from_the_environment_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "plain-env-key-0001")
    redactor = Redactor()
    assert not redactor.is_clean(record(raw_input="x plain-env-key-0001 y").model_dump_json())


@pytest.mark.parametrize("secret", ['with"quote', "back\\slash", "tab\there", "密钥\x00nul"])
def test_a_secret_json_would_escape_turns_the_scan_off(secret: str) -> None:
    redactor = Redactor([secret])
    assert not redactor.is_clean(record().model_dump_json())


def test_text_that_is_not_ascii_is_scanned_too() -> None:
    """Chinese or accented text is clean when it holds nothing to redact (it used to be walked
    always), and not when it holds a secret of its own script."""
    redactor = Redactor(["秘密钥匙-一二三"])
    assert not redactor.is_clean(record(raw_input="用 秘密钥匙-一二三 登录").model_dump_json())
    plain = record(raw_input="用别的登录 café", steps={"大纲": "一、引言", "résumé": ["ü", 1]})
    assert redactor.is_clean(plain.model_dump_json())
    assert walked(redactor, plain) == plain


def test_the_scan_never_calls_clean_what_the_walk_would_change() -> None:
    """Records of random keys and values drawn from secret-key words, their letters in both
    cases and in the characters case folding maps to them, Chinese, accents and key shapes:
    wherever the scan says clean, the walk changes nothing."""
    rng = random.Random(29)
    pieces = [*"apikeytokensecretpasswordauthorization", *"APIKEYTOKEN", "_", "-", "\n",
              "İ", "ı", "ſ", "K", "密", "码", "é", "ß", " ", "sk-", "Bearer ", "x" * 20,
              "api_key", "token", "Secret", "cfg-secret-value-42", "秘密钥匙-一二三"]  # fmt: skip
    redactor = Redactor(["cfg-secret-value-42", "秘密钥匙-一二三"])
    clean = 0
    for _ in range(3000):
        words = ["".join(rng.choices(pieces, k=rng.randint(1, 6))) for _ in range(4)]
        rec = record(context={words[0]: words[1]}, steps={words[2]: words[3]})
        if redactor.is_clean(rec.model_dump_json()):
            clean += 1
            assert walked(redactor, rec) == rec, words
    assert clean > 100  # the scan does say clean, often


def test_words_that_only_look_like_secret_keys_are_clean() -> None:
    redactor = Redactor()
    rec = record(raw_input="a token of thanks, secrets of APIs", steps={"tokens": 3, "keys": "x"})
    assert walked(redactor, rec) == rec
    assert redactor.is_clean(rec.model_dump_json())


def test_the_walk_copies_containers_and_keeps_scalars() -> None:
    redactor = Redactor(["cfg-secret-value-42"])
    inner = {"note": "cfg-secret-value-42", "n": 3, "ok": None}
    value = {"api_key": "v", "empty_token": "", "list": [inner, 2.5], "t": ("a",), "b": True}
    out = redactor(value)
    assert out == {
        "api_key": "***",
        "empty_token": "",
        "list": [{"note": "***", "n": 3, "ok": None}, 2.5],
        "t": ["a"],
        "b": True,
    }
    assert out["list"][0] is not inner and value["list"][0] is inner  # nothing changed in place


def test_dump_gives_a_models_text_as_it_is_or_redacted_with_its_walked_dump() -> None:
    import json

    from skillrt.messages import ChatMessage

    redactor = Redactor(["tok-0123456789abcdef"])
    plain = ChatMessage(content="done: rust", task_id="t1", data={"n": 1})
    text, walked = redactor.dump(plain)
    assert text == plain.model_dump_json() and walked is None
    for content, data in (
        ("the token is tok-0123456789abcdef", {}),
        ("中文 tok-0123456789abcdef", {}),
        ("fine", {"api_key": "abc123", "auth": "Bearer abcdefghijklmnop1234"}),
    ):
        message = ChatMessage(content=content, task_id="t1", data=data)
        text, walked = redactor.dump(message)
        assert walked is not None and json.loads(text) == walked
        assert "tok-0123" not in text and "abc123" not in text and "abcdefghijklmnop" not in text
        assert walked["task_id"] == "t1" and "***" in text


def test_texts_too_short_for_a_secret_or_a_key_shape_are_left_and_no_longer_ones_are_not() -> None:
    shortest_shape = "sk-" + "a" * 16
    redactor = Redactor(["tok-0123456789abcdef-long"])
    assert redactor.text("PLANNING") == "PLANNING"
    assert redactor.text(shortest_shape) == "***"
    assert redactor.text("Bearer " + "b" * 16) == "***"
    short = Redactor(["abcd"])  # the shortest secret looked for: 4 characters
    assert short.text("abcd") == "***" and short.text("xabcdx") == "x***x"
    assert short.text("abc") == "abc"
    short.add("zz")  # below MIN_SECRET_CHARS: not looked for, the bound stays
    assert short.text("abcd") == "***"
    later = Redactor()
    later.add("wxyz")  # a secret added later lowers the bound
    assert later.text("wxyz") == "***"


def test_a_text_scanned_from_where_it_differs_is_called_clean_exactly_as_whole() -> None:
    """``clean_after``: a text that starts as a clean one did is scanned from a little before
    where it may differ, and its answer is ``is_clean``'s of the whole text, whatever it
    holds and wherever its part alike is said to end (too early, exactly, too late, wrong)."""
    rng = random.Random(39)
    pieces = ['"token"', '"api_key"', 'token\\n"', "sk-" + "a" * 20, "Bearer " + "b" * 20,
              "sk-", "Bearer", "\u0130", "\u017f", "\u212a", "é", "正文", "\\n", '"', ",", "{",
              "}", "password", "secret", "toke", 'n"', "cfg-secret-", "value-42", "秘密",
              "钥匙-一二三", "authorization", 'ion\\n"', "AUTHORIZATION", "Token",
              "abcd"]  # fmt: skip

    def text(length: int, odd: float) -> str:
        return "".join(
            rng.choice(pieces) if rng.random() < odd else rng.choice('abcdefgh ,:{}"1')
            for _ in range(rng.randint(0, length))
        )

    seen: dict[bool, int] = {True: 0, False: 0}
    for _ in range(20_000):
        secrets = rng.sample(["cfg-secret-value-42", "秘密钥匙-一二三", "abcd", "x1y2z3w4v5"], 2)
        redactor = Redactor(secrets[: rng.randint(0, 2)])
        key = redactor.scan_key
        assert key is not None
        odd = rng.choice([0.01, 0.03, 0.08])
        before = text(200, odd)
        if not redactor.is_clean(before):
            continue
        after = before
        for _ in range(rng.randint(1, 3)):
            at, cut = rng.randint(0, len(after)), rng.randint(0, 5)
            after = after[:at] + text(20, odd) + after[at + cut :]
        alike = 0
        while alike < min(len(before), len(after)) and before[alike] == after[alike]:
            alike += 1
        alike = rng.choice(
            [alike, max(0, alike - rng.randint(0, 10)), alike + rng.randint(1, 10), -1]
        )
        expected = redactor.is_clean(after)
        assert redactor.clean_after(before, after, alike, key) is expected, (before, after)
        seen[expected] += 1
    assert min(seen.values()) > 1_000


def test_the_scan_key_changes_with_what_is_looked_for() -> None:
    """A caller keeping a text found clean keeps the ``scan_key`` it was found clean with: a
    secret added gives a new key (the kept text may hold it), a secret known already does
    not, and a secret the scan cannot look for in JSON gives none."""
    redactor = Redactor(["cfg-secret-value-42"])
    key = redactor.scan_key
    assert key is not None and key[0] >= len("cfg-secret-value-42")  # how far one reaches
    redactor.add("cfg-secret-value-42")
    assert redactor.scan_key is key
    longer = "a-much-longer-secret-than-any-word-looked-for" * 3
    redactor.add(longer)
    assert redactor.scan_key is not key
    assert redactor.scan_key is not None and redactor.scan_key[0] >= len(longer)
    redactor.add('quote"d-secret')
    assert redactor.scan_key is None
