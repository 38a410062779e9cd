"""The trained intent classifier: character and word n-grams and a linear model, in pure Python.

``features(text, context)`` turns a request into n-gram features: Chinese characters and their
pairs and triples, English words and word pairs, and character 3- and 4-grams of each English
word (so a typo keeps most of its word's features); paths and URLs are replaced by a marker, and
the route context (a post in focus, a selection, a browsing task before) adds one feature each.
``IntentClassifier`` holds a multinomial logistic regression over them, trained by
``scripts/train_router.py`` from ``data/routing/`` and shipped as ``intent_model.json.gz`` (int8
weights, a temperature fitted on a validation split so its probabilities are calibrated).
Inference is a sum of a few hundred weights and one softmax: well under a millisecond.
"""

from __future__ import annotations

import base64
import functools
import gzip
import itertools
import json
import math
import re
import struct
import unicodedata
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

__all__ = ["IntentClassifier", "features"]

_PATH = re.compile(r"[A-Za-z0-9_~][A-Za-z0-9_./~-]*\.(?:md|markdown|mdx)\b")
_URL = re.compile(
    r"https?://\S+|(?<![\w@.])(?:www\.)?(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|cn|ai|app|rs)\b\S*"
)
_CODE = re.compile(r"[{}();=<>\[\]]|=>|::|\bdef\b|\bfn\b|\bconst\b|\breturn\b")
# Code quoted or pasted into a sentence (pass 6): an inline span in backticks, a shell pipeline,
# a command-line flag, an SQL query. Each alone marks the request as holding code, which the
# count of code characters above missed ("what does `git rebase -i HEAD~3` do?").
_SNIPPET = re.compile(
    r"`[^`\n]{2,}`|\|\s*(?:xargs|grep|wc|sort|head|tail|awk|sed|cut|uniq|less|tee)\b|"
    r"(?:^|\s)--?[a-z][a-z-]*(?=\s|$)|"
    r"\bselect\s+[\w*, ()]+\s+from\s+\w"
)
# A title in title marks (《Rust 所有权》, 「…」) is a name, not a word of the request: like a
# path or a URL it becomes a marker (pass 6: "把标题为《周报》的文章删除" was a new post).
_TITLE = re.compile(r"《[^》]{1,200}》|「[^」]{1,200}」")
_WORD = re.compile(r"[a-z][a-z0-9_'+#-]*|\d+")
_CJK = re.compile(r"[\u3400-\u9fff]+")


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    if "." in text or "://" in text:  # every URL and path holds one of them
        text = _URL.sub(" zzurl ", text)
        text = _PATH.sub(" zzpath ", text)
    if not text.isascii():  # title marks are not ASCII
        text = _TITLE.sub(" zztitle ", text)
    return " ".join(text.split())


def _grams(word: str) -> tuple[str, ...]:
    """A word's character 3- and 4-grams, padded (none for a short word or a marker). The
    words of requests repeat, so a word of ordinary length is cut into grams once (an LRU);
    a longer one (a hash, a run of letters) is cut each time, so the cache stays small."""
    if len(word) <= 3 or word.startswith("zz"):
        return ()
    return _cut(word) if len(word) > _CACHED_WORD else _cut_cached(word)


def _cut(word: str) -> tuple[str, ...]:
    padded = f"<{word}>"
    return tuple("g:" + padded[j : j + n] for n in (3, 4) for j in range(len(padded) - n + 1))


_CACHED_WORD = 24  # at most 4,096 words of at most 24 letters: ~45 grams each, a few MB in all
_cut_cached = functools.lru_cache(maxsize=4096)(_cut)


def features(text: str, context: Mapping[str, Any] | None = None) -> list[str]:
    """The request's n-gram features (each once), in a stable order."""
    clean = _clean(text[:600])
    found: list[str] = []
    add, add_all = found.append, found.extend
    words = _WORD.findall(clean)
    before = None
    for word in words:
        add("w:" + word)
        if before is not None:
            add("b:" + before + " " + word)
        add_all(_grams(word))
        before = word
    if words:
        add("w0:" + words[0])
    out = dict.fromkeys(found)
    out.update(dict.fromkeys(_rest(clean, context)))
    return list(out)


def _feature_set(text: str, context: Mapping[str, Any] | None) -> set[str]:
    """``set(features(text, context))``, made faster: each word's own features are cut once
    (``_word_features``) and the pairs of words in one comprehension."""
    clean = _clean(text[:600])
    words = _WORD.findall(clean)
    out: set[str] = set()
    update = out.update
    for word in words:
        update(_word_features(word) if len(word) <= _CACHED_WORD else _own(word))
    if words:
        out.add("w0:" + words[0])
        if len(words) > 1:
            update(["b:" + a + " " + b for a, b in itertools.pairwise(words)])
    update(_rest(clean, context))
    return out


def _own(word: str) -> tuple[str, ...]:
    """A word's features that need no other word: itself and its character n-grams."""
    return ("w:" + word, *_grams(word))


_word_features = functools.lru_cache(maxsize=4096)(_own)


def _rest(clean: str, context: Mapping[str, Any] | None) -> list[str]:
    """The features that are not of English words, in order: Chinese characters (1-, 2- and
    3-grams, the first two characters), a question, code, the route context."""
    out: list[str] = []
    if not clean.isascii():  # Chinese characters are not ASCII
        for run in _CJK.findall(clean):
            out += ["c1:" + ch for ch in run]
            if len(run) > 1:
                out += ["c2:" + run[j : j + 2] for j in range(len(run) - 1)]
                out += ["c3:" + run[j : j + 3] for j in range(len(run) - 2)]
        if clean[:1] and _CJK.match(clean[:2] or "x"):
            out.append("c0:" + clean[:2])
    if clean.endswith(("?", "？", "吗", "呢")):
        out.append("q:end")
    if _holds_code(clean):
        out.append("x:code")
    if context:
        if context.get("focus") or context.get("current_file"):
            out.append("x:focus")
        if context.get("has_selection") or context.get("selected_text"):
            out.append("x:selection")
        if context.get("browsing"):
            out.append("x:browsing")
    return out


_CODE_CHARS = "{}();=<>[]"
_CODE_CHAR = re.compile("[" + re.escape(_CODE_CHARS) + "]")
_CODE_WORD = re.compile(r"\bdef\b|\bfn\b|\bconst\b|\breturn\b")


def _holds_code(clean: str) -> bool:
    """``len(_CODE.findall(clean)) >= 3 or _SNIPPET.search(clean)``, counted faster. Of
    ``_CODE``'s matches, each is one character of ``_CODE_CHARS`` (``=>`` never matches: its
    ``=`` is taken first), a ``::`` (found left to right, as ``str.count`` counts) or one of
    the words, and none overlaps another: so their number is the sum of those counts. And
    every match of ``_SNIPPET`` holds a backtick, a bar, ``select`` or a hyphen at the start
    or after a space (``clean`` is the text ``_clean`` gives: its only whitespace is single
    spaces)."""
    count = len(_CODE_CHAR.findall(clean))  # characters of _CODE_CHARS
    if count < 3:
        count += clean.count("::")
    if count < 3 and ("def" in clean or "fn" in clean or "const" in clean or "return" in clean):
        count += len(_CODE_WORD.findall(clean))
    if count >= 3:
        return True
    if "`" in clean or "|" in clean or " -" in clean or clean[:1] == "-" or "select" in clean:
        return _SNIPPET.search(clean) is not None
    return False


class IntentClassifier:
    """A multinomial logistic regression over ``features``: ``probabilities(text, context)``
    gives each intent's calibrated probability, ``top(text, context, k)`` the best ``k``."""

    __slots__ = (
        "_fields",
        "_last",
        "_rows",
        "_width",
        "bias",
        "classes",
        "held_out",
        "scale",
        "temperature",
    )

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.classes: tuple[str, ...] = tuple(data["classes"])
        self.bias: tuple[float, ...] = tuple(float(b) for b in data["bias"])
        self.scale = float(data["scale"])
        self.temperature = float(data["temperature"])
        self.held_out: Mapping[str, Any] = data.get("report", {})
        names = data["features"].split("\n") if data["features"] else []
        width = len(self.classes)
        raw = base64.b64decode(data["weights"])
        if len(raw) != width * len(names) or len(self.bias) != width:
            raise ValueError("intent model: the weights do not match its classes and features")
        self._rows = _packed_rows(raw, width, names)
        self._width = (width + 1) * (_FIELD // 8)  # bytes of a packed row, with its count
        self._fields = struct.Struct(f"<{width + 1}I").unpack  # its columns, lowest first
        self._last: tuple[tuple[str, bool, bool, bool], tuple[float, ...]] | None = None

    @classmethod
    def packaged(cls) -> IntentClassifier:
        """The classifier shipped in the package (loaded once per process)."""
        return _packaged()

    @staticmethod
    def packaged_loaded() -> bool:
        """Whether ``packaged()`` has loaded the classifier in this process already."""
        return _packaged.cache_info().currsize > 0

    def probabilities(
        self, text: str, context: Mapping[str, Any] | None = None
    ) -> dict[str, float]:
        return dict(zip(self.classes, self._probabilities(text, context), strict=True))

    def _probabilities(self, text: str, context: Mapping[str, Any] | None) -> tuple[float, ...]:
        """Each class's probability, in the order of ``classes``. The last answer is kept: one
        input is often asked about twice (routed, then offered choices), and the answer
        depends only on the text and the three context features."""
        key = (
            text,
            bool(context and (context.get("focus") or context.get("current_file"))),
            bool(context and (context.get("has_selection") or context.get("selected_text"))),
            bool(context and context.get("browsing")),
        )
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        found = _feature_set(text, context)
        # Each known feature's row is one integer (``_packed_rows``): one sum adds every
        # column at once, exactly, and the columns are read back from its bytes at once. An
        # unknown feature adds 0; the last column counts the known ones (each row holds 1
        # there), so no set of the known features is built.
        packed = sum(map(self._rows.get, found, _ZEROS))
        *fields, known = self._fields(packed.to_bytes(self._width, "little"))
        offset = _OFFSET * known
        norm = self.scale / math.sqrt(max(len(found), 1))
        temperature = self.temperature
        logits = [
            (b + (f - offset) * norm) / temperature for b, f in zip(self.bias, fields, strict=True)
        ]
        top = max(logits)
        exps = [math.exp(v - top) for v in logits]
        total = sum(exps)
        probs = tuple([e / total for e in exps])
        self._last = (key, probs)
        return probs

    def top(
        self,
        text: str,
        context: Mapping[str, Any] | None = None,
        k: int = 3,
        among: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` likeliest intents (of ``among`` when given), best first."""
        probs = self.probabilities(text, context)
        ranked = sorted(probs.items(), key=lambda item: -item[1])
        if among is not None:
            allowed = set(among)
            ranked = [item for item in ranked if item[0] in allowed]
        return ranked[:k]


_FIELD = 32  # bits per column of a packed row: room for the sum of 2**24 rows of weights
_OFFSET = 128  # an int8 weight w is kept as w + 128, never negative, so fields never borrow


def _packed_rows(raw: bytes, width: int, names: Sequence[str]) -> dict[str, int]:
    """Each feature's row of ``width`` int8 weights as one integer, column ``k`` in bits
    ``32k`` to ``32k + 31`` holding the weight plus 128, and a last column holding 1.
    Adding rows adds their columns exactly (a column of n rows sums to at most 255n, far
    below 2**32), so a request's scores, and how many of its features are known, are one
    ``sum`` of a few dozen integers rather than a Python loop per weight."""
    shifted = raw.translate(_PLUS_128)  # int8 w as the byte w + 128, in C
    size = _FIELD // 8
    step = (width + 1) * size
    fields = bytearray(len(names) * step)  # each byte widened to a 32-bit field
    for k in range(width):  # column k of every row, in C
        fields[k * size :: step] = shifted[k::width]
    fields[width * size :: step] = b"\x01" * len(names)  # the count column
    return {
        name: int.from_bytes(fields[i * step : (i + 1) * step], "little")
        for i, name in enumerate(names)
    }


_ZEROS = itertools.repeat(0)  # the default of ``dict.get`` for every feature: an unknown adds 0


_PLUS_128 = bytes((b + 128) % 256 for b in range(256))


@functools.cache
def _packaged() -> IntentClassifier:
    ref = resources.files("skillrt._routing").joinpath("intent_model.json.gz")
    return IntentClassifier(json.loads(gzip.decompress(ref.read_bytes())))
