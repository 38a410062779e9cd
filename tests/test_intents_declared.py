"""Skills declare their intents: the runtime names none of the builtin skills or intents.

What is said and asked about an intent (its effect, label among numbered choices, yes/no
question, the words that pick it, examples, cue words, patterns) comes with the skill that
serves it: its section of ``config/intents.toml``, or an ``Intent`` the skill declares. So no
module outside ``skills/`` and ``config/`` names a builtin skill or intent in its code (prose
in docstrings and comments may), and a skill made at run time brings its own words.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from skillrt import Intent, IntentRouter, Skill, SkillResult, UserError
from skillrt._routing.intent_table import IntentTable
from skillrt.skills import builtin_skills

ROOT = Path(__file__).resolve().parent.parent
RUNTIME_OWN = {"CHAT", "UNKNOWN"}
"""The runtime's own intents: UNKNOWN (nothing fits) and CHAT (the small talk it recognises,
which a chat skill may serve). Every other intent is a skill's."""


def builtin_names() -> set[str]:
    names = {s.name for s in builtin_skills()}
    names |= {i for s in builtin_skills() for i in s.intents}
    names |= set(IntentTable.default().specs)
    return names - RUNTIME_OWN


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
        # An attribute's docstring: a string statement right after an assignment.
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for stmt in stmts:
                    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                        ids.add(id(stmt.value))
    return ids


def named_in_code(path: Path, names: set[str]) -> list[str]:
    """Each builtin name ``path`` uses in code: a string (not a docstring) or an identifier."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = _docstrings(tree)
    words = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")
    found = []
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = None if id(node) in prose else node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            text = node.name
        if text and (m := words.search(text)):
            found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}: {m.group()}")
    return found


def test_no_module_outside_skills_and_config_names_a_builtin_skill_or_intent() -> None:
    names = builtin_names()
    assert {"WRITE_ARTICLE", "WriteArticle", "BROWSE", "Browse", "Translate"} <= names
    found = [hit for path in sorted((ROOT / "runtime").rglob("*.py")) for hit in
             named_in_code(path, names)]  # fmt: skip
    assert found == []


def test_the_check_sees_a_name_in_code_but_not_in_prose(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Routes WRITE_ARTICLE."""\n'
        "GUARDED = {'RESEARCH_WEB': 'web'}\n"
        "# WriteArticle in a comment\n"
        "def f():\n    '''Browse.'''\n    return WRITE_ARTICLE\n",
        encoding="utf-8",
    )
    hits = named_in_code_at(module, builtin_names())
    assert sorted(h.rsplit(" ", 1)[1] for h in hits) == ["RESEARCH_WEB", "WRITE_ARTICLE"]


def named_in_code_at(path: Path, names: set[str]) -> list[str]:
    global ROOT
    saved, ROOT = ROOT, path.parent
    try:
        return named_in_code(path, names)
    finally:
        ROOT = saved


# --- a skill made at run time brings its own words ------------------------------------------


class _Topic(BaseModel):
    topic: str = ""


async def _noop(ctx: Any, params: Any) -> SkillResult:
    return SkillResult()


BOOK = Intent(
    "BOOK_MEETING",
    description="Book a meeting in the calendar",
    effect="write",
    label=("预约会议：{what}", "Book a meeting: {what}"),
    confirm=("要预约「{what}」吗？(y/n)", "Book “{what}”? (y/n)"),
    names=("book", "预约"),
    examples=("book a meeting with Ana on Friday", "帮我约周五和 Ana 开会"),
    cues=(r"\bmeetings?\b", "会议"),
    patterns=(r"\bbook (?:a )?meeting (?:about|on) (?P<topic>.+)",),
    params=("topic",),
    offered=5,
)


def booking_skill() -> Skill[Any]:
    return Skill(name="Calendar", description="calendar", params=_Topic, fn=_noop, declares=[BOOK])


async def test_a_declared_pattern_routes_and_fills_params() -> None:
    router = IntentRouter(None)
    router.register_skill(booking_skill())
    got = await router.parse("please book a meeting about the Q3 plan")
    assert (got.type, got.parameters, got.source) == ("BOOK_MEETING", {"topic": "the Q3 plan"},
                                                      "regex")  # fmt: skip
    assert router.find_skill(got).name == "Calendar"  # type: ignore[union-attr]
    assert "BOOK_MEETING" in router.intents


def test_a_declaration_brings_its_label_question_words_and_examples() -> None:
    from skillrt._routing.clarify import choose_question, confirm_question

    router = IntentRouter(None)
    router.register_skill(booking_skill())
    spec = router.spec("BOOK_MEETING")
    assert spec is not None and spec.effect == "write"
    asked = confirm_question(spec, {"topic": "Q3"}, "book it", "zh")
    assert asked.text == "要预约「Q3」吗？(y/n)"
    choice = choose_question([(spec, {"topic": "Q3"})], "book it", "en")
    assert "1. Book a meeting: Q3" in choice.text
    assert choice.interpret("book") is choice.choices[0]
    assert choice.interpret("预约") is choice.choices[0]
    assert router.alternatives("something vague")[0] == "BOOK_MEETING"  # offered first
    assert "book a meeting with Ana on Friday" in router.system_prompt()
    assert "帮我约周五和 Ana 开会" in router.rephrase_message("zh")


def test_an_intent_declared_without_words_gets_plain_ones() -> None:
    from skillrt._routing.clarify import choose_question, confirm_question

    router = IntentRouter(None)
    plain = Intent("SEND_MAIL", description="Send an e-mail", effect="web")
    router.register_skill(Skill(name="Mail", description="mail", params=_Topic, fn=_noop,
                                declares=[plain]))  # fmt: skip
    spec = router.spec("SEND_MAIL")
    assert spec is not None
    assert confirm_question(spec, {"topic": "hi"}, "x", "en").text == (
        "Go ahead: “Send an e-mail: hi”? (y/n)"
    )
    assert "1. Send an e-mail: hi" in choose_question([(spec, {"topic": "hi"})], "x", "en").text


def test_a_declaration_overrides_the_tables_section_field_by_field() -> None:
    router = IntentRouter(None)
    mine = Intent("SUMMARIZE", label=("摘要：{what}", "Digest: {what}"))
    router.register_skill(Skill(name="Digest", description="d", params=_Topic, fn=_noop,
                                declares=[mine]))  # fmt: skip
    spec = router.spec("SUMMARIZE")
    table = IntentTable.default().specs["SUMMARIZE"]
    assert spec is not None and spec.label == ("摘要：{what}", "Digest: {what}")
    assert spec.names == table.names and spec.description == table.description


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"name": "book"}, "UPPER_SNAKE"),
        ({"name": "UNKNOWN"}, "UNKNOWN"),
        ({"name": "X", "effect": "explode"}, "effect"),
        ({"name": "X", "label": ("only one",)}, "label"),
        ({"name": "X", "cues": ("(",)}, "regular expression"),
        ({"name": "X", "examples": "one string"}, "examples"),
    ],
)
def test_a_bad_declaration_is_refused_with_a_clear_error(
    kwargs: dict[str, Any], words: str
) -> None:
    with pytest.raises(UserError, match=words):
        Intent(**kwargs)


def test_one_skill_registry(tmp_path: Path) -> None:
    """The runtime's skills are the router's registry, not a second copy."""
    from skillrt.testing import ScriptedModel
    from tests.helpers import make_runtime

    rt = make_runtime(tmp_path, ScriptedModel([]))
    rt.register_skill(booking_skill())
    assert rt.skills is rt.router.registry and list(rt.skills) == ["Calendar"]
    rt.router.unregister("Calendar")
    assert "Calendar" not in rt.skills


def test_every_packaged_intent_has_a_label_in_both_languages() -> None:
    """A Chinese list of choices showed CHAT as its English description ("Small talk:
    greetings, thanks, …: 列出所有标签"): every packaged intent has a label of its own."""
    from skillrt._routing.clarify import choose_question
    from skillrt._routing.intent_table import IntentTable

    specs = IntentTable.default().specs
    assert [name for name, spec in specs.items() if spec.label is None] == []
    options = [(specs[n], {"message": "列出所有标签", "question": "列出所有标签"})
               for n in ("CHAT", "ANSWER_QUESTION")]  # fmt: skip
    text = choose_question(options, "列出所有标签", "zh").text
    assert "1. 聊天：列出所有标签" in text and "Small talk" not in text
    assert "1. Just talk: 列出所有标签" in choose_question(options, "x", "en").text
