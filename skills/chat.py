"""Chat: greetings, thanks, general questions and questions about the last answer.

The model answers with the session's recent turns (``ctx.conversation``, bounded in tokens),
so "why?" or "什么意思？" refers to what was just said. Small talk never ends in an error: when
the model fails or says nothing, a short reply of our own stands in.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from skillrt import Replies, SkillContext, SkillResult, skill
from skillrt.exceptions import BudgetExceeded, TaskCancelled
from skillrt.llm.base import LLMMessage

from .writing.checks import HAN, MIN_SHARE, language_share
from .writing.languages import LANGUAGES, target_language
from .writing.prompts import clip
from .writing.scaffold import without_echo

__all__ = [
    "ABOUT_LAST",
    "CHAT_SYSTEM",
    "REPLIES",
    "TRANSLATE_LAST",
    "ChatParams",
    "chat",
    "without_sign_off",
]

MAX_MESSAGE_CHARS = 2000
MAX_REPLY_TOKENS = 300
MAX_ERROR_CHARS = 200  # of the model's error, in a reply
CHAT_SYSTEM = (
    "You are skillrt, a helpful assistant for the author of a Markdown blog: you can write, "
    "edit, summarise and translate its posts and answer questions from them. Reply briefly, "
    "in one to three sentences, in {lang}."
)
ABOUT_LAST = "The user asks about your previous answer: explain that answer simply."
# "translate that to Chinese" right after an answer (the router sends it here when no post is
# open, in focus or named): that answer, in the language asked for.
TRANSLATE_LAST = (
    "The user asks for your previous answer in {language}: reply with that answer translated "
    "into {language}, and nothing else."
)
_TRANSLATE = re.compile(r"\btranslate\b|翻译|译成|译为|翻成", re.I)
_GREETING = re.compile(
    r"^(?:hi|hello|hey|howdy|good\s+\w+|你好|您好|嗨|哈喽|早|晚上好|下午好)", re.I
)
_ABOUT_LAST = re.compile(
    r"^(?:why|how\s+come|what\s+do\s+you\s+mean|what\s+does\s+(?:that|it)\s+mean|really|"
    r"explain|tell\s+me\s+more|为什么|为啥|为何|什么意思|啥意思|这是什么意思|真的吗|详细说说|展开说说)",
    re.I,
)
_THANKS = re.compile(r"^(?:thanks|thank\s+you|thx|ty|cheers|谢谢|多谢|谢了|感谢)", re.I)
# A courtesy's answer ("You're welcome!", "不客气"): too short for ``language_share`` to tell
# its language, so "谢谢" answered "You're welcome!" was shown as it was.
_COURTESY_REPLY = re.compile(
    r"^(?:you(?:'|’)?re\s+(?:very\s+|most\s+)?welcome|you\s+are\s+welcome|welcome|no\s+problem|"
    r"no\s+worries|my\s+pleasure|any\s*time|(?:glad|happy)\s+to\s+help|"
    r"不客气|不用谢|别客气|不谢|没问题|很高兴)",
    re.I,
)
# What skillrt can do ("what can you do?", "help", "你能做什么？"): our own answer, with examples
# of requests it understands. The embedded model answered "grammar and spell check".
_ABOUT_ME = re.compile(
    r"^(?:so\s+|and\s+|ok(?:ay)?[\s,]+)?(?:what\s+(?:can|could|do)\s+you\s+(?:do|help\s+(?:me\s+)?with)|"
    r"what\s+are\s+you\s+able\s+to\s+do|who\s+are\s+you|what\s+are\s+you|what\s+is\s+skillrt|"
    r"help(?:\s+me)?)"
    r"(?:\s+(?:here|for\s+me|exactly))?\s*[?？!.！。]*$|"
    r"^(?:你|您)?(?:都)?(?:能|会|可以)(?:帮我)?(?:做|干)?(?:些)?(?:什么|啥)\s*[?？!.！。]*$|"
    r"^(?:你|您)是谁\s*[?？!.！。]*$",
    re.I,
)

# A letter's closing at the end of a reply: the embedded model answered "thanks!" with "You're
# welcome! … Best,\nAlex", signing a name that is nobody's.
_SIGN_OFF = re.compile(
    r"\n[ \t]*(?:best(?:\s+(?:regards|wishes))?|(?:kind|warm|warmest)?\s*regards|cheers|"
    r"sincerely(?:\s+yours)?|yours(?:\s+truly)?|all\s+the\s+best|take\s+care|祝好|此致敬礼|此致)"
    r"[ \t]*[,，!！.。]?[ \t]*(?:\n[ \t]*[^\n]{1,40}){0,2}\s*$",
    re.I,
)


def without_sign_off(reply: str) -> str:
    """``reply`` without a letter's closing and the name under it (see ``_SIGN_OFF``); as it
    is when that would leave nothing."""
    kept = _SIGN_OFF.sub("", reply).rstrip()
    return kept or reply


REPLIES = Replies(
    {
        "thinking": ("思考中", "Thinking"),
        # Our own replies, when the model fails or says nothing:
        "greeting": (
            "你好！今天想写点什么？比如：写一篇关于 Rust 所有权的文章。",
            "Hello! What shall we work on? For example: write an article about Rust ownership.",
        ),
        "thanks": ("不客气！还有什么需要帮忙的吗？", "You're welcome! Anything else?"),
        "about_me": (
            "我是 skillrt，帮你打理这个文件夹里的 Markdown 博客。比如：\n"
            "- 写文章：“写一篇关于 Rust 所有权的文章”\n"
            "- 改打开的文章：“改得更简洁一些”“加上标签 rust”“把所有文章的 rust 标签改成 rustlang”\n"
            "- 总结、翻译：“总结一下 posts/x.md”“把它翻译成英文”\n"
            "- 从你的文章里回答：“我写过哪些关于 docker 的文章？”“列出标签为 rust 的文章”"
            "“给我看看这篇文章”\n"
            "- 网页：“调研一下 https://…”“https://… 讲了什么”\n"
            "- 管理：“发布它”“删掉它”（放进回收站），/undo 撤销上一次修改\n"
            "输入 /help 查看命令。",
            "I'm skillrt: I look after the Markdown blog in this folder. For example:\n"
            "- write a post: “write an article about Rust ownership”\n"
            "- edit the open post: “make it shorter”, “add the tag rust”, “rename the tag rust "
            "to rustlang in every post”\n"
            "- summarise or translate: “summarize posts/x.md”, “translate it into Chinese”\n"
            "- answer from your posts: “what did I write about docker?”, “list my posts tagged "
            "rust”, “show it”\n"
            "- the web: “research https://…”, “what does https://… say about …?”\n"
            "- manage posts: “publish it”, “delete it” (to the trash), and /undo for the last "
            "change\n"
            "Type /help for the commands.",
        ),
        "model_failed": (
            "\n\n（模型没能回答：{error}。需要模型的请求在修好之前都会失败；"
            "skillrt doctor 会检查它。）",
            "\n\n(The model could not answer: {error}. Requests that need it will fail until "
            "this is fixed; skillrt doctor checks it.)",
        ),
        "not_translated": (
            "没能把上一个回答翻译成{language}：模型的回答不是{language}。",
            "I could not translate the last answer into {language}: the model's answer was not "
            "in {language}.",
        ),
        "no_answer": (
            "抱歉，我现在答不上来。可以换个问法，或者让我写、改、总结一篇文章。",
            "Sorry, I have no answer to that right now. Ask me another way, or ask me to write, "
            "edit or summarise a post.",
        ),
    }
)


class ChatParams(BaseModel):
    message: str = Field(default="", description="What the user said")


def _canned(ctx: SkillContext, text: str) -> str:
    if _GREETING.match(text):
        return ctx.reply("greeting")
    if _THANKS.match(text):
        return ctx.reply("thanks")
    return ctx.reply("no_answer")


def _translation_asked(ctx: SkillContext, text: str) -> str | None:
    """The code of the language the last answer is asked in ("translate that to Chinese",
    "翻译成英文"), or None: no translation asked, no language named, or no answer to translate."""
    if ctx.conversation.last_answer is None or not _TRANSLATE.search(text):
        return None
    return target_language(text)


def _in_another_language(reply: str, language: str) -> bool:
    """Whether the model's answer to a greeting or thanks is in another language than the
    user's: most of its words in another script, or, too short to tell by its words, a
    courtesy of its own ("You're welcome!", "Hello!") in the other script than the user's
    ("谢谢" was answered "You're welcome!"). A short answer that is no courtesy is kept."""
    if language_share(reply, language) < MIN_SHARE:
        return True
    text = reply.strip()
    courtesy = _GREETING.match(text) or _THANKS.match(text) or _COURTESY_REPLY.match(text)
    return bool(courtesy) and bool(HAN.search(text)) != (language == "zh")


@skill(
    name="Chat",
    intents=["CHAT"],
    params=ChatParams,
    description="Small talk and general questions, answered with the conversation so far",
    replies=REPLIES,
)
async def chat(ctx: SkillContext, params: ChatParams) -> SkillResult:
    text = " ".join((params.message or ctx.input.text).split())[:MAX_MESSAGE_CHARS]
    if not text:  # run_skill("Chat", {}): nothing said, nothing to ask the model (it was asked)
        return SkillResult(message=ctx.reply("greeting"), data={"chat": True, "fallback": True})
    if _ABOUT_ME.match(text):  # what it can do: ours, with requests it understands
        return SkillResult(
            message=ctx.reply("about_me"), data={"chat": True, "fallback": False, "about": True}
        )
    target = _translation_asked(ctx, text)
    if target is not None:
        lang = LANGUAGES[target].prompt
    else:
        lang = "简体中文" if ctx.input.language == "zh" else "English"
    history: list[LLMMessage] = ctx.conversation.messages()
    if not history or history[-1]["role"] != "user":
        history.append({"role": "user", "content": text})
    system = CHAT_SYSTEM.format(lang=lang)
    if target is not None:
        system += " " + TRANSLATE_LAST.format(language=lang)
    elif _ABOUT_LAST.match(text) and ctx.conversation.last_answer is not None:
        system += " " + ABOUT_LAST
    prompt: list[LLMMessage] = [{"role": "system", "content": system}, *history]
    ctx.progress(1, 1, ctx.reply("thinking"))

    failed: list[str] = []  # why the model gave no answer, when it raised

    async def answer() -> str:
        try:
            result = await ctx.llm.chat(prompt, max_tokens=MAX_REPLY_TOKENS)
        except (TaskCancelled, BudgetExceeded):
            raise
        except Exception as exc:  # small talk never fails: our own reply stands in
            ctx.logger.warning("agent.error", where="chat", error=f"{type(exc).__name__}: {exc}")
            failed.append(clip(f"{type(exc).__name__}: {exc}", MAX_ERROR_CHARS))
            return ""
        # its instructions said back: ours; a letter's closing: not ours
        return without_sign_off(without_echo(result.content, [system]))

    reply: str = await ctx.step("reply", answer)
    # A greeting or thanks answered in another language than the user's ("你好" answered in
    # English by the embedded model): our own reply, in theirs.
    courtesy = _GREETING.match(text) or _THANKS.match(text)
    elsewhere = courtesy and _in_another_language(reply, ctx.input.language)
    fallback = not reply or bool(elsewhere)
    message = _canned(ctx, text) if fallback else reply
    if target is not None and reply and language_share(reply, target) < MIN_SHARE:
        # not what was asked for: said so, not shown as the translation
        names = LANGUAGES[target]
        named = names.name_zh if ctx.input.language == "zh" else names.name
        message, fallback = ctx.reply("not_translated", language=named), True
    if failed:  # (said: a missing model file answered "hi" with our greeting, and no more)
        message += ctx.reply("model_failed", error=failed[0])
    data: dict[str, object] = {"chat": True, "fallback": fallback}
    if failed:
        data["model_error"] = failed[0]
    if target is not None:
        data["translated_to"] = target
    return SkillResult(message=message, data=data)
