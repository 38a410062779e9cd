"""``figures_from``: the figures an answer gives are its sources'.

``grounded`` judges an answer by its words, and leaves out an answer too short to tell and one
in Chinese; a made-up figure passes it either way. The embedded model answered "what is the
population of Atlantis?" from a page that gives none with "around 1.4 million people [1]",
shown under its sources. A figure is language-free, so this check judges every answer: each
number of two digits or more (a year, a count, a price, a version; ``1.4`` and ``42%`` too)
must stand in a source or in the question. A single digit is left alone (a page writes "three
steps" where an answer says 3), and so are citation marks, a numbered list's own numbers,
addresses and code (the code checks judge code).
"""

from __future__ import annotations

import re

from .checks import _FENCED_CODE, _INLINE_CODE, Check, Generated, Verdict

__all__ = ["figures_from"]

_NOT_FIGURES = re.compile(
    r"\[\^?\d+(?:\s*[,;，\-–]\s*\d+)*\]"  # citations [1], [1, 2], [1-3]; footnotes [^1]
    r"|【\d+】"
    r"|^[ \t]*\d{1,3}[.)][ \t]"  # a numbered list's own numbers
    r"|\]\([^)\n]*\)|\w+://\S+|\S+@\S+\.\w+"  # link targets, addresses
    r"|#[\w-]+",  # an anchor, an issue number: a name, not a figure
    re.M,
)
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:[.,]\d+)*")  # (Chinese runs into figures: 2024年)
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
SHOWN = 4  # figures named in a reason


def _figures(text: str) -> dict[str, str]:
    """Each figure in ``text``, by its canonical form (``_canonical``), as first written."""
    found: dict[str, str] = {}
    prose = _INLINE_CODE.sub(" ", _FENCED_CODE.sub(" ", text))
    for match in _NUMBER.finditer(_NOT_FIGURES.sub(" ", prose)):
        written = match.group()
        # a comma that does not group thousands parts a list ("10,20"): two figures
        each = [written] if _GROUPED.fullmatch(written) else written.split(",")
        for one in each:
            found.setdefault(_canonical(one), one)
    return found


def _canonical(written: str) -> str:
    """A figure as compared: thousands' commas out (``1,400`` is ``1400``), each part's
    leading zeros out (``05`` is ``5``), a decimal's trailing zeros out (``1.50`` is
    ``1.5``)."""
    parts = [p.lstrip("0") or "0" for p in written.replace(",", "").split(".")]
    if len(parts) == 2:
        parts[1] = parts[1].rstrip("0") or "0"
        if parts[1] == "0":
            parts = parts[:1]
    return ".".join(parts)


def figures_from(*sources: str, question: str = "", pages: bool = False) -> Check:
    """The check (see the module docstring): every figure of two digits or more in the answer
    is in ``sources`` or ``question``. ``pages``: the sources are web pages read (a reason
    names them so)."""
    theirs = set(_figures("\n".join((*sources, question))))
    where, where_zh = ("pages read", "网页") if pages else ("posts found", "文章")

    def check(generated: Generated) -> Verdict:
        made_up = [
            written
            for canonical, written in _figures(generated.text).items()
            if canonical not in theirs and len(canonical.replace(".", "")) >= 2
        ]
        if made_up:
            shown = ", ".join(made_up[:SHOWN]) + ("…" if len(made_up) > SHOWN else "")
            return Verdict(
                "figures",
                False,
                f"it gives figures the {where} do not have ({shown})",
                zh=f"它给出的数字{where_zh}里没有（{shown}）",
            )
        return Verdict("figures", True, "its figures are the sources'")

    return check
