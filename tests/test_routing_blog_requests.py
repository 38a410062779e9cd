"""Requests about the blog that are answered without a model (lists by tag, the tags, a
post's links and length, two posts compared) or that edit one field of a post (its
description, its title) are routed by the table alone, with and without the trained
classifier: before, "list my tags" and "what links to the git workflow post?" were offered as
a numbered choice, "set the summary of … to …" was read as a summary, and "suggest a better
title for …" as a new post."""

from __future__ import annotations

import pytest

from benchmarks.bench_routing import _router

REQUESTS = [
    ("which posts are tagged rust?", "ANSWER_QUESTION"),
    ("list my tags", "ANSWER_QUESTION"),
    ("what tags do I use?", "ANSWER_QUESTION"),
    ("带 docker 标签的文章有哪些", "ANSWER_QUESTION"),
    ("列出所有标签", "ANSWER_QUESTION"),
    ("what links to the git workflow post?", "ANSWER_QUESTION"),
    ("what does the docker post link to?", "ANSWER_QUESTION"),
    ("哪些文章链接到了 rust 生命周期那篇？", "ANSWER_QUESTION"),
    ("set the description of the go post to Goroutines", "EDIT_CONTENT"),
    ("add a description to the go post: Goroutines", "EDIT_CONTENT"),
    ("给 go 那篇文章加上描述：Go 并发入门", "EDIT_CONTENT"),
    ("把 docker 那篇文章的描述改成“容器入门”", "EDIT_CONTENT"),
    ("suggest a better title for the git workflow post", "EDIT_CONTENT"),
    ("come up with a catchier title for the go post", "EDIT_CONTENT"),
    ("compare the rust borrowing post with the rust lifetimes post", "ANSWER_QUESTION"),
    ("对比一下 rust 借用和生命周期那两篇文章", "ANSWER_QUESTION"),
    # a question on a web page it gives: read by ResearchWeb, not answered in general
    ("what does https://sqlite.org/wal.html say about checkpoints?", "RESEARCH_WEB"),
    ("how do I detach according to https://example.com/tmux.html", "RESEARCH_WEB"),
    ("what's my latest post?", "ANSWER_QUESTION"),
    ("mention the smart pointers post in the git branching workflow post", "EDIT_CONTENT"),
    ("cite the sqlite post in the database indexing post", "EDIT_CONTENT"),
    ("what tags does it have?", "ANSWER_QUESTION"),
    # unchanged neighbours
    ("how do I link to https://example.com in a post?", "ANSWER_QUESTION"),
    ("write a post comparing rust and go", "WRITE_ARTICLE"),
    ("add the tag rust to the go post", "EDIT_CONTENT"),
    ("summarize the go post", "SUMMARIZE"),
    # the classifier sent these to the chat, where the model named a published post a draft
    ("any drafts?", "ANSWER_QUESTION"),
    ("do I have any drafts?", "ANSWER_QUESTION"),
    ("有草稿吗？", "ANSWER_QUESTION"),
    ("草稿呢？", "ANSWER_QUESTION"),
    ("write a draft about tmux", "WRITE_ARTICLE"),
    # "notes" in a post's name matched no rule: a numbered choice led by "create a post"
    ("show the weekly notes post", "ANSWER_QUESTION"),
    ("open the weekly notes post", "ANSWER_QUESTION"),
    # the classifier offered this as a web search
    ("search my blog for kubernetes", "ANSWER_QUESTION"),
    # "graph" in a post's name sent these to UpdateGraph, which ran the model over every post
    ("what links to the graph post?", "ANSWER_QUESTION"),
    ("what does the graph post link to?", "ANSWER_QUESTION"),
    ("update the knowledge graph", "UPDATE_GRAPH"),
]


@pytest.mark.parametrize("classifier", [False, True], ids=["table", "with-classifier"])
@pytest.mark.parametrize(
    "text",
    [
        "what is https://sqlite.org/wal.html about?",
        "https://sqlite.org/wal.html 讲了什么？",
        "what does http://127.0.0.1:8765/tmux.html say about attaching?",
        "what does the article at https://go.dev/blog/x say about modules?",
        "https://zh.wikipedia.org/wiki/锈 讲了什么",
    ],
)
async def test_a_question_on_a_page_it_gives_is_research_by_the_table(
    text: str, classifier: bool
) -> None:
    """The table's rules for it are firm (``confidence = 1.0``): the classifier, sure it is a
    question for the blog or a summary, overruled them, and the blog's answer said to ask
    "research <address>" instead."""
    parsed = await _router(None, classifier=classifier).parse(text)
    assert parsed.type == "RESEARCH_WEB" and parsed.source == "regex"


@pytest.mark.parametrize(
    "text",
    [
        "what does my post linking https://example.com say about caching?",
        "What does the post that cites https://go.dev/doc say about modules?",
    ],
)
async def test_a_question_on_ones_own_post_giving_an_address_is_no_firm_research(
    text: str,
) -> None:
    parsed = await _router(None, classifier=True).parse(text)
    assert parsed.type == "ANSWER_QUESTION"


async def test_setting_the_summary_field_is_an_edit_by_the_table() -> None:
    """(The classifier, sure it is a summary, disputes it: the user is asked.)"""
    parsed = await _router(None, classifier=False).parse("set the summary of posts/go.md to 'Go'")
    assert parsed.type == "EDIT_CONTENT"


@pytest.mark.parametrize("classifier", [False, True], ids=["table", "with-classifier"])
@pytest.mark.parametrize(("text", "intent"), REQUESTS)
async def test_the_request_goes_to_its_skill(text: str, intent: str, classifier: bool) -> None:
    router = _router(None, classifier=classifier)
    parsed = await router.parse(text, ask_model=False) if classifier else await router.parse(text)
    assert parsed.type == intent, (text, parsed)
