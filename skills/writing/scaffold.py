"""The writing skills' own prompt lines, found again in what a model answered.

A small model often copies its prompt into its answer: "Write section 1 of 3: …", "(topic: …;
style: technical blog post)", "Key points:", "Related posts you may link:", a related post's
excerpt. The skills know every prompt they send, so ``Scaffold`` is built from the prompt
itself: a line of the answer that is a copy of a prompt line bearing one of the skills' markers
(``prompts.SCAFFOLD_MARKERS``), and the list items or excerpt lines of the prompt that follow
it, are unambiguous and are stripped; so is a line in the shape of the prompt's related-post
items (``- Title (posts/x.md) — link: [[...]]``, whatever its title or link) with the quoted
snippet lines under it; so is an exact copy of the prompt's ``(topic: …; style:
…)`` fragment, and of a context excerpt, and a line that opens with the retry note
("Important: the first answer was refused …", its end reworded as a small model does, or
its "Important:" left off), or that holds its closing sentence ("Write only the text asked for
above"). A
marker left anywhere else (inside a sentence, with other words around it) is ambiguous: the
check fails rather than guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .prompts import RELATED_ITEM, SCAFFOLD_MARKERS

__all__ = [
    "Scaffold",
    "Stripped",
    "alike",
    "without_echo",
    "without_retry_note",
    "without_retry_talk",
]

_MARKERS = tuple(re.compile(marker, re.IGNORECASE | re.MULTILINE) for marker in SCAFFOLD_MARKERS)
_PREFIX = re.compile(r"^[\s>*+#\-\d.)、]*")
_RELATED_ITEM = re.compile(RELATED_ITEM)
_QUOTE = re.compile(r"^\s*>")
# The prompt's article label alone on a line ("文章：", "Article:"), its title cut off.
_LABEL_LINE = re.compile(r"^\W*(?:Article|文章)[:：][ \t]*$", re.I)
_BLANKS = re.compile(r"\n{3,}")
MIN_EXCERPT_CHARS = 40  # a prompt line this long, copied whole, is a context excerpt
MIN_COPIED_RUN = 3  # so many lines in a row, each a prompt line, are the prompt copied
# ``prompts.RETRY_NOTE`` and the Chinese article's, normalised; the embedded model also opened a
# line of its own with "The first answer was refused (…)", the note's "Important:" left off.
_RETRY_OPENINGS = (
    "important: the first answer was refused",
    "the first answer was refused",
    "first answer was refused",
    "注意：第一次的回答没有被采用",
    "第一次的回答没有被采用",
)


# The retry note's closing sentence, copied into a line of the model's own: "The text was
# refused (template_from_sources: …). Write only the text asked for above, without any of these
# instructions in it." ended a summary of the Jekyll liquid tips post.
_RETRY_CLOSINGS = (
    "write only the text asked for above",
    "write only the text requested above",
    "without any of these instructions in it",
)


def _retry_line(key: str) -> bool:
    """Whether a normalised line is the retry note echoed, however reworded."""
    return key.startswith(_RETRY_OPENINGS) or any(c in key for c in _RETRY_CLOSINGS)


def without_retry_note(text: str) -> str:
    """``text`` without the lines that echo the retry note (``_retry_line``): for the texts no
    ``Scaffold`` checks (a summary)."""
    lines = text.splitlines()
    kept = [line for line in lines if not _retry_line(_norm(line))]
    return text if len(kept) == len(lines) else _BLANKS.sub("\n\n", "\n".join(kept)).strip()


# Asked again with the reason, the embedded model answered "The sqlite post says that the first
# answer was refused, and …", and a research answer "The first answer was refused (it says
# nothing from the sources).": a sentence on the first answer or its refusal.
_TALK_SENTENCE = r"[^.!?\n。！？]*"
_RETRY_TALK = re.compile(
    rf"{_TALK_SENTENCE}(?:\b(?:first|previous|second|last)\s+answer\b|"
    rf"\banswer\s+(?:was|is|has\s+been)\s+(?:refused|rejected)\b|第一次的?回答|回答被拒绝)"
    rf"{_TALK_SENTENCE}[.!?。！？]?[ \t]*",
    re.I,
)


def without_retry_talk(text: str, note: str = "") -> str:
    """``text`` without its sentences about a first answer or its refusal (for an answer
    asked again with the reason: those sentences are not the answer), nor those that say
    again a reason the retry ``note`` gave: asked again, the embedded model answered "The vim
    post is written by @a_vim_post: it shows code that none of its sources has (…)"."""
    said = _RETRY_TALK.sub(" ", text)
    phrases = _reason_phrases(note)
    if phrases:
        said = _SENTENCES.sub(
            lambda found: (
                " " if any(p in found.group().casefold() for p in phrases) else found.group()
            ),
            said,
        )
    return said.strip()


_NOTE_REASONS = re.compile(r"refused \((.+)\)\.", re.S)
_SENTENCES = re.compile(r"[^.!?\n。！？]+[.!?。！？]*[ \t]*")


def _reason_phrases(note: str) -> list[str]:
    """The words of each reason in a retry note, before its example ("it shows code that none
    of its sources has"), casefolded; only those of four words or more."""
    found = _NOTE_REASONS.search(note)
    if found is None:
        return []
    phrases = []
    for part in found.group(1).split("; "):
        core = part.split(": ", 1)[-1].split(" (", 1)[0].split(":", 1)[0].strip().casefold()
        if len(core.split()) >= 4:
            phrases.append(core)
    return phrases


def _norm(line: str) -> str:
    return " ".join(_PREFIX.sub("", line).split()).casefold()


@dataclass(frozen=True, slots=True)
class Stripped:
    """An answer without its unambiguous scaffolding: the text, what was taken out, and the
    markers still in it (the check fails when there are any)."""

    text: str
    removed: tuple[str, ...]
    left: tuple[str, ...]


class Scaffold:
    """The scaffolding of one prompt (see the module docstring).

    ``content`` are the texts the prompt carried for the model to work on (the text to edit):
    their lines are never taken for scaffolding.
    """

    def __init__(
        self,
        prompt_texts: Iterable[str],
        *,
        content: Iterable[str] = (),
        fragments: Iterable[str] = (),
    ) -> None:
        own = {_norm(line) for text in content for line in text.splitlines()}
        lines = {_norm(line) for text in prompt_texts for line in text.splitlines() if _norm(line)}
        self.own = frozenset(own)
        self.prompt_lines = frozenset(lines - own)
        self.labelled = frozenset(
            line for line in self.prompt_lines if any(m.search(line) for m in _MARKERS)
        )
        self.fragments = tuple(f for f in fragments if f.strip())

    def clean(self, text: str) -> Stripped:
        removed: list[str] = []
        for fragment in self.fragments:
            if fragment in text:
                removed.append(fragment)
                text = text.replace(" " + fragment, "").replace(fragment, "")
        kept: list[str] = []
        in_echo = in_item = False
        lines = text.splitlines(keepends=True)
        keys = [_norm(line) for line in lines]
        copied = self._copied_runs(keys)
        for at, (line, key) in enumerate(zip(lines, keys, strict=True)):
            if not key:
                kept.append(line)
                continue
            # The retry note, however the model reworded its end: a line that opens with it.
            labelled = (
                key in self.labelled
                or _retry_line(key)
                or (_LABEL_LINE.match(line) is not None and key not in self.own)
            )
            excerpt = len(key) >= MIN_EXCERPT_CHARS and key in self.prompt_lines
            # A related-post item of the prompt's shape, and the quoted snippet lines under it.
            item = _RELATED_ITEM.match(line) is not None
            snippet = in_item and _QUOTE.match(line) is not None
            echo = (in_echo and key in self.prompt_lines) or at in copied
            if labelled or excerpt or item or snippet or echo:
                removed.append(line.strip())
                in_echo, in_item = True, item or snippet
                continue
            in_echo = in_item = False
            kept.append(line)
        cleaned = _BLANKS.sub("\n\n", "".join(kept)).strip("\n") if removed else text
        # A marker on a line of the text worked on (a post that says "Key points:") is the
        # author's, not the prompt's: before, an edit of such a post was refused.
        left = tuple(
            match.group(0).strip()
            for line in cleaned.splitlines()
            if _norm(line) not in self.own
            for marker in _MARKERS
            for match in marker.finditer(line)
        )
        return Stripped(cleaned, tuple(removed), left)

    def _copied_runs(self, keys: list[str]) -> set[int]:
        """The lines in runs of ``MIN_COPIED_RUN`` or more lines in a row, each a line of the
        prompt: the outline's list copied ("- Python 装饰器" / "- 概述" / "- 工作原理"),
        whose short lines alone are not taken for an excerpt."""
        found: set[int] = set()
        start = 0
        for at in range(len(keys) + 1):
            if at < len(keys) and keys[at] and keys[at] in self.prompt_lines:
                continue
            if at - start >= MIN_COPIED_RUN:
                found.update(range(start, at))
            start = at + 1
        return found


# --- a free answer's echo of its instructions --------------------------------------------------

ECHO_RATIO = 0.8  # a sentence this close to one of the instructions' is their echo
MIN_ECHO_CHARS = 20  # shorter sentences ("Yes.", "I don't know.") are never taken for one
_SENTENCE = re.compile(r".+?(?:[.!?]+(?=\s|$)|[。！？]+|$)")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def without_echo(text: str, instructions: Iterable[str]) -> str:
    """``text`` without the lines and sentences that say the ``instructions`` again (a system
    prompt a small model answered with: "The author's blog has nothing on this question. Answer
    it briefly …"), compared loosely (``ECHO_RATIO``); lines left empty go, and "" when nothing
    else was said. For free answers no other check reads (an answer, small talk)."""
    instructions = list(instructions)
    said = [
        " ".join(s.split()).casefold()
        for instruction in instructions
        for s in _sentences(instruction)
        if len(s) >= MIN_ECHO_CHARS
    ]
    if not said:
        return text.strip()
    whole = [" ".join(i.split()).casefold() for i in instructions if len(i) >= MIN_ECHO_CHARS]
    kept_lines: list[str] = []
    dropped = False
    for line in text.splitlines():
        key = " ".join(line.split()).casefold()
        if len(key) >= MIN_ECHO_CHARS and any(alike(key, own, ECHO_RATIO) for own in whole):
            dropped = True  # the line says a whole instruction again
            continue
        kept: list[str] = []
        for sentence in _sentences(line) if line.strip() else []:
            key = " ".join(sentence.split()).casefold()
            echo = len(key) >= MIN_ECHO_CHARS and any(alike(key, own, ECHO_RATIO) for own in said)
            if echo:
                dropped = True
            else:
                kept.append(sentence)
        if not line.strip() or kept:
            kept_lines.append(line if len(kept) == len(_sentences(line)) else " ".join(kept))
    if not dropped:
        return text.strip()
    return _BLANKS.sub("\n\n", "\n".join(kept_lines)).strip()


def alike(text: str, other: str, ratio: float) -> bool:
    """Whether ``text`` is at least ``ratio`` like ``other`` (difflib's ratio; its cheap upper
    bounds first: most lines are nothing like each other)."""
    import difflib

    matcher = difflib.SequenceMatcher(None, text, other, autojunk=False)
    return (
        matcher.real_quick_ratio() >= ratio
        and matcher.quick_ratio() >= ratio
        and matcher.ratio() >= ratio
    )
