"""The blog as MCP resources and prompts.

Every indexed post is a resource ``post://<path>`` (its path under the blog, e.g.
``post://posts/rust-ownership.md``, percent-encoded: ``post://posts/my%20post.md``) named by
its title, as ``text/markdown``. The prompts
(write, summarise, translate) hand the client's model a request for the ``ask`` tool, in
words the router understands, so no prompt names a skill.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote, unquote

from mcp import types
from mcp.shared.exceptions import McpError

from skillrt.agent import AgentRuntime
from skillrt.blog.files import FileStore
from skillrt.blog.memory import BlogMemory
from skillrt.blog.posts import Post
from skillrt.exceptions import UserError

__all__ = ["PROMPTS", "get_prompt", "list_posts", "read_post"]

SCHEME = "post://"
MIME = "text/markdown"


# Characters a path keeps as they are in its URI: RFC 3986's unreserved ones (``quote`` never
# encodes those), ``/``, and the sub-delimiters, which mean nothing in a path. Everything else
# (a space, ``%``, ``#``, ``?``, ``:``, ``@``, non-ASCII) is percent-encoded, so that the URI
# is one pydantic's URL type keeps as it is, and ``_paths`` gives the path back as it was.
_KEPT = "/!$&'()*+,;="


def _uri(path: str) -> str:
    return SCHEME + quote(path, safe=_KEPT)


def _paths(uri: str) -> list[str]:
    """The paths a ``post://`` URI may stand for: decoded (as ``_uri`` encodes them), then as
    written (a client that built the URI itself, around a name with a ``%``)."""
    raw = uri[len(SCHEME) :]
    decoded = unquote(raw)
    return [decoded] if decoded == raw else [decoded, raw]


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
    paths = _paths(uri)
    memory = _memory(runtime)
    known = await asyncio.to_thread(_indexed, memory, paths)
    if known is None:
        await asyncio.to_thread(memory.refresh)
        known = await asyncio.to_thread(_indexed, memory, paths)
    if known is None:  # only an indexed post is read: ``..`` or a path outside is no post
        raise _invalid(f"no post {paths[0]!r} in the blog")
    try:
        text, _ = await asyncio.to_thread(_files(runtime).read, known.path)
    except UserError as exc:
        raise _invalid(str(exc)) from None
    return text, MIME


def _indexed(memory: BlogMemory, paths: list[str]) -> Post | None:
    """The first of ``paths`` the blog's index knows, or None."""
    for path in paths:
        known = memory.posts.get(path)
        if known is not None:
            return known
    return None


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
