"""Output checks of the writing skills: each bad answer of a test model is caught, asked again
once with the reason, and refused with nothing saved when it comes back bad; fixable ones are
fixed; a good answer is saved with the quality report in the reply."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from skillrt.llm.base import LLMMessage
from skillrt.skills.writing.checks import (
    Generated,
    instruction_kind,
    language,
    not_a_refusal,
    not_cut_short,
    not_degenerate,
    scope,
    wikilinks,
)
from skillrt.skills.writing.scaffold import Scaffold
from skillrt.testing import FunctionModel, ModelOptions, ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import EXTRACTION, OUTLINE_EN, prompt_kind, writing_runtime

POST = "posts/rust-borrowing.md"


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


def snapshot(blog: Path) -> dict[str, str]:
    """Every file of the blog (outside the state folder) and its hash."""
    return {
        p.relative_to(blog).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(blog.rglob("*"))
        if p.is_file() and ".skillrt" not in p.parts
    }


def check_names(msg: Any) -> dict[str, bool]:
    return {c["name"]: c["passed"] for c in msg.data["checks"]}


def assert_refused(msg: Any, check: str, before: dict[str, str], blog: Path) -> None:
    assert msg.state == "ERROR", msg.content
    assert msg.data["outcome"] == "refused" and msg.data["error"] == "checks_failed"
    assert msg.data["check"] == check and msg.data["saved"] is False
    assert check in msg.content
    assert "nothing was saved" in msg.content or "没有保存任何内容" in msg.content
    assert msg.data["model_text"] and msg.data["model_text"][:40] in msg.content
    assert snapshot(blog) == before  # nothing saved


# --- the checks alone ---------------------------------------------------------------------------


def test_scaffolding_copied_whole_is_stripped_and_a_marker_in_prose_fails() -> None:
    prompt = (
        "Article: Rust (topic: rust; style: technical blog post)\n\nWrite section 1 of 2: Moves\n"
        "Key points:\n- a String moves\n- integers copy\n"
    )
    scaffold = Scaffold([prompt], fragments=["(topic: rust; style: technical blog post)"])
    echoed = "Write section 1 of 2: Moves\nKey points:\n- a String moves\n- integers copy\n\nBody."
    assert scaffold.clean(echoed).text == "Body." and not scaffold.clean(echoed).left
    fragment = "Moves (topic: rust; style: technical blog post) are cheap."
    assert scaffold.clean(fragment).text == "Moves are cheap."
    ambiguous = scaffold.clean("As the Key points: say, Write section 3 of 9 now.")
    assert ambiguous.left  # a marker inside a sentence: not stripped, the check fails
    # the prompt's "(topic: …; style: …)" told as prose (the embedded model's tea article)
    told = "The article is about tea. The style of the article is technical and it discusses tea."
    assert scaffold.clean(told).left
    assert Scaffold([prompt]).clean("这篇文章的风格是技术性的，讲的是茶。").left
    tail = 'let owner = String::from("the same line in two sections");'
    with_tail = Scaffold([prompt + f"\nThe previous section ended with:\n{tail}"], content=[tail])
    assert with_tail.clean(f"```rust\n{tail}\n```").text == f"```rust\n{tail}\n```"
    excerpt = Scaffold(["Related posts you may link:\n  > " + tail])
    assert excerpt.clean(f"Intro.\n> {tail}\nEnd.").text == "Intro.\nEnd."  # an excerpt


def test_the_retry_note_echoed_on_a_line_of_its_own_is_stripped() -> None:
    """SmolLM2-135M's retry of "fix typos": the post's text, then the note with its end
    reworded. The note opens the line: stripped, reworded or not. Inside a sentence it fails."""
    scaffold = Scaffold(["Fix typos.\n\nImportant: the first answer was refused (x). Write only"])
    echoed = (
        "Futures must be pinned.\n\n\nImportant: the first answer was refused "
        "(not_degenerate: a loop). Write only the text requested above."
    )
    cleaned = scaffold.clean(echoed)
    assert cleaned.text == "Futures must be pinned." and not cleaned.left
    assert scaffold.clean("It said the first answer was refused, so I wrote more.").left
    # Its "Important:" left off (the embedded model's retry of "make the first paragraph
    # shorter", after a "Text:" label line of the prompt).
    scaffold = Scaffold(["Shorten it.\n\nText:\nA long one.\n\nImportant: the first answer was"])
    reworded = (
        "Async closures borrow.\nText:\nThe first answer was refused (instruction_kind: asked "
        "to shorten). The second response was requested (instruction_kind: requested)"
    )
    cleaned = scaffold.clean(reworded)
    assert cleaned.text == "Async closures borrow." and not cleaned.left, cleaned
    # Its opening reworded, its closing sentence copied.
    closing = "The text was refused (x). Write only the text asked for above, without any of"
    cleaned = scaffold.clean(f"Async closures borrow.\n\n{closing} these instructions in it.")
    assert cleaned.text == "Async closures borrow.", cleaned


def test_the_language_check_counts_scripts_and_common_words() -> None:
    zh, en, fr = language("zh"), language("en"), language("fr")
    chinese = Generated(text="Rust 的所有权规则保证内存安全，每个值都有一个所有者。")
    english = Generated(text="Ownership rules keep memory safe: each value has one owner.")
    assert zh(chinese).passed and not zh(english).passed and en(english).passed
    french = Generated(text=" ".join(["Le système de propriété est la base de la sécurité"] * 4))
    assert fr(french).passed and not en(french).passed
    assert zh(Generated(text="```rust\nlet x = 1;\n```")).passed  # code alone: nothing to judge


def test_the_instruction_kind_and_the_scope() -> None:
    original = "One two three four five six seven eight nine ten.\n"
    add = instruction_kind("add a sentence about lifetimes", original)
    assert add is not None
    assert add(Generated(text=original + "Lifetimes are checked too.\n")).passed
    assert not add(Generated(text="One two.\n")).passed  # an "add" that removes
    shorten = instruction_kind("make it shorter", original)
    assert shorten is not None and not shorten(Generated(text=original + "More.\n")).passed
    typos = instruction_kind("fix typos", original)
    assert typos is not None and not typos(Generated(text="Completely different words.")).passed
    # two typos fixed in a short paragraph (2 of 12 words: more than 15%) were refused
    short = instruction_kind("fix the typos", "Use the tool with care. Theer are some typos heer.")
    assert short is not None
    assert short(Generated(text="Use the tool with care. There are some typos here.")).passed
    assert not short(Generated(text="Use a hammer with care. Thou art some typo hearer.")).passed
    assert instruction_kind("make it clearer", original) is None
    rest = "The first paragraph stays where it is.\n\nThe third paragraph stays as well.\n"
    in_scope = scope(original, rest, growing=False)
    assert in_scope(Generated(text="One to ten.")).passed
    assert not in_scope(Generated(text=rest + "One to ten.")).passed


def test_wikilinks_become_plain_text_or_fail_when_mostly_invented() -> None:
    known = {"rust-borrowing"}
    check = wikilinks(lambda name: name in known)
    few = check(Generated(text="See [[rust-borrowing]], [[Nope|the nope post]] and `[[x]]`."))
    assert few.passed and few.text == "See [[rust-borrowing]], the nope post and `[[x]]`."
    many = check(Generated(text="[[a]] [[b]] [[c]] [[rust-borrowing]]"))
    assert not many.passed


def test_degenerate_text_reuses_the_guard() -> None:
    assert not not_degenerate(Generated(text="")).passed
    assert not not_degenerate(Generated(text="- same line\n" * 20)).passed
    assert not not_degenerate(Generated(text="ok", looped=True)).passed
    assert not not_degenerate(Generated(text="It was cut off in the midd", cut=True)).passed
    assert not_degenerate(Generated(text="A fine sentence.\n\nAnother one.")).passed


# --- each check in a skill: caught, asked again once, refused, nothing saved ---------------------


class Sections:
    """The writing model, with each section answered by ``section(n, messages)``."""

    def __init__(self, section: Any) -> None:
        self.section = section
        self.prompts: list[str] = []

    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Any:
        kind = prompt_kind(messages)
        if kind == "outline":
            return {**OUTLINE_EN, "sections": OUTLINE_EN["sections"][:2]}
        if kind == "extract":
            return EXTRACTION
        self.prompts.append(messages[-1]["content"])
        return self.section(len(self.prompts), messages)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            "As an AI language model, I cannot write a full article, but here are some ideas "
            "about ownership in Rust and why it matters for memory safety.",
            "the model says it cannot do it",
        ),
        (
            "Ownership in Rust means each value has one owner, and when the owner goes out of "
            "scope, the value is dropped, which",
            "the text stops mid-sentence",
        ),
    ],
    ids=["refusal", "cut-short"],
)
async def test_a_section_that_refuses_or_stops_mid_sentence_is_refused(
    blog: Path, answer: str, reason: str
) -> None:
    """Both were saved as the article's sections and the article reported written (under
    ``not_degenerate``'s name, so the report's checks stay the ones they were)."""
    before = snapshot(blog)
    model = Sections(lambda n, m: answer)
    rt = writing_runtime(blog, FunctionModel(model))
    msg = await rt.run_skill("WriteArticle", {"topic": "rust ownership"})
    await rt.close()
    assert_refused(msg, "not_degenerate", before, blog)
    assert reason in msg.data["reason"]
    assert len(model.prompts) == 2  # asked once more, with the reason


async def test_scaffolding_echoed_twice_is_refused_and_nothing_is_saved(blog: Path) -> None:
    before = snapshot(blog)
    model = Sections(lambda n, m: "Key points: the model wrote its prompt into the post.")
    rt = writing_runtime(blog, FunctionModel(model))
    msg = await rt.run_skill("WriteArticle", {"topic": "rust ownership"})
    await rt.close()
    assert_refused(msg, "no_scaffolding", before, blog)
    assert len(model.prompts) == 2  # asked once more, with the reason
    assert "the first answer was refused" in model.prompts[1]
    assert "Key points:" in model.prompts[1].split("the first answer was refused")[1]


async def test_scaffolding_copied_whole_is_stripped_and_the_article_saved(blog: Path) -> None:
    def section(n: int, messages: list[LLMMessage]) -> str:
        prompt = messages[-1]["content"]
        echo = "\n".join(line for line in prompt.splitlines() if line.startswith(("Write", "Key")))
        return f"{echo}\n\nOwnership moves values between bindings, section {n}."

    rt = writing_runtime(blog, FunctionModel(Sections(section)))
    msg = await rt.run_skill("WriteArticle", {"topic": "rust ownership"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    text = (blog / msg.data["path"]).read_text(encoding="utf-8")
    assert "Write section" not in text and "Key points" not in text
    assert check_names(msg) == {
        "no_scaffolding": True,
        "repeated_paragraphs": True,
        "not_degenerate": True,
        "not_repetitive": True,
        "language": True,
        "wikilinks": True,
        "web_links": True,
    }


async def test_a_retry_that_passes_is_saved_and_reports_two_attempts(blog: Path) -> None:
    answers = iter(["Write section 1 of 2 is what I was told.", "Values have one owner."])
    model = Sections(lambda n, m: next(answers) if n <= 2 else "Moves transfer ownership.")
    rt = writing_runtime(blog, FunctionModel(model))
    msg = await rt.run_skill("WriteArticle", {"topic": "rust ownership"})
    await rt.close()
    assert msg.state == "COMPLETED" and msg.data["outcome"] == "done", msg.content
    report = {c["name"]: c for c in msg.data["checks"]}
    assert report["no_scaffolding"]["passed"] and report["no_scaffolding"]["attempts"] == 2
    assert "Write section" not in (blog / msg.data["path"]).read_text(encoding="utf-8")


async def test_an_edit_whose_retry_echoes_the_note_is_saved_without_it(blog: Path) -> None:
    before = (blog / POST).read_text(encoding="utf-8")
    body = before.split("---", 2)[2].strip()
    fixed = body + "\n\nOne more line."
    answers = iter(
        [
            "Borrowing.",  # removes almost everything: refused (asked to add)
            fixed + "\n\nImportant: the first answer was refused (it removed text). Write the "
            "text requested above.",
        ]
    )
    llm = FunctionModel(lambda messages, options: next(answers))
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill(
        "EditContent", {"instruction": "add one more line at the end", "path": POST}
    )
    await rt.close()
    assert msg.state == "COMPLETED" and msg.data["outcome"] == "done", msg.content
    after = (blog / POST).read_text(encoding="utf-8")
    assert after.rstrip().endswith("One more line.") and "first answer" not in after


async def test_invented_wikilinks_twice_are_refused(blog: Path) -> None:
    before = snapshot(blog)
    invented = "See [[made-up-one]], [[made-up-two]] and [[made-up-three]] for more."
    model = Sections(lambda n, m: invented)
    rt = writing_runtime(blog, FunctionModel(model))
    msg = await rt.run_skill("WriteArticle", {"topic": "rust ownership"})
    await rt.close()
    assert_refused(msg, "wikilinks", before, blog)
    assert "made-up-one" in msg.data["reason"] and len(model.prompts) == 2


async def test_a_translation_in_the_wrong_language_is_refused(blog: Path) -> None:
    before = snapshot(blog)
    english = "Borrowing lets code use a value without taking ownership of it at all."
    llm = ScriptedModel(["借用", english, english])  # the title, then the body twice
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill("Translate", {"path": POST, "language": "Chinese"})
    await rt.close()
    assert_refused(msg, "language", before, blog)
    assert "not in Chinese" in msg.data["reason"]
    assert "not in Chinese" in llm.calls[2][-1]["content"]  # the reason went back to the model


async def test_a_good_translation_is_saved_with_its_report(blog: Path) -> None:
    chinese = "借用让代码在不取得所有权的情况下使用一个值。参见 [[rust-lifetimes]]。"
    rt = writing_runtime(blog, ScriptedModel(["借用", chinese]))
    msg = await rt.run_skill("Translate", {"path": POST, "language": "Chinese"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert check_names(msg) == {
        "no_scaffolding": True,
        "not_degenerate": True,
        "language": True,
        "wikilinks": True,
        "web_links": True,
        "frontmatter": True,
    }


async def test_an_add_that_removes_is_refused(blog: Path) -> None:
    before = snapshot(blog)
    llm = ScriptedModel(["Borrowing.", "Borrowing, briefly."])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill(
        "EditContent", {"instruction": "add a section about lifetimes", "path": POST}
    )
    await rt.close()
    assert_refused(msg, "instruction_kind", before, blog)
    assert "asked to add" in msg.data["reason"] and len(llm.calls) == 2


async def test_a_selection_edit_answered_with_the_whole_post_is_refused(blog: Path) -> None:
    before = snapshot(blog)
    text = (blog / POST).read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1]
    selection = next(line for line in body.splitlines() if len(line) > 40)
    llm = ScriptedModel([body, body])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill(
        "EditContent",
        {"instruction": "make this clearer", "path": POST, "selected_text": selection},
    )
    await rt.close()
    assert_refused(msg, "scope", before, blog)


async def test_a_chinese_request_hears_why_in_chinese(blog: Path) -> None:
    before = snapshot(blog)
    rt = writing_runtime(blog, ScriptedModel(["借用。", "借用。"]))
    await rt.initialize()
    msg = await rt.process_input("给这篇文章补充一节关于生命周期的内容", {"current_file": POST})
    await rt.close()
    assert_refused(msg, "instruction_kind", before, blog)
    assert "要求添加内容" in msg.content and "asked to add" not in msg.content
    assert "asked to add" in msg.data["reason"]  # the data keeps the reason the model was told


def test_every_line_of_the_section_prompt_bears_a_scaffold_marker() -> None:
    import re

    from skillrt.skills.writing import prompts

    values = {
        "title": "T",
        "topic": "t",
        "style": "s",
        "number": 1,
        "count": 2,
        "heading": "H",
        "words": 100,
        "unit": "words",
    }
    for said in (prompts.ARTICLE_EN, prompts.ARTICLE_ZH):
        for key, template in said.lines.items():
            line = template.format(**values)
            assert any(re.search(m, line, re.I | re.M) for m in prompts.SCAFFOLD_MARKERS), key
        note = said.retry.format(reason="r")
        assert any(re.search(m, note, re.I | re.M) for m in prompts.SCAFFOLD_MARKERS)
    for system in (prompts.SECTION_SYSTEM, prompts.ARTICLE_ZH.section, prompts.EDIT_SYSTEM):
        assert any(re.search(m, system, re.I | re.M) for m in prompts.SCAFFOLD_MARKERS)


async def test_a_related_post_list_echoed_with_other_links_is_stripped(blog: Path) -> None:
    """A small model copies the prompt's related-post items, changing the titles or links: a
    line in that shape, and the quoted snippet lines under it, are the prompt's own list."""

    def section(n: int, messages: list[LLMMessage]) -> str:
        return (
            "- Rust 生命周期详解 (posts/rust-lifetimes.md) — link: [[rust-borrowing#悬垂引用]]\n"
            "  > Rust 可以使用 `[]` 一个值\n"
            "  > a mangled excerpt of the post\n\n"
            f"Ownership moves values between bindings, section {n}.\n\n"
            "> A quote the article itself makes stays."
        )

    rt = writing_runtime(blog, FunctionModel(Sections(section)))
    msg = await rt.run_skill("WriteArticle", {"topic": "rust ownership"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    body = (blog / msg.data["path"]).read_text(encoding="utf-8")
    assert "— link:" not in body and "mangled excerpt" not in body and "可以使用" not in body
    assert "Ownership moves values between bindings, section 1." in body
    assert "> A quote the article itself makes stays." in body


async def test_a_related_posts_line_cut_short_as_a_heading_is_stripped(blog: Path) -> None:
    """The embedded model's article on jekyll collections ended with "# Hello, Jekyll
    (posts/2023-04-05-hello-jekyll.md) — link: [link]": the prompt's related-post line, its
    link cut short, which the check did not know (it knew "— link: [[")."""

    def section(n: int, messages: list[LLMMessage]) -> str:
        return (
            f"Ownership moves values between bindings, section {n}.\n\n"
            "# Rust 生命周期详解 (posts/rust-lifetimes.md) — link: [link]"
        )

    rt = writing_runtime(blog, FunctionModel(Sections(section)))
    msg = await rt.run_skill("WriteArticle", {"topic": "rust ownership"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    body = (blog / msg.data["path"]).read_text(encoding="utf-8")
    assert "link:" not in body and "Ownership moves values between bindings" in body


RUN_OF_MARKS = "# Rust 生命周期详细\n\n## 极大的看到一个什么，－－" + "；" * 120


async def test_a_summary_that_is_a_run_of_one_mark_is_asked_again_then_refused(
    blog: Path,
) -> None:
    """SmolLM2-135M summarised a post as a heading and "；" to its length limit, a run too
    short for the repetition guard, and it was shown as the summary: summaries had no check."""
    llm = ScriptedModel([RUN_OF_MARKS, RUN_OF_MARKS])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill("Summarize", {"path": POST})
    await rt.close()
    assert msg.state == "ERROR", msg.content
    assert msg.data["check"] == "not_degenerate" and "repeats one mark" in msg.data["reason"]
    assert len(llm.calls) == 2 and "repeats one mark" in llm.calls[1][-1]["content"]

    good = "借用让代码在不取得所有权的情况下使用一个值。"
    rt = writing_runtime(blog, ScriptedModel([RUN_OF_MARKS, good]))
    msg = await rt.run_skill("Summarize", {"path": POST})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["summary"] == good


def test_a_run_of_one_mark_is_degenerate_but_rules_and_code_are_not() -> None:
    assert not not_degenerate(Generated(text=RUN_OF_MARKS)).passed
    for text in (
        "Title\n" + "=" * 30 + "\n\nBody.",
        "| a | b |\n|" + "-" * 25 + "|" + "-" * 25 + "|\n| 1 | 2 |",
        "```\n" + "/" * 40 + "\n```\n\nDone.",
        "Body.\n\n" + "-" * 40 + "\n",
    ):
        assert not_degenerate(Generated(text=text)).passed, text


SAID_TWICE = (
    "The concept of ownership in Rust means that every value has exactly one owner at a time, "
    "and when that owner goes out of scope the value is dropped, which frees its memory "
    "without a garbage collector and without any manual calls to free it."
)


async def test_a_section_that_says_an_earlier_one_again_whole_is_named(blog: Path) -> None:
    """SmolLM2-135M wrote one paragraph three times as an article's three sections, and the
    reply said "Wrote … (195 words)" and nothing of it. The sections are saved as written (a
    section's text is the model's answer for it); the reply names those said again."""
    rt = writing_runtime(blog, FunctionModel(Sections(lambda n, m: SAID_TWICE)))
    msg = await rt.run_skill("WriteArticle", {"topic": "rust ownership"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    second = OUTLINE_EN["sections"][1]["heading"]
    assert msg.data["said_again_sections"] == [second]
    assert f"rewrite or remove them: {second}." in msg.content


async def test_a_short_section_said_again_is_not_named(blog: Path) -> None:
    short = "Ownership moves values between owners; borrowing lends them for a while."
    rt = writing_runtime(blog, FunctionModel(Sections(lambda n, m: short)))
    msg = await rt.run_skill("WriteArticle", {"topic": "rust ownership"})
    await rt.close()
    assert msg.state == "COMPLETED" and msg.data["said_again_sections"] == []
    assert "word for word" not in msg.content


def test_said_before_counts_prose_words_and_holds_code_to_its_own() -> None:
    from skillrt.skills.writing.repeats import said_before

    zh = "异步编程让一个线程同时处理许多网络请求，关键是不要在协程里阻塞事件循环。" * 2
    assert said_before(zh, [zh])  # (a Chinese character is a word)
    code = "```rust\nfn main() {\n    let x = 5;\n}\n```\n\n" + SAID_TWICE
    assert not said_before(code, [SAID_TWICE])  # its code is its own
    assert said_before(SAID_TWICE, ["Intro.", SAID_TWICE])


async def test_the_retry_status_line_gives_the_reason_in_the_sessions_language(
    tmp_path: Path,
) -> None:
    """A Chinese session's "检查未通过，重试：" line gave the check's English reason."""
    from skillrt.testing import ScriptedModel
    from tests.blog import copy_blog
    from tests.writing_support import writing_runtime

    blog = copy_blog(tmp_path / "blog")
    code_only = "```bash\necho hello\n```"
    rt = writing_runtime(blog, ScriptedModel([code_only, code_only]))
    said: list[str] = []
    rt.on("agent:status", lambda e: said.append(str(e.data.get("message", ""))))
    msg = await rt.process_input("总结一下 posts/docker-basics.md")
    await rt.close()
    assert msg.data.get("error") == "checks_failed", msg.content
    retry = [line for line in said if line.startswith("检查未通过，重试：")]
    assert len(retry) == 1 and "not_degenerate: 总结在代码和标题之外没有句子" in retry[0], said
    assert "code_from_sources: 其中的代码在原文里找不到" in retry[0]


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ("The capital of Atlantis is Poseidonia, which", True),
        ("Poseidonia, built by the [1]", True),  # (a citation after where it stopped)
        ("It ranks with bm25, which ([SQLite FTS5](posts/sqlite-fts5.md))", True),
        ("Use `bm25()` to rank, and", True),  # (a line with inline code is prose too)
        ("波塞冬尼亚【1】，", True),
        ("Use `bm25()` to rank [1][2].", False),
        ("Poseidonia [1]", False),
        ("It needs vitamin A", False),
        ("Run:\n\n```\nls and\n```", False),  # (code ends as it likes)
        ("- one\n- two", False),
        ("| a | b |\n| - | - |\n| 1 | 2 |", False),
    ],
)
def test_a_text_stopping_mid_sentence_is_cut_short(text: str, cut: bool) -> None:
    """ "The capital of Atlantis is Poseidonia, which" stopped under the token limit, so
    ``not_degenerate`` did not judge it, and was shown as the answer."""
    assert not_cut_short(Generated(text=text)).passed is not cut


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ("As an AI language model, I cannot browse the internet.", True),
        ("I'm sorry, but as an AI I can't do that.", True),
        ("I don't have access to real-time information.", True),
        ("I'm sorry, but I cannot answer that question.", True),
        ("作为一个人工智能，我无法访问互联网。", True),
        ("I could not find the population on these pages.", False),
        ("As an AI researcher notes, models repeat themselves [1].", False),
        ("The AI model was released in 2023 [1].", False),
        ("```\nprint('As an AI language model, I cannot')\n```", False),  # (code is code)
    ],
)
def test_the_model_saying_as_a_model_it_cannot_is_a_refusal(text: str, refusal: bool) -> None:
    assert not_a_refusal(Generated(text=text)).passed is not refusal
