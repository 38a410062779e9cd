"""The checks a writing skill runs on a model's text before it is saved or called done.

Each check is a function of the text that returns a ``Verdict``: its name, whether it passed, a
reason a person (and the model, on its retry) can read, and the text, fixed when the fix is
unambiguous (scaffolding stripped, a link to no post made plain text). ``run_checks`` runs them
in order, each on the text the one before left. The checks:

- ``no_scaffolding``: the skills' own prompt lines and context excerpts (``scaffold.py``);
- ``language``: a translation (or an article) is in its target language, by the share of its
  letters in that language's script, and for languages written in Latin letters by their most
  common words (no model is asked);
- ``instruction_kind``: "add", "insert" or "expand" adds and removes at most a little; "shorten"
  or "trim" shortens; "fix typos" changes little;
- ``scope``: an edit of one part is answered with that part, not the whole post;
- ``wikilinks``: every ``[[link]]`` names a post of the blog (by slug, path or title), or becomes
  plain text; a text whose links are mostly invented fails;
- ``frontmatter``: what the skill did not mean to change stays byte for byte;
- ``not_degenerate``: no loop, no repeated line (``skillrt.llm.guard.RepetitionGuard``, as while
  streaming), not cut off mid-word at the token limit, not empty;
- ``not_a_refusal`` (``not_refusing(*sources)``): not the model saying, as a model, that it
  cannot do the task, unless its sources say it;
- ``not_cut_short``: not stopping mid-sentence (on a comma, "which", "the"), at any length;
- ``answer_language``: an answer is in its question's language.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from skillrt.blog.wikilinks import normalize_target
from skillrt.exceptions import RepetitionStopped
from skillrt.llm.guard import RepetitionGuard

from .languages import LANGUAGES
from .parts import named_part
from .scaffold import Scaffold

__all__ = [
    "CHATTER",
    "GIVEN_URL",
    "HAN",
    "Check",
    "CheckRecord",
    "Generated",
    "Verdict",
    "answer_language",
    "frontmatter_kept",
    "given_urls",
    "instruction_kind",
    "language",
    "no_scaffolding",
    "not_a_refusal",
    "not_cut_short",
    "not_degenerate",
    "not_refusing",
    "prose_words",
    "reported_as",
    "run_checks",
    "scope",
    "wikilinks",
    "without_code",
]

MAX_REASON_ITEMS = 5


class Generated(BaseModel):
    """A model's text as a step returns it: the text, whether the repetition guard cut it short
    (``looped``), whether it stopped at the token limit (``cut``), and whether the text is
    what came before a loop, kept because it is whole and long enough (``stopped``: an
    article's section; its reply says so)."""

    text: str
    looped: bool = False
    cut: bool = False
    stopped: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    name: str
    passed: bool
    reason: str = ""  # in English: also what the model is told on its retry
    text: str | None = None  # the text fixed by the check; None: as it was
    zh: str = ""  # the reason in Chinese, for a Chinese reply

    def reason_in(self, language: str) -> str:
        return self.zh if language == "zh" and self.zh else self.reason


Check = Callable[[Generated], Verdict]


class CheckRecord(BaseModel):
    """One check as a reply's ``data["checks"]`` lists it."""

    name: str
    passed: bool
    reason: str = ""


def run_checks(generated: Generated, checks: Sequence[Check]) -> tuple[Generated, list[Verdict]]:
    """Every check in order, each on the text the one before left; the fixed text and the
    verdicts (all of them, also after a failure, so the report lists what ran)."""
    verdicts: list[Verdict] = []
    for check in checks:
        verdict = check(generated)
        verdicts.append(verdict)
        if verdict.text is not None:
            generated = generated.model_copy(update={"text": verdict.text})
    return generated, verdicts


def _listed(items: Iterable[str]) -> str:
    items = list(dict.fromkeys(items))
    shown = ", ".join(repr(i[:80]) for i in items[:MAX_REASON_ITEMS])
    more = len(items) - MAX_REASON_ITEMS
    return shown + (f" and {more} more" if more > 0 else "")


# --- no scaffolding ---------------------------------------------------------------------------


def no_scaffolding(scaffold: Scaffold) -> Check:
    def check(generated: Generated) -> Verdict:
        stripped = scaffold.clean(generated.text)
        if stripped.left:
            return Verdict(
                "no_scaffolding",
                False,
                f"the text holds lines of the prompt: {_listed(stripped.left)}",
                stripped.text,
                f"文字里有提示词的内容：{_listed(stripped.left)}",
            )
        note = f"removed {len(stripped.removed)} prompt line(s)" if stripped.removed else ""
        return Verdict("no_scaffolding", True, note, stripped.text if stripped.removed else None)

    return check


# --- no_chatter -------------------------------------------------------------------------------

# A line of the model's own about the text it gives: "Here's a revised version:", "Sure! Here
# is the edited paragraph:", "Revised version:", "以下是修改后的段落：", "Sure! Here is the
# friendlier section:" (a section's edit: it was saved above the section).
CHATTER = re.compile(
    r"^\W*(?:(?:sure|okay|ok|certainly|of course)\b[\s,!.]*)?"
    r"(?:(?:here(?:'s|’s| is| are)|below is|this is)\b[^\n]{0,60}?"
    r"\b(?:version|text|paragraph|edit|rewrite|revision|draft|translation|section|part|"
    r"introduction|intro|conclusion|summary)s?"
    r"|(?:revised|edited|updated|improved|rewritten|corrected|new)\s+"
    r"(?:version|text|paragraph|post|draft|section))"
    r"[^\n]{0,40}?[:：]\W*$"
    # "The text is:" alone (the embedded model's first line when fixing a post's typos)
    r"|^\W*the\s+(?:(?:revised|edited|updated|improved|rewritten|corrected|fixed|new)\s+)?"
    r"(?:text|version|paragraph)\s+(?:is|reads)\s*[:：]\W*$"
    r"|^\W*(?:以下|下面)是[^\n]{0,20}?(?:修改|改写|修订|润色|编辑|更新)[^\n]{0,12}?[:：]\W*$",
    re.I,
)


# A sentence about the request rather than the text: "The text was requested to be edited.
# The instructions asked for a revised version of the text…" was the embedded model's whole
# answer to "change its category to linux", and it replaced a post's body.
_EDIT_VERBS = (
    r"(?:edit|rewrite|revise|shorten|expand|translate|fix|change|improve|make|polish|set|"
    r"update|add|remove|move|rename|recategori[sz]e|retag|correct|modify)"
)
ABOUT_THE_REQUEST = re.compile(
    r"\bthe\s+(?:original\s+|given\s+|provided\s+)?(?:text|post|article)\s+(?:was|has\s+been)\s+"
    r"(?:requested|asked)\s+to\b"
    r"|\bthe\s+instructions?\s+(?:asked|requested|wanted|called)\s+(?:for\s+)?(?:me\s+to\s+)?"
    r"(?:(?:a|an|the)\s+)?(?:\w+\s+){0,2}(?:version|text|rewrite|edit|revision)\b"
    rf"|\bthe\s+instructions?\s+(?:asks?|asked|requests?|requested|wants?|wanted)\s+(?:me\s+)?"
    rf"to\s+{_EDIT_VERBS}\b"
    r"|\bthe\s+instruction(?:'s|’s)?\s+kind\b"
    rf"|\b(?:you\s+(?:asked|requested|wanted)\s+(?:me\s+)?|the\s+user\s+(?:asked|requested|"
    rf"wanted)\s+me\s+)to\s+{_EDIT_VERBS}\b"
    r"|\bas\s+(?:you\s+)?requested\b(?!\s+by)|\bper\s+your\s+request\b"
    r"|(?:根据|按照)(?:你|您)的?(?:要求|指示)"
    r"|(?:根据|按照)要求[，,]?\s*(?:修改后的|改写后的|已(?:经)?(?:修改|改写|润色|改好)|"
    r"(?:修改|改写)如下)",
    re.I,
)


def no_chatter(original: str) -> Check:
    """An edit's answer holds no line of the model's own about it ("Here's a revised
    version:"): the embedded model made an intro friendlier, then wrote that line and a second
    version, and both were saved. A first line of that kind is dropped (fixed); one further
    in, with text on both sides, fails: which of the two is meant cannot be told. A line the
    original has is the author's and never counts. A sentence about the request itself ("The
    instructions asked for a revised version", ``ABOUT_THE_REQUEST``) fails wherever it is,
    unless the original says it too, and so does the model saying, as a model, that it cannot
    do it (``REFUSAL``): "As an AI language model, I cannot edit files on your computer…"
    replaced the whole body of a post asked to be shortened, and was saved."""
    own = {" ".join(line.split()).casefold() for line in original.splitlines()}
    own_words = " ".join(original.split()).casefold()

    def check(generated: Generated) -> Verdict:
        prose = _CODE.sub(" ", generated.text)  # (code's comments are the code's)
        talk = next(
            (
                found
                for pattern in (ABOUT_THE_REQUEST, REFUSAL)
                for found in pattern.finditer(prose)
                if " ".join(found.group().split()).casefold() not in own_words
            ),
            None,
        )
        if talk is not None:
            start = prose.rfind("\n", 0, talk.start()) + 1
            said = prose[start:].split("\n", 1)[0].strip()
            if talk.re is REFUSAL:
                return Verdict(
                    "no_chatter",
                    False,
                    f"the model says it cannot do it ({said[:80]!r}) instead of doing it",
                    zh=f"模型说它做不到（{said[:80]!r}），而没有去做",
                )
            return Verdict(
                "no_chatter",
                False,
                f"the text speaks of the request, not only the text ({said[:80]!r})",
                zh=f"文字在谈论修改要求本身（{said[:80]!r}），不只是正文",
            )
        lines = generated.text.splitlines()
        found = [
            i
            for i, line in enumerate(lines)
            if CHATTER.match(line) and " ".join(line.split()).casefold() not in own
        ]
        if not found:
            return Verdict("no_chatter", True)
        first = next((i for i, line in enumerate(lines) if line.strip()), 0)
        if found == [first]:
            fixed = "\n".join(lines[first + 1 :]).lstrip("\n")
            return Verdict("no_chatter", True, f"removed {lines[first].strip()!r}", fixed)
        said = lines[found[-1]].strip()
        return Verdict(
            "no_chatter",
            False,
            f"the text holds the model's own words about it ({said[:80]!r}), not only the text",
            zh=f"文字里有模型自己对它的说明（{said[:80]!r}），不只是正文",
        )

    return check


# --- the target language ----------------------------------------------------------------------

_CODE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$|`[^`\n]+`", re.S | re.M)
_URLISH = re.compile(r"\S*(?:/|\.md\b|://|@)\S*|\[\[[^\]]*\]\]|\]\([^)]*\)")
HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # a Chinese character
_KANA = re.compile("[\u3040-\u30ff]")
_HANGUL = re.compile("[\uac00-\ud7af\u1100-\u11ff]")
_LATIN_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]{2,}")
_STOPWORDS = {
    "en": {"the", "and", "of", "to", "is", "in", "that", "it", "with", "for", "you", "this"},
    "fr": {"le", "la", "les", "et", "des", "est", "une", "dans", "pour", "que", "qui", "pas"},
    "de": {"der", "die", "das", "und", "ist", "nicht", "mit", "ein", "eine", "den", "zu", "auf"},
    "es": {"el", "los", "las", "del", "que", "es", "una", "por", "para", "con", "se", "como"},
}
MIN_SHARE = 0.5  # of the text's letters (a CJK character or a Latin word each) in the target
MIN_WORDS_FOR_STOPWORDS = 30
ALREADY_SHARE = 0.8  # a post this much in a language is in it (``written_in``)
MIN_WORDS_TO_TELL = 5  # fewer words than this (a code block, a heading): nothing to judge


def prose_words(text: str) -> int:
    """The words of ``text`` outside code, links and paths, as ``language_share`` counts them
    (a CJK character one, a Latin word one)."""
    prose = _URLISH.sub(" ", _CODE.sub(" ", text))
    found = (len(p.findall(prose)) for p in (HAN, _KANA, _HANGUL, _LATIN_WORD))
    return sum(found)


def language_share(text: str, code: str) -> float:
    """The share of ``text``'s words in ``code``'s script: CJK characters and Latin words each
    count one, code, links and paths not at all. 1.0 when there are too few words to tell."""
    prose = _URLISH.sub(" ", _CODE.sub(" ", text))
    han, kana, hangul = (len(p.findall(prose)) for p in (HAN, _KANA, _HANGUL))
    words = len(_LATIN_WORD.findall(prose))
    total = han + kana + hangul + words
    if total < MIN_WORDS_TO_TELL:
        return 1.0
    mine = {"zh": han, "ja": han + kana, "ko": hangul}.get(code, words)
    if code == "zh" and kana > han / 4:  # Japanese, not Chinese
        mine = han - kana
    if code == "ja" and not kana:
        mine = 0
    return max(mine, 0) / total


def _latin_language(text: str) -> str | None:
    """The Latin-script language most of the text's common words belong to (or None)."""
    words = [w.casefold() for w in _LATIN_WORD.findall(_URLISH.sub(" ", _CODE.sub(" ", text)))]
    if len(words) < MIN_WORDS_FOR_STOPWORDS:
        return None
    hits = {code: sum(w in stop for w in words) for code, stop in _STOPWORDS.items()}
    best = max(hits, key=lambda c: hits[c])
    return best if hits[best] >= 3 else None


def written_in(text: str, code: str) -> bool:
    """Whether ``text`` is plainly in ``code`` already: enough words to tell, at least
    ``ALREADY_SHARE`` of them in its script, and for a Latin-script language its common words
    (a French post is all Latin words, but not English)."""
    prose = _URLISH.sub(" ", _CODE.sub(" ", text))
    if len(HAN.findall(prose)) + len(_LATIN_WORD.findall(prose)) < MIN_WORDS_FOR_STOPWORDS:
        return False
    if language_share(text, code) < ALREADY_SHARE:
        return False
    return code not in _STOPWORDS or _latin_language(text) == code


def language(code: str) -> Check:
    names = LANGUAGES.get(code)
    name = names.name if names else code
    name_zh = names.name_zh if names else name

    def check(generated: Generated) -> Verdict:
        share = language_share(generated.text, code)
        if share < MIN_SHARE:
            return Verdict(
                "language",
                False,
                f"the text is not in {name} ({share:.0%} of its words are)",
                zh=f"文字不是{name_zh}（只有 {share:.0%} 是）",
            )
        if code in _STOPWORDS:
            # (a short text by its common words too: "As an AI language model, I cannot edit
            # files on your computer, but I can help you write …" was saved as the French
            # translation of the git post, under the 30 words the stopwords need)
            found = _latin_language(generated.text) or _told_in(generated.text)
            if found is not None and found != code:
                return Verdict(
                    "language",
                    False,
                    f"the text is in {LANGUAGES[found].name}, not in {name}",
                    zh=f"文字是{LANGUAGES[found].name_zh}，不是{name_zh}",
                )
        return Verdict("language", True, f"{share:.0%} {name}")

    return check


def _told_in(question: str) -> str | None:
    """The Latin-script language a short text (a question) is told to be in by its common
    words (``_STOPWORDS``): two distinct ones at least, and more than any other language's
    ("What is the capital of Atlantis?": the, of, is). None when that does not tell."""
    words = {w.casefold() for w in _LATIN_WORD.findall(_URLISH.sub(" ", _CODE.sub(" ", question)))}
    hits = sorted(((len(words & stop), code) for code, stop in _STOPWORDS.items()), reverse=True)
    (best, code), (second, _) = hits[0], hits[1]
    return code if best >= 2 and best > second else None


def answer_language(question: str, asked_in: str) -> Check:
    """An answer is in its question's language: ``language("zh")`` for a question asked in
    Chinese (``asked_in``, the task's language); for one in a Latin script, the answer's
    words are mostly Latin ones too and, when the question is told English (``_told_in``),
    the answer is not told to be another language. An English question about Atlantis was
    answered "亚特兰蒂斯的首都是波塞冬尼亚[1]…" and in German, and both were shown as done
    (a short answer is told by its common words as a question is);
    a question in French or Spanish, told apart from English by too few words, may be
    answered in its own language."""
    if asked_in == "zh":
        return language("zh")
    if language_share(question, "en") < MIN_SHARE:
        return lambda generated: Verdict("language", True, "the question's script: not judged")
    told = _told_in(question)

    def check(generated: Generated) -> Verdict:
        share = language_share(generated.text, "en")
        # (a short answer by its common words too: "Die Hauptstadt ist Poseidonia [1].")
        found = _latin_language(generated.text) or _told_in(generated.text)
        if share >= MIN_SHARE and (told is None or found in (None, told)):
            return Verdict("language", True, "in the question's language")
        what = LANGUAGES[found].name if share >= MIN_SHARE and found else "another script"
        what_zh = LANGUAGES[found].name_zh if share >= MIN_SHARE and found else "另一种文字"
        return Verdict(
            "language",
            False,
            f"the answer is in {what}, not in the question's language",
            zh=f"回答用的是{what_zh}，不是提问的语言",
        )

    return check


# --- the instruction's kind -------------------------------------------------------------------

_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "fix",
        re.compile(r"\b(?:typos?|spelling|misspell\w*|proofread\w*)\b|错别字|拼写|笔误|校对", re.I),
    ),
    (
        "shorten",
        re.compile(
            r"\b(?:shorten\w*|shorter|trim\w*|condense\w*|tighten\w*|cut (?:it )?down|"
            r"more concise|briefer)\b|精简|缩短|简短|删减|压缩|短一[点些]|简洁",
            re.I,
        ),
    ),
    (
        "add",
        re.compile(
            r"\b(?:add|insert|expand\w*|append|extend|elaborate|longer)\b|添加|加上|加一|"
            r"补充|插入|扩写|扩展|扩充|增加|展开",
            re.I,
        ),
    ),
)
_TOKEN = re.compile(r"[\u3400-\u9fff\uac00-\ud7af\u3040-\u30ff]|[^\W\u3400-\u9fff]+|[^\w\s]")
ADD_MAX_REMOVED = 0.15  # an addition may drop at most this share of the original's words
FIX_MIN_KEPT = 0.85  # fixing typos keeps at least this share of the words in place
FIX_MAX_GROWTH = 0.15
FIX_FREE_WORDS = 3  # words a typo fix may change in a text of any length


def kind_of(instruction: str) -> str | None:
    """``add``, ``shorten`` or ``fix`` (typos) when the instruction says so, else None."""
    for kind, pattern in _KINDS:
        if pattern.search(instruction):
            return kind
    return None


def _changes(old: str, new: str) -> tuple[int, int, int, int]:
    """(words of old, words of new, old words removed or replaced, new words added)."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    removed = added = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("delete", "replace"):
            removed += i2 - i1
        if tag in ("insert", "replace"):
            added += j2 - j1
    return len(a), len(b), removed, added


def instruction_kind(instruction: str, original: str) -> Check | None:
    """The check for what the instruction asks, or None when it names no kind."""
    kind = kind_of(instruction)
    if kind is None:
        return None

    def check(generated: Generated) -> Verdict:
        old, new, removed, added = _changes(original, generated.text)
        if kind == "add":
            if new <= old or added == 0:
                return Verdict(
                    "instruction_kind",
                    False,
                    "asked to add, but nothing was added",
                    zh="要求添加内容，但什么也没有加",
                )
            if removed > max(3, ADD_MAX_REMOVED * old):
                return Verdict(
                    "instruction_kind",
                    False,
                    f"asked to add, but {removed} of the {old} words were removed or replaced",
                    zh=f"要求添加内容，却删掉或改掉了原文 {old} 个词中的 {removed} 个",
                )
            return Verdict("instruction_kind", True, f"added {added} words, removed {removed}")
        if kind == "shorten":
            if new >= old:
                return Verdict(
                    "instruction_kind",
                    False,
                    f"asked to shorten, but the text went from {old} to {new} words",
                    zh=f"要求缩短，但文字从 {old} 个词变成了 {new} 个",
                )
            return Verdict("instruction_kind", True, f"{old} → {new} words")
        # (3 words may change whatever the length: two typos fixed in a 12-word paragraph
        # were refused, "2 of the 12 words changed")
        changed_too_much = removed > max(FIX_FREE_WORDS, (1 - FIX_MIN_KEPT) * old)
        if changed_too_much or new > old * (1 + FIX_MAX_GROWTH) + 3:
            return Verdict(
                "instruction_kind",
                False,
                f"asked to fix typos, but {removed} of the {old} words changed and "
                f"{added} were written",
                zh=f"要求改错别字，却改动了 {old} 个词中的 {removed} 个，写了 {added} 个",
            )
        return Verdict("instruction_kind", True, f"{removed} words corrected")

    return check


# --- structure_kept ---------------------------------------------------------------------------

# Instructions that may drop a heading: to remove, merge, restructure, rewrite, shorten,
# summarise, translate or reformat, or that are about headings and sections.
_RESHAPES = re.compile(
    r"\b(?:remov\w*|delet\w*|drop\w*|cut\w*|trim\w*|merg\w*|combin\w*|split\w*|"
    r"restructur\w*|reorgani[sz]\w*|reorder\w*|rearrang\w*|rewrit\w*|re-writ\w*|redo|rework\w*|"
    r"shorten\w*|condens\w*|concise\w*|brief\w*|short\w*|summari[sz]\w*|simplif\w*|halve|"
    r"translat\w*|headings?|sections?|outline|structure|chapters?|bullets?|list|table|tl;?dr|"
    r"(?:one|a|two|three|single)\s+(?:sentence|paragraph|line|tweet)s?)\b"
    r"|删|去掉|合并|拆分|重组|结构|改写|重写|精简|缩短|压缩|简短|总结|概括|简化|标题|小节|章节|翻译|列表|表格",
    re.I,
)
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}[ \t]+\S")


def _headings(text: str) -> int:
    """How many Markdown headings ``text`` has outside fenced code."""
    count, fence = 0, None
    for line in text.splitlines():
        match = _FENCE_LINE.match(line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
        elif _HEADING_LINE.match(line):
            count += 1
    return count


def _named_headings(instruction: str, original: str) -> int:
    """How many of ``original``'s headings an instruction that names a place ("make the Usage
    section clearer", "fix the second section") may reshape away: those whose words it
    quotes, or one for a section it names by its place."""
    said = " ".join(instruction.casefold().split())
    named = sum(
        1
        for line in original.splitlines()
        if _HEADING_LINE.match(line)
        and (title := " ".join(line.strip().lstrip("#").split()).casefold())
        and re.search(rf"(?<![a-z0-9]){re.escape(title)}(?![a-z0-9])", said)
    )
    part = named_part(instruction)
    return max(named, 1 if part is not None and part.kind == "section" else 0)


def structure_kept(instruction: str, original: str) -> Check | None:
    """An edit that does not ask to remove, shorten, restructure or rewrite, and that keeps
    lines of the text as they were, keeps its headings too (none fewer): a small model asked
    to "rename the post's title" gave the body back without its one section, and nothing else
    failed it. An instruction that names a section or heading may lose that one's heading and
    no other (``_named_headings``): "make the Usage section clearer", sent as a whole-post
    edit, came back without the post's other headings and was saved. A text written anew (no
    line kept) is not judged: nothing says what it dropped. None when the instruction may
    take headings away, or the text has none."""
    headings = _headings(original)
    if not headings or _may_drop(instruction):
        return None
    spare = _named_headings(instruction, original) if _may_drop(instruction, headings=True) else 0
    lines = {
        key
        for line in original.splitlines()
        if len(key := " ".join(line.split())) >= SCOPE_MIN_LINE and not _HEADING_LINE.match(line)
    }

    def check(generated: Generated) -> Verdict:
        now = _headings(generated.text)
        kept = any(" ".join(line.split()) in lines for line in generated.text.splitlines())
        if now < headings - spare and kept:
            return Verdict(
                "structure_kept",
                False,
                f"the text had {headings} heading(s) and now has {now}: a section was dropped, "
                "which the instruction did not ask for",
                zh=f"原文有 {headings} 个标题，现在只有 {now} 个：删掉了一节，"
                "而修改说明并没有这样要求",
            )
        return Verdict("structure_kept", True, f"{now} heading(s)")

    return check


# --- code_kept --------------------------------------------------------------------------------

# An instruction about code: what it asks of a code block is the checks' to judge, not this one.
_ABOUT_CODE = re.compile(
    r"\b(?:code|snippets?|examples?|samples?|blocks?|commands?|scripts?|functions?|methods?|"
    r"variables?|fences?|comments?|programs?|quer(?:y|ies)|outputs?|syntax)\b"
    r"|代码|示例|例子|命令|脚本|函数|变量|注释|程序",
    re.I,
)
CODE_MIN_LINE = 8  # a code line this long, found outside a code block, was taken out of one


def fenced_blocks(text: str) -> list[str]:
    """The fenced code blocks of ``text``, each from its opening fence to its closing one
    (its lines' trailing spaces dropped); a block left open runs to the end."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        line = line.rstrip()
        match = _FENCE_LINE.match(line)
        if fence is None:
            if match:
                fence, current = match.group(1), [line]
            continue
        current.append(line)
        closing = line.strip()
        if match and set(closing) == {fence[0]} and len(closing) >= len(fence):
            blocks.append("\n".join(current))
            fence = None
    if fence is not None:
        blocks.append("\n".join(current))
    return blocks


_INLINE_CODE = re.compile(r"(`+)([^`\n]+?)\1(?!`)")
_FENCED_CODE = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?(?:^ {0,3}\1[ \t]*$|\Z)", re.S | re.M)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")  # of 4 characters or more


def without_code(text: str) -> str:
    """``text`` with its code blocks and inline code spans each made a space: the prose that
    figures, names and tags are read from ("FROM python:3.12" made the docker post python's)."""
    return _INLINE_CODE.sub(" ", _FENCED_CODE.sub(" ", text))


def code_from(*sources: str, verbatim: bool = False, inline: bool = False) -> Check:
    """A text that quotes code (an answer, a summary) quotes it from ``sources``: a code block
    more than half of whose lines (spaces aside; lines of three characters or fewer, as
    ``}``, not counted) none of the sources holds was made up; with ``verbatim`` (a summary,
    which shows the post's code or none), one such line is enough. The embedded model
    answered "what does the sqlite post say about ranking?" with a Python function of its
    own, shown as the post's, and summarised a post on generators with its generator turned
    into a list comprehension. With ``inline``, an inline code span with a name (4 letters,
    digits or underscores or more, case aside) that none of the sources holds was made up too:
    a summary of the rust lifetimes post showed `#[unmanaged_alloc]`. (Names, not whole spans:
    `asyncio.gather()` for the post's `asyncio.gather(*tasks)` is the post's.)"""
    known = "\n".join(" ".join(line.split()) for text in sources for line in text.splitlines())

    words = {w.casefold() for w in _IDENTIFIER.findall(" ".join(sources))}

    def check(generated: Generated) -> Verdict:
        if inline:  # (spans outside code blocks)
            prose = _FENCED_CODE.sub(" ", generated.text)
            for _, span in _INLINE_CODE.findall(prose):
                if any(w.casefold() not in words for w in _IDENTIFIER.findall(span)):
                    return Verdict(
                        "code_from_sources",
                        False,
                        f"it shows code that none of its sources has (`{_clip_line(span)}`)",
                        zh=f"其中的代码在原文里找不到（`{_clip_line(span)}`）",
                    )
        for block in fenced_blocks(generated.text):
            lines = [" ".join(line.split()) for line in block.splitlines()[1:]]
            lines = [line for line in lines if len(line) > 3 and not _FENCE_LINE.match(line)]
            made = [line for line in lines if line not in known]
            if made and (verbatim or len(made) * 2 > len(lines)):
                return Verdict(
                    "code_from_sources",
                    False,
                    f"it shows code that none of its sources has ({_clip_line(made[0])})",
                    zh=f"其中的代码在原文里找不到（{_clip_line(made[0])}）",
                )
        return Verdict("code_from_sources", True)

    return check


# What an instruction may name without asking for anything to go: "add a section about
# aliases" names a section to add (the embedded model's answer dropped the post's heading, and
# it was saved).
_STRUCTURE_NOUNS = re.compile(
    r"^(?:headings?|sections?|outline|structure|chapters?|bullets?|list|table|标题|小节|章节|"
    r"列表|表格|结构)$",
    re.I,
)


# The nouns of the places an instruction names: "make the Usage section clearer" says where,
# not that text may go. That a whole-body answer of the Usage section alone kept 14 of the
# post's 434 words was let through on the word "section", and replaced the post.
_PLACE_NOUNS = re.compile(r"^(?:headings?|sections?|chapters?|标题|小节|章节)$", re.I)


def _may_drop(instruction: str, *, headings: bool = False) -> bool:
    """Whether an edit may take parts of the text away (remove, shorten, restructure…). An
    addition ("add a section about …") may only when it also says to take something away.
    A heading, section or chapter named lets an edit change the headings (``headings``: for
    ``structure_kept``), and takes nothing else away."""
    kind = kind_of(instruction)
    if kind == "shorten":
        return True
    found = [m.group(0) for m in _RESHAPES.finditer(instruction)]
    if kind == "add":
        found = [word for word in found if not _STRUCTURE_NOUNS.match(word)]
    elif not headings:
        found = [word for word in found if not _PLACE_NOUNS.match(word)]
    return bool(found)


def _prose_keeper(original: str) -> Callable[[str], bool]:
    """Whether an answer keeps a line of ``original``'s prose (``SCOPE_MIN_LINE`` characters
    or more, spaces aside) as it was: a text written anew keeps none, and is not judged for
    what it dropped."""
    lines = {
        key
        for line, code in _lines_and_code(original)
        if not code[0] and len(key := " ".join(line.split())) >= SCOPE_MIN_LINE
    }

    def keeps(text: str) -> bool:
        return any(" ".join(line.split()) in lines for line in text.splitlines())

    return keeps


def _scoped(instruction: str, scoped: bool | None) -> bool:
    """Whether an edit is of one part of the post (a paragraph, a section, a selection), whose
    answer is judged for what it drops even when it keeps no line as it was: "make the first
    paragraph clearer" of a one-line paragraph with a ``{{< ref "other.md" >}}`` came back
    rewritten without it, and was saved. ``scoped`` None: when the instruction names such a
    part (a selection the caller says)."""
    if scoped is not None:
        return scoped
    part = named_part(instruction)
    return part is not None and part.kind != "title"


def code_kept(instruction: str, original: str, *, scoped: bool | None = None) -> Check | None:
    """An edit whose instruction is not about code leaves the text's code blocks as they
    were: none changed, none of their lines taken out into the prose, and, in a text that
    keeps lines of the prose, none dropped unless the instruction may remove or shorten. A
    small model asked to make a post "more concise" dropped a block's fences, so its
    ``# comment`` line became the post's first heading, and nothing failed it. An edit of one
    part (``scoped``, see ``_scoped``) is judged for a block it drops as if it kept lines.
    None when the text has no code block or the instruction is about code."""
    before = fenced_blocks(original)
    if not before or _ABOUT_CODE.search(instruction):
        return None
    may_drop = _may_drop(instruction)
    keeps_prose = _prose_keeper(original)
    part = _scoped(instruction, scoped)
    code_lines = {
        key
        for block in before
        for line in block.splitlines()[1:-1]
        if len(key := line.strip()) >= CODE_MIN_LINE
    }

    def check(generated: Generated) -> Verdict:
        after = fenced_blocks(generated.text)
        changed = [block for block in after if block not in before]
        # (A text written anew, no line of the prose kept, is not judged for what it dropped:
        # nothing says it meant to keep the rest.)
        kept = part or keeps_prose(generated.text)
        dropped = [b for b in before if b not in after] if kept and not may_drop else []
        loose = [
            line.strip()
            for line, code in _lines_and_code(generated.text)
            if not code[0] and line.strip() in code_lines
        ]
        if changed or dropped or loose:
            what = (
                f"{len(changed)} code block(s) changed" if changed
                else f"{len(dropped)} code block(s) dropped" if dropped
                else f"code taken out of its block ({_clip_line(loose[0])})"
            )  # fmt: skip
            zh = (
                f"改动了 {len(changed)} 个代码块" if changed
                else f"删掉了 {len(dropped)} 个代码块" if dropped
                else f"代码被移出了代码块（{_clip_line(loose[0])}）"
            )  # fmt: skip
            return Verdict(
                "code_kept",
                False,
                f"{what}, which the instruction did not ask for",
                zh=f"{zh}，而修改说明并没有这样要求",
            )
        return Verdict("code_kept", True, f"{len(after)} code block(s) as they were")

    return check


# Template code in a post's body, which the site's build reads: Hugo shortcodes ({{< x >}},
# {{% x %}}), Liquid and Tera tags ({% raw %}) and output ({{ page.title }}).
_TEMPLATE = re.compile(r"\{\{[<%].*?[>%]\}\}|\{%.*?%\}|\{\{.*?\}\}", re.S)
_ABOUT_TEMPLATE = re.compile(
    r"\b(?:liquid|shortcodes?|templat\w*|tera|includes?|raw\s+tags?)\b|短代码|模板|模版", re.I
)
_BLOCK_TAG = re.compile(r"^\{%-?\s*(end)?(\w+)")


def _templates(text: str) -> dict[str, tuple[int, str]]:
    """Each piece of template code in ``text`` outside its code blocks, its spaces aside
    (``{{page.title}}`` is ``{{ page.title }}``): how often, and as first written."""
    counts: dict[str, tuple[int, str]] = {}
    for line, code in _lines_and_code(text):
        for found in _TEMPLATE.finditer(line):
            if not code[found.start()]:
                key = "".join(found.group().split())
                n, written = counts.get(key, (0, found.group()))
                counts[key] = (n + 1, written)
    return counts


def _block_tags(*counts: dict[str, tuple[int, str]]) -> set[str]:
    """The block tags closed somewhere in ``counts`` (``raw`` for ``{% endraw %}``)."""
    return {m.group(2) for c in counts for key in c if (m := _BLOCK_TAG.match(key)) and m.group(1)}


def _unpaired(counts: dict[str, tuple[int, str]], blocks: set[str]) -> set[str]:
    """The block tags of ``blocks`` opened more or fewer times than closed in ``counts``."""
    opened = dict.fromkeys(blocks, 0)
    for key, (n, _) in counts.items():
        tag = _BLOCK_TAG.match(key)
        if tag is not None and tag.group(2) in opened:
            opened[tag.group(2)] += -n if tag.group(1) else n
    return {tag for tag, n in opened.items() if n}


def template_kept(instruction: str, original: str, *, scoped: bool | None = None) -> Check | None:
    """An edit whose instruction is not about templates or shortcodes leaves the template
    code of the text as it was: none added or changed, block tags still paired, and, in an
    answer that keeps lines of the prose, none dropped unless the instruction may remove or
    shorten. The embedded model made a Jekyll paragraph friendlier by writing a new
    ``{{page.title}}`` and moving ``{% endraw %}`` after its own text; it was saved. An edit
    of one part (``scoped``, see ``_scoped``) is judged for what it drops as if it kept
    lines. None when the text has no template code or the instruction is about it."""
    before = _templates(original)
    if not before or _ABOUT_TEMPLATE.search(instruction):
        return None
    may_drop = _may_drop(instruction)
    keeps_prose = _prose_keeper(original)
    part = _scoped(instruction, scoped)

    def check(generated: Generated) -> Verdict:
        after = _templates(generated.text)
        added = [w for key, (n, w) in after.items() if n > before.get(key, (0, ""))[0]]
        kept = part or keeps_prose(generated.text)
        dropped = (
            [w for key, (n, w) in before.items() if after.get(key, (0, ""))[0] < n]
            if kept and not may_drop
            else []
        )
        blocks = _block_tags(before, after)
        unpaired = sorted(_unpaired(after, blocks) - _unpaired(before, blocks))
        if added:
            what, zh = "template code added or changed", "改动了模板代码"
        elif unpaired:
            what, zh = f"the {unpaired[0]} tag is no longer paired", f"{unpaired[0]} 标签不再成对"
        elif dropped:
            what, zh = "template code dropped", "删掉了模板代码"
        else:
            return Verdict("template_kept", True)
        shown = _clip_line((added or dropped or [""])[0])
        where = f" ({shown})" if shown else ""
        return Verdict(
            "template_kept",
            False,
            f"{what}{where}, which the instruction did not ask for",
            zh=f"{zh}{where}，而修改说明并没有这样要求",
        )

    return check


_STRAY_TEMPLATE = re.compile(r"\{\{|\}\}|\{%|%\}")


def template_from(*sources: str) -> Check:
    """A text that tells of others (a summary) shows, outside code, only template code they
    have, with its block tags paired, and no stray ``{{``, ``}}``, ``{%`` or ``%}``: the
    embedded model summarised a Jekyll post as "{% raw %}Use {{ page.title }} in layouts.
    {#use-page-in-layout #1234567890ABCDEBDFGZXTUA}}"."""
    known: dict[str, tuple[int, str]] = {}
    for text in sources:
        known |= _templates(text)

    def check(generated: Generated) -> Verdict:
        shown = _templates(generated.text)
        made = [w for key, (_, w) in shown.items() if key not in known]
        unpaired = sorted(_unpaired(shown, _block_tags(shown, known)))
        stray = [
            found.group()
            for line, code in _lines_and_code(_TEMPLATE.sub(" ", generated.text))
            for found in _STRAY_TEMPLATE.finditer(line)
            if not code[found.start()]
        ]
        if made:
            what, zh = (
                f"template code its source does not have ({_clip_line(made[0])})",
                (f"原文里没有的模板代码（{_clip_line(made[0])}）"),
            )
        elif unpaired:
            what, zh = f"a {unpaired[0]} tag not closed", f"没有闭合的 {unpaired[0]} 标签"
        elif stray:
            what, zh = f"template marks left alone ({stray[0]})", f"残缺的模板符号（{stray[0]}）"
        else:
            return Verdict("template_from_sources", True)
        return Verdict("template_from_sources", False, f"it shows {what}", zh=f"其中有{zh}")

    return check


def _clip_line(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- scope ------------------------------------------------------------------------------------

SCOPE_MIN_LINE = 20  # a line of the rest of the post this long, found in the answer, is a copy
SCOPE_MAX_GROWTH = 3.0


def scope(part: str, rest: str, *, growing: bool) -> Check:
    """An answer to an edit of ``part`` must not bring back ``rest`` (the post around it) nor,
    unless the edit adds (``growing``), grow far past the part."""
    rest_lines = {
        " ".join(line.split())
        for line in rest.splitlines()
        if len(line.strip()) >= SCOPE_MIN_LINE and line.strip() not in part
    }

    def check(generated: Generated) -> Verdict:
        copied = [
            line for line in generated.text.splitlines() if " ".join(line.split()) in rest_lines
        ]
        if copied:
            return Verdict(
                "scope",
                False,
                f"asked to edit one part, the answer holds {len(copied)} line(s) of the rest "
                f"of the post ({_listed(copied)})",
                zh=f"只要求修改一部分，回答却包含文章其余部分的 {len(copied)} 行",
            )
        if not growing and len(generated.text) > SCOPE_MAX_GROWTH * len(part) + 200:
            return Verdict(
                "scope",
                False,
                f"asked to edit one part of {len(part)} characters, the answer has "
                f"{len(generated.text)}",
                zh=f"只要求修改 {len(part)} 个字符的一部分，回答却有 {len(generated.text)} 个",
            )
        return Verdict("scope", True)

    return check


# --- wikilinks --------------------------------------------------------------------------------

_LINK = re.compile(r"(!?)\[\[([^\[\]\n]{1,300})\]\]")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
MAX_INVENTED_SHARE = 0.5
MIN_INVENTED_TO_FAIL = 3


def _code_mask(text: str) -> list[bool]:
    """For each character of ``text``: is it inside code (a fence or inline code)?"""
    mask = [False] * len(text)
    fence: str | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        match = _FENCE_LINE.match(line)
        if fence is not None or match:
            mask[offset : offset + len(line)] = [True] * len(line)
            if fence is None:
                fence = match.group(1) if match else None
            elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
        else:
            for code in re.finditer(r"(`+)(?:(?!\1).)+?\1", line):
                start = offset + code.start()
                mask[start : offset + code.end()] = [True] * (code.end() - code.start())
        offset += len(line)
    return mask


def _lines_and_code(text: str) -> Iterator[tuple[str, list[bool]]]:
    """Each line of ``text`` (its line end kept) with ``_code_mask``'s answer for each of its
    characters."""
    mask = _code_mask(text)
    offset = 0
    for line in text.splitlines(keepends=True):
        yield line, mask[offset : offset + len(line)]
        offset += len(line)


def wikilinks(resolves: Callable[[str], bool], *, known: Iterable[str] = ()) -> Check:
    """Links must name a post (``resolves``) or be among ``known`` (in the text before the edit);
    any other becomes its plain text. Mostly invented links fail the check."""
    kept = {normalize_target(k) for k in known}

    def check(generated: Generated) -> Verdict:
        text = generated.text
        mask = _code_mask(text)
        invented: list[str] = []
        total = 0

        def plain(match: re.Match[str]) -> str:
            nonlocal total
            if mask[match.start()]:
                return match.group(0)
            inner = match.group(2).replace("\\|", "|")
            target, _, alias = inner.partition("|")
            name = target.split("#", 1)[0].split("^", 1)[0].strip()
            if not name:  # [[#Heading]]: inside this post
                return match.group(0)
            total += 1
            if normalize_target(name) in kept or resolves(name):
                return match.group(0)
            invented.append(name)
            return alias.strip() or target.replace("#", " ").strip()

        fixed = _LINK.sub(plain, text)
        if not invented:
            return Verdict("wikilinks", True, f"{total} link(s), all to posts" if total else "")
        if len(invented) >= MIN_INVENTED_TO_FAIL and len(invented) > MAX_INVENTED_SHARE * total:
            return Verdict(
                "wikilinks",
                False,
                f"{len(invented)} of {total} [[links]] name no post of the blog: "
                f"{_listed(invented)}",
                fixed,
                f"{total} 个 [[链接]] 中有 {len(invented)} 个指向不存在的文章：{_listed(invented)}",
            )
        return Verdict(
            "wikilinks",
            True,
            f"made plain text: {_listed(invented)} (no such post)",
            fixed,
        )

    return check


# --- web links ---------------------------------------------------------------------------------

# [text](https://…) or ![alt](https://…) (groups 2 and 3), or <https://…> (group 4).
_WEB_LINK = re.compile(
    r"!?\[([^\[\]\n]{0,300})\]\(\s*<?(https?://[^\s)>]{1,2000})>?(?:\s+\"[^\"\n]*\")?\s*\)"
    r"|<(https?://[^\s<>]{1,2000})>"
)
_URL = re.compile(r"https?://[^\s<>()\[\]\"'`]{1,2000}")


# A web address as a request gives it ("research https://…", "what is https://… about?"):
# parentheses kept when paired ("…/Rust_(programming_language)"), a closing stop left out.
GIVEN_URL = re.compile(
    r"https?://(?:\[[0-9A-Fa-f:.]+\](?::\d+)?(?=[/?#\s]|$))?"  # an IPv6 host, [::1]:8765
    r"(?:[^\s<>\"'`，。；（）()\[\]]|\([^\s()]*\))*"
)


def given_urls(text: str) -> list[str]:
    """The web addresses in ``text``, in order, each once, without a closing stop."""
    found: list[str] = []
    for match in GIVEN_URL.finditer(text):
        url = match.group(0).rstrip(".,;:!?")
        if url.endswith("://"):
            continue  # (a scheme alone)
        if url not in found:
            found.append(url)
    return found


def web_addresses(*texts: str) -> set[str]:
    """The http(s) addresses written in ``texts`` (the prompt's, the post's), as
    ``web_links`` compares them."""
    return {_url_key(url) for text in texts for url in _URL.findall(text)}


def _url_key(url: str) -> str:
    return url.rstrip(".,;:!?").rstrip("/").lower()


def web_links(known: Iterable[str] = ()) -> Check:
    """A Markdown link (or ``<autolink>``) to a web address that is in none of ``known`` (the
    prompt's addresses, the post's own) becomes its text: a small model invents references
    ("[Green Tea Brewing Guide](https://www.teabrewer.com/…)") that lead nowhere or somewhere
    else. Code is left alone; a bare address in prose is left as written. Never fails."""
    kept = {_url_key(k) for k in known}

    def check(generated: Generated) -> Verdict:
        text = generated.text
        if "http" not in text:
            return Verdict("web_links", True)
        mask = _code_mask(text)
        invented: list[str] = []

        def plain(match: re.Match[str]) -> str:
            if mask[match.start()]:
                return match.group(0)
            url = match.group(2) or match.group(3)
            if _url_key(url) in kept:
                return match.group(0)
            invented.append(url)
            return (match.group(1) or "").strip()

        fixed = _WEB_LINK.sub(plain, text)
        if not invented:
            return Verdict("web_links", True)
        return Verdict(
            "web_links", True, f"made plain text: {_listed(invented)} (not given)", fixed
        )

    return check


_FILLER_WORDS = """for the and your you this that with see here more read about from into link links
page pages site website search result results info information details are some posts
post articles article there these those some also"""
_ADDRESS_FILLER = frozenset(_FILLER_WORDS.split())


def _address_key(url: str) -> str:
    """An address as compared: no scheme, no ``www.``, no fragment, no closing stop or slash,
    whatever its case (``http://docs.rs/serde`` is ``https://docs.rs/serde#derive``)."""
    url = url.rstrip(".,;:!?—–…'\"”’")
    if url.endswith(")") and url.count("(") < url.count(")"):
        url = url[:-1]
    url = re.sub(r"^https?://(?:www\.)?", "", url.casefold())
    return url.split("#", 1)[0].rstrip("/")


def addresses_from(*sources: str) -> Check:
    """An answer is more than web addresses none of its ``sources`` (the posts' excerpts, the
    question) has: the embedded model answered "search my blog for ssh" with two addresses it
    made up (a reddit thread, a Stack Overflow question) and nothing else, shown as done. Such
    an answer fails: what is left without them (and without a made-up link's text, and words
    that only lead in: "Here are some posts about …") is under three words. Nothing is taken
    out of an answer that says more; addresses in code are not judged."""
    kept = {_address_key(url) for text in sources for url in given_urls(text)}

    def check(generated: Generated) -> Verdict:
        text = generated.text
        if "http" not in text:
            return Verdict("addresses_from_sources", True)
        mask = _code_mask(text)
        invented: list[str] = []
        rest = text
        for found in _WEB_LINK.finditer(text):  # (a made-up link's text goes with it)
            url = found.group(2) or found.group(3)
            if not mask[found.start()] and _address_key(url) not in kept:
                invented.append(url)
                rest = rest.replace(found.group(0), " ", 1)
        for url in given_urls(rest):
            at = text.find(url)
            if at >= 0 and mask[at]:
                continue
            if _address_key(url) not in kept:
                invented.append(url)
                rest = rest.replace(url, " ", 1)
        if not invented:
            return Verdict("addresses_from_sources", True)
        words = re.findall(r"[^\W\d_]{3,}", HAN.sub(" ", _CODE.sub(" ", rest)).casefold())
        said = [w for w in words if w not in _ADDRESS_FILLER]
        han = len(HAN.findall(rest))
        if len(said) + han < 3:
            shown = _clip_line(invented[0])
            return Verdict(
                "addresses_from_sources",
                False,
                f"it gives web addresses none of its sources has ({shown}), and little else",
                zh=f"它给出的网址都不在来源里（{shown}），除此之外几乎没有内容",
            )
        return Verdict("addresses_from_sources", True, f"not from its sources: {_listed(invented)}")

    return check


# --- frontmatter ------------------------------------------------------------------------------


def frontmatter_kept(block: str, compose: Callable[[str], str]) -> Check:
    """The post ``compose(text)`` would save starts with ``block``, byte for byte."""

    def check(generated: Generated) -> Verdict:
        if compose(generated.text).startswith(block):
            return Verdict("frontmatter", True)
        return Verdict(
            "frontmatter", False, "the frontmatter would change", zh="frontmatter 会被改动"
        )

    return check


# --- degenerate text --------------------------------------------------------------------------

_ENDS_CLEANLY = re.compile(r"[\s.!?。！？…:;：；)\]}>`*_\"'”’」』）|~-]$")


# One mark said again and again: SmolLM2-135M wrote "，－－；；；；…" to the end of a summary, a
# run too short for the repetition guard (300 characters) in a text that short.
_MARK_RUN = re.compile(r"([^\w\s])\1{19,}")


def _punctuation_run(text: str) -> str | None:
    """The first run of 20 or more of one mark in the prose (not in code, not a line of that
    mark alone: a rule, a heading's underline, a table's), or None."""
    for line, code in _lines_and_code(text):
        for found in _MARK_RUN.finditer(line):
            if code[found.start()]:
                continue
            if not line.replace(found.group(1), "").strip(" \t\r\n|:"):
                continue
            return found.group(0)[:20]
    return None


def not_degenerate(generated: Generated) -> Verdict:
    text = generated.text
    if not text.strip():
        return Verdict("not_degenerate", False, "the text is empty", zh="文字是空的")
    if generated.looped:
        return Verdict(
            "not_degenerate",
            False,
            "the model fell into a loop and was cut short",
            zh="模型陷入了重复，被截断了",
        )
    if (run := _punctuation_run(text)) is not None:
        return Verdict(
            "not_degenerate",
            False,
            f"the text repeats one mark ({run!r}) over and over",
            zh=f"文字里一个符号不断重复（{run!r}）",
        )
    guard = RepetitionGuard()
    try:
        guard.feed(text)
        guard.feed("\n")
    except RepetitionStopped as stop:
        unit = stop.unit.strip()[:60]
        return Verdict(
            "not_degenerate",
            False,
            f"the text repeats itself ({unit!r})",
            zh=f"文字在不断重复（{unit!r}）",
        )
    if generated.cut and not _ENDS_CLEANLY.search(text.rstrip(" ")):
        return Verdict(
            "not_degenerate",
            False,
            "the text was cut off mid-word at the length limit",
            zh="文字在长度上限处被从中间截断了",
        )
    return Verdict("not_degenerate", True)


def reported_as(name: str, check: Check) -> Check:
    """``check`` with its verdicts under ``name``: a skill whose report lists its checks
    (WriteArticle's, Translate's ``data["checks"]``) keeps the names it had when a check
    joins one of them (a refusal or a text cut short is a text with nothing of the task)."""

    def renamed(generated: Generated) -> Verdict:
        return dataclasses.replace(check(generated), name=name)

    return renamed


def without_none(checks: Iterable[Check | None]) -> list[Check]:
    """The checks that apply (a check that does not, e.g. an instruction of no kind, is None)."""
    return [c for c in checks if c is not None]


# --- a refusal, or a text cut short -----------------------------------------------------------

# The model speaking of itself as a model that cannot do the task: "As an AI language model, I
# cannot browse the internet…", "I don't have access to real-time information", "作为一个人工
# 智能…". A research task that read its pages showed that as its answer, done. ("I could not
# find it on these pages" is an answer about the pages, and is left alone.)
REFUSAL = re.compile(
    r"\bas an? (?:ai|artificial intelligence|(?:large )?language model|llm|chatbot)"
    r"(?: (?:language )?(?:model|assistant|chatbot))?\s*[,，]?\s*I\b"
    r"|\bI(?:'m| am) (?:just |only )?an? (?:ai|artificial intelligence|(?:large )?language model"
    r"|text-based (?:ai|model)|ai (?:language )?(?:model|assistant))\b"
    r"|\bI (?:do not|don't|don’t|cannot|can't|can’t|am unable to|am not able to) "
    r"(?:have )?(?:access(?: to)?|browse|surf|search) (?:the )?(?:internet|web|real-time|"
    r"current|external|live|up-to-date)"
    r"|\bI(?: am sorry| apologi[sz]e|'m sorry|’m sorry)?,? (?:but )?I? ?(?:cannot|can't|can’t|"
    r"am unable to|am not able to) (?:answer|help with|assist with|provide (?:an answer|"
    r"information|that))\b"
    r"|(?:抱歉|对不起)[，,]?\s*我(?:无法|不能)(?:回答|提供|帮助)"
    r"|作为(?:一个|一名)?(?:AI|人工智能|语言模型|AI ?助手|AI ?语言模型)"
    r"|我(?:无法|不能|没有办法)(?:访问|浏览|连接|上)(?:互联网|网络|网页|实时)",
    re.I,
)


def not_refusing(*sources: str) -> Check:
    """The text is not the model saying, as a model, that it cannot do the task
    (``REFUSAL``, outside code): such a text is no result, whatever else it says. What
    ``sources`` say is theirs (a page on chatbots quoting "As an AI language model, I
    cannot …"), not the model's."""
    said = " ".join(" ".join(source.split()) for source in sources).casefold()

    def check(generated: Generated) -> Verdict:
        for found in REFUSAL.finditer(_CODE.sub(" ", generated.text)):
            if " ".join(found.group().split()).casefold() in said:
                continue
            return Verdict(
                "not_a_refusal",
                False,
                f"the model says it cannot do it ({found.group()!r}) instead of doing it",
                zh=f"模型说它做不到（{found.group()!r}），而没有去做",
            )
        return Verdict("not_a_refusal", True)

    return check


not_a_refusal = not_refusing()  # (with no sources)


# Words an English sentence does not end on: the embedded model's "The capital of Atlantis is
# Poseidonia, which" and "…built by Poseidon for his" stopped there, under the token limit
# (so ``not_degenerate`` did not judge them), and were shown as answers.
_LAST_WORDS = "a an the and or but nor of than because although though unless whether which "
_NO_LAST_WORDS = frozenset((_LAST_WORDS + "whose my your its our their very").split())
_LAST_WORD = re.compile(r"([^\W\d_]+)\W*$")
_OPEN_END = re.compile(r"[,，、;；(\[（—–]\s*$")
# Citations a line ends on ("…by the [1]", "…which ([SQLite FTS5](posts/sqlite-fts5.md))"):
# what stands before them is where the sentence stopped.
_CITED_END = re.compile(
    r"(?:\s*(?:[\[［【]\^?\d[\d\s,;，、\-–]*[\]］】]|\(\[[^\]\n]*\]\([^)\n]*\)\)))+\s*$"
)


def not_cut_short(generated: Generated) -> Verdict:
    """The text does not stop mid-sentence: its last line of prose (code and a table's rows
    aside) does not end on a comma, an open bracket or a word no sentence ends on
    (``_NO_LAST_WORDS``: an article, a conjunction, a possessive), whatever the token count."""
    lines = [
        line.strip()
        for line, code in _lines_and_code(generated.text)
        if line.strip() and not all(code[: len(line.rstrip())])
    ]
    if not lines or lines[-1].startswith("|"):
        return Verdict("not_cut_short", True)
    last = _CITED_END.sub("", lines[-1]).rstrip("*_ ")
    word = _LAST_WORD.search(last) if last[-1:].isalpha() else None
    last_word = word.group(1) if word is not None else ""
    if _OPEN_END.search(last) or (last_word != "A" and last_word.lower() in _NO_LAST_WORDS):
        end = _clip_line(last[-40:], 40)
        return Verdict(
            "not_cut_short",
            False,
            f"the text stops mid-sentence (…{end!r})",
            zh=f"文字在句子中间就停了（…{end!r}）",
        )
    return Verdict("not_cut_short", True)
