"""Sample requests and the intents the regex table must route them to.

Used by the router tests (each sample, with its expected parameters) and the routing
benchmark (``from skillrt.skills.samples import SAMPLE_INPUTS``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ROUTING_SAMPLES", "SAMPLE_INPUTS"]

ROUTING_SAMPLES: list[tuple[str, str, dict[str, Any]]] = [
    # WRITE_ARTICLE
    ("写一篇关于 Rust 所有权的文章", "WRITE_ARTICLE", {"topic": "Rust 所有权"}),
    ("帮我写一篇介绍 WebGPU 的博客", "WRITE_ARTICLE", {"topic": "WebGPU"}),
    ("写一篇文章，主题是异步编程", "WRITE_ARTICLE", {"topic": "异步编程"}),
    ("写一篇 Go 泛型的教程", "WRITE_ARTICLE", {"topic": "Go 泛型"}),
    ("以「分布式锁」为题写一篇文章", "WRITE_ARTICLE", {"topic": "分布式锁"}),
    ("帮我写一篇年度总结", "WRITE_ARTICLE", {"topic": "年度总结"}),
    ("写一篇新文章", "WRITE_ARTICLE", {}),
    ("write an article about Rust ownership", "WRITE_ARTICLE", {"topic": "Rust ownership"}),
    (
        "Please write a short blog post on async Python.",
        "WRITE_ARTICLE",
        {"topic": "async Python"},
    ),
    (
        "write an article summarizing the Rust 2024 edition",
        "WRITE_ARTICLE",
        {"topic": "summarizing the Rust 2024 edition"},
    ),
    (
        "write an article about what is a borrow checker",
        "WRITE_ARTICLE",
        {"topic": "what is a borrow checker"},
    ),
    ("create an article about CRDTs", "WRITE_ARTICLE", {"topic": "CRDTs"}),
    (
        "ｗｒｉｔｅ　ａｎ　ａｒｔｉｃｌｅ　ａｂｏｕｔ　ＷｅｂＧＰＵ",
        "WRITE_ARTICLE",
        {"topic": "WebGPU"},
    ),
    # CREATE_ARTICLE
    ("新建一篇文章 标题为 Rust 入门", "CREATE_ARTICLE", {"title": "Rust 入门"}),
    ("创建一篇标题为《周报》的文章", "CREATE_ARTICLE", {"title": "周报"}),
    ("新建一篇空白文章", "CREATE_ARTICLE", {}),
    ("新建一篇文章《Go 泛型》", "CREATE_ARTICLE", {"title": "Go 泛型"}),
    (
        "create a new post titled Getting Started with Zig",
        "CREATE_ARTICLE",
        {"title": "Getting Started with Zig"},
    ),
    ("new post: Notes on CRDTs", "CREATE_ARTICLE", {"title": "Notes on CRDTs"}),
    # DELETE_ARTICLE
    ("删除 posts/x.md", "DELETE_ARTICLE", {"path": "posts/x.md"}),
    ("把 posts/old-draft.md 删掉", "DELETE_ARTICLE", {"path": "posts/old-draft.md"}),
    ("删除这篇文章", "DELETE_ARTICLE", {}),
    ("delete the post posts/x.md", "DELETE_ARTICLE", {"path": "posts/x.md"}),
    ("please remove this article", "DELETE_ARTICLE", {}),
    # SUMMARIZE
    ("帮我总结一下这篇文章", "SUMMARIZE", {}),
    ("概括 posts/rust.md 的主要内容", "SUMMARIZE", {"path": "posts/rust.md"}),
    ("这篇文章讲了什么？", "SUMMARIZE", {}),
    ("summarize posts/foo.md", "SUMMARIZE", {"path": "posts/foo.md"}),
    ("Can you give me a quick summary of this post?", "SUMMARIZE", {}),
    ("tl;dr please", "SUMMARIZE", {}),
    # BROWSE
    (
        "打开 https://example.com 找到价格",
        "BROWSE",
        {"url": "https://example.com", "task": "打开 https://example.com 找到价格"},
    ),
    ("访问 example.org/pricing，看看有哪些套餐", "BROWSE", {"url": "example.org/pricing"}),
    (
        "go to https://news.ycombinator.com and find the top story",
        "BROWSE",
        {"url": "https://news.ycombinator.com"},
    ),
    (
        "find the price of the pro plan on https://example.com/pricing.",
        "BROWSE",
        {"url": "https://example.com/pricing"},
    ),
    # RESEARCH_WEB
    ("调研一下 WebGPU 的现状", "RESEARCH_WEB", {"topic": "WebGPU 的现状"}),
    ("在网上搜索关于 Rust 异步运行时的资料", "RESEARCH_WEB", {"topic": "Rust 异步运行时"}),
    ("research the state of WebGPU", "RESEARCH_WEB", {"topic": "the state of WebGPU"}),
    ("do some research on vector databases", "RESEARCH_WEB", {"topic": "vector databases"}),
    ("what's the latest news about Deno?", "RESEARCH_WEB", {"topic": "Deno"}),
    # ANSWER_QUESTION
    ("什么是借用检查器", "ANSWER_QUESTION", {"question": "什么是借用检查器"}),
    ("Rust 和 Go 有什么区别？", "ANSWER_QUESTION", {"question": "Rust 和 Go 有什么区别?"}),
    ("如何写好一篇技术博客", "ANSWER_QUESTION", {}),
    ("what is a borrow checker?", "ANSWER_QUESTION", {"question": "what is a borrow checker?"}),
    ("How do lifetimes work in Rust?", "ANSWER_QUESTION", {}),
    ("explain the difference between a mutex and a semaphore", "ANSWER_QUESTION", {}),
    ("is Rust faster than Go?", "ANSWER_QUESTION", {}),
    # CODE_EXPLAIN
    ("解释这段代码", "CODE_EXPLAIN", {}),
    ("这个函数是干什么的", "CODE_EXPLAIN", {}),
    ("explain this code", "CODE_EXPLAIN", {"question": "explain this code"}),
    ("What does this Python function do?", "CODE_EXPLAIN", {}),
    ("can you walk me through this snippet", "CODE_EXPLAIN", {}),
    # UPDATE_GRAPH
    ("更新知识图谱", "UPDATE_GRAPH", {}),
    ("把知识图谱更新一下", "UPDATE_GRAPH", {}),
    ("update the knowledge graph", "UPDATE_GRAPH", {}),
    ("rebuild the wiki links", "UPDATE_GRAPH", {}),
    # EDIT_CONTENT
    ("把这段改得更简洁", "EDIT_CONTENT", {"instruction": "把这段改得更简洁"}),
    ("润色一下这篇文章", "EDIT_CONTENT", {}),
    ("检查一下这篇文章的错别字", "EDIT_CONTENT", {}),
    ("修改 posts/rust.md，补充一个例子", "EDIT_CONTENT", {"path": "posts/rust.md"}),
    (
        "edit this paragraph to be more concise",
        "EDIT_CONTENT",
        {"instruction": "edit this paragraph to be more concise"},
    ),
    ("make this intro shorter and punchier", "EDIT_CONTENT", {}),
    ("fix the typos in posts/go.md", "EDIT_CONTENT", {"path": "posts/go.md"}),
    ("remove the last paragraph", "EDIT_CONTENT", {}),
    # follow-ups on the session's focus
    ("make it shorter", "EDIT_CONTENT", {"instruction": "make it shorter"}),
    ("把它改得更口语化", "EDIT_CONTENT", {}),
    ("add a section about error handling to it", "EDIT_CONTENT", {}),
    ("给它加一节关于错误处理的内容", "EDIT_CONTENT", {}),
    ("delete it", "DELETE_ARTICLE", {}),
    ("删掉它", "DELETE_ARTICLE", {}),
    ("再写一篇类似的，关于 Go 的并发", "WRITE_ARTICLE", {"topic": "Go 的并发", "similar": "类似"}),
    ("write a similar post about Go channels", "WRITE_ARTICLE", {"topic": "Go channels"}),
    # CHAT
    ("hello", "CHAT", {}),
    ("thanks!", "CHAT", {}),
    ("why?", "CHAT", {}),
    ("你好", "CHAT", {}),
    ("谢谢", "CHAT", {}),
    ("什么意思？", "CHAT", {}),
    # TRANSLATE
    ("把它翻译成英文", "TRANSLATE", {"language": "英文"}),
    ("translate it into English", "TRANSLATE", {"language": "English"}),
    ("translate posts/rust.md into Japanese", "TRANSLATE", {"path": "posts/rust.md"}),
]
"""(text, expected intent, expected parameters: a subset of what the router extracts)."""

SAMPLE_INPUTS: list[tuple[str, str]] = [(text, intent) for text, intent, _ in ROUTING_SAMPLES]
"""(text, expected intent) for every sample."""
