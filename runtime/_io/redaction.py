"""Redaction: API keys, configured secrets and key-shaped strings become ``***`` in what people
see (logs, history, events). What a step returns to a skill is never redacted (see
``checkpointing``). Importing this loads no logging library.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, MutableMapping
from functools import lru_cache
from typing import Any, Protocol

from pydantic_core import to_json

from skillrt._io.modeljson import model_json

__all__ = ["MIN_SECRET_CHARS", "REDACTED", "RedactingFilter", "Redactor", "StreamRedactor"]

REDACTED = "***"
MIN_SECRET_CHARS = 4
"""Shorter secrets are not looked for: they would match ordinary text."""
_SECRET_KEYS = re.compile(r"(api[_-]?key|authorization|password|secret|token)$", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _is_secret_key(key: str) -> bool:
    # Cached: the same few keys (a task record's, a log event's) come back at every save and
    # log line, and without the cache the regex search per key is most of the cost of
    # redacting a record.
    return _SECRET_KEYS.search(key) is not None


# What _SECRET_KEYS matches, as plain lowercase words: finding these in the lowercased text is
# the same test, in any text without a character of _FOLDS_TO_ASCII. Those are the only ones
# re.IGNORECASE matches to an ASCII letter of _SECRET_KEYS besides that letter's two cases
# (found by trying every code point): "paſſword" is a secret's key to the regex, not to
# lower(). Text with none of them may be Chinese, accented, anything: it is scanned, not
# walked (a checkpoint of a Chinese task cost 2.8x an English one's when any non-ASCII
# character meant a walk).
_FOLDS_TO_ASCII = re.compile("[\u0130\u0131\u017f\u212a]")  # İ ı ſ and the Kelvin sign
_SECRET_KEY_WORDS = ("apikey", "api_key", "api-key", "authorization", "password", "secret", "token")


# What ``is_clean`` looks for in lowercased ASCII JSON text for a key _SECRET_KEYS matches: one of
# the words right before a closing quote, or before an escaped final newline (which ``$``
# allows) and its quote. Tested with ``in`` (no method call, no argument parsing, no loop of
# finds): 8 tests in most texts, which hold no escaped newline before a quote.
_KEY_ENDS = tuple(word + '"' for word in _SECRET_KEY_WORDS)
_KEY_NEWLINE_ENDS = tuple(word + '\\n"' for word in _SECRET_KEY_WORDS)
# The longest of what ``is_clean`` looks for besides the secrets (``authorization\\n"``).
_LONGEST_LOOKED_FOR = max(len(end) for end in _KEY_NEWLINE_ENDS)


# Key shapes worth catching even when nobody configured them (OpenAI-style, bearer tokens).
_KEY_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{16,}|Bearer\s+[A-Za-z0-9._\-]{16,})")
# The end of a text that may be the start of a key shape, still growing (``sk-abc`` before the
# rest of the key arrives), or of the words that begin one: a stream holds it back.
_SHAPE_TAIL = re.compile(
    r"(?:\bsk-[A-Za-z0-9_\-]*|\bBearer\s*[A-Za-z0-9._\-]*"
    r"|\bsk?|\bB(?:e(?:a(?:r(?:er?)?)?)?)?)$"
)
_SHORTEST_SHAPE = len("sk-") + 16  # what _KEY_SHAPES matches is never shorter
_PLAIN = frozenset({int, float, bool, type(None)})  # nothing to redact in these
_ENV_SECRETS = ("OPENAI_API_KEY", "SKILLRT_LLM__API_KEY", "SKILLRT_BROWSER__SEARCH__API_KEY")


class _Model(Protocol):  # a pydantic model, as ``Redactor.dump`` uses it
    def model_dump_json(self) -> str: ...

    def model_dump(self, *, mode: str) -> dict[str, Any]: ...


class Redactor:
    """Replaces secret values (configured, from the environment, or key-shaped) with ``***``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: list[str] = []
        self._shortest = _SHORTEST_SHAPE  # no shorter text holds anything to redact
        self._json_scan = True
        self.scan_key: tuple[int] | None = (_LONGEST_LOOKED_FOR,)
        self._take([*secrets, *(os.environ.get(name, "") for name in _ENV_SECRETS)])

    def add(self, secret: str) -> None:
        """Redact ``secret`` too from now on (the serve token, known once the server starts)."""
        self._take([secret])

    def _take(self, values: Iterable[str]) -> None:
        new = {s for s in values if len(s) >= MIN_SECRET_CHARS} - set(self._secrets)
        if not new:
            return
        self._secrets = sorted([*self._secrets, *new], key=len, reverse=True)
        self._shortest = min(_SHORTEST_SHAPE, len(self._secrets[-1]))
        # A secret JSON would escape (quotes, backslashes, control characters) might not be
        # found in JSON text as it is: then ``is_clean`` always says no.
        if not all(s.isprintable() and '"' not in s and "\\" not in s for s in new):
            self._json_scan = False
        # A new object at every change of what ``is_clean`` looks for (see ``clean_after``).
        reach = max(_LONGEST_LOOKED_FOR, len(self._secrets[0]))
        self.scan_key = (reach,) if self._json_scan else None

    def text(self, value: str) -> str:
        if len(value) < self._shortest:  # too short to hold a secret or a key shape
            return value
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        if "sk-" in value or "Bearer" in value:
            value = _KEY_SHAPES.sub(REDACTED, value)
        return value

    def stream(self) -> StreamRedactor:
        """A redactor for one text that arrives in pieces (a model's streamed answer): a secret
        split across two pieces is redacted all the same."""
        return StreamRedactor(self)

    def held_from(self, text: str) -> int:
        """Where the end of ``text`` that may be the start of a secret (a prefix of a secret
        value, or a key shape that may still grow) begins; ``len(text)`` when none may."""
        cut = len(text)
        for secret in self._secrets:
            for k in range(min(len(secret) - 1, len(text)), 0, -1):
                if text.endswith(secret[:k]):
                    cut = min(cut, len(text) - k)
                    break
        tail = _SHAPE_TAIL.search(text)
        if tail is not None:
            cut = min(cut, tail.start())
        return cut

    def holds_nothing(self, text: str) -> bool:
        """True when ``text(text)`` would give ``text`` back unchanged: no secret value in it,
        nothing that may be key-shaped. Many texts joined are scanned at once this way: a
        secret in none of them is not in their join either (False may be a false alarm)."""
        if "sk-" in text or "Bearer" in text:
            return False
        return all(secret not in text for secret in self._secrets)

    def is_clean(self, json_text: str) -> bool:
        """True when JSON text certainly holds nothing to redact: no secret value, nothing
        key-shaped, no key named like a secret. A cheap scan that lets a caller skip the walk
        of ``__call__``; False may be a false alarm (then walk). Text holding one of the few
        characters ``re.IGNORECASE`` folds to an ASCII letter that ``lower()`` does not give
        (İ ı ſ, and the Kelvin sign) is never called clean: the walk decides."""
        if not self._json_scan:
            return False
        if not json_text.isascii() and _FOLDS_TO_ASCII.search(json_text) is not None:
            return False
        if "sk-" in json_text or "Bearer" in json_text:
            return False
        for secret in self._secrets:  # a loop, not any(): no generator at every reply
            if secret in json_text:
                return False
        lowered = json_text.lower()
        for end in _KEY_ENDS:
            if end in lowered:
                return False
        if '\\n"' in lowered:
            for end in _KEY_NEWLINE_ENDS:
                if end in lowered:
                    return False
        return True

    def clean_after(self, before: str, after: str, alike: int, key: tuple[int]) -> bool:
        """``is_clean(after)`` for a JSON text ``after`` that starts with the same ``alike``
        characters as a text ``before`` that ``is_clean`` called clean while ``scan_key`` was
        ``key`` (the caller checks it still is): only ``after`` from where it may differ is
        scanned, from as far before that as the longest thing looked for reaches. Exact:
        what ``after`` holds within its first ``alike`` characters ``before`` holds too.
        (``alike`` is checked: if the two differ within it, ``after`` is scanned whole.)"""
        if alike <= 0 or not after.startswith(before[:alike]):
            return self.is_clean(after)
        return self.is_clean(after[max(0, alike - key[0] + 1) :])

    def dump(self, model: _Model) -> tuple[str, dict[str, Any] | None]:
        """A pydantic model as it may leave the process: its JSON text, redacted, and its
        redacted ``model_dump(mode="json")``, or None for that when nothing needed redacting
        (most replies: the model's own text passed the cheap scan, and the model itself may
        go as it is). The one place the HTTP API's replies and the MCP server's are redacted."""
        text = model_json(model)  # (its serializer called directly: see ``modeljson``)
        if self.is_clean(text):
            return text, None
        walked: dict[str, Any] = self(model.model_dump(mode="json"))
        return to_json(walked, fallback=str).decode(), walked

    def __call__(self, value: Any) -> Any:
        """Redact a JSON-like value (strings inside dicts and lists, keys named like secrets)."""
        kind = type(value)
        if kind is dict:
            return self.fields(value)
        if kind is str:
            return self.text(value)
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return self.fields(value)
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        return value

    def fields(self, value: dict[Any, Any]) -> dict[Any, Any]:
        """``__call__`` of a dict: the hot walk (every event's data, every log line). Exact
        types first, without a call per value; a string shorter than any secret or key shape
        is kept as it is."""
        shortest, secret_key = self._shortest, _is_secret_key
        out: dict[Any, Any] = {}
        for k, v in value.items():
            kind = type(v)
            if kind is str or (kind not in _PLAIN and isinstance(v, str)):
                if v and isinstance(k, str) and secret_key(k):
                    out[k] = REDACTED
                else:
                    out[k] = v if len(v) < shortest else self.text(v)
            elif kind in _PLAIN:
                out[k] = v
            elif kind is dict:
                out[k] = self.fields(v)
            elif isinstance(v, dict | list | tuple):
                out[k] = self(v)
            else:
                out[k] = v
        return out

    def processor(
        self, _logger: Any, _name: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        redacted: MutableMapping[str, Any] = self(dict(event_dict))
        return redacted


class StreamRedactor:
    """``feed(piece)`` gives what of the text so far may be shown now, redacted; it holds
    back an end that may be the start of a secret until the next piece says what it is.
    ``flush()`` gives the rest, at the end of the text."""

    __slots__ = ("_held", "_redactor")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._held + piece
        cut = self._redactor.held_from(text)
        self._held = text[cut:]
        return self._redactor.text(text[:cut]) if cut else ""

    def flush(self) -> str:
        text, self._held = self._held, ""
        return self._redactor.text(text)


class RedactingFilter(logging.Filter):
    """A stdlib handler filter that redacts each record's message and traceback (the CLI puts
    one on its handler, so other libraries' log lines are redacted too)."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redactor.text(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.text(record.stack_info)
        return True
