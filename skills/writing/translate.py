"""Translate: a post into another language, saved as a new post beside it.

The original is never changed (EditContent rewrites in place; a translation is a second
post): ``posts/x.md`` translated into English becomes ``posts/x-en.md`` (``-en-2``... when
taken), with the frontmatter kept, the title translated, and ``lang`` and ``translation_of``
added. Long bodies go to the model in parts, each a durable step.
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel

from skillrt import SkillContext, SkillResult, skill
from skillrt.storage.markdown import split_post

from .common import failure, friendly_errors, new_post_text, refresh_memory, save_new_file
from .pick import ask_for_post, no_post_chosen
from .prompts import clip, messages, strip_fences
from .summarize import split_parts

__all__ = ["TranslateParams", "language_code", "translate"]

MAX_PARTS = 24
PART_TOKENS = 1200
TRANSLATE_SYSTEM = (
    "You translate Markdown blog posts into {language}. Answer with the translation only: no "
    "explanation, no code fence around it. Keep the Markdown structure, code blocks (do not "
    "translate code), links and [[wikilinks]] as they are."
)
TITLE_SYSTEM = "Translate this blog post title into {language}. Answer with the title only."

_LANGUAGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "en": ("English", ("en", "english", "英文", "英语")),
    "zh": ("Simplified Chinese", ("zh", "chinese", "mandarin", "中文", "汉语", "简体中文")),
    "ja": ("Japanese", ("ja", "japanese", "日文", "日语")),
    "fr": ("French", ("fr", "french", "法文", "法语")),
    "de": ("German", ("de", "german", "德文", "德语")),
    "es": ("Spanish", ("es", "spanish", "西班牙文", "西班牙语")),
    "ko": ("Korean", ("ko", "korean", "韩文", "韩语")),
}


class TranslateParams(BaseModel):
    language: str = ""
    path: str | None = None


def language_code(name: str) -> str | None:
    """``en``, ``zh``... for a language as people name it (English, 英文, zh...)."""
    folded = name.strip().casefold()
    for code, (_, names) in _LANGUAGES.items():
        if folded in names:
            return code
    return None


@skill(
    name="Translate",
    intents=["TRANSLATE"],
    params=TranslateParams,
    description="Translate a post into another language, saved as a new post beside it",
)
@friendly_errors
async def translate(ctx: SkillContext, params: TranslateParams) -> SkillResult:
    code = language_code(params.language) if params.language else None
    if code is None and not params.language:  # "translate it": into the other language
        code = "en" if ctx.input.language == "zh" else "zh"
    if code is None:
        known = ", ".join(names[0] for names in _LANGUAGES.values())
        return failure(
            ctx,
            f"不认识这种语言：{clip(params.language, 40)}（可选：{known}）。",
            f"I do not know the language {clip(params.language, 40)!r} (known: {known}).",
            error="unknown_language",
        )
    language = _LANGUAGES[code][0]
    target = params.path or ctx.input.current_file
    if not target:
        target = await ask_for_post(ctx, "翻译", "translate")
        if target is None:
            return no_post_chosen(ctx)
    path = ctx.files.relative(target)
    ctx.progress(1, 3, ctx.say("读取文章", "Reading the post"), path)
    text, _ = await ctx.read("read", path)
    metadata, body = split_post(text, path)
    parts = split_parts(body, PART_TOKENS) if body.strip() else []
    if len(parts) > MAX_PARTS:
        return failure(
            ctx,
            f"文章太长了（{len(parts)} 部分，最多 {MAX_PARTS}）。",
            f"The post is too long to translate ({len(parts)} parts; at most {MAX_PARTS}).",
            error="too_long",
        )
    system = TRANSLATE_SYSTEM.format(language=language)

    async def ask(system: str, content: str, max_tokens: int) -> str:
        result = await ctx.llm.chat(messages(system, content), max_tokens=max_tokens)
        return strip_fences(result.content).strip()

    title = str(metadata.get("title") or PurePosixPath(path).stem)
    new_title: str = await ctx.step(
        "title",
        functools.partial(ask, TITLE_SYSTEM.format(language=language), clip(title, 200), 100),
    )
    new_title = " ".join(new_title.split()).strip("\"'“”《》") or title
    translated: list[str] = []
    for i, part in enumerate(parts, 1):
        ctx.progress(
            2, 3, ctx.say(f"翻译第 {i}/{len(parts)} 部分", f"Translating part {i}/{len(parts)}")
        )
        translated.append(
            await ctx.step(f"part:{i}", functools.partial(ask, system, part, 2 * PART_TOKENS))
        )
    if parts and not any(t.strip() for t in translated):
        return failure(
            ctx,
            "模型没有返回译文，没有保存任何文件。",
            "The model returned no translation; nothing was saved.",
        )
    ctx.progress(3, 3, ctx.say("保存译文", "Saving the translation"))
    stem = PurePosixPath(path)
    wanted = str(stem.with_name(f"{stem.stem}-{code}{stem.suffix or '.md'}"))
    fields: dict[str, Any] = {
        **metadata,
        "title": new_title,
        "lang": code,
        "translation_of": path,
    }
    new_text = new_post_text(fields, "\n\n".join(translated))
    saved: dict[str, str] = await ctx.step(
        "save", lambda: asyncio.to_thread(save_new_file, ctx, wanted, new_text)
    )
    await ctx.step("index", lambda: refresh_memory(ctx))
    new_path = saved["path"]
    return SkillResult(
        message=ctx.say(
            f"已把 `{path}` 翻译成{language}，保存为 `{new_path}`（《{new_title}》），原文未改动。",
            f"Translated `{path}` into {language} as `{new_path}` (“{new_title}”); the "
            "original is unchanged.",
        ),
        data={"path": new_path, "source": path, "language": code, "title": new_title},
    )
