"""The trained router (issue 25): the classifier decides when the table does not, numbered
choices come from its top three, and safety does not depend on its accuracy.

Every concrete failure the issue names has a test here; the figures are in
``python -m benchmarks --only routing`` (benchmarks/bench_intents.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import structlog

from benchmarks.bench_routing import _router
from skillrt._routing.clarify import holds_back
from skillrt._routing.classifier import IntentClassifier, features
from skillrt._routing.router import IntentRouter
from skillrt._tasks.planning import Planner
from skillrt.settings import RuntimeConfig
from skillrt.skill.context import detect_language
from skillrt.testing import FunctionModel, ModelOptions


def always(intent: str) -> FunctionModel:
    return FunctionModel(lambda m, o: {"type": intent, "confidence": 1.0, "parameters": {}})


async def decide(
    text: str, llm: Any = None, trust: str = "low", context: dict[str, Any] | None = None
) -> tuple[str, Any, Any]:
    """What would happen: ("run", intent) or ("ask", question), as the runtime plans it."""
    router: IntentRouter = _router(llm)
    planner = Planner(router, router.registry, RuntimeConfig(), lambda: trust,
                      lambda: structlog.get_logger())  # fmt: skip
    intent = await router.parse(text, context, ask_model=trust == "high")
    question = planner.question_for(intent, text, detect_language(text), context or {})
    return ("run" if question is None else "ask"), intent, question


def started(outcome: tuple[str, Any, Any]) -> str | None:
    kind, intent, _ = outcome
    return intent.type if kind == "run" else None


EFFECTS = {"RESEARCH_WEB", "BROWSE", "WRITE_ARTICLE", "CREATE_ARTICLE", "EDIT_CONTENT",
           "DELETE_ARTICLE", "TRANSLATE"}  # fmt: skip
MODELS = [None, always("RESEARCH_WEB"), always("WRITE_ARTICLE"), always("DELETE_ARTICLE"),
          always("EDIT_CONTENT")]  # fmt: skip


@pytest.mark.parametrize("trust", ["low", "high"])
@pytest.mark.parametrize("llm", MODELS)
async def test_no_web_search_when_told_not_to_look_online(llm: Any, trust: str) -> None:
    outcome = await decide("不用上网查 就说说我自己的文章里关于缓存是怎么讲的", llm, trust)
    assert started(outcome) not in EFFECTS
    assert outcome[1].type == "ANSWER_QUESTION"


@pytest.mark.parametrize("text", ["翻译 posts/x.md 到繁体中文", "帮我翻译一下",
                                  "translate posts/x.md into French"])  # fmt: skip
@pytest.mark.parametrize("llm", [None, always("EDIT_CONTENT")])
async def test_a_translation_never_goes_through_edit_content(text: str, llm: Any) -> None:
    for trust in ("low", "high"):
        _, intent, question = await decide(text, llm, trust, {"current_file": "posts/x.md"})
        assert intent.type == "TRANSLATE", (text, trust)
        offered = [c.intent for c in question.choices] if question else []
        assert "EDIT_CONTENT" not in offered


@pytest.mark.parametrize("trust", ["low", "high"])
@pytest.mark.parametrize("llm", MODELS)
async def test_dont_delete_never_deletes(llm: Any, trust: str) -> None:
    outcome = await decide("don't delete posts/vim-config.md, just change its title", llm, trust)
    assert started(outcome) != "DELETE_ARTICLE"
    assert outcome[1].type == "EDIT_CONTENT"
    assert outcome[0] == "ask"  # a negation: the likeliest actions to pick from, edit first
    assert outcome[2].choices[0].intent == "EDIT_CONTENT"


@pytest.mark.parametrize("trust", ["low", "high"])
@pytest.mark.parametrize("llm", MODELS)
async def test_have_i_written_never_writes(llm: Any, trust: str) -> None:
    outcome = await decide("我之前有没有写过关于 Kubernetes operator 的文章", llm, trust)
    assert started(outcome) not in EFFECTS
    assert outcome[1].type == "ANSWER_QUESTION"


@pytest.mark.parametrize("trust", ["low", "high"])
@pytest.mark.parametrize("llm", [None, always("BROWSE")])
async def test_a_page_action_with_no_page_asks_first(llm: Any, trust: str) -> None:
    """ "click the login button" out of the blue names no URL and has no browsing session to go
    on: it never opens a browser without a yes."""
    alone = await decide("click the login button", llm, trust)
    assert started(alone) is None


async def test_a_page_action_in_a_session_or_on_a_named_page_runs() -> None:
    session = await decide("click the login button", context={"last_skill": "bench_browse"})
    assert started(session) == "BROWSE"
    named = await decide("open https://example.com and click the login button")
    assert started(named) == "BROWSE"


@pytest.mark.parametrize("trust", ["low", "high"])
@pytest.mark.parametrize("llm", MODELS)
async def test_a_question_about_what_it_can_do_never_acts(llm: Any, trust: str) -> None:
    """Fresh round 5's one dangerous route: "can you write posts in Chinese too?" asks about
    the runtime; it started WriteArticle."""
    for text in ("can you write posts in Chinese too?", "你会翻译文章吗？"):
        outcome = await decide(text, llm, trust)
        assert started(outcome) not in EFFECTS, (text, outcome[1].type)


@pytest.mark.parametrize(
    ("text", "intent"),
    [("don't write a new post, summarize posts/rust.md", "SUMMARIZE"),
     ("不用写新文章，总结一下 posts/rust.md", "SUMMARIZE"),
     ("don't delete posts/a.md, fix the typos in it", "EDIT_CONTENT")],
)  # fmt: skip
async def test_a_table_rule_right_after_a_negation_is_skipped(text: str, intent: str) -> None:
    """The table's match for "write a new post" or "删" right after "don't", "别" or "不用" is
    what the request does not want: the next rule (or the classifier) decides."""
    router = _router(None)
    table = router._match_table(text, False, False)
    assert table is not None and table.type == intent
    negated = router._match_table("别写文章，解释一下 CAP 定理", False, False)
    assert negated is None or negated.type != "WRITE_ARTICLE"
    assert router._match_table("写文章，解释一下 CAP 定理", False, False) is not None


async def test_a_url_the_classifier_routes_to_browse_is_the_page() -> None:
    """A browsing request the table did not match still names its page: it runs, where it was
    asked about as a page action with no page."""
    router = _router(None)
    assert router.params_for("BROWSE", "pull up https://example.com")["url"] == (
        "https://example.com"
    )
    kind, intent, _ = await decide("pull up https://example.com")
    assert (kind, intent.type, intent.parameters.get("url")) == (
        "run", "BROWSE", "https://example.com")  # fmt: skip


@pytest.mark.parametrize("llm", [None, always("CREATE_ARTICLE")])
async def test_a_title_before_the_delete_verb_is_a_delete(llm: Any) -> None:
    for text in ("把标题为《测试文章》的那篇删除", "劳驾把标题为《Reading List》得文章删除"):
        kind, intent, question = await decide(text, llm, "high")
        assert intent.type == "DELETE_ARTICLE" and intent.parameters["title"] in text
        assert started((kind, intent, question)) in (None, "DELETE_ARTICLE")


@pytest.mark.parametrize(
    "text",
    ["i got KeyError: 'id', what's wrong", "why am I getting TypeError: x is undefined",
     "panic: runtime error: index out of range 这是怎么回事",
     "TypeError: 'NoneType' object is not subscriptable 这个报错是什么意思"],
)  # fmt: skip
async def test_a_pasted_error_and_a_question_about_it_is_code_to_explain(text: str) -> None:
    """The table's question rules ("what's wrong", "怎么回事") took these for a question about
    the blog; a pasted error message makes it code to explain."""
    kind, intent, _ = await decide(text)
    assert (kind, intent.type) == ("run", "CODE_EXPLAIN")
    _, blog, _ = await decide("what errors did I write about?")
    assert blog.type == "ANSWER_QUESTION"


@pytest.mark.parametrize(
    "text", ["how's it going", "How are things on your side?", "最近怎么样", "你最近过得好吗"]
)
async def test_asking_after_the_assistant_is_small_talk(text: str) -> None:
    kind, intent, _ = await decide(text)
    assert (kind, intent.type) == ("run", "CHAT")
    _, question, _ = await decide("how does caching work in my posts?")
    assert question.type == "ANSWER_QUESTION"


async def test_a_trailing_question_mark_keeps_the_topic() -> None:
    text = "Could you write me a blog article on the pros and cons of SQLite for small web apps?"
    _, intent, _ = await decide(text)
    assert intent.type == "WRITE_ARTICLE"
    assert intent.parameters["topic"] == "the pros and cons of SQLite for small web apps"
    _, zh, _ = await decide("写一篇关于缓存的文章？")
    assert zh.parameters["topic"] == "缓存"


async def test_thanks_is_small_talk_not_answer_search_or_write() -> None:
    kind, intent, _ = await decide("thanks, that's exactly what I needed")
    assert (kind, intent.type) == ("run", "CHAT")


async def test_choices_come_from_the_classifier_and_may_hold_chat_and_translate() -> None:
    router = _router(None)
    top = [n for n, _ in router.ranked("thanks, that's exactly what I needed")[:3]]
    assert router.alternatives("thanks, that's exactly what I needed") == top
    assert "CHAT" in top
    assert "TRANSLATE" in router.alternatives("能不能弄个英文版")


async def test_under_high_trust_the_model_chooses_among_the_classifiers_candidates() -> None:
    offered: list[list[str]] = []

    def pick(messages: list[Any], options: ModelOptions) -> dict[str, Any]:
        assert options.response_model is not None
        field = options.response_model.model_fields["type"]
        offered.append([n for n in field.annotation.__args__ if n != "UNKNOWN"])  # type: ignore[union-attr]
        return {"type": "DELETE_ARTICLE", "confidence": 1.0, "parameters": {}}  # not offered

    text = "blorp the flux capacitor"
    kind, intent, _ = await decide(text, FunctionModel(pick), "high")
    router = _router(None)
    assert offered == [[n for n, _ in router.ranked(text)[:3]]]
    assert "DELETE_ARTICLE" not in offered[0] and intent.type != "DELETE_ARTICLE"
    # A side-effecting pick among them still asks first.
    first = FunctionModel(lambda m, o: {"type": o.response_model.model_fields["type"]  # type: ignore[union-attr]
                                        .annotation.__args__[0], "confidence": 1.0})  # fmt: skip
    kind, intent, question = await decide("那个东西你看着办吧", first, "high")
    if intent.type in EFFECTS:
        assert kind == "ask" and "(y/n)" in question.text


@pytest.mark.parametrize(
    "text",
    ["summarize this article", "have I written an article on Zig?", "这篇文章讲了什么",
     "我写过的文章里提到 Redis 吗"],
)  # fmt: skip
def test_write_articles_cue_words_ignore_a_mere_mention_of_an_article(text: str) -> None:
    router = _router(None)
    assert "WRITE_ARTICLE" not in router._cue_hits(text)
    assert "WRITE_ARTICLE" in router._cue_hits("write an article about Zig")
    assert "WRITE_ARTICLE" in router._cue_hits("帮我写一篇关于缓存的文章")


@pytest.mark.parametrize(
    ("text", "held"),
    [
        ("don't search the web", True), ("不用上网查", True), ("别删它", True),
        ("不要改标题", True),
        ("have I written about Zig?", True), ("how do I write a good intro?", True),
        ("我有没有写过 Rust", True), ("怎么写好技术文章", True), ("did I delete it", True),
        ("write an article about Zig", False), ("delete posts/x.md", False),
        ("Rust 和 Go 的区别", False), ("这句话读起来别扭，改一下", False),
        ("can you translate it to Japanese", False), ("特别想写一篇游记", False),
        # Pass 5: 错别字 (a typo) holds no 别 ("don't"); a question about what the runtime can
        # do is a question, not the action.
        ("帮我改一下 posts/go.md 里的错别字", False), ("can you write posts in Chinese too?", True),
        ("你会翻译文章吗？", True), ("are you able to delete posts?", True),
        ("can you write an article about Zig?", False), ("你能帮我写一篇关于缓存的文章吗", False),
        # No longer wanting a post is why it goes: "这篇不要了，删掉吧" is a delete.
        ("这篇不要了，删掉吧", False), ("I don't need posts/tmp.md anymore, delete it", False),
        ("不要删", True), ("I don't want it deleted, just edit it", True),
        # Stop 45: a "how to" of the topic is no question about the action.
        ("write an article about how to brew green tea", False),
        ("write a post on how to make bread", False),
        ("write a tutorial explaining how to use git rebase", False),
        ("write an article about how do you pick a laptop", False),
        ("写一篇关于如何写好技术文章的文章", False), ("写一篇关于怎么写好简历的文章", False),
        ("how to write an article about tea?", True), ("how to delete a post?", True),
        # Stop 54: a page to read named first; what follows is what to find there.
        ("open https://example.com/tmux.html and tell me how to detach", False),
        ("read https://example.com/a and tell me how to install it", False),
        ("打开 https://example.com/a，告诉我怎么安装", False),
        ("open https://example.com and tell me how to delete my account", True),
        ("打开 https://example.com/a 告诉我怎么删除", True),
        ("open posts/a.md and tell me how to delete it", True),
        ("how do I detach according to https://example.com/tmux.html", False),
    ],
)  # fmt: skip
def test_negations_and_questions_about_an_action_are_told(text: str, held: bool) -> None:
    assert holds_back(text) is held


def test_probabilities_are_a_distribution_and_features_see_context() -> None:
    model = IntentClassifier.packaged()
    probs = model.probabilities("write an article about Zig")
    assert abs(sum(probs.values()) - 1) < 1e-9 and max(probs, key=probs.__getitem__) == (
        "WRITE_ARTICLE"
    )
    assert "x:focus" in features("make it shorter", {"focus": "posts/a.md"})
    assert "x:focus" not in features("make it shorter")
    assert model.top("delete posts/x.md", k=1)[0][0] == "DELETE_ARTICLE"


def test_a_broken_weights_file_is_refused() -> None:
    with pytest.raises(ValueError, match="weights"):
        IntentClassifier({"classes": ["A", "B"], "bias": [0, 0], "scale": 1, "temperature": 1,
                          "features": "w:x", "weights": "AAAA"})  # fmt: skip


async def test_create_article_asks_for_the_title(tmp_path: Path) -> None:
    """Picked from choices or asked plainly ("create a new article", as the CLI's run -a
    example does), CreateArticle asks for the title instead of failing with a missing one."""
    from skillrt.skills.writing import writing_skills
    from skillrt.testing import ScriptedModel
    from tests.helpers import make_runtime

    rt = make_runtime(tmp_path, ScriptedModel([]), writing_skills())
    try:
        asked = await rt.process_input("create a new article")
        if "(y/n)" in asked.content:  # the router was not sure enough to write unasked
            asked = await rt.process_input("y")
        assert asked.state == "WAITING_INPUT", asked.content
        assert "title" in asked.content
        done = await rt.process_input("Rust in 2025")
        assert done.state == "COMPLETED", done.content
        assert (tmp_path / done.data["path"]).read_text(encoding="utf-8").count("Rust in 2025")
        blank = await rt.process_input("新建一篇空白文章")
        if "(y/n)" in blank.content:
            blank = await rt.process_input("是")
        assert blank.state == "WAITING_INPUT" and "标题" in blank.content
        refused = await rt.process_input("   ")
        assert refused.state != "COMPLETED"
    finally:
        await rt.close()


def test_the_cli_example_answers_the_title_question(tmp_path: Path) -> None:
    """docs/cli.md: ``skillrt run -a "Rust in 2025" "create a new article"`` (it exited 2)."""
    from tests.cli_support import cli_env, skillrt, write_script

    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    env = cli_env(blog, write_script(tmp_path / "script.json", []))
    done = skillrt("run", "-a", "Rust in 2025", "create a new article", env=env, cwd=blog)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Rust in 2025" in (blog / "posts" / "rust-in-2025.md").read_text(encoding="utf-8")


async def test_create_article_picked_from_the_choices_asks_for_the_title(tmp_path: Path) -> None:
    from skillrt.skills.writing.answer import answer_question
    from skillrt.skills.writing.manage import create_article
    from skillrt.testing import ScriptedModel
    from tests.helpers import make_runtime

    rt = make_runtime(tmp_path, ScriptedModel([]), [answer_question, create_article])
    try:
        asked = await rt.process_input("blorp the flux capacitor")
        assert asked.state == "WAITING_INPUT" and "Create an empty post" in asked.content
        number = next(
            line.split(".")[0] for line in asked.content.splitlines() if "Create an empty" in line
        )
        title = await rt.process_input(number)
        assert title.state == "WAITING_INPUT" and "title" in title.content, title.content
        done = await rt.process_input("Flux Notes")
        assert done.state == "COMPLETED", done.content
        assert (tmp_path / done.data["path"]).exists()
    finally:
        await rt.close()


@pytest.mark.parametrize(
    "text",
    ["boil it down for me", "boil this down to one paragraph", "做一份韩语的，谢谢",
     "a German version, please", "英訳して"],
)  # fmt: skip
@pytest.mark.parametrize("llm", [None, always("EDIT_CONTENT")])
async def test_a_summary_or_another_language_never_overwrites_the_post(text: str, llm: Any) -> None:
    """Round 4: "boil it down" is a summary, a version in another language a translation;
    neither starts an edit of the post in focus (an overwrite), nor offers one."""
    for trust in ("low", "high"):
        outcome = await decide(text, llm, trust, {"current_file": "posts/x.md"})
        assert started(outcome) != "EDIT_CONTENT", (text, trust)
        question = outcome[2]
        offered = [c.intent for c in question.choices] if question else []
        assert "EDIT_CONTENT" not in offered, (text, trust)


# --- pass 6 (after fresh round 6) ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["what does `ls -la | sort -k5` do?", "how does `Promise.race(ps)` work",
     "why would anyone write `x = x || {}`", "`x ||= 1` 是什么意思",
     "这条命令是干嘛的：rm -rf build", "那段 SQL 有什么用"],
)  # fmt: skip
async def test_a_question_about_quoted_code_is_code_to_explain(text: str) -> None:
    """Round 6's largest group of misses: code quoted into a question was taken for a question
    about the blog (the table's "what does …" rule)."""
    kind, intent, _ = await decide(text)
    assert (kind, intent.type) == ("run", "CODE_EXPLAIN"), text
    _, about_writing, _ = await decide("how do I write a post about `asyncio`?")
    assert about_writing.type == "ANSWER_QUESTION"


def test_quoted_code_marks_the_request_as_code_and_a_title_is_a_marker() -> None:
    assert "x:code" in features("what does `git stash pop` do")
    assert "x:code" in features("explain find . -name '*.py' | xargs wc -l")
    assert "x:code" not in features("write a post about docker layer caching")
    marked = features("把标题为《周报》的文章删除")
    assert "w:zztitle" in marked and "c1:周" not in marked


@pytest.mark.parametrize("llm", [None, always("WRITE_ARTICLE")])
@pytest.mark.parametrize("text", ["open a fresh post for me", "start a new article, please"])
async def test_a_new_post_with_no_topic_is_never_a_written_one(text: str, llm: Any) -> None:
    outcome = await decide(text, llm, "high")
    assert outcome[1].type == "CREATE_ARTICLE"
    assert started(outcome) != "WRITE_ARTICLE"


async def test_reshaping_the_selection_is_an_edit_and_another_language_a_translation() -> None:
    selection = {"current_file": "posts/a.md", "has_selection": True}
    for text in ("restructure this as a checklist", "split this into shorter sentences"):
        _, intent, _ = await decide(text, context=selection)
        assert intent.type == "EDIT_CONTENT", text
    _, other, _ = await decide("turn this into French", context=selection)
    assert other.type == "TRANSLATE"


@pytest.mark.parametrize("text", ["can you delete posts too?", "你会翻译文章吗"])
async def test_a_question_about_what_it_can_do_offers_small_talk(text: str) -> None:
    """Small talk answers it, at once or among the choices; the action never runs unasked."""
    kind, intent, question = await decide(text)
    if kind == "run":
        assert intent.type == "CHAT"
    else:
        assert kind == "ask" and "CHAT" in [c.intent for c in question.choices]


async def test_the_main_point_of_the_post_in_focus_is_a_summary() -> None:
    focus = {"current_file": "posts/a.md", "focus": "posts/a.md"}
    for text in ("what's the central point of it?", "what is its main idea, in short"):
        kind, intent, _ = await decide(text, context=focus)
        assert (kind, intent.type) == ("run", "SUMMARIZE"), text
    _, topic, _ = await decide("what's the main argument for using Rust?")
    assert topic.type == "ANSWER_QUESTION"


@pytest.mark.parametrize(
    "text",
    ["could this overflow?", "is there a memory leak in it", "这里会不会死锁", "详细讲解一下"],
)
async def test_a_question_about_the_selected_codes_faults_is_code_to_explain(text: str) -> None:
    kind, intent, _ = await decide(text, context={"current_file": "a.md", "has_selection": True})
    assert (kind, intent.type) == ("run", "CODE_EXPLAIN")


@pytest.mark.parametrize("llm", [None, always("ANSWER_QUESTION")])
async def test_a_post_named_in_english_inside_chinese_is_written(llm: Any) -> None:
    """ "写篇 blog 聊聊 X 怎么用" was a question about the blog (the 怎么 in its topic)."""
    kind, intent, question = await decide("帮我写篇 blog 聊聊 Docker 多阶段构建怎么用", llm, "high")
    assert intent.type == "WRITE_ARTICLE"
    assert intent.parameters["topic"] == "Docker 多阶段构建怎么用"
    assert started((kind, intent, question)) in (None, "WRITE_ARTICLE")


@pytest.mark.parametrize(
    ("text", "intent"),
    [("show me the key points", "SUMMARIZE"), ("boil this post down", "SUMMARIZE"),
     ("来一份精简版", "SUMMARIZE"), ("does it cite any papers?", "ANSWER_QUESTION"),
     ("文中有没有提到 Redis", "ANSWER_QUESTION")],
)  # fmt: skip
async def test_short_follow_ups_about_the_post_in_focus_read_it(text: str, intent: str) -> None:
    """A summary in other words, or a yes/no question about the post in focus, runs at once
    and never becomes an edit of it (they got numbered choices, an edit offered first)."""
    focus = {"current_file": "posts/a.md", "focus": "posts/a.md"}
    kind, parsed, _ = await decide(text, context=focus)
    assert (kind, parsed.type) == ("run", intent)
    _, elsewhere, _ = await decide("does it rain a lot in Lisbon in May?")
    assert elsewhere.type != "SUMMARIZE"


@pytest.mark.parametrize("trust", ["low", "high"])
@pytest.mark.parametrize("llm", MODELS)
async def test_asking_whether_something_was_done_never_does_it(llm: Any, trust: str) -> None:
    """ "did you delete it?" with a post in focus deleted it at 0.999: a question about what
    was done holds back, and is a question about the blog."""
    focus = {"current_file": "posts/a.md", "focus": "posts/a.md"}
    for text, context in [("did you delete it?", focus), ("have you written it yet?", focus),
                          ("did I delete the post about Bun?", None),
                          ("has my post on Deno been removed?", None)]:  # fmt: skip
        outcome = await decide(text, llm, trust, context)
        assert started(outcome) not in EFFECTS, text
    _, intent, _ = await decide("did I delete the post about Bun?")
    assert intent.type == "ANSWER_QUESTION"


@pytest.mark.parametrize("llm", [None, always("DELETE_ARTICLE")])
async def test_removing_a_part_of_a_post_is_an_edit_never_a_delete(llm: Any) -> None:
    for text in (
        "remove the section about Bun from posts/a.md",
        "drop the last two paragraphs of posts/a.md",
        "clean up the formatting of posts/a.md",
    ):
        outcome = await decide(text, llm, "high")
        assert outcome[1].type == "EDIT_CONTENT", text
        assert started(outcome) != "DELETE_ARTICLE"
    _, whole, _ = await decide("remove the post posts/a.md")
    assert whole.type == "DELETE_ARTICLE"


@pytest.mark.parametrize("text", ["ok, thanks!", "alright cool", "好的谢谢", "嗯嗯好的"])
async def test_a_few_acknowledgements_in_a_row_are_small_talk(text: str) -> None:
    kind, intent, _ = await decide(text)
    assert (kind, intent.type) == ("run", "CHAT")
    _, request, _ = await decide("ok, delete posts/a.md")
    assert request.type == "DELETE_ARTICLE"


async def test_more_words_for_deleting_scrolling_and_searching() -> None:
    focus = {"current_file": "posts/a.md", "focus": "posts/a.md"}
    browsing = {"last_skill": "bench_browse"}
    cases = [
        ("axe posts/a.md", None, "DELETE_ARTICLE"),
        ("这篇从网站上撤下", focus, "DELETE_ARTICLE"),
        ("把这段从开头去掉", focus, "EDIT_CONTENT"),
        ("scroll a bit more down", browsing, "BROWSE"),
        ("google how to undo a git merge", None, "RESEARCH_WEB"),
    ]
    for text, context, expected in cases:
        _, intent, _ = await decide(text, context=context)
        assert intent.type == expected, text
    assert not holds_back("google how to undo a git merge")
    assert holds_back("how to delete a post?")


# --- pass 7 (round 7's misses) ------------------------------------------------------------------

FOCUS = {"current_file": "posts/a.md", "focus": "posts/a.md"}


@pytest.mark.parametrize("trust", ["low", "high"])
@pytest.mark.parametrize("llm", MODELS)
async def test_praise_for_an_edit_never_edits_again(llm: Any, trust: str) -> None:
    """ "改得不错，谢谢" with a post in focus started an edit of it, under every model and trust
    (round 7's one dangerous route): praise for what was done is small talk, or holds back."""
    for text in ("改得不错，谢谢", "写得真好！", "nice edit, thanks", "looks great, thanks!",
                 "great job on the translation", "改得不错，再把标题改一下"):  # fmt: skip
        outcome = await decide(text, llm, trust, FOCUS)
        assert started(outcome) not in EFFECTS, text
    kind, intent, _ = await decide("改得不错，谢谢", None, "low", FOCUS)
    assert (kind, intent.type) == ("run", "CHAT")


@pytest.mark.parametrize(
    ("text", "held"),
    [
        ("帮我把 posts/remote-work.md 翻译成英语，原文别动", False),
        ("translate this post into English, don't touch the original", False),
        ("新建一篇文章 标题是 Rust 异步踩坑记录 别帮我写正文", False),
        ("帮我开一个新帖子，标题“旅行清单”，不用写内容", False),
        ("不要只看我的博客，去网上查一下 Zig 0.14 的新特性", False),
        ("网上查查 SQLite 有没有原生支持向量检索的扩展", False),
        ("search the web to check whether Go 1.22 changed loop variables", False),
        # still held back: what is left alone is the action itself
        ("don't delete posts/x.md, just change its title", True),
        ("别动原文以外的东西，删掉 posts/a.md", True),
        ("不用上网查 就说说我自己的文章里关于缓存是怎么讲的", True),
        ("我有没有写过 Redis", True),
        ("great job on the translation", True),
    ],
)
def test_what_a_request_leaves_alone_is_no_negation_of_it(text: str, held: bool) -> None:
    """Round 7: a translation that leaves the original be, a new post with no body yet, a
    search past the blog, a search whose query holds question words, were asked about."""
    assert holds_back(text) is held


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("what does the code block in this post actually do?", "CODE_EXPLAIN"),
        ("explain the Rust example in this post, step by step", "CODE_EXPLAIN"),
        ("文中那段 Dockerfile 是什么意思", "CODE_EXPLAIN"),
        ("这篇里第二个代码块我没看懂，讲讲", "CODE_EXPLAIN"),
        ("解释一下这篇文章里的代码", "CODE_EXPLAIN"),
        ("这篇的标签和关联更新到图谱里", "UPDATE_GRAPH"),
        ("add this post to the knowledge graph", "UPDATE_GRAPH"),
        ("what does this post say about code review?", "ANSWER_QUESTION"),
    ],
)
async def test_the_code_of_the_post_in_focus_and_adding_it_to_the_graph(
    text: str, intent: str
) -> None:
    _, parsed, _ = await decide(text, None, "low", FOCUS)
    assert parsed.type == intent, text


async def test_a_post_added_to_the_graph_by_its_path_is_a_graph_update() -> None:
    _, parsed, _ = await decide("把 posts/zfs-nas.md 加到知识图谱里")
    assert parsed.type == "UPDATE_GRAPH"


# --- pass 8 (round 8's misses) ------------------------------------------------------------------


@pytest.mark.parametrize("trust", ["low", "high"])
@pytest.mark.parametrize("llm", [*MODELS, always("TRANSLATE")])
async def test_thanks_first_never_starts_a_task(llm: Any, trust: str) -> None:
    """ "thanks, that japanese translation was spot on, …" started a translation (round 8's one
    dangerous route): a request that opens with thanks holds back."""
    for text in ("thanks, that japanese translation was spot on, my friend in Osaka loved it!",
                 "lol that rewrite was better than mine, nice work",
                 "谢谢，这篇翻译得很地道", "thanks! now delete posts/a.md"):  # fmt: skip
        outcome = await decide(text, llm, trust, FOCUS)
        assert started(outcome) not in EFFECTS, text


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ('new post, title only: "Why I Switched to Fish Shell"', "CREATE_ARTICLE"),
        ("创建一篇只有标题的文章：2026 年终总结", "CREATE_ARTICLE"),
        ("这段 Python 是干啥的：with open('a.txt') as f: print(f.read())", "CODE_EXPLAIN"),
        ("这段 Rust 是干嘛的", "CODE_EXPLAIN"),
    ],
)
async def test_a_title_only_post_and_code_named_by_its_language(text: str, intent: str) -> None:
    _, parsed, _ = await decide(text)
    assert parsed.type == intent, text


async def test_the_one_liner_of_the_post_in_focus_is_code_to_explain() -> None:
    _, parsed, _ = await decide("what does the awk one-liner in this post do?", None, "low", FOCUS)
    assert parsed.type == "CODE_EXPLAIN"


def test_a_body_left_for_later_is_no_negation() -> None:
    assert not holds_back("新建一篇空白文章，标题叫《周末徒步记录》，内容先不用写")
    assert not holds_back("add an empty post titled Bike Care, don't generate the content")
    assert holds_back("don't write an article about Bike Care")


@pytest.mark.parametrize(
    "text",
    [
        "don't translate it, just fix the grammar, my english is not good",
        "Don’t translate it, just make the English less stiff",
        "不用翻译，帮我把里面的英文句子改通顺就行",
    ],
)
async def test_a_refused_translation_leaves_the_edit_among_the_choices(text: str) -> None:
    """Pass 9: the rule that keeps a translation away from EditContent blocked the edit even
    when the translation was the thing refused, so the choices lacked it. It holds back (a
    negation), so it asks, and the edit is among what it offers; a translation asked for is
    still never an edit."""
    focus = {"current_file": "posts/a.md", "focus": "posts/a.md"}
    kind, _, question = await decide(text, context=focus)
    assert kind == "ask" and "EDIT_CONTENT" in [c.intent for c in question.choices]
    for asked in ("不用改内容，直接翻成英文发一篇新的", "translate it into German", "帮我翻译一下"):
        kind, intent, question = await decide(asked, context=focus)
        offered = [c.intent for c in question.choices] if question is not None else []
        assert intent.type != "EDIT_CONTENT" and "EDIT_CONTENT" not in offered, asked


@pytest.mark.parametrize(
    "text",
    ["copy the post", "go through the post", "archive the post", "see the draft",
     "duplicate the post", "duplicate it"],
)  # fmt: skip
async def test_a_delete_the_text_says_no_word_of_is_no_decision(text: str) -> None:
    """The classifier sent "copy the post" to DeleteArticle at 0.97 and "go through the post"
    at 0.92, and the chat asked "Delete “the current post”? (y/n)"."""
    kind, intent, question = await decide(text, None, "low", {"current_file": "posts/x.md"})
    assert intent.type != "DELETE_ARTICLE" or intent.confidence <= 0.3
    assert kind == "ask" and "(y/n)" not in str(question)
    # nor is it offered among the choices ("duplicate it" offered "Delete the post" first)
    assert question is not None and "DELETE_ARTICLE" not in [c.intent for c in question.choices]


@pytest.mark.parametrize(
    "text",
    [
        "delete the post", "get rid of it", "throw away posts/old.md", "这篇不要了",
        # the classifier's, with a delete word inflected or short
        "I want this post deleted", "this post can go, get it removed", "purge the old draft",
        "删这篇文章",
    ],
)  # fmt: skip
async def test_a_delete_in_words_is_still_a_delete(text: str) -> None:
    _, intent, _ = await decide(text, None, "low", {"current_file": "posts/x.md"})
    assert intent.type == "DELETE_ARTICLE" and intent.confidence >= 0.9


@pytest.mark.parametrize(
    "text",
    ["count the words", "render it", "validate the frontmatter", "lint it", "show the diff",
     "ok, count the words", "check the frontmatter", "list the typos", "show me the wording"],
)  # fmt: skip
async def test_a_request_to_see_is_never_a_change_on_the_classifiers_word(text: str) -> None:
    """The classifier sent "count the words" (0.92) and "validate the frontmatter" (0.94) to
    an edit of the open post, which would rewrite its body: the user is asked instead."""
    kind, intent, _ = await decide(text, None, "low", {"current_file": "posts/x.md"})
    assert kind == "ask" or intent.type not in EFFECTS, (intent.type, intent.confidence)


@pytest.mark.parametrize(
    "text",
    ["make it shorter", "show more examples in the second section", "check the spelling",
     "render the table as a bulleted list", "look at the title and change it to Rust Ownership"],
)  # fmt: skip
async def test_an_edit_asked_for_is_still_an_edit(text: str) -> None:
    kind, intent, _ = await decide(text, None, "low", {"current_file": "posts/x.md"})
    assert (kind, intent.type) == ("run", "EDIT_CONTENT")
