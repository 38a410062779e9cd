"""The embedded model's tokens made text (``skillrt.llm.llama_stream``), and the engine and
worker that use it: bytes that are not UTF-8 do not stall a generation, and a worker whose
runtime has gone stops generating."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillrt.llm.llama_stream import TextStream
from skillrt.llm.shipped import default_model_path

REPLACEMENT = "\ufffd"


def test_a_character_split_over_tokens_is_shown_when_it_is_whole() -> None:
    stream = TextStream()
    data = "生命周期".encode()
    shown = [stream.feed(data[i : i + 1]) for i in range(len(data))]
    assert shown == ["", "", "生", "", "", "命", "", "", "周", "", "", "期"]
    assert stream.finish() == ""


def test_bytes_that_are_not_utf8_become_a_replacement_and_the_text_goes_on() -> None:
    """What llama-cpp-python's own streaming never gets past: half a character, then more."""
    stream = TextStream()
    assert stream.feed(b"\xe7\x94") == ""  # the first two bytes of 生
    assert stream.feed(b" and then") == REPLACEMENT + " and then"
    assert stream.feed(b" more") == " more"  # each token's text at once, nothing held
    assert stream.feed("。".encode()) == "。"
    assert not stream.stopped


def test_a_character_left_open_at_the_end_is_dropped() -> None:
    """The generation stopped inside it (its length limit): no U+FFFD at the end."""
    stream = TextStream()
    assert stream.feed(b"ok \xe7") == "ok "
    assert stream.finish() == ""


def test_a_stop_string_ends_the_text_and_is_never_shown() -> None:
    stream = TextStream(["<|im_end|>"])
    assert stream.feed(b"Hello <|im") == "Hello "  # could be the stop string: held
    assert stream.feed(b"_end|> and more") == ""
    assert stream.stopped
    assert stream.feed(b"after") == ""
    assert stream.finish() == ""


def test_a_held_start_that_is_not_a_stop_string_is_shown_after_all() -> None:
    stream = TextStream(["<|im_end|>"])
    assert stream.feed(b"a <|i") == "a "
    assert stream.feed(b"x") == "<|ix"
    assert stream.feed(b" <") == " "
    assert stream.finish() == "<"
    assert not stream.stopped


def test_a_stop_string_inside_one_piece() -> None:
    stream = TextStream(["</s>", "<|im_end|>"])
    assert stream.feed(b"done.<|im_end|>garbage</s>") == "done."
    assert stream.stopped


# --- the real model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    from skillrt.llm.llama_engine import LlamaEngine

    path = default_model_path()
    assert path is not None
    loaded = LlamaEngine(path, mode="default", n_ctx=2048, seed=3)
    loaded.load()
    yield loaded
    loaded.close()


@pytest.mark.local_model
def test_the_models_own_tokens_for_half_a_character_do_not_stall_the_text(engine: Any) -> None:
    """The model writes most Chinese characters as two or three byte tokens (命 is two). Its
    first half followed by anything else is what the library's streaming never got past."""
    llama = engine._llama
    half = llama.tokenize("命".encode(), add_bos=False)[:1]
    assert llama.detokenize(half) == "命".encode()[:2]
    rest = llama.tokenize(b" and the rest of the sentence.", add_bos=False)
    stream = TextStream()
    shown = [stream.feed(llama.detokenize([token])) for token in half + rest]
    assert shown[0] == ""
    assert "".join(shown) + stream.finish() == REPLACEMENT + " and the rest of the sentence."
    assert all(shown[1:])  # every later token's text came with it


@pytest.mark.local_model
def test_the_engine_writes_what_the_librarys_own_completion_writes(engine: Any) -> None:
    """The engine runs the token loop itself, with the prompt, stop strings and sampling it
    takes from llama-cpp-python's chat handler: at temperature 0 the text is the library's."""
    messages = [
        {"role": "system", "content": "You are brief."},
        {"role": "user", "content": "Name three colours of the rainbow."},
    ]
    pieces: list[str] = []
    # Both from an empty cache: a prompt evaluated again after a cached prefix is computed in
    # other batches, and a 135M model's greedy choice can differ on that alone.
    engine._llama.reset()
    ours = engine.generate(
        messages,
        max_tokens=48,
        temperature=0.0,
        repeat_penalty=1.1,
        schema=None,
        emit=pieces.append,
        stop=threading.Event(),
    )
    engine._llama.reset()
    theirs = engine._llama.create_chat_completion(
        messages=messages, max_tokens=48, temperature=0.0, repeat_penalty=1.1, seed=engine.seed
    )
    assert ours.content == theirs["choices"][0]["message"]["content"]
    assert ours.finish_reason == theirs["choices"][0]["finish_reason"]
    assert ours.completion_tokens == theirs["usage"]["completion_tokens"]
    assert "".join(pieces) == ours.content
    assert "<|im_end|>" not in ours.content


@pytest.mark.local_model
def test_a_schema_still_constrains_the_engines_own_loop(engine: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"colour": {"type": "string", "enum": ["red", "green", "blue"]}},
        "required": ["colour"],
    }
    result = engine.generate(
        [{"role": "user", "content": "Pick a colour. Answer in JSON."}],
        max_tokens=40,
        temperature=0.0,
        repeat_penalty=1.0,
        schema=schema,
        emit=lambda _text: None,
        stop=threading.Event(),
    )
    assert json.loads(result.content)["colour"] in {"red", "green", "blue"}


# --- the worker process -----------------------------------------------------------------------


def _worker() -> subprocess.Popen[str]:
    path = default_model_path()
    assert path is not None
    args = {"mode": "default", "model_path": str(path), "n_ctx": 2048, "n_threads": None}
    root = str(Path(__file__).resolve().parent.parent)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "skillrt.llm.llama_worker", json.dumps(args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def _next_event(worker: subprocess.Popen[str]) -> dict[str, Any]:
    assert worker.stdout is not None
    line = worker.stdout.readline()
    assert line, "the worker ended without a word"
    event: dict[str, Any] = json.loads(line)
    return event


@pytest.mark.local_model
def test_a_worker_whose_runtime_has_gone_stops_generating_and_ends() -> None:
    """Stdin closes when the runtime exits or is killed. The worker used to go on with the
    generation it had (a worker left by a killed ``skillrt run`` spun for 14 minutes)."""
    worker = _worker()
    assert worker.stdin is not None
    try:
        worker.stdin.write(json.dumps({"op": "load"}) + "\n")
        worker.stdin.flush()
        assert _next_event(worker)["ev"] == "ready"
        command = {
            "op": "generate",
            "id": 1,
            "messages": [{"role": "user", "content": "Tell me a very long story about a fox."}],
            "max_tokens": 1000,
            "temperature": 0.0,
            "repeat_penalty": 1.0,
        }
        worker.stdin.write(json.dumps(command) + "\n")
        worker.stdin.flush()
        assert _next_event(worker)["ev"] == "delta"  # it is generating
        worker.stdin.close()  # the runtime goes
        deltas = 0
        while (event := _next_event(worker))["ev"] == "delta":
            deltas += 1
        assert event["ev"] == "done"
        assert event["finish"] is None  # stopped: not "length" after its 1,000 tokens
        assert event["completion_tokens"] < 200
        assert deltas < 200
        assert worker.wait(timeout=60) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        for pipe in (worker.stdin, worker.stdout):
            if pipe is not None:
                pipe.close()
