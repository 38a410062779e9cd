"""Translate: a post into another language, saved as a new post beside it.

The original is never changed (EditContent rewrites in place; a translation is a second
post): ``posts/x.md`` translated into English becomes ``posts/x-en.md`` (``-en-2``... when
taken), or what the site's own translations are named (``x.zh.md``, ``content/zh/…``:
``translation_path.py``), with the frontmatter kept, the title translated, and ``lang`` and
``translation_of`` added. Long bodies go to the model in parts, each a durable step.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial
from pathlib import PurePosixPath
from typing import Annotated, Any

from pydantic import BaseModel, Field

from skillrt import Replies, SkillContext, SkillResult, skill
from skillrt.blog.conventions import draft_name, first_heading, in_drafts_folder
from skillrt.blog.frontmatter import Frontmatter, split_frontmatter, strip_frontmatter
from skillrt.blog.markdown import split_post
from skillrt.blog.posts import IndexReport
from skillrt.blog.publish import address_taken
from skillrt.blog.wikilinks import wikilink_targets
from skillrt.exceptions import UserError
from skillrt.llm.base import estimate_tokens
from skillrt.skill.params import POST_DESCRIPTION, Chars, PostPath

from . import pick
from .checked import CHECKED, Checked, checked, quality_report, refuse_unchecked
from .checked import REPLIES as CHECK_REPLIES
from .checks import (
    HAN,
    Check,
    Generated,
    Verdict,
    language,
    no_scaffolding,
    not_cut_short,
    not_degenerate,
    not_refusing,
    prose_words,
    reported_as,
    web_addresses,
    web_links,
    wikilinks,
    written_in,
)
from .common import Saved, new_post_text, refuse, save_new_file
from .languages import LANGUAGE_REPLIES, LANGUAGES, known_language, target_language
from .newpost import DRAFT_REPLIES, NewPost, blog_style, draft_note
from .parts import code_lines
from .pick import ask_for_post, no_post_chosen, open_post, post_named
from .prompts import clip, messages, strip_fences
from .scaffold import Scaffold
from .translation_path import bundle_resources, first_names, site_languages, translation_path

__all__ = ["TranslateParams", "translate"]

MAX_PARTS = 24
MAX_RESOURCES = 200  # a page bundle's files copied with its translation
PART_TOKENS = 1200
TITLE_TOKENS = 100
_SET_FIELDS = ("title", "lang", "translation_of", "draft")  # draft: drafts.mark
_ADDRESS_FIELDS = ("path", "slug", "url", "permalink")
_PAGE_ENDS = (".html", ".htm")
_MISSING = object()
_CJK_LETTER = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_SCRIPTS = {
    "zh": HAN,
    "ja": re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),
    "ko": re.compile("[\uac00-\ud7af\u1100-\u11ff]"),
}
_LATIN_LETTER = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]")
_LATIN_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]+")
TRANSLATE_SYSTEM = (
    "You translate Markdown blog posts into {language}. Answer with the translation only: no "
    "explanation, no code fence around it. Keep the Markdown structure, code blocks (do not "
    "translate code), links and [[wikilinks]] as they are."
)
TITLE_SYSTEM = "Translate this blog post title into {language}. Answer with the title only."

REPLIES = (
    Replies(
        {
            "action": ("翻译", "translate"),
            "reading": ("读取文章", "Reading the post"),
            "too_long": (
                "文章太长了（{parts} 部分，最多 {limit}）。",
                "The post is too long to translate ({parts} parts; at most {limit}).",
            ),
            "translating_part": ("翻译第 {part}/{parts} 部分", "Translating part {part}/{parts}"),
            "no_translation": (
                "模型没有返回译文，没有保存任何文件。",
                "The model returned no translation; nothing was saved.",
            ),
            "saving": ("保存译文", "Saving the translation"),
            "translation_exists": (
                "`{path}` 已经有{language}版本：`{existing}`。没有翻译，也没有保存任何文件。"
                "要重新翻译，请先删除或改名 `{existing}`；要改动它，直接编辑它。",
                "`{path}` has a version in {language} already: `{existing}`. Nothing was "
                "translated or saved. To translate it again, delete or rename `{existing}` "
                "first; to change it, edit it.",
            ),
            "translation_of_it": (
                "`{path}` 是 `{existing}` 的译文，而 `{existing}` 就是{language}的。"
                "没有翻译，也没有保存任何文件。",
                "`{path}` is a translation of `{existing}`, which is in {language}. Nothing was "
                "translated or saved.",
            ),
            "frontmatter_changed": (
                "译文的 frontmatter 与原文不一致（{reason}），没有保存。",
                "The translation's frontmatter would not match the original's ({reason}); "
                "nothing was saved.",
            ),
            "translated_selection": (
                "选中文字的{language}译文（没有保存任何文件）：\n\n{text}",
                "The selected text in {language} (no file was changed):\n\n{text}",
            ),
            "resources_copied": (
                "\n\n原文文件夹里的 {count} 个其他文件（图片等）也复制到了 `{folder}/`。",
                "\n\nThe bundle's {count} other files (images…) were copied into `{folder}/` with "
                "it.",
            ),
            "resources_not_copied": (
                "\n\n这些文件没有复制，译文里指向它们的链接可能失效：{files}。",
                "\n\nNot copied (the translation's links to them may be broken): {files}.",
            ),
            "translated": (
                "已把 `{path}` 翻译成{language}，保存为 `{new_path}`（《{title}》），原文未改动。",
                "Translated `{path}` into {language} as `{new_path}` (“{title}”); the original "
                "is unchanged.",
            ),
        }
    )
    | pick.REPLIES
    | CHECK_REPLIES
    | DRAFT_REPLIES
    | LANGUAGE_REPLIES
)


class TranslateParams(BaseModel):
    language: Annotated[str | None, Chars()] = Field(  # None: the other of zh and en
        default=None,
        description="The language to translate into (Chinese, English, ja...; default: the"
        " other of Chinese and English)",
    )
    path: PostPath = Field(default=None, description="The post to translate: " + POST_DESCRIPTION)


def _title_from(answer: str, title: str) -> str:
    """The translated title from the model's line: its quotes, a heading's marks and a colon
    the title does not end with taken off (the embedded model translated "Vim tips I use
    daily" as "Vim tips I use daily:"); ``title`` when nothing is left."""
    new = " ".join(answer.lstrip("# ").split()).strip("\"'“”《》")
    if not title.rstrip().endswith((":", "：")):
        new = new.rstrip(":： ").strip("\"'“”《》")
    return new or title


def _shown(ctx: SkillContext, code: str) -> str:
    """The language ``code`` as a reply names it: 英文 in a Chinese reply (it said
    "翻译成English"), the name the model was asked for in an English one."""
    names = LANGUAGES[code]
    return names.name_zh if ctx.input.language == "zh" else names.prompt


def _target_language(ctx: SkillContext, asked: str | None) -> tuple[str, bool]:
    """The code of the language asked for, and True; without one, the other of Chinese and
    English than the request's, and False (``translate`` then checks the post's too)."""
    if asked:
        return known_language(asked), True
    named = target_language(ctx.input.text)  # the route's patterns did not take it
    if named is not None:
        return named, True
    return ("en" if ctx.input.language == "zh" else "zh"), False  # "translate it"


def _blocks(body: str) -> list[tuple[int, int, bool]]:
    """The blocks of ``body`` between its blank lines: each one's start, its end (before its
    last line break) and whether it holds a fence. A fence is one block, its blank lines and
    all (closed or not)."""
    blocks: list[tuple[int, int, bool]] = []
    start: int | None = None
    end, fenced = 0, False
    for offset, text, in_code in code_lines(body):
        if not in_code and not text.strip():
            if start is not None:
                blocks.append((start, end, fenced))
            start, fenced = None, False
            continue
        if start is None:
            start = offset
        end, fenced = offset + len(text), fenced or in_code
    if start is not None:
        blocks.append((start, end, fenced))
    return blocks


def _cut(text: str, budget: int) -> list[tuple[str, str]]:
    """A block of prose too long for one part, in pieces of at most ``budget`` tokens, each
    with the text that followed it (its line break, the spaces it was cut at, or ""): cut at
    line breaks, and a line too long at its last space that fits (or where it must)."""
    pieces: list[tuple[str, str]] = []
    for line in text.splitlines(keepends=True):
        words = line.rstrip("\r\n")
        ending = line[len(words) :]
        while True:
            size = len(words)
            while estimate_tokens(words[:size]) > budget and size > 1:
                size = size * 3 // 4
            if size >= len(words):
                pieces.append((words, ending))
                break
            space = words.rfind(" ", 1, size + 1)
            stop = space if space > 0 else size
            rest = words[stop:].lstrip(" ")
            pieces.append((words[:stop], words[stop : len(words) - len(rest)]))
            words = rest
            if not words:  # (spaces to the line's end: they go with the piece before)
                piece, after = pieces[-1]
                pieces[-1] = (piece, after + ending)
                break
    return pieces


def translation_parts(body: str, budget: int) -> tuple[list[str], list[str]]:
    """``body`` in parts of at most ``budget`` tokens (estimated), cut only between its
    blocks (``_blocks``; a block of prose too long for a part at its lines, ``_cut``), never
    inside a fence; and the text between each two parts, as it was. Summarize's parts
    (``split_parts``) are cut at every blank line, fences too, and joined by one blank line:
    a Python block's two blank lines between functions became one, and a line of spaces in
    it an empty line, in the translation of a post whose code the model gave back as it
    was."""
    units: list[tuple[str, str]] = []  # (a block or a piece of one, the text after it)
    blocks = _blocks(body)
    for n, (start, end, fenced) in enumerate(blocks):
        after = body[end : blocks[n + 1][0]] if n + 1 < len(blocks) else ""
        text = body[start:end]
        if fenced or estimate_tokens(text) <= budget:
            units.append((text, after))
        else:
            pieces = _cut(text, budget)
            units += [*pieces[:-1], (pieces[-1][0], after)]
    parts: list[str] = []
    joints: list[str] = []
    current, joint = "", ""
    for text, after in units:
        joined = current + joint + text
        if current and estimate_tokens(joined) > budget:
            parts.append(current)
            joints.append(joint)
            joined = text
        current, joint = joined, after
    if current:
        parts.append(current)
    return parts, joints


def _answer(content: str, part: str) -> str:
    """The model's translation of ``part``: without a fence around it all (when ``part``
    itself is no fenced block: a part of one Python block came back without its fence), and
    without blank lines around it; the indent of its first line kept when ``part``'s first
    line has one (an indented code block's first line lost it)."""
    fenced = strip_fences(part) != part.strip()  # the part is one fenced block
    unwrapped = strip_fences(content)
    # (a part with no indent in front has none to keep: an answer's own spaces are none)
    if not fenced and (unwrapped != content.strip() or not part[:1].isspace()):
        return unwrapped
    return re.sub(r"\A(?:[ \t]*\r?\n)+", "", content).rstrip()


async def _translate_part(
    ctx: SkillContext, system: str, content: str, max_tokens: int, note: str
) -> Generated:
    result = await ctx.llm.chat(messages(system, content + note), max_tokens=max_tokens)
    return Generated(
        text=_answer(result.content, content),
        looped=result.truncated_repetition,
        cut=result.usage.completion_tokens >= max_tokens,
    )


def has_words(part: str) -> Check:
    """A part with words outside code comes back with words: the embedded model answered the
    Hugo shells post (a code block, a heading and a sentence) with "```" alone, and that
    was saved as its translation and reported done. Reported as ``not_degenerate`` (a text
    with nothing to read), so a report's checks are the ones they were."""
    worded = prose_words(part) > 0

    def check(generated: Generated) -> Verdict:
        if worded and not prose_words(generated.text):
            return Verdict(
                "not_degenerate",
                False,
                "the translation has no words outside code, and the text has",
                zh="译文在代码之外没有文字，原文有",
            )
        return Verdict("not_degenerate", True)

    return check


def _ends_a_sentence(part: str) -> bool:
    """``part`` does not stop mid-sentence itself (``not_cut_short``), so its translation
    must not either (a part that does is translated so)."""
    return not_cut_short(Generated(text=part)).passed


def part_checks(ctx: SkillContext, system: str, part: str, code: str) -> list[Check]:
    """What each translated part must pass (see ``checks.py``)."""
    return [
        no_scaffolding(Scaffold([system], content=[part])),
        has_words(part),
        not_degenerate,
        language(code),
        # (the Chinese borrowing post "translated" into German was saved as the 17 English
        # words "As an AI language model, I cannot edit files on your computer, …"; under
        # not_degenerate's name, as has_words, so a report's checks are the ones they were)
        reported_as("not_degenerate", not_refusing(part)),
        *([reported_as("not_degenerate", not_cut_short)] if _ends_a_sentence(part) else []),
        wikilinks(
            lambda name: ctx.memory.resolve_link(name) is not None, known=wikilink_targets(part)
        ),
        web_links(web_addresses(part)),
    ]


def frontmatter_check(
    source: dict[str, Any], new_text: str, path: str, readdressed: Sequence[str] = ()
) -> Verdict:
    """The translation's frontmatter holds every field of the source's, unchanged, except
    the ones the translation sets (and ``readdressed``: its own web address, ``_own_address``)."""
    metadata = split_frontmatter(new_text, path).fields()
    changed = [
        key
        for key in source
        if key not in (*_SET_FIELDS, *readdressed) and metadata.get(key, _MISSING) != source[key]
    ]
    if changed:
        fields = ", ".join(map(str, changed))
        return Verdict(
            "frontmatter", False, f"fields changed: {fields}", zh=f"这些字段被改动了：{fields}"
        )
    return Verdict("frontmatter", True, "kept every field but " + ", ".join(_SET_FIELDS))


def _without_added_title(text: str, part: str, titles: tuple[str, ...]) -> str:
    """The first part's translation without a ``# title`` line the model put in front (the
    title, in either language) when the post's body opens with none: it was saved, and the
    title stood twice on the page, the generator's and the heading's."""
    if first_heading(part.split("\n", 1)[0]) is not None:
        return text
    head, _, rest = text.lstrip("\r\n").partition("\n")
    said = first_heading(head)
    if said is None or _folded(said) not in {_folded(t) for t in titles}:
        return text
    return rest.lstrip("\r\n")


def _folded(line: str) -> str:
    return " ".join(line.split()).strip(" \"'“”").casefold()


async def _title_line(ctx: SkillContext, system: str, title: str, note: str) -> Generated:
    """The model's first line is the title: a small model often goes on after it (notes, a
    second version), and what follows the line is neither the title nor a cut one. A first
    line that says the prompt again is passed over: "Translate this blog post title into
    Simplified Chinese. Answer with the title only." then "异步钩子" was refused, the title
    taken for the prompt's line."""
    result = await ctx.llm.chat(messages(system, title + note), max_tokens=TITLE_TOKENS)
    text = strip_fences(result.content).strip()
    while (said := text.partition("\n"))[1] and _folded(said[0]) == _folded(system):
        text = said[2].strip()
    line, ended, _ = text.partition("\n")
    return Generated(
        text=line.strip(),
        looped=result.truncated_repetition and not ended,
        cut=result.usage.completion_tokens >= TITLE_TOKENS and not ended,
    )


def _script(code: str) -> re.Pattern[str]:
    """A letter of the script ``code`` is written in: Chinese and Japanese CJK (kana too),
    Korean hangul, any other a Latin letter."""
    return _SCRIPTS.get(code, _LATIN_LETTER)


def _judged_title(title: str, code: str) -> bool:
    """Whether a title must change script to be in ``code``: it has letters of another script
    than ``code``'s and is no name. Two CJK characters (or hangul) are words; Latin words are
    a name when there are fewer than 4 and each is capitalised or holds no letter only
    ("Rust 1.78.0", "Docker", "Visual Studio Code": kept as they are in Chinese too), and
    words when one is lowercase ("Async hooks") or there are 4 or more."""
    own = _script(code)
    if own is _LATIN_LETTER:
        return sum(1 for c in title if _CJK_LETTER.match(c) and not own.match(c)) >= 2
    if own.search(title):
        return False
    words = [w for w in _LATIN_WORD.findall(title) if len(w) > 1]
    return len(words) >= 4 or (len(words) >= 2 and any(w[0].islower() for w in words))


def _named_otherwise(title: str, body: str) -> bool:
    """Whether the post's text writes the title's words only otherwise than the title does
    ("async hooks", "Async hooks" for "Async Hooks"): a title-case title of common words, no
    name. A name is written the same way in the text ("Visual Studio Code"); a title the text
    never says is left to ``_judged_title``. "Async Hooks" as the Chinese translation's title
    passed for a name, as "Docker" does."""
    phrase = " ".join(title.split())
    if not phrase or not body:
        return False
    prose = " ".join(body.split())
    return phrase not in prose and phrase.casefold() in prose.casefold()


def title_translated(title: str, code: str, body: str = "") -> Check:
    """A title in another script than ``code``'s comes back in ``code``'s (a letter of it at
    least) and not as it was: the model's "Async hooks" was saved as the Chinese translation's
    title, a title under 5 words being too short for ``language`` to tell. A name ("Rust
    1.78.0", ``_judged_title``) is not judged. Reported as ``language``."""
    judged = _judged_title(title, code) or (
        _script(code) is not _LATIN_LETTER
        and not _script(code).search(title)
        and _named_otherwise(title, body)
    )
    names = LANGUAGES[code]

    def check(generated: Generated) -> Verdict:
        answer = generated.text
        if judged and (_folded(answer) == _folded(title) or not _script(code).search(answer)):
            return Verdict(
                "language",
                False,
                f"the title is not translated into {names.name}",
                zh=f"标题没有翻译成{names.name_zh}",
            )
        return Verdict("language", True)

    return check


async def _translate_title(
    ctx: SkillContext, title: str, name: str, code: str, body: str = ""
) -> Checked:
    """The title translated, checked like a part (a title too short to tell passes language,
    but one in another script must change script: ``title_translated``)."""
    system = TITLE_SYSTEM.format(language=name)
    ask = partial(_title_line, ctx, system, clip(title, 200))
    checks = [
        no_scaffolding(Scaffold([system], content=[title])),
        not_degenerate,
        language(code),
        title_translated(title, code, body),
    ]
    return await checked(ctx, "title", ask, checks)


async def _translate_parts(
    ctx: SkillContext, parts: list[str], language: str, code: str
) -> list[Checked]:
    """Each part in its own durable step, checked (and asked again once); stops at a part that
    fails twice."""
    system = TRANSLATE_SYSTEM.format(language=language)
    translated: list[Checked] = []
    for i, part in enumerate(parts, 1):
        ctx.progress(2, 3, ctx.reply("translating_part", part=i, parts=len(parts)))
        ask = partial(_translate_part, ctx, system, part, 2 * PART_TOKENS)
        result = await checked(ctx, f"part:{i}", ask, part_checks(ctx, system, part, code))
        translated.append(result)
        if not result.passed:
            break
    return translated


def _translated_post(
    ctx: SkillContext,
    source: Frontmatter,
    title: str,
    code: str,
    path: str,
    translated: list[str],
    joints: list[str],
) -> NewPost:
    """The translation: the original's frontmatter in its own format (order, comments and the
    other fields kept) with the title, ``lang`` and ``translation_of`` set, then the
    translated parts, between them the text that was between the original's (``joints``; a
    frontmatter block the model put in front of a part is dropped). Saved
    beside the original as ``<name>-<code>`` (a page bundle as ``<slug>-<code>/index.md``),
    or as the site names its translations (``translation_path``); a draft (``drafts.mark``)
    in the blog's drafts folder where it has one and the site's naming is not followed, else
    with a ``draft`` field. Blocking I/O: a sync step."""
    texts = [strip_frontmatter(part)[0].strip("\n") for part in translated]
    body = "".join(text + joint for text, joint in zip(texts, [*joints, ""], strict=False))
    wanted, sites_own = translation_path(
        ctx.config.root, ctx.config.layout.kind, path, code, ctx.files.exists
    )
    fields: dict[str, Any] = {"title": title, "lang": code, "translation_of": path}
    # (beside the original, in its language: a web address of its own)
    if sites_own:
        address, gone = _language_address(ctx, source.fields(), code)
    else:
        address, gone = _own_address(source.fields(), code)
    fields.update(address)
    in_drafts = in_drafts_folder(path)
    draft = ctx.config.drafts.mark and not in_drafts
    # (a name the site's languages give stays where it is: a draft gets the field)
    drafts_dir = blog_style(ctx).drafts_dir if draft and not sites_own else None
    if drafts_dir:
        wanted = f"{drafts_dir}/{draft_name(wanted)}"
    elif draft:
        fields["draft"] = True
    if source.format is None:
        text = new_post_text(fields, body)
    else:
        text = source.with_fields(fields, remove=gone).block + "\n" + body.strip("\n") + "\n"
    return NewPost(
        path=wanted,
        text=_line_ends(text, source.text),
        draft=draft or in_drafts,
        readdressed=[*address, *gone],
    )


def _own_address(fields: dict[str, Any], code: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A translation beside the original, in the same language's pages, with a web address of
    its own: a ``path``, ``slug``, ``url`` or ``permalink`` field with ``-<code>`` added
    (``2024/05/02/Rust-1.78.0-zh``, ``/posts/x-zh.html``), and the ``aliases`` left out (the
    fields set, the fields removed). The Rust blog's ``Rust-1.78.0-zh.md`` kept ``path =
    "2024/05/02/Rust-1.78.0"``: two pages at one address, and ``zola build`` failed ("Found
    path collisions")."""
    changes: dict[str, Any] = {}
    for key in _ADDRESS_FIELDS:
        value = fields.get(key)
        if isinstance(value, str) and value.strip("/ "):
            stripped = value.rstrip("/")
            suffix = PurePosixPath(stripped).suffix if stripped.endswith(_PAGE_ENDS) else ""
            stem = stripped[: len(stripped) - len(suffix)]
            changes[key] = f"{stem}-{code}{suffix}{value[len(stripped) :]}"
    return changes, ("aliases",) if fields.get("aliases") else ()


def _language_address(
    ctx: SkillContext, fields: dict[str, Any], code: str
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A Hugo translation in its language's own pages (``x.zh.md``, ``content/zh/``): its
    ``url`` under the language's prefix (``/zh/custom/async/``; into the default language, the
    other's prefix taken off, else ``-<code>`` added) and the ``aliases`` left out (the fields
    set, the fields removed). Hugo puts a page at its ``url`` in every language:
    ``async-hooks.zh.md`` kept ``url: /custom/async/`` and ``aliases: [/old-hooks/]``, and once
    it was published ``hugo`` wrote the Chinese page over the English one ("Duplicate target
    paths: /custom/async/index.html (2), old-hooks/index.html (2)"). (A ``slug`` is the
    language's already: ``/zh/posts/<slug>/``.)"""
    gone = ("aliases",) if fields.get("aliases") else ()
    url = fields.get("url")
    site = site_languages(ctx.config.root, ctx.config.layout.kind)
    if ctx.config.layout.kind != "hugo" or site is None:
        return {}, ()
    if not isinstance(url, str) or not url.strip("/ "):
        return {}, gone
    spelled = site.codes.get(code, code).casefold()
    prefixes = [f"/{other.casefold()}/" for other in site.codes.values()]
    lead = "/" + url.lstrip("/")
    if spelled != site.default.casefold():
        moved = lead if lead.startswith(f"/{spelled}/") else f"/{spelled}{lead}"
    elif (prefix := next((p for p in prefixes if lead.startswith(p)), None)) is not None:
        moved = lead[len(prefix) - 1 :]
    else:
        moved = _own_address({"url": url}, code)[0]["url"]
    return {"url": moved}, gone


def existing_translation(
    ctx: SkillContext, source: dict[str, Any], path: str, code: str
) -> tuple[str, bool] | None:
    """The post that is ``path`` in ``code`` already, and whether it is the original ``path``
    is a translation of; or None. It is the file the site's own way names its translation
    (``x.zh.md``, ``content/zh/x.md``; ``x.md`` for a post in another language than the
    default), a translation made before whose ``translation_of`` is ``path`` (``x-zh.md``, in
    the drafts folder too, or published from there under another date), or the original
    ``path`` is a translation of, when that is in ``code``. A second "translate it into
    Chinese" on Hugo wrote ``hooks-2.zh.md`` beside ``hooks.zh.md``: two Chinese pages, one of
    them no translation of the post; ``hooks-zh.md`` translated into English made
    ``hooks-zh-en.md``, a second English copy of ``hooks.md``. Blocking I/O: a sync step."""
    files = ctx.files
    wanted, sites_own, dashed = first_names(ctx.config.root, ctx.config.layout.kind, path, code)
    if sites_own and wanted != path and files.exists(wanted):
        return wanted, False
    drafts = ctx.config.layout.drafts_dir
    drafted = f"{drafts}/{draft_name(dashed)}" if drafts else None
    # (published from the drafts folder: "2026-11-30-hooks-zh.md")
    for candidate in (dashed, drafted, address_taken(files, dashed)):
        if candidate is not None and candidate != path and files.exists(candidate):
            fields = split_frontmatter(files.read(candidate)[0], candidate).fields()
            if fields.get("translation_of") == path:
                return candidate, False
    original = source.get("translation_of")
    if not isinstance(original, str) or original == path or not files.exists(original):
        return None
    metadata, body = split_post(files.read(original)[0], original)
    return (original, True) if metadata.get("lang") == code or written_in(body, code) else None


class Copied(BaseModel):
    """The files of a page bundle copied with its translation, and the ones that were not."""

    copied: list[str] = Field(default_factory=list)
    not_copied: list[str] = Field(default_factory=list)


def copy_resources(ctx: SkillContext, path: str, new_path: str) -> Copied:
    """The bundle's files (``bundle_resources``) copied beside the translation ``new_path``,
    byte for byte, never over a file, each noted with the translation's record first so that
    ``undo`` takes them with it. One already there as copied (a resumed task's) counts as
    copied; one the store refuses (too big, a name it does not write) is named in the reply.
    Blocking I/O: a sync step."""
    pairs = bundle_resources(ctx.files.list, path, new_path)
    done = Copied(not_copied=[source for source, _ in pairs[MAX_RESOURCES:]])
    key = f"{ctx.task_id}:save:{new_path}"  # save_new_file's record of the translation
    for source, dest in pairs[:MAX_RESOURCES]:
        digest = ctx.files.hash_of(source)
        there = ctx.files.hash_of(dest)
        if digest is not None and there == digest:
            done.copied.append(dest)
            continue
        if digest is None or there is not None or ctx.files.exists(dest):
            done.not_copied.append(source)
            continue
        if ctx.versions is not None:
            ctx.versions.note_resource(key, dest, digest)
        try:
            written = ctx.files.copy(source, dest)
        except (UserError, OSError):
            done.not_copied.append(source)
            continue
        if written != digest and ctx.versions is not None:  # changed meanwhile: as written
            ctx.versions.note_resource(key, dest, written)
        done.copied.append(dest)
    return done


def _copied_note(ctx: SkillContext, new_path: str, done: Copied) -> str:
    """The reply's line on the bundle's files copied, and on any that were not."""
    note = ""
    if done.copied:
        folder = str(PurePosixPath(new_path).parent)
        note += ctx.reply("resources_copied", count=len(done.copied), folder=folder)
    if done.not_copied:
        files = ", ".join(f"`{name}`" for name in done.not_copied[:10])
        more = len(done.not_copied) - 10
        note += ctx.reply("resources_not_copied", files=files + (f" (+{more})" if more > 0 else ""))
    return note


def _line_ends(text: str, original: str) -> str:
    """``text`` with the original's line ends: a CRLF post's translation had its frontmatter
    in CRLF and the rest in LF (``---\r\n\n…``), the body's parts joined with "\n"."""
    if original.count("\r\n") * 2 <= original.count("\n"):  # (most of its lines end in LF)
        return text
    return re.sub(r"\r?\n", "\r\n", text)


async def _translate_selection(
    ctx: SkillContext, selected: str, language: str, code: str
) -> SkillResult:
    """The selected text translated, checked as a post's parts are, and shown: "translate
    this into Chinese" with a sentence selected in an editor translated the whole post into a
    new one (the embedded model then failed it)."""
    parts, joints = translation_parts(selected, PART_TOKENS)
    if len(parts) > MAX_PARTS:
        return refuse(ctx, "too_long", parts=len(parts), limit=MAX_PARTS)
    results = await _translate_parts(ctx, parts, language, code)
    if results and not results[-1].passed:
        return refuse_unchecked(ctx, results[-1], source="selection", language=code)
    texts = [r.text.strip("\n") for r in results]
    text = "".join(t + joint for t, joint in zip(texts, [*joints, ""], strict=False))
    if not text.strip():
        return refuse(ctx, "no_translation")
    return SkillResult(
        message=ctx.reply("translated_selection", language=_shown(ctx, code), text=text),
        data={
            "source": "selection",
            "language": code,
            "translation": text,
            "checks": quality_report(results),
            **CHECKED,
        },
    )


@skill(
    name="Translate",
    intents=["TRANSLATE"],
    params=TranslateParams,
    description="Translate a post into another language, saved as a new post beside it",
    replies=REPLIES,
)
async def translate(ctx: SkillContext, params: TranslateParams) -> SkillResult:
    code, named = _target_language(ctx, params.language)
    language = LANGUAGES[code].prompt
    selected = ctx.input.selected_text
    if selected and selected.strip() and not params.path:
        return await _translate_selection(ctx, selected, language, code)
    target = (
        params.path
        or await post_named(ctx)
        or await ctx.step("open_post", partial(open_post, ctx))  # (as a resumed task took it)
    )
    target = target or await ask_for_post(ctx, ctx.reply("action"))
    if target is None:
        return no_post_chosen(ctx)
    path = ctx.files.relative(target)
    ctx.progress(1, 3, ctx.reply("reading"), path)
    text, _ = await ctx.read("read", path)
    source = split_frontmatter(text, path)  # YAML, TOML or JSON: the model never sees it
    metadata, body = split_post(text, path)
    if not named and written_in(body, code):
        code = "en" if code == "zh" else "zh"  # "translate it": into the other of the two
        language = LANGUAGES[code].prompt
    found = partial(existing_translation, ctx, source.fields(), path, code)
    existing = await ctx.step(f"existing:{code}", found)
    if existing is not None:  # (before the model is asked: nothing would be saved)
        there, original = existing
        shown = _shown(ctx, code)
        if original:
            return refuse(ctx, "translation_of_it", path=path, language=shown, existing=there)
        return refuse(ctx, "translation_exists", path=path, language=shown, existing=there)
    parts, joints = translation_parts(body, PART_TOKENS) if body.strip() else ([], [])
    if len(parts) > MAX_PARTS:
        return refuse(ctx, "too_long", parts=len(parts), limit=MAX_PARTS)
    # A post without a title field goes by its first heading, as the index has it: the Hugo
    # shells post's file name, "notes-on-shells", was translated "猫豆鳊".
    title = str(metadata.get("title") or first_heading(body) or PurePosixPath(path).stem)
    titled = await _translate_title(ctx, title, language, code, body)
    if not titled.passed:
        return refuse_unchecked(ctx, titled, source=path, language=code)
    new_title = _title_from(titled.text, title)
    results = await _translate_parts(ctx, parts, language, code)
    if results and not results[-1].passed:  # nothing is saved: the reply shows why
        return refuse_unchecked(ctx, results[-1], source=path, language=code)
    translated = [r.text for r in results]
    if parts:
        translated[0] = _without_added_title(translated[0], parts[0], (title, new_title))
    if parts and not any(t.strip() for t in translated):
        return refuse(ctx, "no_translation")

    ctx.progress(3, 3, ctx.reply("saving"))
    compose = partial(_translated_post, ctx, source, new_title, code, path, translated, joints)
    post = await ctx.step("compose", compose, returns=NewPost)
    report = quality_report([titled, *results])
    kept = frontmatter_check(source.fields(), post.text, path, post.readdressed)
    report.append({"name": kept.name, "passed": kept.passed, "reason": kept.reason, "attempts": 1})
    if not kept.passed:
        return refuse(ctx, "frontmatter_changed", reason=kept.reason)
    saved = await ctx.step("save", partial(save_new_file, ctx, post.path, post.text), returns=Saved)
    copy = partial(copy_resources, ctx, path, saved.path)
    resources = await ctx.step("resources", copy, returns=Copied)
    await ctx.step("index", ctx.memory.refresh, returns=IndexReport)
    return SkillResult(
        message=ctx.reply(
            "translated",
            path=path,
            language=_shown(ctx, code),
            new_path=saved.path,
            title=new_title,
        )
        + draft_note(ctx, saved.path, post.text)
        + _copied_note(ctx, saved.path, resources),
        data={
            "path": saved.path,
            "source": path,
            "language": code,
            "title": new_title,
            "resources": resources.copied,
            "resources_not_copied": resources.not_copied,
            "checks": report,
            **CHECKED,
        },
    )
