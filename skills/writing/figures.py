"""``figures_from``: the figures an answer gives are its sources'.

``grounded`` judges an answer by its words, and leaves out an answer too short to tell and one
in Chinese; a made-up figure passes it either way. The embedded model answered "what is the
population of Atlantis?" from a page that gives none with "around 1.4 million people [1]",
shown under its sources. A figure is language-free, so this check judges every answer: each
number of two digits or more (a year, a count, a price, a version; ``1.4`` and ``42%`` too)
must stand in a source or in the question. A single digit is left alone (a page writes "three
steps" where an answer says 3), and so are citation marks, a numbered list's own numbers,
addresses and code (the code checks judge code). A figure is compared by the number it says:
with its scale (``1.4 million``, ``1.4M``, ``1,400,000`` and ``140万`` are one), and a source's
figures in words count ("ten times" gives ``10x``, "twenty-five" ``25``, 十倍 ``10倍``): good
answers that wrote a page's figure another way were refused as made up.
"""

from __future__ import annotations

import re
from decimal import Decimal

from .checks import Check, Generated, Verdict, without_code
from .lengths import _cn_number

__all__ = ["figures_from"]

_NOT_FIGURES = re.compile(
    r"\[\^?\d+(?:\s*[,;，\-–]\s*\d+)*\]"  # citations [1], [1, 2], [1-3]; footnotes [^1]
    r"|【\d+】"
    r"|^[ \t]*\d{1,3}[.)][ \t]"  # a numbered list's own numbers
    r"|\]\([^)\n]*\)|\w+://\S+|\S+@\S+\.\w+"  # link targets, addresses
    r"|#[\w-]+",  # an anchor, an issue number: a name, not a figure
    re.M,
)
_NUMBER = re.compile(  # (Chinese runs into figures: 2024年); its scale, when it has one
    r"(?<![A-Za-z0-9_.])(\d+(?:[.,]\d+)*)"
    r"(?:\s*((?i:thousand|million|billion|trillion|bn)|k|M)\b|\s*(万|亿))?"
)
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_SCALES = {"thousand": 3, "k": 3, "million": 6, "m": 6, "billion": 9, "bn": 9, "trillion": 12}
_SCALES |= {"万": 4, "亿": 8}
_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
_ONES += "fifteen sixteen seventeen eighteen nineteen"
_UNITS = {word: n for n, word in enumerate(_ONES.split())}
_TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_TENS = {word: 10 * n for n, word in enumerate(_TENS_WORDS.split(), 2)}
_WORD_NUMBER = re.compile(
    rf"\b(?:({'|'.join(_TENS)})(?:[- ]({'|'.join(list(_UNITS)[1:10])}))?|({'|'.join(_UNITS)})|a)"
    r"(?:[- ](hundred|thousand|million|billion|trillion))?\b",
    re.I,
)
_CN_NUMERAL = re.compile("[零〇一二两三四五六七八九十百千万亿]+")
SHOWN = 4  # figures named in a reason


def _figures(text: str) -> dict[str, tuple[str, set[str]]]:
    """Each figure in ``text``, by its canonical form (``_canonical``): as first written, and
    its forms (with its scale, ``1.4 million`` is ``1400000`` too)."""
    found: dict[str, tuple[str, set[str]]] = {}
    prose = _NOT_FIGURES.sub(" ", without_code(text))
    for match in _NUMBER.finditer(prose):
        written = match.group(1)
        scale = (match.group(2) or match.group(3) or "").casefold()
        version = _VERSION_BEFORE.search(prose, max(0, match.start() - 40), match.start())
        # a comma that does not group thousands parts a list ("10,20"): two figures
        each = [written] if _GROUPED.fullmatch(written) else written.split(",")
        for i, one in enumerate(each):
            forms = {_as_version(one)} if version else {_canonical(one), _as_version(one)}
            if scale and i == len(each) - 1:  # ("1.4 million": 1400000 too)
                forms.add(_canonical(_scaled(one, _SCALES[scale])))
            found.setdefault(_as_version(one), (one, set()))[1].update(forms)
    return found


# What a version follows: a name ("Python 3.10", "Tokio 1.10") or "version", "release".
_VERSION_BEFORE = re.compile(r"(?:\b[A-Z][\w.+#-]*|\b(?i:version|release|v))\s*$")


def _as_version(written: str) -> str:
    """A figure as a version compares: thousands' commas and each part's leading zeros out,
    its last ``.0`` parts too (``1.78.0`` is ``1.78``), but not a part's own trailing zeros:
    ``1.10`` is not ``1.1``. After a name or "version" ("Version 1.10 was released in May"),
    a figure is compared so only: "Version 1.1 was released in May [1]." passed as the page's
    1.10, a decimal's trailing zero being no figure's (``1.50`` is ``1.5``)."""
    parts = [p.lstrip("0") or "0" for p in written.replace(",", "").split(".")]
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def _canonical(written: str) -> str:
    """A figure as compared: thousands' commas out (``1,400`` is ``1400``), each part's
    leading zeros out (``05`` is ``5``), a decimal's trailing zeros out (``1.50`` is
    ``1.5``), a version's last ``.0`` too (``1.78.0`` is ``1.78``: "Rust 1.78 adds …" from
    the Rust 1.78.0 page was refused as made up)."""
    parts = [p.lstrip("0") or "0" for p in written.replace(",", "").split(".")]
    while len(parts) > 2 and parts[-1] == "0":  # a version's .0 (1.78.0 is 1.78)
        parts.pop()
    if len(parts) == 2:
        parts[1] = parts[1].rstrip("0") or "0"
        if parts[1] == "0":
            parts = parts[:1]
    return ".".join(parts)


def _scaled(written: str, zeros: int) -> str:
    """``written`` (digits, a thousands' comma or a decimal point) times ten to ``zeros``."""
    value = Decimal(written.replace(",", "")).scaleb(zeros)
    return format(value.quantize(Decimal(1)) if value == value.to_integral() else value, "f")


def _in_words(text: str) -> set[str]:
    """The figures ``text`` writes in words, canonical: "ten times" (10), "twenty-five" (25),
    "two hundred" (200), "三十" (30), "三成" (30 too, for 30%). An answer that gave "10x" for
    a page's "ten times", or "30%" for its "三成", was refused as made up."""
    found: set[str] = set()
    for match in _WORD_NUMBER.finditer(text):
        tens, unit, alone, scale = match.groups()
        if not (tens or alone or scale):
            continue  # ("a" alone)
        value = _TENS[tens.casefold()] + (_UNITS[unit.casefold()] if unit else 0) if tens else 0
        value = value or (_UNITS[alone.casefold()] if alone else 1)
        zeros = {"hundred": 2, **_SCALES}.get((scale or "").casefold(), 0)
        found.add(str(value * 10**zeros))
    for match in _CN_NUMERAL.finditer(text):
        said = _cn_number(match.group().replace("亿", ""))
        if said is not None:
            found.add(str(said * (10**8 if match.group().endswith("亿") else 1)))
            if text.startswith("成", match.end()):  # (三成: 30%)
                found.add(str(said * 10))
    return found


# A question that asks for a figure worked out from the sources' own: "how many harbours and
# temples in total?" was answered "42 [1]" from a page with 12 and 30, and refused as made up.
_COMPUTES = re.compile(
    r"\b(?:total|sum|combined|altogether|together|difference|differ|more than|less than|"
    r"fewer than|how (?:much|many) (?:more|less|fewer|longer|older|bigger)|add(?:ed)? up)\b"
    r"|总共|一共|合计|总计|加起来|相差|差多少|多多少|少多少|之和|之差",
    re.I,
)
MAX_WORKED_FROM = 40  # source figures a sum or a difference is worked out from
_DECIMAL = re.compile(r"\d+(?:\.\d+)?")  # (not a version: 3.7.0)


def _worked_out(figures: set[str]) -> set[str]:
    """The sums and differences of two of ``figures`` (the first ``MAX_WORKED_FROM`` of them,
    by value), canonical."""
    values = sorted(Decimal(f) for f in figures if _DECIMAL.fullmatch(f))[:MAX_WORKED_FROM]
    found = {a + b for a in values for b in values} | {abs(a - b) for a in values for b in values}
    return {_canonical(format(v.normalize(), "f")) for v in found}


def figures_from(*sources: str, question: str = "", pages: bool = False) -> Check:
    """The check (see the module docstring): every figure of two digits or more in the answer
    is in ``sources`` or ``question``, or, when the question asks for a total or a difference
    (``_COMPUTES``), a sum or a difference of two of theirs. ``pages``: the sources are web
    pages read (a reason names them so)."""
    said = "\n".join((*sources, question))
    theirs = {form for _, forms in _figures(said).values() for form in forms} | _in_words(said)
    if _COMPUTES.search(question):
        theirs |= _worked_out(theirs)
    where, where_zh = ("pages read", "网页") if pages else ("posts found", "文章")

    def check(generated: Generated) -> Verdict:
        made_up = [
            written
            for written, forms in _figures(generated.text).values()
            if not forms & theirs and max(len(f.replace(".", "")) for f in forms) >= 2
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
