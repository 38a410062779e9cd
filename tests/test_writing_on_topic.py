"""``on_topic``: an edit of a whole long post gives back that post, edited, and not another
text. The embedded model answered edits of the go post with invented Python and with a new
post on Go "in healthcare, finance and gaming"; every other check let them through, since a
text written anew is not judged for what it dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.checks import Generated
from skillrt.skills.writing.on_topic import MIN_POST_WORDS, on_topic
from skillrt.testing import ScriptedModel
from tests.writing_support import writing_runtime

PARAGRAPHS = [
    "Go starts a goroutine with the go keyword, and goroutines are cheap: a program can run "
    "thousands of goroutines on a handful of threads, because the runtime schedules them and "
    "grows their stacks as they need it.",
    "Channels pass values between goroutines. An unbuffered channel hands a value over only "
    "when the sender and the receiver meet; a buffered channel holds a few values, so the "
    "sender runs ahead until the buffer is full.",
    "A worker pool is the usual shape: a channel of jobs, a channel of results, and a fixed "
    "number of worker goroutines reading jobs and writing results. Closing the jobs channel "
    "tells the workers there is no more work, and they return.",
    "The select statement waits on several channels at once. With a timeout channel from "
    "time.After, a goroutine stops waiting when nothing comes; with a done channel, it stops "
    "when the caller cancels, which is what a context does under the hood.",
    "Shared memory still has its place. A mutex guards a map that many goroutines update, and "
    "the race detector finds the goroutines that forgot to take it: run the tests with -race "
    "before trusting any concurrent code with real traffic.",
    "Deadlocks show up as goroutines that wait forever on a channel nobody writes to. The "
    "runtime reports when every goroutine is asleep; a goroutine dump with SIGQUIT shows where "
    "each one waits, channel by channel, which usually points at the missing close.",
    "In short: start goroutines freely, give every goroutine a way to stop, pass ownership "
    "of data over channels, and keep mutexes for the few structures that many goroutines "
    "share. Measure before tuning the number of workers or the size of a buffer.",
]
BODY = "\n\n".join(PARAGRAPHS)
POST = f"---\ntitle: Concurrency in Go, in practice\ntags: [go]\n---\n\n{BODY}\n"
ELSEWHERE = (  # what the embedded model wrote for "fix the typo … in the go post"
    "The Go language is designed to be a high-performance, lightweight platform for building "
    "applications that can run on both hardware and software. It has been used in various "
    "industries such as healthcare, finance, and gaming. Go was created by Google to provide "
    "an alternative to the traditional approach of writing code using a specific language "
    "like C++ or Python, with portability in mind and easy deployment on any platform."
)
PATH = "posts/go-practice.md"


def test_the_post_is_long_enough_to_be_judged() -> None:
    assert len(BODY.split()) >= MIN_POST_WORDS
    check = on_topic("make it friendlier", BODY)
    assert check is not None
    verdict = check(Generated(text=ELSEWHERE))
    assert not verdict.passed and verdict.reason.startswith("it is about something else")
    assert "goroutines" in verdict.reason  # the key words shown whole
    friendlier = BODY.replace("Go starts", "Happily, Go starts").replace("In short:", "So:")
    assert check(Generated(text=friendlier)).passed
    scrap = check(Generated(text="Goroutines and channels, friendlier."))
    assert not scrap.passed and "did not ask to cut it" in scrap.reason
    # An instruction that may take text away: a short answer on the post is its answer.
    shorten = on_topic("shorten it to one paragraph", BODY)
    assert shorten is not None
    assert shorten(Generated(text="A short one.")).passed  # too short to tell its topic
    elsewhere = " ".join(ELSEWHERE.split()[:30])
    assert not shorten(Generated(text=elsewhere)).passed  # 30 words, none of the post's
    summary = "Goroutines are cheap; channels pass values; workers read jobs; select waits."
    assert on_topic("shorten it to one paragraph", BODY)(Generated(text=summary)).passed  # type: ignore[misc]


@pytest.mark.parametrize(
    ("instruction", "text"),
    [
        ("make it friendlier", "Go starts goroutines."),  # a short post: not judged
        ("translate it into French", BODY),  # the language check's
        ("make it friendlier", "容器把应用和它的依赖打包在一起。" * 60),  # not a Latin script
    ],
)
def test_short_posts_translations_and_chinese_posts_are_not_judged(
    instruction: str, text: str
) -> None:
    assert on_topic(instruction, text) is None


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    root = tmp_path / "blog"
    (root / "posts").mkdir(parents=True)
    (root / PATH).write_text(POST, encoding="utf-8")
    return root


async def test_a_long_post_answered_with_another_text_is_not_saved(blog: Path) -> None:
    llm = ScriptedModel([ELSEWHERE, ELSEWHERE])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill("EditContent", {"instruction": "make it friendlier", "path": PATH})
    await rt.close()
    assert msg.state == "ERROR" and msg.data["check"] == "on_topic", msg.content
    assert llm.call_count == 2 and "about something else" in llm.calls[1][-1]["content"]
    assert (blog / PATH).read_text(encoding="utf-8") == POST


async def test_a_long_post_edited_is_saved(blog: Path) -> None:
    friendlier = BODY.replace("Go starts", "Happily, Go starts")
    rt = writing_runtime(blog, ScriptedModel([friendlier]))
    msg = await rt.run_skill("EditContent", {"instruction": "make it friendlier", "path": PATH})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert {c["name"]: c["passed"] for c in msg.data["checks"]}["on_topic"] is True
    assert (blog / PATH).read_text(encoding="utf-8") == POST.replace(
        "Go starts", "Happily, Go starts"
    )


def test_an_answer_says_what_its_sources_say() -> None:
    from skillrt.skills.writing.on_topic import grounded

    check = grounded("Notes on shells\nBash and zsh differ in small ways.")
    made_up = (
        "In other words, the shells post says that the shell's primary purpose is to run "
        "command-line interfaces on top of the Linux kernel, like operating systems do."
    )
    verdict = check(Generated(text=made_up))
    assert not verdict.passed and "linux" in verdict.reason
    good = "The post says Bash and zsh differ in small ways ([Notes on shells](posts/shells.md))."
    assert check(Generated(text=good)).passed
    assert check(Generated(text="It covers the linux kernel.")).passed  # too short to tell
    chinese = grounded("容器把应用和它的依赖打包在一起，在任何装了 Docker 的机器上都能运行。")
    assert chinese(Generated(text=made_up)).passed  # another script: not judged


def test_a_chinese_answer_on_chinese_posts_says_what_they_say() -> None:
    """A Chinese answer was never judged: a made-up one on a one-line post about Go's
    generics was shown under 参考文章, the post linked."""
    from skillrt.skills.writing.on_topic import grounded

    check = grounded("Go 泛型入门\nGo 1.18 引入了泛型，类型参数写在方括号里。")
    made_up = (
        "《Go 泛型入门》这篇文章认为泛型会让程序慢十倍，所以作者建议永远不要在生产环境中使用泛型，"
        "并推荐改用反射和代码生成，还说 Go 团队计划在下一个版本删除泛型。"
    )
    verdict = check(Generated(text=made_up))
    assert not verdict.passed and "会让程序慢十倍" in verdict.zh, verdict
    assert check(Generated(text="这篇文章介绍 Go 1.18 引入的泛型：类型参数写在方括号里。")).passed
    assert check(Generated(text="Go 1.18 引入了泛型。")).passed  # too short to tell
    english = "The post says Go 1.18 added generics, with type parameters in square brackets."
    assert check(Generated(text=english)).passed  # another script: not judged


def test_an_english_summary_of_a_german_post_is_not_judged_by_its_words() -> None:
    from skillrt.skills.writing.on_topic import grounded

    german = (
        "Die Container verpacken eine Anwendung mit allen ihren Abhängigkeiten, und sie laufen "
        "auf jeder Maschine gleich. Das ist der Grund, warum wir sie für die Bereitstellung "
        "nutzen und nicht mehr virtuelle Maschinen. Die Schichten des Abbilds werden "
        "zwischengespeichert."
    )
    english = (
        "The post explains that containers package an application together with its "
        "dependencies so it runs the same on every machine, and that image layers are cached."
    )
    assert grounded(german)(Generated(text=english)).passed


@pytest.mark.parametrize(
    ("instruction", "cut"),
    [
        ("make every section clearer", False),
        ("fix the headings", False),
        ("make the Usage section clearer", False),
        ("remove the Usage section", True),
        ("shorten each section", True),
        ("summarise the sections", True),
    ],
)
def test_naming_sections_does_not_let_an_edit_cut_the_post(instruction: str, cut: bool) -> None:
    """ "make the Usage section clearer", edited whole, was answered with that section alone
    (14 of 434 words) and saved: the word "section" counted as leave to take text away."""
    check = on_topic(instruction, BODY)
    assert check is not None
    scrap = check(Generated(text="Goroutines and channels, clearer."))
    assert scrap.passed is cut
