"""A replacement whose words are both written out in quotes is made without a model: the
embedded model, asked to replace one word in the go post, gave it back as a page of invented
Python, and every check let it through."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.replace import (
    Replacement,
    fix_word,
    literal_replacement,
    prose_replacement,
    replace_in_prose,
)
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import run_writing_skill

GO = "posts/go-concurrency.md"


@pytest.mark.parametrize(
    ("instruction", "swap"),
    [
        ("replace 'cheap' with 'inexpensive' in the go post", ("cheap", "inexpensive")),
        ('in the go post, change "cheap" to "lightweight"', ("cheap", "lightweight")),
        ("replace every “goroutine” with “green thread”", ("goroutine", "green thread")),
        ("把“容器”改成“集装箱”", ("容器", "集装箱")),
        ("将所有的「容器」替换为「集装箱」", ("容器", "集装箱")),
        ("replace cheap with inexpensive", None),  # unquoted: the model's
        ("change the tone to 'friendly'", None),  # one quoted word is not a replacement
        ("replace 'a' with 'a'", None),
    ],
)
def test_a_replacement_needs_both_words_in_quotes(
    instruction: str, swap: tuple[str, str] | None
) -> None:
    found = literal_replacement(instruction)
    assert ((found.old, found.new) if found else None) == swap


def test_code_blocks_and_inline_code_are_left_as_they_are() -> None:
    body = "a cheap one, `cheap()` here\n\n```go\ncheap := 1\n```\n\ncheap again\n"
    new, done, left = replace_in_prose(body, Replacement("cheap", "light"))
    assert new == "a light one, `cheap()` here\n\n```go\ncheap := 1\n```\n\nlight again\n"
    assert (done, left) == (2, 2)


CONTAINERS = """---
title: Containers
---

I use docker every day, see the [official docs](https://docs.docker.com/get-started/) and \
![logo](/img/docker.png).
My notes are in [[docker-basics]] and the Dockerfile lives in the repo.

{{< youtube id="docker-intro" >}}

<img src="/img/docker-diagram.svg" alt="diagram">

Run it like this:

    docker run --rm hello-world

Go is going well; the go tool is good.
"""


def test_addresses_links_shortcodes_and_indented_code_are_left_as_they_are() -> None:
    """ "replace 'docker' with 'podman'" made https://docs.docker.com docs.podman.com, the
    wikilink to the post docker-basics [[podman-basics]], rewrote a shortcode's id, an <img
    src> and an indented code block, and said it left none in code."""
    body = CONTAINERS.split("---\n", 2)[2]
    made = prose_replacement(body, Replacement("docker", "podman"))
    assert made.text == body.replace("I use docker", "I use podman")
    assert (made.replaced, made.in_code, made.in_links) == (1, 1, 5)
    assert replace_in_prose(body, Replacement("docker", "podman"))[1:] == (1, 1)


@pytest.mark.parametrize(
    ("body", "swap", "expected", "counts"),
    [
        (  # a word whole, never a part of another: "![logo]" became "![loGo]"
            "![logo](go.png) Go is going well; the go tool is good, go!\n",
            ("go", "Go"),
            "![logo](go.png) Go is going well; the Go tool is good, Go!\n",
            (2, 0, 1),
        ),
        (  # a script without spaces has no edges to match on
            "把容器改成新的容器。\n\n    容器\n",
            ("容器", "集装箱"),
            "把集装箱改成新的集装箱。\n\n    容器\n",
            (2, 1, 0),
        ),
        (  # a list item's indented paragraph is prose; code is indented past the item
            "- a docker item\n\n    docker continued\n\n      docker code\n",
            ("docker", "podman"),
            "- a podman item\n\n    podman continued\n\n      docker code\n",
            (2, 1, 0),
        ),
        (  # a wikilink's alias, a link's text: prose; its label, an address: kept
            "[[docker-basics|docker notes]], [docker][docker], <me@docker.io>\r\n\r\n"
            "[docker]: https://docker.com\r\n",
            ("docker", "podman"),
            "[[docker-basics|podman notes]], [podman][docker], <me@docker.io>\r\n\r\n"
            "[docker]: https://docker.com\r\n",
            (2, 0, 5),
        ),
    ],
)
def test_a_replacement_is_made_in_whole_words_of_the_prose(
    body: str, swap: tuple[str, str], expected: str, counts: tuple[int, int, int]
) -> None:
    made = prose_replacement(body, Replacement(*swap))
    assert made.text == expected
    assert (made.replaced, made.in_code, made.in_links) == counts


def test_a_typo_in_a_link_address_is_left() -> None:
    body = "We recieve it at [the page](https://example.com/recieve) and [[recieve]].\n"
    assert fix_word(body, "recieve", "receive") == (body.replace("We recieve", "We receive"), 1)


async def test_a_quoted_replacement_changes_no_link_and_no_code(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    post = blog / "posts" / "c.md"
    post.write_text(CONTAINERS, encoding="utf-8")
    (blog / "posts" / "docker-basics.md").write_text(
        "---\ntitle: Docker basics\n---\n\nx\n", encoding="utf-8"
    )
    llm = ScriptedModel([])
    params = {"instruction": "replace 'docker' with 'podman'", "path": "posts/c.md"}
    msg = await run_writing_skill(blog, llm, "EditContent", params)
    assert msg.state == "COMPLETED" and llm.call_count == 0, msg.content
    assert post.read_text(encoding="utf-8") == CONTAINERS.replace("I use docker", "I use podman")
    assert msg.data["replaced"] == 1 and msg.data["left_in_code"] == 1
    links = msg.data["left_in_links"]
    assert links > 0 and f"({links} in links, addresses or markup left as they are)" in msg.content
    params = {"instruction": 'change "go" to "Go"', "path": "posts/c.md"}
    msg = await run_writing_skill(blog, llm, "EditContent", params)
    assert msg.state == "COMPLETED" and msg.data["replaced"] == 1, msg.content
    assert post.read_text(encoding="utf-8") == CONTAINERS.replace(
        "I use docker", "I use podman"
    ).replace("the go tool", "the Go tool")


async def _edit(blog: Path, instruction: str) -> tuple:
    llm = ScriptedModel([])
    msg = await run_writing_skill(
        blog, llm, "EditContent", {"instruction": instruction, "path": GO}
    )
    assert llm.call_count == 0  # no model
    return msg


async def test_the_replacement_changes_those_words_and_no_other_byte(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    before = (blog / GO).read_text(encoding="utf-8")
    msg = await _edit(blog, "replace 'cheap' with 'inexpensive' in the go post")
    assert msg.state == "COMPLETED", msg.content
    assert (blog / GO).read_text(encoding="utf-8") == before.replace(
        "goroutines are cheap", "goroutines are inexpensive"
    )
    assert msg.data["replaced"] == 1 and msg.data["changed"] is True
    assert msg.content.startswith("Replaced “cheap” with “inexpensive” in the body")


@pytest.mark.parametrize(
    ("instruction", "error"),
    [
        ("replace 'nowhere' with 'x'", "text_not_found"),
        ("replace 'results' with 'outputs'", "text_only_in_code"),  # the Go code's only
    ],
)
async def test_a_replacement_with_nothing_to_replace_changes_nothing(
    tmp_path: Path, instruction: str, error: str
) -> None:
    blog = copy_blog(tmp_path / "blog")
    before = (blog / GO).read_text(encoding="utf-8")
    msg = await _edit(blog, instruction)
    assert msg.state == "ERROR" and msg.data["error"] == error, msg.content
    assert (blog / GO).read_text(encoding="utf-8") == before


async def test_a_replacement_in_a_named_part_leaves_the_rest(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    text = (
        "---\ntitle: Owners\n---\n\nEach value has one owner.\n\n"
        "The owner drops the value.\n\nAn owner can lend it.\n"
    )
    (blog / "posts" / "own.md").write_text(text, encoding="utf-8")
    llm = ScriptedModel([])
    msg = await run_writing_skill(
        blog,
        llm,
        "EditContent",
        {
            "instruction": "in the second paragraph, replace 'owner' with 'holder'",
            "path": "posts/own.md",
        },
    )
    assert msg.state == "COMPLETED" and llm.call_count == 0, msg.content
    assert (blog / "posts" / "own.md").read_text(encoding="utf-8") == text.replace(
        "The owner drops", "The holder drops"
    )
    assert "in the second paragraph of" in msg.content


async def test_renaming_the_title_quoted_sets_the_title(tmp_path: Path) -> None:
    """ "rename 'Docker 容器入门' to 'Docker basics'" replaced the heading in the body and left
    the frontmatter's title: a quoted old title is the title's edit."""
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts/docker-basics.md"
    before = post.read_text(encoding="utf-8")
    llm = ScriptedModel([])
    msg = await run_writing_skill(
        blog,
        llm,
        "EditContent",
        {
            "instruction": "rename 'Docker 容器入门' to 'Docker basics'",
            "path": "posts/docker-basics.md",
        },
    )
    assert msg.state == "COMPLETED" and llm.call_count == 0, msg.content
    assert post.read_text(encoding="utf-8") == before.replace(
        "title: Docker 容器入门", "title: Docker basics", 1
    )  # the body's "# Docker 容器入门" as it was, and said
    assert "still has the old title" in msg.content


async def test_a_word_only_in_links_is_said_to_be_there_and_left(tmp_path: Path) -> None:
    """A word in a link's address alone was said not to be in the post at all."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    text = "---\ntitle: L\n---\n\nSee [the docs](https://docs.docker.com/get-started/).\n"
    (blog / "posts" / "l.md").write_text(text, encoding="utf-8")
    params = {"instruction": "replace 'docker' with 'podman'", "path": "posts/l.md"}
    msg = await run_writing_skill(blog, ScriptedModel([]), "EditContent", params)
    assert msg.state == "ERROR" and msg.data["error"] == "text_only_in_code", msg.content
    assert "only in code, links or markup" in msg.content
    assert (blog / "posts" / "l.md").read_text(encoding="utf-8") == text


def test_a_fence_indented_in_a_list_item_is_code() -> None:
    """A fence four spaces in, under "1. Install it:", is the item's code block: its
    ``docker pull`` was made ``podman pull``, and its comment too."""
    body = (
        "We use docker daily.\n\n1. Install it:\n\n    ```bash\n    # install docker first\n"
        "    docker pull x\n    ```\n\n2. Run docker.\n"
    )
    made = prose_replacement(body, Replacement("docker", "podman"))
    assert made.text == body.replace("use docker", "use podman").replace("Run docker", "Run podman")
    assert (made.replaced, made.in_code) == (2, 2)


@pytest.mark.parametrize(
    ("body", "swap", "expected", "count"),
    [
        (  # written small: any case, the case kept ("Docker" was left)
            "Docker is neat. DOCKER, docker and dockerd.\n",
            ("docker", "podman"),
            "Podman is neat. PODMAN, podman and dockerd.\n",
            3,
        ),
        (  # with a capital: as written ("Go" is not the verb "go")
            "Go is fun; let us go.\n",
            ("Go", "Rust"),
            "Rust is fun; let us go.\n",
            1,
        ),
        (  # markup the words quoted hold whole is theirs: Vec<String> is an HTML tag alone
            "It takes a Vec<String> here, and `Vec<String>` in code.\n",
            ("Vec<String>", "Vec<&str>"),
            "It takes a Vec<&str> here, and `Vec<String>` in code.\n",
            1,
        ),
    ],
)
def test_a_replacement_keeps_the_case_it_finds(
    body: str, swap: tuple[str, str], expected: str, count: int
) -> None:
    """ "replace 'docker' with 'podman'" left "Docker" at a sentence's start; "replace
    'Vec<String>' with 'Vec<&str>'" said it was only in markup."""
    made = prose_replacement(body, Replacement(*swap))
    assert (made.text, made.replaced) == (expected, count)
