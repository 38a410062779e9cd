"""EditContent: rewrite the selection or the whole body of a post, keeping its frontmatter.

The file is read (text and hash) in a durable step before the model is asked; the save passes
that hash to ``FileStore.write``, which refuses (``FileChanged``) if the file changed on disk
meanwhile, e.g. in the user's editor. The frontmatter block (YAML ``---``, TOML ``+++`` or
JSON, ``skillrt.blog.frontmatter``) is cut off before the model is asked and written back byte
for byte: every field the user has (and its formatting and comments) survives, and a
frontmatter block at the top of the model's reply is dropped, never written as the post's.
The reply carries a unified diff.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import partial
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator

from skillrt import Replies, SkillContext, SkillResult, skill
from skillrt.blog.conventions import is_section_page
from skillrt.blog.frontmatter import (
    Frontmatter,
    split_frontmatter,
    strip_frontmatter,
    yaml_list_style,
)
from skillrt.blog.markdown import word_count
from skillrt.blog.posts import IndexReport
from skillrt.blog.wikilinks import wikilink_targets
from skillrt.exceptions import FileChanged, PathNotAllowed
from skillrt.skill.context import detect_language
from skillrt.skill.params import POST_DESCRIPTION, Chars, PostPath

from . import blog_tags, pick, undoing
from . import checked as checked_replies
from .asking import confirms_or_answers, saves, tags_or_request
from .blog_tags import (
    also_in_text,
    in_text_only,
    renamed_in_text,
    retag_every_post,
    tag_names,
    zola_declares_tags,
)
from .checked import CHECKED, checked, quality_report, refuse_unchecked
from .checks import (
    MIN_SHARE,
    Check,
    Generated,
    Verdict,
    _may_drop,
    code_kept,
    frontmatter_kept,
    instruction_kind,
    kind_of,
    language,
    language_share,
    no_chatter,
    no_scaffolding,
    not_cut_short,
    not_degenerate,
    scope,
    structure_kept,
    template_kept,
    web_addresses,
    web_links,
    wikilinks,
    without_none,
)
from .common import (
    MAX_INSTRUCTION_CHARS,
    SECTION_PAGE_REASON,
    confirming,
    keep_version,
    refuse,
    text_hash,
    unified_diff,
)
from .field_set import FieldSet, given_field, named_file
from .fields import description_field, given_description, only_field_set, others_kept
from .languages import language_code
from .newpost import IGNORED_DRAFTS, blog_style
from .on_topic import on_topic, share_from
from .parts import (
    PartRef,
    cut_out,
    end_matter,
    kept_blocks,
    locate,
    named_part,
    paragraphs,
    removed_part,
    sections,
)
from .pick import ask_for_post, no_post_chosen, open_post, post_named
from .prompts import EDIT_SYSTEM, PROMPT_BODY_CHARS, clip, edit_prompt, messages, strip_fences
from .publishing import PublishedPost, is_publish, is_unpublish, publish, unpublish
from .replace import (
    Replacement,
    fix_word,
    literal_replacement,
    named_typo,
    paragraph_with,
    prose_replacement,
    spelled,
    typo_gone,
)
from .scaffold import Scaffold
from .tags import (
    Retagged,
    TagChange,
    retagged,
    split_tags,
    tag_change,
    tag_change_everywhere,
)
from .titles import H1, given_title, title_changed, title_length, title_shape
from .undoing import is_undo, undo_post

__all__ = ["EditParams", "Revision", "edit_content", "unified_diff"]

MAX_DIFF_IN_MESSAGE = 4000

REPLIES = (
    Replies(
        {
            "no_instruction": ("请说明要怎么修改。", "Please say how the text should change."),
            "instruction_too_long": (
                "修改说明太长了（最多 {limit} 个字符）。",
                "The instruction is too long (at most {limit} characters).",
            ),
            "action": ("修改", "edit"),
            "reading": ("读取文件", "Reading the file"),
            "selection_not_found": (
                "在文件正文里找不到选中的文字（文件可能已被修改），请重新选择。",
                "The selected text is not in the file's body (it may have changed); "
                "select it again.",
            ),
            "too_long": (
                "要修改的内容太长（{chars} 个字符，最多 {limit}）。请选中一部分再修改。",
                "The text to edit is too long ({chars} characters; at most {limit}). "
                "Select a part of it and try again.",
            ),
            "editing": ("修改中", "Editing"),
            "unchanged": (
                "内容没有变化，文件未改动。",
                "Nothing changed; the file is untouched.",
            ),
            "saving": ("保存", "Saving"),
            "confirm": (
                "要这样修改 `{path}` 吗？\n\n```diff\n{diff}```\n\n请回答“是”或“否”。",
                "Write this change to `{path}`?\n\n```diff\n{diff}```\n\nAnswer yes or no.",
            ),
            "not_written": ("好的，`{path}` 没有改动。", "OK, `{path}` was left as it was."),
            "the_selection": ("选中的文字", "the selection"),
            "the_body": ("正文", "the body"),
            "the_title": ("标题", "the title"),
            "part_not_found": (
                "这篇文章里没有{part}，文件未改动。",
                "The post has no {part}; the file is unchanged.",
            ),
            "field_changed_more": (
                "修改会改动 `{field}` 以外的内容，所以没有保存。",
                "The change would touch more than `{field}`, so nothing was saved.",
            ),
            "frontmatter_changed": (
                "修改会改动标题以外的 frontmatter，所以没有保存。",
                "The edit would change the frontmatter beyond the title, so nothing was saved.",
            ),
            "edited": (
                "已修改 `{path}` 的{what}，frontmatter 保持不变。\n\n```diff\n{diff}```",
                "Edited {what} of `{path}`; the frontmatter is unchanged.\n\n```diff\n{diff}```",
            ),
            # The frontmatter's title edited: the frontmatter did change (it used to say not).
            "edited_title": (
                "已修改 `{path}` 的标题，frontmatter 的其他字段保持不变。{heading}"
                "\n\n```diff\n{diff}```",
                "Edited the title of `{path}`; the rest of the frontmatter is unchanged.{heading}"
                "\n\n```diff\n{diff}```",
            ),
            "old_heading": (
                "正文开头的标题 `# {heading}` 仍是原来的标题，没有改动。",
                " The heading at the top of the body, `# {heading}`, still has the old title; "
                "it was left as it is.",
            ),
            "replaced": (
                "已把 `{path}` 的{what}中的 {count} 处“{old}”改成“{new}”{left}，其他内容保持不变。"
                "\n\n```diff\n{diff}```",
                "Replaced “{old}” with “{new}” in {what} of `{path}` ({count} time(s)){left}; "
                "nothing else changed.\n\n```diff\n{diff}```",
            ),
            "left_in_code": ("（代码里的 {left} 处没有改）", " ({left} in code left as they are)"),
            "left_in_links": (
                "（链接、地址和标记里的 {links} 处没有改）",
                " ({links} in links, addresses or markup left as they are)",
            ),
            "text_not_found": (
                "`{path}` 里没有“{old}”，文件未改动。",
                "“{old}” is not in `{path}`; the file is unchanged.",
            ),
            "text_only_in_code": (
                "`{path}` 里的“{old}”只出现在代码、链接或标记中（{left} 处），这些没有改动，"
                "文件未改动。",
                "“{old}” is only in code, links or markup in `{path}` ({left} time(s)), which are "
                "left as they are; the file is unchanged.",
            ),
            "the_tags": ("标签", "the tags"),
            "publish_action": ("发布", "publish"),
            "publishing": ("发布", "Publishing"),
            "published": (
                "已发布 `{path}`：去掉了草稿标记（`{marks}`），其他内容保持不变。",
                "Published `{path}`: its draft mark (`{marks}`) is off; nothing else changed.",
            ),
            "published_moved": (
                "已发布：`{source}` 移到了 `{path}`。",
                "Published: `{source}` moved to `{path}`.",
            ),
            "published_scheduled": (
                "\n\n它的日期是 {date}：{generator} 要到那天才会把它放到网站上（日期没有改）。",
                "\n\nIts date is {date}: {generator} puts it on the site from that day "
                "(its dates are as you wrote them).",
            ),
            "published_expired": (
                "\n\n但它的过期日期（`expiryDate`）{date} 已经过了：{generator} 不会把它放到网站上"
                "（日期没有改）。",
                "\n\nBut its expiry date (`expiryDate`), {date}, has passed: {generator} will not "
                "put it on the site (its dates are as you wrote them).",
            ),
            "unpublish_action": ("改回草稿", "make a draft again"),
            "unpublishing": ("改回草稿", "Making it a draft"),
            "unpublished": (
                "`{path}` 又是草稿了：加上了 `draft` 字段，其他内容保持不变。"
                "回答不再引用它，直到它再次发布。",
                "`{path}` is a draft again: its `draft` field is set; nothing else changed. "
                "Answers leave it out until it is published again.",
            ),
            "unpublished_built": (
                "\n\n但 {generator} 没有草稿标记，构建网站时照样会发布它：要不发布，请把它移出"
                " `{folder}/`。",
                "\n\nBut {generator} has no draft flag and still builds and publishes it: move it "
                "out of `{folder}/` to take it off the site.",
            ),
            "unpublished_moved": (
                "`{source}` 又是草稿了：移到了 `{path}`。回答不再引用它，直到它再次发布。",
                "`{source}` is a draft again: moved to `{path}`. Answers leave it out until it "
                "is published again.",
            ),
            "already_a_draft": (
                "`{path}` 已经是草稿，没有改动。",
                "`{path}` is a draft already; nothing changed.",
            ),
            "not_a_draft": (
                "`{path}` 不是草稿，没有改动。",
                "`{path}` is not a draft; nothing changed.",
            ),
            "which_tags_add": (
                "要添加哪些标签？用逗号分隔。",
                "Which tags should I add? Separate them with commas.",
            ),
            "which_tags_remove": (
                "要删除哪些标签？用逗号分隔。",
                "Which tags should I remove? Separate them with commas.",
            ),
            "which_tags_set": (
                "标签要设为哪些？用逗号分隔。",
                "Which tags should the post have? Separate them with commas.",
            ),
            "tags_changed_more": (
                "改标签会连带改动正文或其他字段，所以没有保存。",
                "Changing the tags would change the body or other fields too, so nothing was "
                "saved.",
            ),
            "no_tags": ("没有给出标签，文件未改动。", "No tags were given; the file is untouched."),
            "tags_unchanged_add": (
                "`{path}` 已经有这些标签：{tags}，文件未改动。",
                "`{path}` already has the tags {tags}; the file is untouched.",
            ),
            "tags_unchanged_remove": (
                "`{path}` 没有这些标签：{tags}，文件未改动。",
                "`{path}` has no tag {tags}; the file is untouched.",
            ),
            "tags_unchanged_set": (
                "`{path}` 的标签已经是 {tags}，文件未改动。",
                "The tags of `{path}` are already {tags}; the file is untouched.",
            ),
            "retagged": (
                "`{path}` 的标签（`{field}`）现在是：{tags}。正文和其他字段保持不变。{note}"
                "\n\n```diff\n{diff}```",
                "The tags of `{path}` (`{field}`) are now {tags}. The body and every other "
                "field are unchanged.{note}\n\n```diff\n{diff}```",
            ),
            "retagged_in_text": (
                "`{path}` 的标签（`{field}`）现在是：{tags}；正文里的行内标签 #{old} 也已改成 "
                "#{new}。其余正文和其他字段保持不变。{note}"
                "\n\n```diff\n{diff}```",
                "The tags of `{path}` (`{field}`) are now {tags}, and its inline #{old} in the "
                "text is #{new} too. The rest of the text and every other field are "
                "unchanged.{note}\n\n```diff\n{diff}```",
            ),
            "retagged_text_only": (
                "`{path}` 正文里的行内标签 #{old} 已改成 #{new}；frontmatter 和其余正文保持不变。"
                "{note}\n\n```diff\n{diff}```",
                "The inline #{old} in the text of `{path}` is #{new} now; its frontmatter and "
                "the rest of its text are unchanged.{note}\n\n```diff\n{diff}```",
            ),
            "tags_in_text": (
                "（{tags} 写在正文里，是行内的 #标签；改标签只改 frontmatter。）",
                " ({tags} is written in its text, as an inline #tag; tag edits change the "
                "frontmatter only.)",
            ),
            "tags_also_in_text": (
                "（正文里的行内标签 {tags} 仍然是它的标签。）",
                " Its inline tags in the text, {tags}, are still its tags too.",
            ),
            "tags_ignored_add": ("（已有，未重复添加：{tags}）", " (already there: {tags})"),
            "tags_ignored_remove": ("（本来就没有：{tags}）", " (not there to remove: {tags})"),
            "no_tags_left": ("（无）", "none"),
            "zola_taxonomy": (
                "\n\n注意：Zola 只有在 `config.toml` 声明了 tags 分类时才会构建它们："
                '`taxonomies = [{{name = "tags"}}]`。',
                "\n\nNote: Zola builds them only when `config.toml` declares the taxonomy: "
                '`taxonomies = [{{name = "tags"}}]`.',
            ),
            "described": (
                "`{path}` 的描述（`{field}`）现在是“{value}”。正文和其他字段保持不变。"
                "\n\n```diff\n{diff}```",
                "The description of `{path}` (`{field}`) is now “{value}”. The body and every "
                "other field are unchanged.\n\n```diff\n{diff}```",
            ),
            "field_set": (
                "`{path}` 的 `{field}` 现在是“{value}”。正文和其他字段保持不变。"
                "\n\n```diff\n{diff}```",
                "`{field}` of `{path}` is now “{value}”. The body and every other field are "
                "unchanged.\n\n```diff\n{diff}```",
            ),
            "field_not_zolas": (
                "`{path}` 没有 `{field}` 字段（`[extra]` 里也没有）；"
                "Zola 会忽略页面顶层的未知字段，它应写在 "
                "`[taxonomies]`（需 `config.toml` 声明）或 `[extra]` 表里，请手动添加。"
                "文件未改动。",
                "`{path}` has no `{field}` field, nor has its `[extra]` table, and Zola "
                "ignores a page's unknown top-level keys: it goes in the `[taxonomies]` table "
                "(declared in `config.toml`) or in `[extra]`. Add it there by hand. The file "
                "is untouched.",
            ),
            "field_is_table": (
                "`{path}` 的 `{field}` 是一个表（几个子字段），不能照一句话写入；"
                "请在文件里手动修改。"
                "文件未改动。",
                "`{field}` of `{path}` holds a table of fields, which one request's words "
                "cannot set; change it in the file by hand. The file is untouched.",
            ),
            "field_in_table": (
                "`{path}` 的 `{field}` 在表 `{table}` 里，无法只改它那一行"
                "（JSON、列表或多行的值）；请在文件里手动修改。文件未改动。",
                "`{field}` of `{path}` sits in the `{table}` table, where its line cannot be set "
                "alone (JSON, a list, or a value of more than one line); change it in the file "
                "by hand. The file is untouched.",
            ),
            "field_one_at_a_time": (
                "一次只改一个字段：请分开说，例如先“把作者改成 Jane”，再改另一个。文件未改动。",
                "One field at a time, please: ask for each change on its own (“set the "
                "author to Jane”, then the next). The file is untouched.",
            ),
            "field_wrong_value": (
                "`{field}` 需要 {wanted}，所以没有修改。文件未改动。",
                "`{field}` takes {wanted}, which the request did not give, so nothing was "
                "changed. The file is untouched.",
            ),
            "removed": (
                "已从 `{path}` 删去{what}，其他内容保持不变。\n\n```diff\n{diff}```",
                "Removed {what} from `{path}`; nothing else changed.\n\n```diff\n{diff}```",
            ),
            "edited_before_restart": (
                "`{path}` 在中断之前已经修改并保存好了，frontmatter 保持不变。",
                "`{path}` was edited and saved before the interruption; the frontmatter is "
                "unchanged.",
            ),
        }
    )
    | pick.REPLIES
    | checked_replies.REPLIES
    | blog_tags.REPLIES
    | undoing.REPLIES
)

Instruction = Annotated[
    str,
    Chars(
        MAX_INSTRUCTION_CHARS,
        squash=False,
        empty="no_instruction",
        too_long="instruction_too_long",
    ),
]


class EditParams(BaseModel):
    instruction: Instruction = Field(
        description="What to change, in words ('make the intro shorter', 'add tags a, b')"
    )
    path: PostPath = Field(
        default=None,
        description="The post to edit: "
        + POST_DESCRIPTION
        + "; default: the post the conversation is about",
    )
    selected_text: str | None = Field(  # kept as given: it must match the file byte for byte
        default=None, description="Edit only this text of the post, as it is there"
    )


class Revision(BaseModel):
    """The model's edit, and whether it fell into a loop and was cut short."""

    text: str
    looped: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        return {"text": value} if isinstance(value, str) else value  # journals of old: text


class Written(BaseModel):
    """The sha256 of the saved post."""

    hash: str


_ASKED_LANGUAGE = re.compile(
    r"\b(?:into|in|to)\s+([A-Za-z]+)\b|(?:翻译成|译成|改成|换成|改写成|用)\s*([\u4e00-\u9fff]{2,4}?)(?:写|表达|$|[，。,.])",
    re.I,
)


def asked_language(instruction: str) -> str | None:
    """The language an instruction asks the text to be in ("into English", "翻译成英文")."""
    for match in _ASKED_LANGUAGE.finditer(instruction):
        code = language_code(match.group(1) or match.group(2) or "")
        if code is not None:
            return code
    return None


def _span(body: str, selection: str) -> tuple[int, str] | None:
    """Where the text to edit starts in ``body``, and the text: the selection, else the whole
    body; None when the selection is not in the body."""
    if not selection.strip():
        return 0, body
    where = body.find(selection)
    return (where, selection) if where >= 0 else None


def _splice(
    block: str,
    body: str,
    where: int,
    original: str,
    revised: str,
    whole: bool,
    *,
    heading: bool = False,
) -> str:
    """The new body: ``revised`` in place of ``original`` (or of the whole body), in the
    line ends of the text it replaces (a CRLF post's edit was written with LF lines, and its
    blank line after the frontmatter dropped), with the blank space around ``original`` put
    back (``_with_edges``) and, with ``heading``, its heading line if the answer left it out
    (``_with_heading``). A body after a frontmatter block that ends without a line break (a
    post of frontmatter only, its final newline stripped by an editor) starts on a line of
    its own: glued to the closing ``---``, the post's frontmatter could not be read back."""
    newline = "\r\n" if "\r\n" in (body or block) else "\n"  # (a one-line selection holds none)
    core = revised.strip()
    if newline == "\r\n":
        core = core.replace("\r\n", "\n").replace("\n", "\r\n")
    if heading:
        core = _with_heading(original, core)
    new = _with_edges(original, core, newline)
    if not whole:
        return body[:where] + new + body[where + len(original) :]
    if block and not block.endswith("\n") and not new.startswith(("\n", "\r\n")):
        new = newline + new
    return new


def _with_edges(original: str, core: str, newline: str) -> str:
    """``core`` (an answer without blank space around it) with the blank space ``original``
    begins and ends with: the model's answer comes back stripped, so a whole-line selection
    lost its line break (the next line glued on: "…picked in full.Third line"), a selected
    nested list item its indent, a line its hard break, a body its trailing blank lines or
    the indent of the code block it starts with; and a body sent back as it was was saved
    changed. An empty body gets ``core`` and a line break after it. The indent of the first
    line is not put back when the answer begins with a fence or a heading where the original
    did not (indented, either would be code)."""
    if not original.strip():
        return original + core + newline
    lead = original[: len(original) - len(original.lstrip())]
    trail = original[len(original.rstrip()) :]
    indent = lead[lead.rfind("\n") + 1 :]
    if indent and _OPENS_BLOCK.match(core) and not _OPENS_BLOCK.match(original.lstrip()):
        lead = lead[: len(lead) - len(indent)]
    return lead + core + trail


_OPENS_BLOCK = re.compile(r"(?:`{3,}|~{3,}|#{1,6}(?:[ \t]|$))", re.M)
_HEADING_LINE = re.compile(r" {0,3}(#{1,6})[ \t]+(\S[^\r\n]*)")
# An instruction about the heading itself, or that may fold a section into another: the
# answer's lack of a heading is then what was asked.
_ABOUT_HEADING = re.compile(
    r"\b(?:headings?|headers?|headlines?|titles?|retitl\w*|renam\w*|merg\w*|combin\w*)\b"
    r"|标题|题目|合并",
    re.I,
)


def _keeps_heading(instruction: str, whole: bool) -> bool:
    """Whether a heading the answer leaves out is put back: for a part or a selection, unless
    the instruction is about headings (``_ABOUT_HEADING``)."""
    return not whole and _ABOUT_HEADING.search(instruction) is None


def _with_heading(original: str, core: str) -> str:
    """``core`` with the heading ``original`` begins with (and the blank lines after it) in
    front, when ``core`` begins with no heading of its own: none, or only one of the
    section's sub-headings (deeper, in other words). A small model asked to "fix the grammar
    in the second section" answered with its paragraph only: saved, the section's ``## Usage``
    was gone and its text ran on in the section before (a setext ``Usage`` over ``=====``
    still was, as no heading was seen in it). An answer that opens with the heading in its
    own words but another form ("# Usage" or "## Usage" for "Usage" over "=====") gets the
    heading as the post wrote it: the post's other headings kept their form and this one
    changed level."""
    start = original.lstrip()
    found = _opening_heading(start)
    if found is None:
        return core
    text, level, words = found
    own = _own_heading(core, level, words)
    answered = _opening_heading(core if own is None else own)
    if own is not None and (answered is None or answered[2] != words):
        return own  # the answer holds the heading itself, below a line it kept
    if answered is not None and answered[2] == words:
        core = core if own is None else own  # (after a lead-in at most)
        return text + core[len(answered[0]) :]  # its heading, as the post wrote it
    if answered is not None and answered[1] <= level:
        return core  # the section's heading, renamed in the answer
    rest = start[len(text) :]
    gap = rest[: len(rest) - len(rest.lstrip())]
    gap = gap[: gap.rfind("\n") + 1]  # (not the indent of the line after)
    newline = "\r\n" if "\r\n" in original else "\n"
    return text + (gap or newline * 2) + core


_SETEXT = re.compile(r"( {0,3}[^\s#>|*+\-`~<][^\r\n]*)\r?\n {0,3}(=+|-+)[ \t]*(?=\r?\n|$)")


def _opening_heading(text: str) -> tuple[str, int, str] | None:
    """The heading ``text`` opens with: its lines as written (no line break after them), its
    level and its words (``_words``); None when it opens with none. ATX ("## Usage") or
    setext (a line over "===" or "---")."""
    if (atx := _HEADING_LINE.match(text)) is not None:
        return atx.group(), len(atx.group(1)), _words(atx.group(2))
    if (setext := _SETEXT.match(text)) is not None:
        return setext.group(), 1 if setext.group(2)[0] == "=" else 2, _words(setext.group(1))
    return None


def _own_heading(core: str, level: int, words: str) -> str | None:
    """``core`` from the line that is the heading again (``level``, ``words``), when one is
    below its first line: without the lead-in above it when that is one line that ends with
    a colon ("Sure! Here is the friendlier section:"), else as it is; None when no line
    is. The heading was put in front again, and the section saved with its heading twice
    and the model's words to the user between them."""
    lines = core.splitlines(keepends=True)
    for n, line in enumerate(lines[1:], 1):
        again = _HEADING_LINE.match(line)
        if again is not None and len(again.group(1)) == level and _words(again.group(2)) == words:
            above = "".join(lines[:n]).strip()
            lead_in = "\n" not in above and above.endswith((":", "："))
            return "".join(lines[n:]) if lead_in else core
    return None


def _words(heading: str) -> str:
    """A heading's words, closing ``#``s, case and spacing aside."""
    return " ".join(heading.rstrip("# \t").casefold().split())


def _without_frontmatter(revised: str, original: str) -> str:
    """The model's text without a frontmatter block it put in front (it echoed the post's, or
    made one up): a reply is never written as the post's frontmatter. Kept when the text sent
    began with such a block itself."""
    if strip_frontmatter(original)[1]:
        return revised
    return strip_frontmatter(revised)[0]


def _end_matter_last(original: str, revised: str) -> str:
    """``revised`` with what it added after the blocks that end ``original`` with no prose
    of their own (reference and footnote definitions, ``{{< comments >}}``: ``end_matter``)
    put before them, those blocks kept as they were: "add a section about error handling"
    came back with the new section after the post's "[1]: https://…" and "[^1]: …" lines,
    and was saved there, below the footnotes."""
    start = end_matter(original)
    tail = original[start:].strip()
    if not tail or not original[:start].strip():
        return revised
    if tail not in revised:  # (the answer's lines end in "\n" where the post's in "\r\n")
        tail = tail.replace("\r\n", "\n")
    at = revised.rfind(tail)
    after = revised[at + len(tail) :] if at >= 0 else ""
    if not after.strip() or end_matter(after.strip()) == 0:
        return revised  # nothing after them, or only more of them
    newline = "\r\n" if "\r\n" in revised else "\n"
    ending = revised[len(revised.rstrip()) :]
    kept = [piece for piece in (revised[:at].rstrip(), after.strip(), tail) if piece]
    return (newline * 2).join(kept) + ending


# A link reference or footnote definition: "[1]: https://…", "[^note]: …" (and the indented
# lines that go on with it).
_DEFINITION_BLOCK = re.compile(
    r"^ {0,3}\[(\^?)([^\]\n]+)\]:[^\n]*(?:\n(?:[ \t]+\S[^\n]*|[ \t]*(?=\n[ \t]+\S)))*", re.M
)


def _label(label: str) -> str:
    return " ".join(label.casefold().split())


def _definitions_kept(original: str, revised: str) -> str:
    """``revised`` with the reference and footnote definitions of ``original`` it left out
    put back as they were, when it still uses them: after the definition before them in
    ``original`` that ``revised`` has, else before its first one, else at its end. "make it
    clearer" of a post came back without its "[2]: https://example.com/docs" line, its
    "[docs][2]" kept, and the link was saved broken (it renders as the text "[docs][2]")."""
    newline = "\r\n" if "\r\n" in revised else "\n"
    text = revised.replace("\r\n", "\n")
    used = _DEFINITION_BLOCK.sub("", text)
    previous: tuple[str, str] | None = None  # the last one before that ``text`` has
    put = False
    for found in _DEFINITION_BLOCK.finditer(original.replace("\r\n", "\n")):
        key = (found.group(1), _label(found.group(2)))
        have = {(m.group(1), _label(m.group(2))): m for m in _DEFINITION_BLOCK.finditer(text)}
        if key not in have and _uses(used, *key):
            text, put = _put_definition(text, found.group().rstrip(), have, previous), True
            previous = key
        elif key in have:
            previous = key
    return text.replace("\n", newline) if put else revised


def _put_definition(
    text: str,
    block: str,
    have: dict[tuple[str, str], re.Match[str]],
    previous: tuple[str, str] | None,
) -> str:
    """``text`` with the definition ``block`` after the one ``previous`` names, else before
    its first definition, else at its end."""
    if previous is not None and previous in have:
        at = have[previous].end()
        return text[:at] + "\n" + block + text[at:]
    if have:
        at = min(m.start() for m in have.values())
        return text[:at] + block + "\n" + text[at:]
    return text.rstrip() + "\n\n" + block + (text[len(text.rstrip()) :] or "\n")


def _uses(text: str, caret: str, label: str) -> bool:
    """Whether ``text`` refers to the definition ``label`` ("[docs][2]", "[2][]", "[2]",
    "[^1]"; ``label`` as ``_label`` puts it)."""
    name = r"\s+".join(map(re.escape, label.split()))
    if caret:
        return re.search(rf"\[\^{name}\](?!:)", text, re.I) is not None
    return (
        re.search(rf"\]\[\s*{name}\s*\]|\[\s*{name}\s*\](?:\[\])?(?![(:])", text, re.I) is not None
    )


async def _revise(ctx: SkillContext, instruction: str, original: str, note: str) -> Generated:
    prompt = edit_prompt(instruction, original) + note
    limit = max(512, len(original))
    result = await ctx.llm.chat(messages(EDIT_SYSTEM, prompt), max_tokens=limit)
    text = _without_frontmatter(strip_fences(result.content, original), original)
    return Generated(
        text=_definitions_kept(original, _end_matter_last(original, text)),
        looped=result.truncated_repetition,
        cut=result.usage.completion_tokens >= limit,
    )


def edit_checks(
    ctx: SkillContext,
    instruction: str,
    *,
    block: str,
    body: str,
    where: int,
    original: str,
    whole: bool,
) -> list[Check]:
    """What an edit's answer must pass before it is saved (see ``checks.py``)."""
    rest = body[:where] + "\n" + body[where + len(original) :]
    kind = instruction_kind(instruction, original)
    target = asked = asked_language(instruction)
    if target is None and language_share(original, detect_language(original)) >= MIN_SHARE:
        target = detect_language(original)  # an edit keeps the text's language

    heading = _keeps_heading(instruction, whole)
    # What may take headings away from a part: words that take away, not the part's name ("the
    # Usage section" lets a whole body's edit reshape headings): "make the Usage section
    # clearer" came back without its "### Output" sub-section, and was saved so.
    dropping = instruction if whole or _may_drop(instruction) else ""

    def compose(text: str) -> str:
        return block + _splice(block, body, where, original, text, whole=whole, heading=heading)

    return without_none(
        [
            no_scaffolding(
                Scaffold([EDIT_SYSTEM, edit_prompt(instruction, "")], content=[original])
            ),
            not_degenerate,
            ends_whole(original),
            no_chatter(original),
            kind,
            _as_spliced(structure_kept(dropping, original), original, heading=heading),
            code_kept(instruction, original, scoped=not whole),
            None if asked else blocks_kept(instruction, original, scoped=not whole),
            template_kept(instruction, original, scoped=not whole),
            None if whole else scope(original, rest, growing=kind_of(instruction) == "add"),
            on_topic(instruction, original) if whole else None,
            # (a part's or a selection's too; after on_topic: another text is said to be one;
            # another language asked for is not judged by its words)
            None if asked else sections_answered(instruction, original, whole=whole),
            language(target) if target and len(original.split()) >= 3 else None,
            wikilinks(
                lambda name: ctx.memory.resolve_link(name) is not None,
                known=wikilink_targets(body),
            ),
            web_links(web_addresses(block, body, instruction)),
            frontmatter_kept(block, compose),
        ]
    )


# An instruction about math or HTML: what it asks of such a block is its own.
_ABOUT_BLOCKS = re.compile(
    r"\b(?:math|formulas?|equations?|latex|katex|mathjax|html|div|details|tables?|figures?|"
    r"markup|tags?|blocks?|notes?|callouts?|boxes|widgets?)\b|公式|方程|数学|表格|图|标记",
    re.I,
)
KEPT_LINE = 20  # a line of the text this long, found in the answer, says it kept the prose


def blocks_kept(instruction: str, original: str, *, scoped: bool) -> Check | None:
    """The text's display math (``$$``) and HTML blocks come back as they were, to an
    instruction not about them that takes nothing away: "make the Usage section clearer"
    came back without its ``$$ E = mc^2 $$`` block, "fix the grammar" without a ``<div
    class="note">``, and both were saved (``code_kept`` judges fenced code only). A whole
    body written anew (no line of it kept, unless ``scoped``: one part) is not judged, as
    ``code_kept`` does not judge it. None when there is no such block."""
    blocks = kept_blocks(original)
    if not blocks or _ABOUT_BLOCKS.search(instruction) or _may_drop(instruction):
        return None
    lines = {key for line in original.splitlines() if len(key := line.strip()) >= KEPT_LINE}

    # (math whole; HTML by its first line, its tag: the prose in a <details> may be edited)
    marks = [
        block if block.lstrip().startswith("$$") else block.splitlines()[0] for block in blocks
    ]

    def check(generated: Generated) -> Verdict:
        said = " ".join(generated.text.split())
        gone = [mark for mark in marks if " ".join(mark.split()) not in said]
        kept = scoped or any(line.strip() in lines for line in generated.text.splitlines())
        if gone and kept:
            first = " ".join(gone[0].split())[:60]
            return Verdict(
                "code_kept",
                False,
                f"{len(gone)} math or HTML block(s) changed or dropped ({first!r}), which the "
                "instruction did not ask for",
                zh=f"有 {len(gone)} 个公式或 HTML 块被改动或删掉了（{first!r}），而修改说明并没有"
                "这样要求",
            )
        return Verdict("code_kept", True, f"{len(blocks)} math or HTML block(s) kept")

    return check


# A text that ends a sentence, and an answer that stops in one: at a word or a comma.
_SENTENCE_END = re.compile(r"[.!?。！？…][\"'”’」』)）*_]*$")
_MID_SENTENCE = re.compile(r"[^\W_]$|[,，、]$")
# A last line that is no sentence, and may end in a word: a heading, a list item, a table
# row, a reference definition, a quote, HTML or template code, indented code.
_NOT_PROSE_LINE = re.compile(
    r" {0,3}(?:#{1,6}[ \t]|[-*+][ \t]|\d{1,9}[.)][ \t]|\||\[[^\]\n]+\]:|>|<|\{[{%])|(?: {4}|\t)"
)


MIN_CUT_WORDS = 20  # an answer shorter than that is cut only where not_cut_short says so


def ends_whole(original: str) -> Check | None:
    """The answer to a text that ends a sentence does not stop mid-sentence (its last line a
    line of prose, not a heading, a list item, a reference definition…: ``_NOT_PROSE_LINE``):
    "make the Errors section clearer" came back as "…so check free space first and retry."
    cut to "…so ch", short of the token limit, and it was saved. None when the text ends
    otherwise (a list item, a heading, code)."""
    if not _SENTENCE_END.search(original.rstrip()):
        return None

    def check(generated: Generated) -> Verdict:
        last = (generated.text.rstrip().splitlines() or [""])[-1]
        # (a short answer without its full stop is not judged cut unless it stops on a word
        # no sentence ends on: "(edit) answer" and "A shorter paragraph" are whole answers)
        long = word_count(generated.text) >= MIN_CUT_WORDS
        if (
            _MID_SENTENCE.search(last)
            and not _NOT_PROSE_LINE.match(last)
            and (long or not not_cut_short(generated).passed)
        ):
            return Verdict(
                "not_degenerate",
                False,
                f"the text stops mid-sentence (…{last[-40:]!r}), where the text given ended "
                "with a full sentence",
                zh=f"文字在句子中间断了（…{last[-40:]!r}），而原文以完整的句子结尾",
            )
        return Verdict("not_degenerate", True)

    return check


MIN_KEPT_SHARE = 0.4  # of a text's words, in an answer to an edit that takes none away
PIECE_SHARE = 0.5  # of an answer's words the text has: the answer is a piece of it
MIN_JUDGED_WORDS = 40  # a text shorter than that is not judged by its words


def sections_answered(instruction: str, original: str, *, whole: bool) -> Check | None:
    """A text is not answered with fewer than half its sections (of two or more) or its
    paragraphs (of three or more), nor, a whole body, with less than ``MIN_KEPT_SHARE`` of
    its words, to an instruction that takes none away (``structure_kept``'s ``_may_drop``):
    "make it clearer" of a post of four sections, and "fix the grammar" of one of four
    paragraphs (or of a section of four), came back as the first paragraph reworded, and was
    saved as that one paragraph (``structure_kept`` judges only an answer that keeps a line
    as it was)."""
    # (a heading or a section named may change the headings, and takes no words away)
    count = 0 if _may_drop(instruction, headings=True) else len(sections(original))
    blocks = 0 if _may_drop(instruction) else len(paragraphs(original))
    words = word_count(original) if whole and blocks else 0
    if count < 2 and blocks < 3 and words < MIN_JUDGED_WORDS:
        return None

    def check(generated: Generated) -> Verdict:
        now, said = len(sections(generated.text)), word_count(generated.text)
        if share_from(generated.text, original) < PIECE_SHARE:
            # another text, not a piece of this one ("Edited body number 19.", a test
            # model's): on_topic's to judge, where it applies, as structure_kept leaves it
            return Verdict("structure_kept", True, "not a piece of the text: not judged")
        if count >= 2 and now * 2 < count:
            return _dropped(f"{count} sections", f"{now}", f"{count} 节", f"{now} 节")
        if blocks >= 3 and (left := len(paragraphs(generated.text))) * 2 < blocks:
            return _dropped(f"{blocks} paragraphs", f"{left}", f"{blocks} 段", f"{left} 段")
        if words >= MIN_JUDGED_WORDS and said < words * MIN_KEPT_SHARE:
            return _dropped(f"{words} words", f"{said}", f"{words} 个词", f"{said} 个")
        return Verdict("structure_kept", True, f"{now} of {count} sections, {said} words")

    return check


def _dropped(had: str, has: str, had_zh: str, has_zh: str) -> Verdict:
    return Verdict(
        "structure_kept",
        False,
        f"the text had {had} and the answer has {has}: most of it was dropped, which the "
        "instruction did not ask for",
        zh=f"原文有 {had_zh}，回答只有 {has_zh}：大部分内容被删掉了，而修改说明并没有这样要求",
    )


def _as_spliced(check: Check | None, original: str, *, heading: bool) -> Check | None:
    """``check`` judging the answer with the heading the splice puts back (``heading``:
    ``_with_heading``): a selection from "## Usage" answered without that line was refused
    ("the text had 2 heading(s) and now has 1"), though it would be saved with it."""
    if check is None or not heading:
        return check
    judged = check

    def spliced(generated: Generated) -> Verdict:
        text = _with_heading(original, generated.text.strip())
        return judged(generated.model_copy(update={"text": text}))

    return spliced


def _save(ctx: SkillContext, path: str, new_text: str, digest: str) -> Written:
    """Write ``new_text`` over the post read as ``digest`` (refused if it changed since)."""
    if ctx.files.hash_of(path) == text_hash(new_text):
        return Written(hash=text_hash(new_text))  # saved before a crash cut the task off
    if ctx.files.hash_of(path) == digest:  # the original, kept for undo (once per task)
        keep_version(ctx, path, "edit", step="save", after=text_hash(new_text))
    _, written = ctx.files.write(path, new_text, expected_hash=digest)
    return Written(hash=written)


async def _saved_before_restart(ctx: SkillContext, path: str) -> bool:
    """Whether the post changed since the journalled read because this task's own save landed
    and the process died before the save was journalled: the post then holds exactly the
    text whose hash the ``target`` step journalled just before saving. (Without this, a kill
    right after the rename made the resumed task fail with "changed on disk".)"""
    target: str = await ctx.step("target", partial(str, ""))  # journalled: the hash aimed at
    return bool(target) and ctx.files.hash_of(path) == target


def _part_span(body: str, part: PartRef) -> tuple[int, str] | None:
    found = locate(body, part)
    return None if found is None else (found.start, body[found.start : found.end])


def _describe(ctx: SkillContext, part: PartRef) -> str:
    if ctx.input.language != "zh":
        return part.describe()
    if part.kind == "conclusion":
        return "结尾"
    if part.name:  # a section named by its heading (it said "第 0 节")
        return f"“{part.name}”一节"
    unit = "段" if part.kind == "paragraph" else "节"
    nth = f"最后一{unit}" if part.index == -1 else f"第 {part.index} {unit}"
    return nth if part.within is None else f"{_describe(ctx, part.within)}的{nth}"


def _no_the(part: str) -> str:
    """A part as "The post has no …" names it: "title", "ninth section" (it said "no the
    title")."""
    return part.removeprefix("the ")


async def _edit_title(
    ctx: SkillContext, instruction: str, path: str, post: Frontmatter
) -> tuple[str, list[dict[str, Any]]] | SkillResult:
    """The post with its title edited: the frontmatter's ``title`` (the other fields byte for
    byte), else a ``# Title`` line at the top of the body; and the quality report."""
    fields = post.fields()
    title = fields.get("title")
    heading = H1.match(post.body)
    if not (isinstance(title, str) and title.strip()) and heading is None:
        given = given_title(instruction)
        if given is None or ctx.config.layout.kind == "obsidian":  # (Obsidian: its file name)
            return refuse(ctx, "part_not_found", part=_no_the(ctx.reply("the_title")))
        # "rename it to Shell notes", the post untitled: its frontmatter gets the title (it
        # said "The post has no the title").
        new_text = post.with_fields({"title": given}).text
        if not only_field_set(post, new_text, path, "title"):
            return refuse(ctx, "frontmatter_changed")
        reason = "as the request gives it, in a title field of its own"
        return new_text, [{"name": "title", "passed": True, "reason": reason, "attempts": 0}]
    original = title if isinstance(title, str) and title.strip() else heading.group(2)  # type: ignore[union-attr]
    ctx.progress(2, 3, ctx.reply("editing"))
    new_title = given_title(instruction)
    if new_title is not None:  # the request gives it: set as written, no model asked
        report: list[dict[str, Any]] = [
            {"name": "title", "passed": True, "reason": "as the request gives it", "attempts": 0}
        ]
    else:
        checks = [
            no_scaffolding(
                Scaffold([EDIT_SYSTEM, edit_prompt(instruction, "")], content=[original])
            ),
            not_degenerate,
            title_shape,
            title_changed(original),
            *without_none([title_length(instruction, original)]),
        ]
        revision = await checked(ctx, "edit", partial(_revise, ctx, instruction, original), checks)
        if not revision.passed:
            return refuse_unchecked(ctx, revision, path=path)
        new_title, report = revision.text, quality_report([revision])
    if isinstance(title, str) and title.strip():
        new_text = post.with_fields({"title": new_title}).text
        same = others_kept(fields, split_frontmatter(new_text, path).fields(), "title")
        report.append(
            {"name": "frontmatter", "passed": same, "reason": "only the title set", "attempts": 1}
        )
        if not same:
            return refuse(ctx, "frontmatter_changed")
    else:
        start, end = heading.span(2)  # type: ignore[union-attr]
        new_text = post.block + post.body[:start] + new_title + post.body[end:]
    return new_text, report


def _renames_title(instruction: str, post: Frontmatter, old: str) -> bool:
    """Whether "rename 'A' to 'B'" names the post's title as A (then the title is set, not
    the words replaced in the body)."""
    title = post.fields().get("title")
    return (
        re.match(r"^\s*(?:please\s+)?rename\b", instruction, re.I) is not None
        and isinstance(title, str)
        and " ".join(title.casefold().split()) == " ".join(old.casefold().split())
    )


def _field_post(ctx: SkillContext, params: EditParams) -> str | None:
    """The file a field set names its post by (``field_set.named_file``), when it is the
    blog's and the post given is none: "change the date of \"Notes/所有权笔记.md\" to
    2024-06-02", the router taking no path from it (a quoted one, with Chinese or spaces), set
    the date of the note in focus. Blocking I/O: a sync step."""
    written = named_file(params.instruction)
    if written is None or (params.path and _is_file(ctx, params.path)):
        return None
    return written if _is_file(ctx, written) else None


def _is_file(ctx: SkillContext, path: str) -> bool:
    try:
        return ctx.files.resolve(path).is_file()
    except PathNotAllowed:
        return False


async def _post_to_edit(
    ctx: SkillContext, params: EditParams, action: str, *, strict: bool = True, lead: bool = True
) -> str | None:
    """The post to edit: the one named (by path, or without one: ``post_named``; ``strict``
    unless the instruction names nothing but the post, as "publish <title>"; ``lead=False``
    when all of it may name the post, as an undo's), the open one (or the focus), else the one
    the user picks (asked which to ``action``)."""
    target = (
        # a step: a resumed task works on the file it found the first time
        await ctx.step("field_post", partial(_field_post, ctx, params))
        or params.path
        or await post_named(ctx, strict=strict, lead=lead)
        # a step: a resumed task works on the post it took the first time
        or await ctx.step("open_post", partial(open_post, ctx, strict=strict))
    )
    if not target:
        target = await ask_for_post(ctx, action)
    return ctx.files.relative(target) if target else None


@skill(
    name="EditContent",
    intents=["EDIT_CONTENT"],
    params=EditParams,
    description="Edit the selected text or the whole body of a post as instructed",
    replies=REPLIES,
)
async def edit_content(ctx: SkillContext, params: EditParams) -> SkillResult:
    unpublishing = is_unpublish(params.instruction)
    publishing = unpublishing or is_publish(params.instruction)
    every = None if publishing or params.path else tag_change_everywhere(params.instruction)
    if every is not None:
        return await retag_every_post(ctx, every)  # "… in every post" (``blog_tags.py``)
    undo = not publishing and is_undo(params.instruction)
    change = None if publishing or undo else tag_change(params.instruction)
    action = ctx.reply(
        "unpublish_action"
        if unpublishing
        else "publish_action"
        if publishing
        else "undo_action"
        if undo
        else "action"
    )
    # Publishing, undoing or tagging names nothing but the post (and the tags): not the edit's
    # strictness.
    strict = not publishing and not undo and change is None
    # (an undo names nothing but the post: "undo the change to the sqlite post" undid the
    # open post's, its "to" ending the words read with a post open)
    path = await _post_to_edit(ctx, params, action, strict=strict, lead=not undo)
    if path is None:
        return no_post_chosen(ctx)
    if is_section_page(path):  # refused before the model is asked, or the diff shown
        raise PathNotAllowed(path, SECTION_PAGE_REASON)
    if publishing:  # the draft mark off, or on again: no model (``publishing.py``)
        return await _publish(ctx, path, back=unpublishing)
    if undo:  # the last change undone from its kept version, no model (``undoing.py``)
        return await undo_post(ctx, path)
    selection = params.selected_text or ctx.input.selected_text or ""

    ctx.progress(1, 3, ctx.reply("reading"), path)
    try:
        text, digest = await ctx.read("read", path)
    except FileChanged:
        if await _saved_before_restart(ctx, path):
            return SkillResult(
                message=ctx.reply("edited_before_restart", path=path),
                data={"path": path, "diff": "", "changed": True, "hash": ctx.files.hash_of(path)},
            )
        raise
    post = split_frontmatter(text, path)  # YAML, TOML or JSON; the model never sees it
    post.fields()  # refuses a post whose frontmatter cannot be read
    if change is not None:  # only the tags: made here, not by the model (``tags.py``)
        return await _retag(ctx, path, post, digest, change)
    described = None if selection.strip() else given_description(params.instruction)
    if described is not None:  # the description written out: set as it is (``fields.py``)
        return await _describe_post(ctx, path, (text, digest), post, described)
    zola = ctx.config.layout.kind == "zola"  # (no new top-level key Zola ignores)
    named = None if selection.strip() else given_field(params.instruction, post.fields(), zola=zola)
    if named is not None:  # another field named and given: set as written (``field_set.py``)
        return await _set_field(ctx, path, (text, digest), post, named)
    cut = None if selection.strip() else removed_part(params.instruction)
    if cut is not None:  # a part removed whole: cut out here, no model (``parts.py``)
        return await _remove(ctx, path, (text, digest), post, cut)
    part = None if selection.strip() else named_part(params.instruction)
    if part is not None and part.loose and locate(post.body, part) is None:
        part = None  # "make the hard part clearer": no heading of that name, the whole body
    titled = part is not None and part.kind == "title"  # (the title's own edit, below)
    swap = None if selection.strip() or titled else literal_replacement(params.instruction)
    if swap is not None and _renames_title(params.instruction, post, swap.old):
        swap, part = None, PartRef("title")  # "rename 'Old title' to 'New'": the title's edit
    if swap is not None:  # both words written out: no model (``replace.py``)
        return await _replace(ctx, path, (text, digest), post, swap, part)
    typo = None if selection.strip() or part is not None else named_typo(params.instruction)
    if typo is not None:  # only the paragraph that holds it goes to the model
        held, in_code = paragraph_with(post.body, typo)
        title = post.fields().get("title")
        in_title = held is None and not in_code and isinstance(title, str) and typo in title
        if held is None and not in_title:
            key = "text_only_in_code" if in_code else "text_not_found"
            return refuse(ctx, key, path=path, old=clip(typo, 80), left=in_code)
        right = await ctx.step("spelled", partial(_spelled_in_blog, ctx, typo), returns=str)
        if right:  # one word the blog itself spells so: made here, no model
            fixed = await _fix_typo(ctx, path, (text, digest), post, typo, right)
            if fixed is not None:
                return fixed
        if in_title:
            part = PartRef("title")  # the title's edit, below
        else:
            selection = held or ""
    if part is not None and part.kind == "title":
        edited = await _edit_title(ctx, params.instruction, path, post)
        if isinstance(edited, SkillResult):
            return edited
        new_text, report = edited
        title = post.fields().get("title")
        field = title.strip() if isinstance(title, str) else ""
        heading = H1.match(post.body)
        if not field and heading is not None:  # the body's heading was the title
            return await _write(ctx, path, (text, new_text), digest, report, ctx.reply("the_title"))
        # The field edited, or given to an untitled post; the same title again atop the body
        # is left, and said.
        stale = bool(field) and heading is not None and heading.group(2).strip() == field
        return await _write(
            ctx,
            path,
            (text, new_text),
            digest,
            report,
            ctx.reply("the_title"),
            done="edited_title",
            values={"heading": ctx.reply("old_heading", heading=field) if stale else ""},
        )
    block, body = post.block, post.body
    span = _span(body, selection) if part is None else _part_span(body, part)
    if span is None:
        if part is not None:
            return refuse(ctx, "part_not_found", part=_no_the(_describe(ctx, part)))
        return refuse(ctx, "selection_not_found")
    where, original = span
    if len(original) > PROMPT_BODY_CHARS:
        return refuse(ctx, "too_long", chars=len(original), limit=PROMPT_BODY_CHARS)

    ctx.progress(2, 3, ctx.reply("editing"))
    whole = not selection.strip() and part is None
    checks = edit_checks(
        ctx, params.instruction, block=block, body=body, where=where, original=original, whole=whole
    ) + ([typo_gone(typo)] if typo is not None else [])
    revision = await checked(
        ctx, "edit", partial(_revise, ctx, params.instruction, original), checks
    )
    if not revision.passed:  # nothing is saved: the reply shows the model's text and why
        return refuse_unchecked(ctx, revision, path=path)
    report = quality_report([revision])
    keep = _keeps_heading(params.instruction, whole)
    new_body = _splice(block, body, where, original, revision.text, whole=whole, heading=keep)
    if part is not None:
        what = _describe(ctx, part)
    else:
        what = ctx.reply("the_body" if whole else "the_selection")
    return await _write(ctx, path, (text, block + new_body), digest, report, what)


async def _remove(
    ctx: SkillContext, path: str, read: tuple[str, str], post: Frontmatter, part: PartRef
) -> SkillResult:
    """The post without ``part`` (and the blank lines that set it apart), no model; every
    other byte, the frontmatter's too, as it was."""
    text, digest = read
    span = locate(post.body, part)
    if span is None:
        return refuse(ctx, "part_not_found", part=_no_the(_describe(ctx, part)))
    new_text = post.block + cut_out(post.body, span)
    report: list[dict[str, Any]] = [
        {"name": "removal", "passed": True, "reason": "cut out as it stands, no model",
         "attempts": 0}
    ]  # fmt: skip
    what = _describe(ctx, part)
    removed = post.body[span.start : span.end]
    return await _write(
        ctx, path, (text, new_text), digest, report, what, done="removed", data={"removed": removed}
    )


async def _replace(
    ctx: SkillContext,
    path: str,
    read: tuple[str, str],
    post: Frontmatter,
    swap: Replacement,
    part: PartRef | None,
) -> SkillResult:
    """The post with ``swap`` made in its prose (in ``part`` when one is named), no model."""
    text, digest = read
    body = post.body
    span = (0, body) if part is None else _part_span(body, part)
    if span is None:
        return refuse(ctx, "part_not_found", part=_no_the(_describe(ctx, part)))  # type: ignore[arg-type]
    where, original = span
    made = prose_replacement(original, swap)
    revised, count, left, links = made.text, made.replaced, made.in_code, made.in_links
    old, new = clip(swap.old, 80), clip(swap.new, 80)
    if not count:  # (only in links, it was said not to be in the post at all)
        return refuse(
            ctx,
            "text_only_in_code" if left or links else "text_not_found",
            path=path,
            old=old,
            left=left + links,
        )
    new_text = post.block + body[:where] + revised + body[where + len(original) :]
    report: list[dict[str, Any]] = [
        {"name": "replacement", "passed": True, "reason": "as written, no model", "attempts": 0}
    ]
    what = ctx.reply("the_body") if part is None else _describe(ctx, part)
    kept = ctx.reply("left_in_code", left=left) if left else ""
    kept += ctx.reply("left_in_links", links=links) if links else ""
    values = {"old": old, "new": new, "count": count, "left": kept}
    more = {"replaced": count, "left_in_code": left, "left_in_links": links}
    return await _write(
        ctx, path, (text, new_text), digest, report, what, done="replaced", values=values, data=more
    )


MAX_VOCABULARY_POSTS = 2000  # posts read for the blog's own spelling of a word


def _spelled_in_blog(ctx: SkillContext, typo: str) -> str:
    """The word the blog's posts use that ``typo`` misspells (``replace.spelled``), or "".
    Reads posts (the index refreshed first): a sync step."""
    ctx.memory.refresh()
    posts = ctx.memory.posts
    metas = posts.all_posts()[:MAX_VOCABULARY_POSTS]
    bodies = (post.body for meta in metas if (post := posts.get(meta.path)) is not None)
    return spelled(typo, bodies) or ""


async def _fix_typo(
    ctx: SkillContext, path: str, read: tuple[str, str], post: Frontmatter, typo: str, right: str
) -> SkillResult | None:
    """The post with the word ``typo`` made ``right`` in its prose, no model; None when it
    stands there only inside other words (the model is asked then)."""
    text, digest = read
    report: list[dict[str, Any]] = [
        {"name": "typo_fixed", "passed": True, "reason": "the blog's own spelling, no model",
         "attempts": 0}
    ]  # fmt: skip
    title = post.fields().get("title")
    if isinstance(title, str) and typo in title and typo not in post.body:  # the title's typo
        new_title, count = fix_word(title, typo, right)
        if not count:
            return None
        return await _write(
            ctx,
            path,
            (text, post.with_fields({"title": new_title}).text),
            digest,
            report,
            ctx.reply("the_title"),
            done="edited_title",
            values={"heading": ""},
            data={"spelled": right},
        )
    new_body, count = fix_word(post.body, typo, right)
    if not count:
        return None
    values = {"old": clip(typo, 80), "new": right, "count": count, "left": ""}
    return await _write(
        ctx,
        path,
        (text, post.block + new_body),
        digest,
        report,
        ctx.reply("the_body"),
        done="replaced",
        values=values,
        data={"replaced": count, "spelled": right},
    )


async def _write(
    ctx: SkillContext,
    path: str,
    texts: tuple[str, str],
    digest: str,
    report: list[dict[str, Any]],
    what: str,
    *,
    done: Literal[
        "edited",
        "edited_title",
        "retagged",
        "retagged_in_text",
        "retagged_text_only",
        "replaced",
        "described",
        "field_set",
        "removed",
    ] = "edited",
    values: dict[str, Any] | None = None,
    data: dict[str, Any] | None = None,
) -> SkillResult:
    """Show the diff (and ask, under ``edit.confirm``), save, re-index, reply (``done``, with
    ``values``; ``data`` joins the result's)."""
    text, new_text = texts
    more = data or {}
    if new_text == text:
        return SkillResult(
            message=ctx.reply("unchanged"),
            data={"path": path, "diff": "", "changed": False, "checks": report, **CHECKED},
        )
    before, after = split_frontmatter(text, path), split_frontmatter(new_text, path)
    # The body's diff when only the body changed; else the whole text's: a note given its
    # first frontmatter block (tags) showed only the blank line after it.
    diff = (
        unified_diff(before.body, after.body, path)
        if before.body != after.body and before.block == after.block
        else unified_diff(text, new_text, path)
    )
    shown = diff if len(diff) <= MAX_DIFF_IN_MESSAGE else clip(diff, MAX_DIFF_IN_MESSAGE) + "\n"
    confirm = ctx.reply("confirm", path=path, diff=shown)
    if confirming(ctx) and not saves(await ctx.ask(confirm, accepts=confirms_or_answers)):
        return SkillResult(
            message=ctx.reply("not_written", path=path),
            data={
                "path": path,
                "diff": diff,
                "changed": False,
                "written": False,
                "checks": report,
                **CHECKED,
                **more,
            },
        )
    ctx.progress(3, 3, ctx.reply("saving"), path)
    await ctx.step("target", partial(text_hash, new_text))  # see _saved_before_restart
    saved = await ctx.step("save", partial(_save, ctx, path, new_text, digest), returns=Written)
    await ctx.step("index", ctx.memory.refresh, returns=IndexReport)
    return SkillResult(
        message=ctx.reply(
            "retagged"
            if done == "retagged"
            else "retagged_in_text"
            if done == "retagged_in_text"
            else "retagged_text_only"
            if done == "retagged_text_only"
            else "edited_title"
            if done == "edited_title"
            else "replaced"
            if done == "replaced"
            else "described"
            if done == "described"
            else "field_set"
            if done == "field_set"
            else "removed"
            if done == "removed"
            else "edited",
            path=path,
            what=what,
            diff=shown,
            **(values or {}),
        ),
        data={
            "path": path,
            "diff": diff,
            "changed": True,
            "hash": saved.hash,
            "checks": report,
            **CHECKED,
            **more,
        },
    )


# Which of a reply's three forms (added, removed, set) a tag change takes.
_ACTIONS = {"add": 0, "remove": 1, "set": 2, "rename": 1}  # (a rename's: as a removal's)


def _listed(ctx: SkillContext, tags: tuple[str, ...]) -> str:
    return tag_names(ctx, tags) if tags else ctx.reply("no_tags_left")


def _blog_list_style(ctx: SkillContext) -> str:
    """How the blog's posts write their YAML lists (``PostStyle.lists``): for the tags of a
    post without lists of its own. Reads posts: a sync step."""
    return blog_style(ctx).lists


async def _describe_post(
    ctx: SkillContext, path: str, read: tuple[str, str], post: Frontmatter, value: str
) -> SkillResult:
    """Set the post's description to ``value`` as written, with no model, in the field it
    has for it (``fields.description_field``); every other byte stays."""
    text, digest = read
    key = description_field(post.fields())
    new_text = post.with_fields({key: value}).text
    if not only_field_set(post, new_text, path, key):
        return refuse(ctx, "field_changed_more", field=key)  # (``with_fields`` keeps them)
    report = [{"name": "frontmatter", "passed": True, "reason": f"only {key} set", "attempts": 0}]
    return await _write(
        ctx,
        path,
        (text, new_text),
        digest,
        report,
        key,
        done="described",
        values={"field": key, "value": value},
        data={"field": key, "description": value},
    )


async def _set_field(
    ctx: SkillContext, path: str, read: tuple[str, str], post: Frontmatter, field: FieldSet
) -> SkillResult:
    """Set ``field`` as the request gave it, with no model; every other byte stays. A value
    the field cannot take (a date given as "tomorrow") is refused, and nothing goes to the
    model."""
    text, digest = read
    key = field.key
    if field.refused == "zola":
        return refuse(ctx, "field_not_zolas", field=key, path=path)
    if field.refused == "table":
        return refuse(ctx, "field_is_table", field=key, path=path)
    if field.refused == "two":
        return refuse(ctx, "field_one_at_a_time")
    if field.refused:
        return refuse(ctx, "field_wrong_value", field=key, wanted=field.wanted)
    top, _, nested = key.partition(".")
    if nested:  # Zola's [taxonomies], Hugo's [params]: its one line, the rest as written
        changed = post.with_nested(top, nested, field.value)
        if changed is None:  # (JSON, a list, or no one-line key there: not rewritten whole)
            return refuse(ctx, "field_in_table", field=key, table=top, path=path)
        new_text = changed.text
        wanted = {**post.fields()[top], nested: field.value}
        if changed.fields().get(top) != wanted:
            return refuse(ctx, "field_changed_more", field=key)
    else:
        new_text = post.with_fields({top: field.value}).text
    if not only_field_set(post, new_text, path, top):
        return refuse(ctx, "field_changed_more", field=key)
    report = [{"name": "frontmatter", "passed": True, "reason": f"only {key} set", "attempts": 0}]
    value = field.value
    shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value).lower() \
        if isinstance(value, bool) else str(value)  # fmt: skip
    if isinstance(value, dt.date):
        value = value.isoformat()  # (the data is JSON)
    return await _write(
        ctx,
        path,
        (text, new_text),
        digest,
        report,
        key,
        done="field_set",
        values={"field": key, "value": shown},
        data={"field": key, "value": value},
    )


async def _retag(
    ctx: SkillContext, path: str, post: Frontmatter, digest: str, change: TagChange
) -> SkillResult:
    """Change the post's tags as ``change`` asks (asking which tags when it names none), with
    no model: every other byte of the post stays (``tags.retagged``)."""
    if not change.tags:
        answer = await ctx.ask(
            ctx.reply(
                ("which_tags_add", "which_tags_remove", "which_tags_set")[_ACTIONS[change.action]]
            ),
            accepts=tags_or_request,  # not tags "what", "does", "it"…
        )
        tags = split_tags(answer) or ()
        if not tags:
            return refuse(ctx, "no_tags")
        change = TagChange(change.action, tags)
    zola = ctx.config.layout.kind == "zola"
    # A new YAML list is written as the post's own lists are; with none, as the blog's.
    lists = yaml_list_style(post.inner) if post.format == "yaml" else None
    if lists is None and post.format in (None, "yaml"):
        style = await ctx.step("list_style", partial(_blog_list_style, ctx), returns=str)
        lists = "quoted" if style == "quoted" else "flow" if style == "flow" else "block"
    jekyll = ctx.config.layout.kind == "jekyll"
    result: Retagged = retagged(post, change, zola=zola, lists=lists, jekyll=jekyll)
    data = {"tags": list(result.after), "tags_before": list(result.before), "field": result.field}
    new_text = renamed_in_text(ctx, change, result.text)  # an Obsidian note's #tag, too
    if new_text == post.text:
        shown = result.ignored or change.tags
        # An Obsidian note's inline #tag, asked to go: said, where "has no tag" alone misled.
        in_text = in_text_only(ctx, post, change)
        return SkillResult(
            message=ctx.reply(
                ("tags_unchanged_add", "tags_unchanged_remove", "tags_unchanged_set")[
                    _ACTIONS[change.action]
                ],
                path=path,
                tags=_listed(ctx, shown),
            )
            + (ctx.reply("tags_in_text", tags=_listed(ctx, tuple(in_text))) if in_text else ""),
            data={"path": path, "diff": "", "changed": False, "in_text": in_text, **data},
        )
    top = result.field.split(".")[0]
    if result.text != post.text and not only_field_set(post, result.text, path, top):
        return refuse(ctx, "tags_changed_more")  # (checked before it is written)
    report = [{"name": "frontmatter", "passed": True, "reason": "only the tags set", "attempts": 1}]
    note = ""
    renamed = new_text != result.text  # an inline #tag renamed in the text
    if result.ignored and change.action != "set" and not renamed:
        note = ctx.reply(
            ("tags_ignored_add", "tags_ignored_remove")[_ACTIONS[change.action]],
            tags=_listed(ctx, result.ignored),
        )
    listed = (*result.after, change.tags[1]) if renamed else result.after  # (said renamed)
    if inline := also_in_text(ctx, split_frontmatter(new_text), listed):
        note += ctx.reply("tags_also_in_text", tags=" ".join(f"#{tag}" for tag in inline))
    if renamed:
        report.append({"name": "text", "passed": True, "reason": "only the #tags renamed",
                       "attempts": 1})  # fmt: skip
    if (
        zola
        and result.field == "taxonomies.tags"
        and not await ctx.step("zola_tags", partial(zola_declares_tags, ctx), returns=bool)
    ):
        note += ctx.reply("zola_taxonomy")
    values = {"tags": _listed(ctx, result.after), "field": result.field, "note": note}
    if renamed:
        values |= {"old": change.tags[0], "new": change.tags[1]}
    return await _write(
        ctx,
        path,
        (post.text, new_text),
        digest,
        report,
        ctx.reply("the_tags"),
        done=(
            "retagged"
            if not renamed
            else "retagged_text_only"
            if result.text == post.text
            else "retagged_in_text"
        ),
        values=values,
        data=data,
    )


async def _publish(ctx: SkillContext, path: str, *, back: bool = False) -> SkillResult:
    """Publish the draft at ``path`` (``publishing.publish``), or with ``back`` make the post
    a draft again (``publishing.unpublish``); re-index, reply."""
    ctx.progress(1, 2, ctx.reply("unpublishing" if back else "publishing"), path)
    change = partial(unpublish if back else publish, ctx, path)
    done = await ctx.step("unpublish" if back else "publish", change, returns=PublishedPost)
    ctx.progress(2, 2, ctx.reply("saving"), done.path)
    await ctx.step("index", ctx.memory.refresh, returns=IndexReport)
    data: dict[str, Any] = {
        "path": done.path,
        "changed": done.changed,
        ("draft" if back else "published"): True,
    }
    held = _held_back(ctx, done)
    if held:
        data.update(
            (key, value) for key in ("scheduled", "expired") if (value := getattr(done, key))
        )
    if not done.changed:
        unchanged = ctx.reply("already_a_draft" if back else "not_a_draft", path=done.path)
        return SkillResult(message=unchanged + held, data=data)
    if done.moved_from is not None:
        message = ctx.reply(
            "unpublished_moved" if back else "published_moved",
            source=done.moved_from,
            path=done.path,
        )
        return SkillResult(message=message + held, data={**data, "moved_from": done.moved_from})
    if back:
        message = ctx.reply("unpublished", path=done.path)
        if (generator := IGNORED_DRAFTS.get(ctx.config.layout.kind)) is not None:
            folder = ctx.config.posts_dir.strip("/") or "."  # (VitePress: still on the site)
            message += ctx.reply("unpublished_built", generator=generator, folder=folder)
        return SkillResult(message=message, data=data)
    marks = ", ".join(done.removed)
    message = ctx.reply("published", path=done.path, marks=marks) + held
    return SkillResult(message=message, data=data)


def _held_back(ctx: SkillContext, done: PublishedPost) -> str:
    """The reply's note that the generator will not show the published post yet, or any more
    (``skillrt.blog.publish.held_back``), or "". A draft dated 2027-05-01 was "Published …
    nothing else changed", and ``hugo list future`` held it back."""
    generator = ctx.config.layout.kind.capitalize()
    if done.scheduled:
        return ctx.reply("published_scheduled", date=done.scheduled, generator=generator)
    if done.expired:
        return ctx.reply("published_expired", date=done.expired, generator=generator)
    return ""
