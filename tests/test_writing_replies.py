"""The builtin skills' words: one ``Replies`` table per module, holding exactly the replies its
code asks for, each in Chinese and English with the same placeholders."""

from __future__ import annotations

import ast
import importlib
import inspect
import string
from types import ModuleType

import pytest

from skillrt.skill.refusals import REFUSALS
from skillrt.skill.replies import Replies
from skillrt.skills import builtin_skills
from skillrt.skills.writing import (
    blog_facts,
    blog_tags,
    checked,
    languages,
    listing,
    newpost,
    pick,
    post_facts,
    post_length,
    post_tags,
    show_post,
    tag_suggest,
    undoing,
)

MODULES = sorted({s.fn.__module__ for s in builtin_skills() if "browsing" not in s.fn.__module__})


def _constants(node: ast.AST) -> set[str]:
    return {
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def asked_for(module: ModuleType) -> set[str]:
    """The reply keys a module's code names: ``ctx.reply(key)``, ``refuse(ctx, key)``,
    ``BadParam(field, key)``, ``Chars(empty=key, too_long=key)``."""
    keys: set[str] = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "reply" and node.args:
            keys |= _constants(node.args[0])
        elif name in ("refuse", "BadParam") and len(node.args) > 1:
            keys |= _constants(node.args[1])
        elif name == "Chars":
            keys |= {
                k.value.value
                for k in node.keywords
                if k.arg in ("empty", "too_long") and isinstance(k.value, ast.Constant)
            }
    return keys


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("name", MODULES)
def test_a_module_declares_exactly_the_replies_it_asks_for(name: str) -> None:
    module = importlib.import_module(name)
    table: Replies = module.REPLIES
    uses_pick = any(getattr(module, n, None) is pick.ask_for_post for n in dir(module))
    uses_checks = any(getattr(module, n, None) is checked.checked for n in dir(module))
    wanted = asked_for(module) | (asked_for(pick) if uses_pick else set())
    wanted |= asked_for(checked) if uses_checks else set()
    if any(getattr(module, n, None) is newpost.draft_note for n in dir(module)):
        wanted |= asked_for(newpost)  # the reply's word on a draft
    if any(getattr(module, n, None) is languages.known_language for n in dir(module)):
        wanted |= asked_for(languages)  # its refusal of an unknown language
    if any(getattr(module, n, None) is listing.list_by_tag for n in dir(module)):
        wanted |= asked_for(listing)  # the lists by tag (and its "… and N more")
    if any(getattr(module, n, None) is post_length.post_length for n in dir(module)):
        wanted |= asked_for(post_length)  # how long a post is
    if any(getattr(module, n, None) is post_tags.post_tags for n in dir(module)):
        wanted |= asked_for(post_tags)  # a post's tags
    if any(getattr(module, n, None) is blog_tags.retag_every_post for n in dir(module)):
        wanted |= asked_for(blog_tags)  # a tag changed in every post
    if any(getattr(module, n, None) is show_post.show_post for n in dir(module)):
        wanted |= asked_for(show_post)  # a post shown as written
    if any(getattr(module, n, None) is post_facts.post_fact for n in dir(module)):
        wanted |= asked_for(post_facts)  # a post's author, date or categories
    if any(getattr(module, n, None) is blog_facts.blog_extreme for n in dir(module)):
        wanted |= asked_for(blog_facts)  # the blog's oldest, longest, shortest, top tag
    if any(getattr(module, n, None) is tag_suggest.suggest_tags for n in dir(module)):
        wanted |= asked_for(tag_suggest)  # the blog's tags that fit a post
    if any(getattr(module, n, None) is undoing.undo_post for n in dir(module)):
        wanted |= asked_for(undoing)  # an undo asked in words
    assert set(table) == wanted  # nothing missing, nothing left over
    skills = [s for s in builtin_skills() if s.fn.__module__ == name]
    assert skills and all(s.replies is table for s in skills)


@pytest.mark.parametrize("name", MODULES)
def test_every_reply_has_both_languages_with_the_same_placeholders(name: str) -> None:
    table: Replies = importlib.import_module(name).REPLIES
    for key, (zh, en) in (*table.items(), *REFUSALS.items()):
        assert any("\u4e00" <= ch <= "\u9fff" for ch in zh), key
        assert zh != en and fields(zh) == fields(en), key


def test_the_writing_skills_no_longer_say_inline() -> None:
    for name in MODULES:
        source = inspect.getsource(importlib.import_module(name))
        assert ".say(" not in source, name
