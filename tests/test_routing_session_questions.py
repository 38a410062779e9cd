"""An author's session about their blog (fresh round 13): requests the table now routes that
the classifier sent elsewhere. "morning! let's look at my blog a bit" was a WriteArticle
nobody asked for (0.81); "what's the weather in Paris?" was searched for on the blog and a
general answer made up; "how many words?" on the post in focus, and "whats the newest thing I
published", went to the chat; "give me the list of posts from last year" to a summary;
"is it still a draft?" was offered as an edit; "what other posts link here?" was asked about."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import structlog

from benchmarks.bench_routing import _router
from skillrt._routing.router import ParsedIntent
from skillrt._tasks.planning import Planner
from skillrt.settings import RuntimeConfig
from skillrt.testing import FunctionModel
from tests.blog import copy_blog
from tests.writing_support import WritingModelFn, writing_runtime

FOCUS = {"current_file": "posts/open.md", "focus": "posts/open.md"}

REQUESTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("morning! let's look at my blog a bit", "CHAT", None),
    ("let's go through my blog", "CHAT", None),
    ("what's the weather in Paris?", "RESEARCH_WEB", None),
    ("is it going to rain in Lisbon this weekend?", "RESEARCH_WEB", None),
    ("巴黎明天天气怎么样", "RESEARCH_WEB", None),
    ("whats the newest thing I published", "ANSWER_QUESTION", None),
    ("how many words?", "ANSWER_QUESTION", FOCUS),
    ("how many words is my blog in total", "ANSWER_QUESTION", None),
    ("give me the list of posts from last year", "ANSWER_QUESTION", None),
    ("is it still a draft?", "ANSWER_QUESTION", FOCUS),
    ("what other posts link here?", "ANSWER_QUESTION", FOCUS),
    # unchanged neighbours
    ("what did I write about the weather in Lisbon", "ANSWER_QUESTION", None),
    ("write a post about the weather in Paris", "WRITE_ARTICLE", None),
    ("what links to the git workflow post?", "ANSWER_QUESTION", None),
    ("list my posts about rust", "ANSWER_QUESTION", None),
    ("hello", "CHAT", None),
]


@pytest.mark.parametrize("classifier", [False, True], ids=["table", "with-classifier"])
@pytest.mark.parametrize(("text", "intent", "context"), REQUESTS)
async def test_the_request_goes_to_its_skill(
    text: str, intent: str, context: dict[str, Any] | None, classifier: bool
) -> None:
    router = _router(None, classifier=classifier)
    parsed = await router.parse(text, context, ask_model=False)
    assert parsed.type == intent, (text, parsed)
    assert parsed.confidence >= 0.75, (text, parsed)  # runs, with no question first


async def test_a_guess_of_update_graph_with_no_word_of_it_is_offered_not_run() -> None:
    """ "refresh everything please": the classifier's UpdateGraph (0.94) ran the model over
    every post of the blog unasked. With none of its words (graph, index, links, relations,
    链接, 关系…) the guess is no decision: it is offered among numbered choices, first."""
    router = _router(None)
    config = RuntimeConfig()
    planner = Planner(router, router.registry, config, lambda: "low", structlog.get_logger)
    guessed = await router.parse("refresh everything please", ask_model=False)
    assert guessed.type == "UPDATE_GRAPH" and guessed.confidence < config.confidence_threshold
    question = planner.question_for(guessed, "refresh everything please", "en", {})
    assert question is not None and question.choices[0].intent == "UPDATE_GRAPH"
    for said in (
        "recalculate the links between my articles",
        "please update the relattions between articles thanks",
        "重新整理文章之间的引用关系",
        "update the knowledge graph",
    ):
        parsed = await router.parse(said, ask_model=False)
        assert parsed.type == "UPDATE_GRAPH", (said, parsed)
        assert parsed.confidence >= config.confidence_threshold, (said, parsed)


async def test_a_list_asked_with_about_mistyped_is_a_list() -> None:
    parsed = await _router(None).parse("list posts abuot rust", ask_model=False)
    assert parsed.type == "ANSWER_QUESTION" and parsed.confidence >= 0.75, parsed


@pytest.mark.parametrize("text", ["and in 2023?", "what about 2022", "那 2023 年呢？"])
async def test_a_follow_up_on_another_year_is_a_question(text: str) -> None:
    parsed = await _router(None).parse(text, ask_model=False)
    assert parsed.type == "ANSWER_QUESTION" and parsed.confidence >= 0.75, parsed


async def test_a_delete_of_a_post_described_asks_which_not_the_current_post(tmp_path: Path) -> None:
    """ "delete the draft about rust macros", no post open: the classifier's delete (0.75)
    asked "Delete “the current post”? (y/n)", a post that was not there. DeleteArticle asks
    which post the words describe, and then yes or no; nothing is deleted unasked."""
    parsed = await _router(None).parse("delete the draft about rust macros", ask_model=False)
    assert parsed.type == "DELETE_ARTICLE" and parsed.source == "regex", parsed
    blog = copy_blog(tmp_path / "blog")
    before = sorted(p.name for p in (blog / "posts").rglob("*.md"))
    rt = writing_runtime(blog, FunctionModel(WritingModelFn()))
    await rt.initialize()
    try:
        asked = await rt.process_input("delete the draft about rust macros")
        assert asked.state == "WAITING_INPUT" and "current post" not in asked.content
        assert "posts/rust-" in asked.content, asked.content
        confirm = await rt.process_input("delete the post about docker")
    finally:
        await rt.close()
    assert confirm.state == "WAITING_INPUT" and "posts/docker-basics.md" in confirm.content
    assert sorted(p.name for p in (blog / "posts").rglob("*.md")) == before


WORLD_QUESTIONS = [
    "who won the world cup in 2022?", "who won the world cup in 2018", "who won the world cup",
    "who won the election in 2024?", "who won the tour de france in 2023",
    "who won the champions league in 2021?", "who is the president of france?",
    "who invented the telephone?", "who wrote war and peace?", "who painted the mona lisa",
    "who became prime minister in 2019?", "who scored the winning goal in the 2014 final?",
    "when did world war 2 end?", "when was the eiffel tower built?",
    "which country has the largest population?", "which team won the super bowl last year?",
    "how many people live in tokyo?", "how many moons does jupiter have?",
    "how tall is mount everest?", "what year did the berlin wall fall?",
    "how many goals did messi score in 2022?", "who's the ceo of tesla",
    "2022年世界杯谁赢了？", "2024年美国大选谁赢了？", "谁发明了电话？", "法国总统是谁？",
    "第二次世界大战哪一年结束的？", "哪一年发生了金融危机？", "谁是世界上最富有的人？",
    "珠穆朗玛峰有多高？", "木星有几颗卫星？", "日本有多少人口？",
]  # fmt: skip


@pytest.mark.parametrize("context", [None, FOCUS], ids=["no-post", "post-in-focus"])
@pytest.mark.parametrize("text", WORLD_QUESTIONS)
async def test_a_question_on_the_world_is_never_an_edit(
    text: str, context: dict[str, Any] | None
) -> None:
    """ "who won the world cup in 2022?" was offered only as an edit among numbered choices
    (the classifier's EDIT_CONTENT, 0.70; 0.86 with a post in focus; "who won the election in
    2024?" at 0.85). A question on the world is answered (the blog, else a general answer),
    or searched on the web; no write, delete or edit is run or offered for it."""
    router = _router(None)
    config = RuntimeConfig()
    planner = Planner(router, router.registry, config, lambda: "low", structlog.get_logger)
    parsed = await router.parse(text, context, ask_model=False)
    lang = "zh" if any(ord(c) > 127 for c in text) else "en"
    question = planner.question_for(parsed, text, lang, context or {})
    offered = [c.intent for c in question.choices] if question is not None else [parsed.type]
    assert set(offered) & {"EDIT_CONTENT", "WRITE_ARTICLE", "DELETE_ARTICLE", "TRANSLATE"} == set()
    assert set(offered) <= {"ANSWER_QUESTION", "CHAT", "RESEARCH_WEB", "CODE_EXPLAIN"}, offered


@pytest.mark.parametrize(
    "text",
    ["who won the world cup in 2022?", "who won wimbledon this year?", "2022年世界杯谁赢了？",
     "2018年世界杯冠军是谁？", "上一届世界杯是哪个国家赢的？"],
)  # fmt: skip
async def test_who_won_is_searched_on_the_web(text: str) -> None:
    """A result (a match, an election, a prize) is news the small model cannot know: searched
    on the web at once, as the weather is, unless the question is about the blog."""
    parsed = await _router(None).parse(text, ask_model=False)
    assert (parsed.type, parsed.confidence) == ("RESEARCH_WEB", 1.0), parsed
    for blog in ("who won the argument in my post about tabs?", "我的文章里谁赢了？"):
        assert (await _router(None).parse(blog, ask_model=False)).type != "RESEARCH_WEB", blog


async def test_a_yes_no_before_a_delete_names_the_open_post_or_asks_which(tmp_path: Path) -> None:
    """ "bin the rust one": the classifier's delete (0.69, below ``act_threshold``), no post
    named, is asked about first. With no post open or in focus that asked 'Delete “the
    current post”? (y/n)', a post that was not there (the planner did not look at the open
    file), and then which post. Now DeleteArticle asks which post, then yes or no; with a
    post open the yes/no names it."""
    text = "bin the rust one"
    parsed = await _router(None).parse(text, ask_model=False)
    assert parsed.type == "DELETE_ARTICLE" and 0.6 <= parsed.confidence < 0.8, parsed
    blog = copy_blog(tmp_path / "blog")
    before = sorted(p.name for p in (blog / "posts").rglob("*.md"))
    rt = writing_runtime(blog, FunctionModel(WritingModelFn()))
    await rt.initialize()
    try:
        asked = await rt.process_input(text)
        assert asked.state == "WAITING_INPUT", asked
        assert "current post" not in asked.content and "(y/n)" not in asked.content
        assert "posts/rust-" in asked.content, asked.content  # which post: the candidates
        picked = await rt.process_input("2")
        assert picked.state == "WAITING_INPUT" and "(y/n)" not in picked.content
        assert "posts/rust-" in picked.content, picked.content  # then yes or no, on that post
        kept = await rt.process_input("no")
        assert "not deleted" in kept.content, kept.content
    finally:
        await rt.close()
    assert sorted(p.name for p in (blog / "posts").rglob("*.md")) == before
    router = _router(None)
    planner = Planner(router, router.registry, RuntimeConfig(), lambda: "low", structlog.get_logger)
    guessed = ParsedIntent(type="DELETE_ARTICLE", confidence=0.69, source="classifier", raw=text)
    opened = planner.question_for(guessed, text, "en", {"current_file": "posts/docker-basics.md"})
    assert opened is not None and opened.text == "Delete “posts/docker-basics.md”? (y/n)"


async def test_a_delete_only_the_model_chose_names_no_post_that_is_not_there() -> None:
    """Under low trust a delete the model alone chose is asked about first; with no post open
    or in focus the yes/no quotes the request (a yes runs DeleteArticle, which asks which post
    and then yes or no), never 'Delete “the current post”? (y/n)'; with one, it names it."""
    router = _router(None)
    planner = Planner(router, router.registry, RuntimeConfig(), lambda: "low", structlog.get_logger)
    chosen = ParsedIntent(type="DELETE_ARTICLE", confidence=0.9, source="llm", raw="bin it")
    question = planner.question_for(chosen, "bin it", "en", {})
    assert question is not None and question.kind == "confirm", question
    assert question.text == "Delete “bin it”? (y/n)", question.text
    named = planner.question_for(chosen, "bin it", "en", {"focus": "posts/a.md"})
    assert named is not None and named.text == "Delete “posts/a.md”? (y/n)", named
