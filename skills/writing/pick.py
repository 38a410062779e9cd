"""Which post? When a request names none and the session has no focus, ask.

The question lists the likeliest posts: those named in the conversation, then those matching
the request, then the newest. The answer may be a number, a path, a file name or a title.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from skillrt import Replies, SkillContext, SkillResult
from skillrt.exceptions import PathNotAllowed

__all__ = ["REPLIES", "ask_for_post", "likely_posts", "match_choice", "no_post_chosen"]

MAX_CHOICES = 5
_NUMBER = re.compile(r"^\s*(?:#|第|no\.?\s*)?\s*(\d{1,2})\s*(?:个|篇|号)?\s*[.。)）]?\s*$", re.I)

# Joined to the replies of every skill that asks (``REPLIES = Replies({...}) | pick.REPLIES``).
REPLIES = Replies(
    {
        "which_post": (
            "要{action}哪篇文章？\n\n{lines}\n\n请回复编号或文章名。",
            "Which post should I {action}?\n\n{lines}\n\nAnswer with a number or a name.",
        ),
        "no_post_chosen": (
            "没有找到你说的那篇文章，所以什么都没做。可以给出路径（如 posts/x.md）再试一次。",
            "I could not tell which post you meant, so nothing was done. Give its path "
            "(like posts/x.md) and try again.",
        ),
    }
)


def likely_posts(ctx: SkillContext, k: int = MAX_CHOICES) -> list[tuple[str, str]]:
    """``(path, title)`` of the posts the request most likely means, best first (the index
    refreshed first: blocking I/O, run it as a sync step)."""
    posts = ctx.memory.posts
    posts.refresh()
    found: dict[str, str] = {}

    def add(path: str) -> None:
        if len(found) < k and path not in found:
            try:
                post = posts.get(path)
            except PathNotAllowed:  # "../x.md" in a turn: not a post of this blog
                return
            if post is not None:
                found[path] = post.title

    for path in ctx.conversation.mentioned:
        add(path)
    for hit in posts.search(ctx.input.text, k):
        add(hit.path)
    newest = sorted(posts.all_posts(), key=lambda p: (p.date or "", p.path), reverse=True)
    for meta in newest:
        add(meta.path)
    return list(found.items())


def match_choice(ctx: SkillContext, answer: str, choices: list[tuple[str, str]]) -> str | None:
    """The post an answer picks: a number of the list, a path, a file name or a title."""
    text = answer.strip().strip("`'\"“”《》「」")
    if not text:
        return None
    number = _NUMBER.match(text)
    if number is not None:
        index = int(number.group(1)) - 1
        return choices[index][0] if 0 <= index < len(choices) else None
    folded = text.casefold()
    for path, title in choices:
        stem = PurePosixPath(path).stem.casefold()
        if folded in (path.casefold(), stem, title.casefold()):
            return path
    for path, title in choices:
        if folded in title.casefold() or folded in path.casefold():
            return path
    resolved = ctx.memory.resolve_link(text)
    if resolved is not None:
        return resolved
    hits = ctx.memory.posts.search(text, 1)
    return hits[0].path if hits else None


async def ask_for_post(ctx: SkillContext, action: str) -> str | None:
    """Ask which post to ``action`` (a verb in the user's language; WAITING_INPUT); the chosen
    path, or None if none matched (or the blog has no posts)."""
    # A step, so a resumed task matches the answer against the list the user saw.
    choices = await ctx.step("choices", lambda: likely_posts(ctx), returns=list[tuple[str, str]])
    if not choices:
        return None
    lines = "\n".join(f"{i}. {title} (`{path}`)" for i, (path, title) in enumerate(choices, 1))
    answer = await ctx.ask(ctx.reply("which_post", action=action, lines=lines))
    return match_choice(ctx, answer, choices)


def no_post_chosen(ctx: SkillContext) -> SkillResult:
    """The reply when the answer named no post: nothing was done (not an error)."""
    return SkillResult(message=ctx.reply("no_post_chosen"), data={"error": "no_post_chosen"})
