"""The model's words about its own text, in a section of an article it writes.

SmolLM2-135M, given the end of the previous section, answered the next one as if it had
been asked to edit that: "Here is a rewritten version of the text with improvements:", then
"The previous section ended abruptly, and I wanted to provide an overview …", and it closed
with "I added more detail about the benefits …" and "I made some minor changes to improve
clarity, grammar, and sentence structure." All four were saved in the post. ``without_notes``
takes out, outside code:

- a first line that leads in to a rewritten text ("Here's the revised version:", "Here is a
  rewritten version of the text with improvements:");
- a first sentence on the previous section's ending ("The previous section ended …": the
  prompt says "The previous section ended with:");
- closing paragraphs that open with a sentence on what the writer changed ("I made some
  minor changes to improve clarity", "I added more detail about …", "I've kept the tone of
  the original"): an article says what it is about, not how it was edited.

What is left must hold a line of prose; else the text is kept as it was, for the checks.
English only: the Chinese prompts' answers have not shown these.
"""

from __future__ import annotations

import re

from .parts import code_lines

__all__ = ["without_notes"]

_ABOUT_PREVIOUS = re.compile(r"^\s*the\s+previous\s+section\s+ended\b[^.!?\n]*[.!?]*\s*", re.I)

# A sentence on the writer's own edit, in the shapes the model writes them: "I made some minor
# changes to …", "I rewrote the section …", "I added more detail about …", "I've kept the tone
# of the original". An article's own "I added a cron job …", "I added more examples to the
# repository", "I fixed the hook, and now the text renders", "I kept the setup simple" are not.
_I = r"^\W*I(?:['’]ve|\s+have)?(?:\s+(?:also|then|just))*\s+"
_EDIT_NOTE = re.compile(
    _I + r"(?:"
    r"(?:made|did)\s+(?:(?:some|a\s+few|several|minor|small|slight)\s+)*(?:changes|edits|"
    r"improvements|tweaks|corrections|adjustments|revisions)\b"
    r"|(?:rewrote|rewritten|revised|rephrased|reworded|restructured|edited|polished|tweaked)\s+"
    r"(?:the|this|your)\s+(?:original\s+)?(?:text|section|paragraph|draft|version|wording)\b"
    r"|(?:added|expanded|included)\s+(?:more|some|a\s+few|additional|extra)\s+(?:details?|"
    r"context|information|examples?|words)\s+(?:about|on|to\s+(?:the|this|each)\s+(?:text|"
    r"section|paragraph))\b"
    r"|(?:kept|maintained|preserved)\s+the\s+(?:original\s+)?(?:tone|structure|meaning|wording|"
    r"style)\b"
    r")",
    re.I,
)
# A first line that leads in to a rewritten text (``checks.CHATTER`` is broader: in an article
# "Here is a version of the script that handles errors:" is the author's lead-in to code).
_LEAD = re.compile(
    r"^\W*(?:(?:sure|okay|ok|certainly|of course)\b[\s,!.]*)?(?:here(?:['’]s|\s+is)|below\s+is|"
    r"this\s+is)\s+(?:the\s+|a\s+|an\s+|my\s+)?(?:rewritten|revised|edited|improved|updated|"
    r"corrected|new|final)\s+(?:version|text|section|paragraph|draft)\b[^\n]{0,60}[:：]\W*$"
    r"|^\W*(?:以下|下面)是[^\n]{0,20}?(?:修改|改写|修订|润色|编辑|更新)[^\n]{0,12}?[:：]\W*$",
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
    if _LEAD.match(lines[first]):
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
