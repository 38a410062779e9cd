"""The model's words about its own text, in a section of an article it writes.

SmolLM2-135M, given the end of the previous section, answered the next one as if it had
been asked to edit that: "Here is a rewritten version of the text with improvements:", then
"The previous section ended abruptly, and I wanted to provide an overview …", and it closed
with "I added more detail about the benefits …" and "I made some minor changes to improve
clarity, grammar, and sentence structure." All four were saved in the post. ``without_notes``
takes out, outside code:

- a first line that leads in to the text ("Here's the revised version:", the same lines
  ``checks.no_chatter`` drops from an edit's answer);
- a first sentence on the previous section's ending ("The previous section ended …": the
  prompt says "The previous section ended with:");
- closing paragraphs that open with a sentence on what the writer changed, and name the
  text or an editor's aim ("I made some changes to improve clarity", "I added more
  detail", "I've kept the tone"): an article says what it is about, not how it was edited.

What is left must hold a line of prose; else the text is kept as it was, for the checks.
English only: the Chinese prompts' answers have not shown these.
"""

from __future__ import annotations

import re

from .checks import CHATTER
from .parts import code_lines

__all__ = ["without_notes"]

_ABOUT_PREVIOUS = re.compile(r"^\s*the\s+previous\s+section\s+ended\b[^.!?\n]*[.!?]*\s*", re.I)

# A sentence on the writer's own edit: "I (have|'ve|also) <changed> … <the text | an editor's
# aim>", or "I added more detail/examples/context".
_EDIT_VERB = (
    r"(?:made|added|changed|rewrote|rewritten|revised|removed|improved|replaced|reworded|"
    r"restructured|kept|expanded|shortened|corrected|fixed|edited|adjusted|tweaked|polished)"
)
_EDIT_AIM = (
    r"(?:clarity|grammar|sentence\s+structure|readab\w+|concise\w*|flow|tone|wording|"
    r"the\s+(?:original\s+)?(?:text|section|paragraph|content|draft|article|post|version)|"
    r"(?:more|some|a\s+few|extra)\s+(?:details?|examples?|context|information|words))"
)
_EDIT_NOTE = re.compile(
    rf"^\W*I(?:['’]ve|\s+have)?(?:\s+(?:also|then|just))*\s+{_EDIT_VERB}\b[^.!?\n]{{0,160}}?"
    rf"\b{_EDIT_AIM}\b",
    re.I,
)


def _paragraphs(lines: list[str]) -> list[tuple[int, int]]:
    """The (start, end) line spans of the paragraphs of prose outside code, in order."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for i, (_, line, code) in enumerate(code_lines("\n".join(lines))):
        if code or not line.strip():
            if start is not None:
                spans.append((start, i))
                start = None
        elif start is None:
            start = i
    if start is not None:
        spans.append((start, len(lines)))
    return spans


def without_notes(text: str) -> str:
    """``text`` without the model's words about it (see the module docstring)."""
    lines = text.splitlines()
    spans = _paragraphs(lines)
    if not spans:
        return text
    drop: set[int] = set()
    first = spans[0][0]
    if CHATTER.match(lines[first]):
        drop.add(first)
        spans[0] = (first + 1, spans[0][1])
        if spans[0][0] == spans[0][1]:
            spans.pop(0)
    if spans and (found := _ABOUT_PREVIOUS.match(lines[spans[0][0]])) is not None:
        lines[spans[0][0]] = lines[spans[0][0]][found.end() :]
        if not lines[spans[0][0]].strip():
            drop.add(spans[0][0])
    while spans and _EDIT_NOTE.match(lines[spans[-1][0]]):
        drop.update(range(*spans.pop()))
    kept = [line for i, line in enumerate(lines) if i not in drop]
    if not any(line.strip() and not line.lstrip().startswith("#") for line in kept):
        return text
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")
