"""The blog as MCP resources and prompts.

Every indexed post is a resource ``post://<path>`` (its path under the blog, e.g.
``post://posts/rust-ownership.md``) named by its title, as ``text/markdown``. The prompts
(write, summarise, translate) hand the client's model a request for the ``ask`` tool, in
words the router understands, so no prompt names a skill.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import types
from mcp.shared.exceptions import McpError

from skillrt.agent import AgentRuntime
from skillrt.blog.files import FileStore
from skillrt.blog.memory import BlogMemory
from skillrt.exceptions import UserError

__all__ = ["PROMPTS", "get_prompt", "list_posts", "read_post"]

SCHEME = "post://"
MIME = "text/markdown"


def _uri(path: str) -> str:
    return SCHEME + path


async def list_posts(runtime: AgentRuntime) -> list[types.Resource]:
    """The blog's posts, re-indexed first (only changed files are read)."""
    await runtime.initialize()
    memory = _memory(runtime)
    await asyncio.to_thread(memory.refresh)
    posts = await asyncio.to_thread(memory.posts.all_posts)
    return [
        types.Resource(
            uri=_uri(p.path),  # type: ignore[arg-type]  # pydantic validates the string
            name=p.path,
            title=p.title or p.path,
            description=p.description or None,
            mimeType=MIME,
        )
        for p in posts
    ]


async def read_post(runtime: AgentRuntime, uri: str) -> tuple[str, str]:
    """A post's text and its mime type; an MCP error for anything but an indexed post."""
    await runtime.initialize()
    if not uri.startswith(SCHEME):
        raise _invalid(f"not a post: {uri} (posts are post://<path>)")
    path = uri[len(SCHEME) :]
    memory = _memory(runtime)
    known = await asyncio.to_thread(memory.posts.get, path)
    if known is None:
        await asyncio.to_thread(memory.refresh)
        known = await asyncio.to_thread(memory.posts.get, path)
    if known is None:
        raise _invalid(f"no post {path!r} in the blog")
    try:
        text, _ = await asyncio.to_thread(_files(runtime).read, known.path)
    except UserError as exc:
        raise _invalid(str(exc)) from None
    return text, MIME


def _memory(runtime: AgentRuntime) -> BlogMemory:
    memory = runtime.memory
    if memory is None:
        raise _invalid("the blog is not open")
    return memory


def _files(runtime: AgentRuntime) -> FileStore:
    files = runtime.files
    if files is None:
        raise _invalid("the blog is not open")
    return files


def _invalid(message: str) -> McpError:
    return McpError(types.ErrorData(code=types.INVALID_PARAMS, message=message))


# name -> (description, arguments, the request sent to `ask`)
PROMPTS: dict[str, tuple[str, list[types.PromptArgument], str]] = {
    "write": (
        "Write a new article for the blog",
        [types.PromptArgument(name="topic", description="What it is about", required=True)],
        "write an article about {topic}",
    ),
    "summarise": (
        "Summarise a post of the blog",
        [types.PromptArgument(name="path", description="The post, e.g. posts/x.md", required=True)],
        "summarize {path}",
    ),
    "translate": (
        "A post of the blog in another language",
        [
            types.PromptArgument(name="path", description="The post", required=True),
            types.PromptArgument(name="language", description="Into which language", required=True),
        ],
        "translate {path} into {language}",
    ),
}


def list_prompts() -> list[types.Prompt]:
    return [
        types.Prompt(name=name, description=description, arguments=arguments)
        for name, (description, arguments, _) in PROMPTS.items()
    ]


def get_prompt(name: str, arguments: dict[str, Any] | None) -> types.GetPromptResult:
    found = PROMPTS.get(name)
    if found is None:
        raise _invalid(f"no prompt {name!r} (known: {', '.join(PROMPTS)})")
    description, params, template = found
    args = {k: str(v) for k, v in (arguments or {}).items()}
    missing = [p.name for p in params if p.required and not args.get(p.name, "").strip()]
    if missing:
        raise _invalid(f"prompt {name!r} needs: {', '.join(missing)}")
    request = template.format(**{p.name: args.get(p.name, "") for p in params})
    text = f"Use skillrt's `ask` tool with this text: {request}"
    return types.GetPromptResult(
        description=description,
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )
