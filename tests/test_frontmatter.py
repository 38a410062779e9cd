"""The frontmatter block in YAML, TOML and JSON: split off and joined back byte for byte, read,
and changed in its own format (key order and comments kept)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from skillrt.blog.frontmatter import (
    render_frontmatter,
    split_frontmatter,
    strip_frontmatter,
    yaml_list_style,
)
from skillrt.blog.markdown import split_post
from skillrt.exceptions import InvalidFrontmatter

TOML_POST = (
    "+++\n"
    "# The date is in path, as on the Rust blog.\n"
    'path = "2024/03/21/Rust-1.77.0"\n'
    'title = "Announcing Rust 1.77.0"  # the release\n'
    'authors = ["The Rust Release Team"]\n'
    "\n"
    "[extra]\n"
    "release = true\n"
    "+++\n"
    "\n"
    "The Rust team is happy.\n"
)
YAML_POST = (
    "---\n"
    "title: 'Ownership: moves'  # quoted\n"
    "date: 2024-05-01\n"
    "tags:\n"
    "- rust\n"
    "- ownership\n"
    "draft: true\n"
    "---\n"
    "\n"
    "# Heading\n"
    "Body.\n"
)
JSON_POST = (
    '{\n    "title": "JSON post",\n    "date": "2023-02-03",\n    "tags": ["a", "b"]\n}\n\nBody\n'
)

HEXO_JSON_POST = (
    '"title": "Hexo post",\n"date": "2013/7/13 20:46:25",\n"tags": ["a"]\n;;;\n\nBody\n'
)

SAMPLES = [
    HEXO_JSON_POST,
    ";;;\n" + HEXO_JSON_POST.replace("\n", "\r\n"),
    '"Quoted," she said.\n;;;\n',  # prose, not JSON members: no frontmatter
    TOML_POST,
    YAML_POST,
    JSON_POST,
    "\ufeff" + YAML_POST,
    TOML_POST.replace("\n", "\r\n"),
    YAML_POST.replace("\n", "\r\n"),
    "---\n---\nempty block\n",
    "+++\n+++",
    '{"title": "one line"}\nbody',
    "{{< figure src=x >}}\ntext\n",  # a Hugo shortcode, not JSON
    "{% raw %}liquid{% endraw %}\n",  # a Jekyll tag, not JSON
    "No frontmatter at all.\n",
    "",
    "---\ntitle: x\n...\nYAML ends with dots\n",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_split_then_join_is_byte_for_byte(text: str) -> None:
    found = split_frontmatter(text)
    assert found.text == text
    assert found.block + found.body == text


@pytest.mark.parametrize(
    ("text", "fmt", "title"),
    [
        (TOML_POST, "toml", "Announcing Rust 1.77.0"),
        (YAML_POST, "yaml", "Ownership: moves"),
        (JSON_POST, "json", "JSON post"),
        (HEXO_JSON_POST, "json", "Hexo post"),
        (";;;\n" + HEXO_JSON_POST, "json", "Hexo post"),
        ("\ufeff" + YAML_POST, "yaml", "Ownership: moves"),
        (TOML_POST.replace("\n", "\r\n"), "toml", "Announcing Rust 1.77.0"),
    ],
)
def test_each_format_is_recognised_and_read(text: str, fmt: str, title: str) -> None:
    found = split_frontmatter(text)
    assert found.format == fmt
    assert found.fields()["title"] == title
    assert "title" not in found.body  # the block is not in the body


def test_fields_keep_types() -> None:
    toml = split_frontmatter(TOML_POST).fields()
    assert toml["extra"] == {"release": True} and toml["authors"] == ["The Rust Release Team"]
    yaml_fields = split_frontmatter(YAML_POST).fields()
    assert yaml_fields["date"] == dt.date(2024, 5, 1) and yaml_fields["draft"] is True
    assert split_post(TOML_POST)[1] == "The Rust team is happy."


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("+++\ntitle = \n+++\nbody\n", "invalid TOML"),
        ("+++\ntitle = 'x'\nbody\n", "'\\+\\+\\+' block is never closed"),
        ('{\n  "title": "x",\n\nbody\n', "invalid JSON"),
        ("---\ntitle: [x\n---\n", "invalid YAML at line 3"),
        (';;;\n"title": "x"\nbody\n', "';;;' block is never closed"),
        ("+++\n+++\n", None),
    ],
)
def test_broken_blocks_are_refused_with_a_reason(text: str, reason: str | None) -> None:
    if reason is None:
        assert split_frontmatter(text).fields() == {}
        return
    with pytest.raises(InvalidFrontmatter, match=reason):
        split_frontmatter(text, "content/x.md").fields()


def test_toml_field_change_keeps_comments_order_and_tables() -> None:
    found = split_frontmatter(TOML_POST)
    changed = found.with_fields({"draft": True, "title": "Rust 1.77.0"})
    assert changed.body == found.body
    assert changed.block == (
        "+++\n"
        "# The date is in path, as on the Rust blog.\n"
        'path = "2024/03/21/Rust-1.77.0"\n'
        'title = "Rust 1.77.0"  # the release\n'
        'authors = ["The Rust Release Team"]\n'
        "draft = true\n"
        "\n"
        "[extra]\n"
        "release = true\n"
        "+++\n"
    )
    back = changed.with_fields({}, remove=["draft"]).with_fields({"title": found.fields()["title"]})
    assert back.text == TOML_POST


def test_yaml_field_change_touches_only_its_lines() -> None:
    found = split_frontmatter(YAML_POST)
    changed = found.with_fields({"tags": ["rust"], "lang": "en"}, remove=["draft"])
    assert changed.block == (
        "---\ntitle: 'Ownership: moves'  # quoted\ndate: 2024-05-01\ntags:\n- rust\nlang: en\n---\n"
    )
    assert changed.fields() == {"title": "Ownership: moves", "date": dt.date(2024, 5, 1),
                                "tags": ["rust"], "lang": "en"}  # fmt: skip
    crlf = split_frontmatter(YAML_POST.replace("\n", "\r\n")).with_fields({"draft": False})
    assert "draft: false\r\n" in crlf.block and "\n" not in crlf.block.replace("\r\n", "")


@pytest.mark.parametrize(
    ("line", "comment", "written"),
    [
        ("title: Rust ownership  # the title", "  # the title", "New, value"),
        ('title: "a # b" # c', " # c", '"New, value"'),  # in its quotes, as before
        ('title: "a \\" # b"   # c', "   # c", '"New, value"'),
        ("title: 'it''s # x'  # c", "  # c", "'New, value'"),
        ("title: a#b", "", "New, value"),
        ("url: http://example.test/#frag # c", " # c", "New, value"),
    ],
)
def test_a_yaml_scalar_set_again_keeps_its_comment(line: str, comment: str, written: str) -> None:
    """The comment after a one-line value was dropped when an edit set the title; a quoted
    one was written unquoted (or in the other quotes)."""
    post = f"---\n{line}\ndate: 2024-01-01\n---\nbody\n"
    key = line.split(":", 1)[0]
    changed = split_frontmatter(post).with_fields({key: "New, value"})
    assert changed.text == f"---\n{key}: {written}{comment}\ndate: 2024-01-01\n---\nbody\n"
    assert changed.fields()[key] == "New, value"
    quoted = split_frontmatter(f'---\n{key}: "x"\n---\n').with_fields({key: 'say "hi", \\o/'})
    assert quoted.text == f'---\n{key}: "say \\"hi\\", \\\\o/"\n---\n'
    assert quoted.fields()[key] == 'say "hi", \\o/'


def test_a_yaml_flow_list_stays_a_flow_list_quoted_as_it_was() -> None:
    """``tags: [a, b]  # note`` set again stays on its line with its comment; an item YAML
    would read as something else than the string (``yes``, ``1.0``, ``a: b``) is quoted."""
    post = "---\ntitle: x\ntags: [python, async]   # mine\ndate: 2024-01-01\n---\nbody\n"
    tags = ["python", "c++", "异步", "yes", "1.0", "a: b"]
    changed = split_frontmatter(post).with_fields({"tags": tags})
    assert changed.text == post.replace(
        "[python, async]", '[python, c++, 异步, "yes", "1.0", "a: b"]'
    )
    assert changed.fields()["tags"] == tags
    quoted = split_frontmatter('---\ntags: ["hugo"]\n---\n').with_fields({"tags": ["hugo", "go"]})
    assert quoted.block == '---\ntags: ["hugo", "go"]\n---\n'
    block = split_frontmatter("---\ntags:\n- a\n---\n").with_fields({"tags": ["a", "b"]})
    assert block.block == "---\ntags:\n- a\n- b\n---\n"  # a block list stays one


def test_a_yaml_block_list_set_again_keeps_its_indent_quotes_and_comments() -> None:
    """Hexo's ``tags:`` then ``  - vim``: a tag added re-wrote every item at column 0 (as
    PyYAML writes a list), so the diff showed lines the user never asked to change. The items
    kept are kept as written (their quotes, their comments), a new one takes their indent and
    quotes, and one YAML would read as no string (``yes``) is quoted."""
    post = (
        "---\ntitle: x\ntags:   # mine\n  - vim\n  - 'editor'  # first\n"
        "date: 2024-03-02\n---\nbody\n"
    )
    found = split_frontmatter(post)
    added = found.with_fields({"tags": ["vim", "editor", "neovim", "yes"]})
    assert added.text == post.replace(
        "  - 'editor'  # first\n", "  - 'editor'  # first\n  - neovim\n  - \"yes\"\n"
    )
    assert added.fields()["tags"] == ["vim", "editor", "neovim", "yes"]
    dropped = found.with_fields({"tags": ["editor"]})
    assert dropped.text == post.replace("  - vim\n", "")
    assert found.with_fields({"tags": []}).fields()["tags"] == []  # no ``tags:`` left empty
    quoted = split_frontmatter("---\ntags:\n    - 'a'\n---\n").with_fields({"tags": ["a", "it's"]})
    assert quoted.block == "---\ntags:\n    - 'a'\n    - 'it''s'\n---\n"
    years = split_frontmatter("---\ntags:\n  - 2024\n  - a\n---\n")  # a number kept as written
    assert years.with_fields({"tags": ["2024", "a", "b"]}).block == (
        "---\ntags:\n  - 2024\n  - a\n  - b\n---\n"
    )
    nested = split_frontmatter("---\ntags:\n  - a\n  - {x: 1}\n---\n").with_fields({"tags": ["b"]})
    assert nested.fields()["tags"] == ["b"]  # no list of strings: written as YAML does


def test_a_crlf_yaml_key_with_a_nested_value_is_set_in_place() -> None:
    """In a post with Windows line ends, ``tags:`` (its value on the lines below) was not
    found as a key, so setting it appended a second ``tags:``: a duplicate key, and the old
    value left in the file."""
    post = "---\r\ntitle: x\r\ntags:\r\n  - a\r\nextra:\r\n  k: 1\r\n---\r\nbody\r\n"
    changed = split_frontmatter(post).with_fields({"tags": ["a", "b"], "extra": {"k": 2}})
    assert changed.text == (
        "---\r\ntitle: x\r\ntags:\r\n  - a\r\n  - b\r\nextra:\r\n  k: 2\r\n---\r\nbody\r\n"
    )


def test_a_toml_table_set_again_keeps_the_comments_of_its_other_keys() -> None:
    """Zola's ``[taxonomies]``: a key changed inside it, the rest as written."""
    post = (
        '+++\ntitle = "x"\n\n[taxonomies]\n# the site\'s\ntags = ["a"]  # first\n'
        'categories = ["c"]  # cats\n\n[extra]\nk = 1\n+++\nbody\n'
    )
    found = split_frontmatter(post)
    changed = found.with_fields({"taxonomies": {"tags": ["a", "b"], "categories": ["c"]}})
    assert changed.text == post.replace('tags = ["a"]', 'tags = ["a", "b"]')
    dropped = found.with_fields({"taxonomies": {"tags": ["a"]}})
    assert dropped.text == post.replace('categories = ["c"]  # cats\n', "")


def test_json_field_change_keeps_indent_and_order() -> None:
    found = split_frontmatter(JSON_POST)
    changed = found.with_fields({"draft": True, "date": dt.date(2023, 2, 4)})
    assert changed.block.startswith('{\n    "title": "JSON post",\n    "date": "2023-02-04",')
    assert list(json.loads(changed.inner)) == ["title", "date", "tags", "draft"]
    assert changed.body == found.body


JSON_OWN_STYLE = (
    '{\n  "title": "Front matter in JSON",\n  "date": "2024-02-10",\n'
    '  "tags": ["json", "hugo"],\n  "draft": false\n}\n\nBody\n'
)


@pytest.mark.parametrize(
    ("changes", "remove", "expected"),
    [
        ({"draft": True}, (), JSON_OWN_STYLE.replace('"draft": false', '"draft": true')),
        ({"description": "Hi"}, (),
         JSON_OWN_STYLE.replace('"draft": false', '"draft": false,\n  "description": "Hi"')),
        ({"draft": None}, (), JSON_OWN_STYLE.replace(',\n  "draft": false', "")),
        ({}, ("title",), JSON_OWN_STYLE.replace('"title": "Front matter in JSON",\n  ', "")),
        ({"tags": ["json"]}, (), JSON_OWN_STYLE.replace('["json", "hugo"]', '["json"]')),
    ],
)  # fmt: skip
def test_a_json_field_change_keeps_every_other_byte(
    changes: dict[str, object], remove: tuple[str, ...], expected: str
) -> None:
    """Setting one field wrote the whole object anew: a one-line list became four lines."""
    changed = split_frontmatter(JSON_OWN_STYLE).with_fields(changes, remove=remove)
    assert changed.text == expected
    one_line = split_frontmatter('{"title": "A", "draft": true}\n\nBody\n')
    assert (
        one_line.with_fields({"draft": None, "d": "x"}).text == '{"title": "A", "d": "x"}\n\nBody\n'
    )


def test_a_post_without_frontmatter_gets_a_yaml_block() -> None:
    found = split_frontmatter("# Title\n\nBody\n")
    assert found.with_fields({}).text == "# Title\n\nBody\n"
    added = found.with_fields({"title": "T"})
    assert added.text == "---\ntitle: T\n---\n\n# Title\n\nBody\n"


@pytest.mark.parametrize("fmt", ["yaml", "toml", "json"])
def test_render_frontmatter_reads_back(fmt: str) -> None:
    fields = {"title": "Rust: 所有权", "date": dt.date(2024, 1, 2), "tags": ["a"], "gone": None}
    block = render_frontmatter(fields, fmt)  # type: ignore[arg-type]
    found = split_frontmatter(block + "\nbody\n")
    assert found.format == fmt and found.body == "\nbody\n"
    read = found.fields()
    assert read["title"] == "Rust: 所有权" and read["tags"] == ["a"] and "gone" not in read
    assert str(read["date"]) == "2024-01-02"


@pytest.mark.parametrize(
    ("reply", "expected", "had"),
    [
        ('+++\ntitle = "x"\n+++\n\nNew body.', "New body.", True),
        ("---\ntitle: x\n---\nNew body.", "New body.", True),
        ('\n{\n  "title": "x"\n}\nNew body.', "New body.", True),
        ("New body.\n\n---\n\nmore", "New body.\n\n---\n\nmore", False),
        ("---\nnever closed", "---\nnever closed", False),
        ("---\nA paragraph set off.\n---\nmore", "---\nA paragraph set off.\n---\nmore", False),
        ("---\n---\nNew body.", "New body.", True),
    ],
)
def test_strip_frontmatter_from_a_reply(reply: str, expected: str, had: bool) -> None:
    assert strip_frontmatter(reply) == (expected, had)


def test_hexo_json_members_change_in_their_own_style() -> None:
    """Hexo's JSON without braces (up to ``;;;``): a changed field keeps the members bare,
    one per line, the ``;;;`` lines and the body as they were."""
    for text in (HEXO_JSON_POST, ";;;\n" + HEXO_JSON_POST):
        found = split_frontmatter(text)
        changed = found.with_fields({"title": "New", "draft": True})
        assert changed.body == found.body == "\nBody\n"
        assert changed.block.startswith(text[: text.index('"')])  # the opening ;;; kept
        assert changed.block.endswith('"draft": true\n;;;\n')
        assert "{" not in changed.block
        assert changed.fields() == {**found.fields(), "title": "New", "draft": True}


def test_a_new_yaml_list_is_written_as_the_blocks_own_lists_are() -> None:
    """A key that is new takes the style most of the block's lists have; with none, one item
    a line, unless the caller names the blog's style (``lists``)."""
    flow = split_frontmatter("---\ntitle: x\naliases: [one]\n---\nbody\n")
    assert yaml_list_style(flow.inner) == "flow"
    assert flow.with_fields({"tags": ["a", "b c"]}).block == (
        "---\ntitle: x\naliases: [one]\ntags: [a, b c]\n---\n"
    )
    quoted = split_frontmatter('---\ntitle: x\naliases: ["one"]\n---\nbody\n')
    assert yaml_list_style(quoted.inner) == "quoted"
    assert quoted.with_fields({"tags": ["a", "yes"]}).block.endswith('tags: ["a", "yes"]\n---\n')
    block = split_frontmatter("---\ntitle: x\naliases:\n  - one\n---\nbody\n")
    assert yaml_list_style(block.inner) == "block"
    assert block.with_fields({"tags": ["a"]}).block.endswith("tags:\n- a\n---\n")
    bare = split_frontmatter("---\ntitle: x\n---\nbody\n")
    assert yaml_list_style(bare.inner) is None
    assert bare.with_fields({"tags": ["a"]}).block.endswith("tags:\n- a\n---\n")
    assert bare.with_fields({"tags": ["a"]}, lists="flow").block.endswith("tags: [a]\n---\n")
    for post in (flow, quoted, block):  # what YAML reads is the same in every style
        assert post.with_fields({"tags": ["a", "1.0", "a: b"]}).fields()["tags"] == [
            "a", "1.0", "a: b"
        ]  # fmt: skip


def test_a_new_post_writes_lists_as_the_blogs_posts_do(tmp_path: Path) -> None:
    from skillrt.blog.posts import PostMeta
    from skillrt.blog.style import post_style

    posts = []
    for i, tags in enumerate(['["a", "b"]', '["c"]', "[d]"]):
        (tmp_path / f"p{i}.md").write_text(f"---\ntitle: P{i}\ntags: {tags}\n---\nbody\n")
        posts.append(
            PostMeta(f"p{i}.md", f"P{i}", f"2024-01-0{i + 1}", (), "", (), (), "", draft=False)
        )
    style = post_style(tmp_path, posts, posts_dir=".", kind="hugo")
    assert style.lists == "quoted"
    text = style.compose(
        title="New", slug="new", day=dt.date(2024, 2, 1), body="Hi.", draft=False, tags=["x"]
    )
    assert 'tags: ["x"]\n' in text
    assert split_frontmatter(text).fields()["tags"] == ["x"]


@pytest.mark.parametrize(
    ("remove", "left"),
    [
        (("draft", "published"), '{\n  "title": "Hi"\n}'),  # the last two, side by side
        (("title", "draft"), '{\n  "published": false\n}'),  # the first two
        (("title", "draft", "published"), "{\n  \n}"),  # (valid, if not pretty)
        (("draft",), '{\n  "title": "Hi",\n  "published": false\n}'),
    ],
)
def test_dropping_json_keys_side_by_side_keeps_the_object_whole(
    remove: tuple[str, ...], left: str
) -> None:
    """Two dropped keys at the end cut the object's closing brace (publishing a Hugo post
    ending in "draft": true, "published": false wrote broken JSON)."""
    post = '{\n  "title": "Hi",\n  "draft": true,\n  "published": false\n}\n\nBody\n'
    changed = split_frontmatter(post).with_fields({}, remove=remove)
    assert changed.text == left + "\n\nBody\n"
    assert changed.fields() == {
        k: v
        for k, v in {"title": "Hi", "draft": True, "published": False}.items()
        if k not in remove
    }


# --- every change read back; comments, blank lines, marks and line ends kept ---------------


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["rust", "go"], "  # main topics\n  - rust\n  - go\n  # - python  (disabled)\n"),
        (["go"], "  # main topics\n  - go\n  # - python  (disabled)\n"),  # rust renamed
        ([], None),
        (["rust"], "  # main topics\n  - rust\n  # - python  (disabled)\n"),
    ],
)
def test_a_yaml_block_list_keeps_its_comment_lines(tags: list[str], expected: str | None) -> None:
    """A comment line in a tags list gave the list up: it was written anew, without its
    comments, a commented-out tag among them."""
    text = (
        "---\ntitle: T\ntags:\n  # main topics\n  - rust\n  # - python  (disabled)\n"
        "author: me\n---\n\nB.\n"
    )
    changed = split_frontmatter(text).with_fields({"tags": tags})
    assert changed.fields()["tags"] == tags and changed.body == "\nB.\n"
    if expected is not None:
        assert changed.block == f"---\ntitle: T\ntags:\n{expected}author: me\n---\n"


def test_a_removed_item_leaves_the_comment_above_it() -> None:
    text = "---\ntags:\n  - rust\n  # the web one\n  - web\n  - go\n---\n"
    changed = split_frontmatter(text).with_fields({"tags": ["rust", "go"]})
    assert changed.block == "---\ntags:\n  - rust\n  # the web one\n  - go\n---\n"


def test_a_toml_array_is_changed_item_by_item() -> None:
    """Set anew, the array lost its lines and "rust",  # the language lost its comment."""
    text = (
        '+++\ntitle = "T"\n[taxonomies]\ntags = [\n  "rust",  # the language\n  "async",\n]\n+++\n'
    )
    found = split_frontmatter(text)
    added = found.with_fields({"taxonomies": {"tags": ["rust", "async", "python"]}})
    assert added.block == text.replace('"async",\n', '"async",\n  "python",\n')
    removed = found.with_fields({"taxonomies": {"tags": ["rust"]}})
    assert removed.block == text.replace('  "async",\n', "")
    flow = split_frontmatter('+++\ntags = ["a", "b"]  # two\n+++\n').with_fields({"tags": ["a"]})
    assert flow.block == '+++\ntags = ["a"]  # two\n+++\n'


def test_a_new_block_goes_after_a_byte_order_mark_in_the_posts_line_ends() -> None:
    """The mark was left at the start of the body, before "# Shell tips": no heading then."""
    text = "\ufeff# Shell tips\r\n\r\nUse `ls`.\r\n"
    changed = split_frontmatter(text).with_fields({"tags": ["shell"]})
    assert (
        changed.text
        == "\ufeff---\r\ntags:\r\n- shell\r\n---\r\n\r\n# Shell tips\r\n\r\nUse `ls`.\r\n"
    )
    assert split_frontmatter(changed.text).fields() == {"tags": ["shell"]}


def test_hexo_members_are_changed_in_place() -> None:
    """One field set rewrote every member: a list onto one line, 1.50 as 1.5, \\u00e9 as é."""
    text = (
        '"title": "Hexo",\n"tags": [\n  "node"\n],\n"weight": 1.50,\n'
        '"note": "caf\\u00e9"\n;;;\n\nB.\n'
    )
    changed = split_frontmatter(text).with_fields({"title": "New", "draft": True})
    assert changed.text == text.replace('"Hexo"', '"New"').replace(
        '"caf\\u00e9"\n', '"caf\\u00e9",\n"draft": true\n'
    )


@pytest.mark.parametrize(
    "value", ["description: |\n  First.\n\n  Second.\n", "description: >\n  First.\n\n  Second.\n"]
)
def test_a_block_scalar_with_a_blank_line_is_replaced_whole(value: str) -> None:
    """The blank line ended the key's lines: "Second." was left under the new value."""
    text = f"---\ntitle: T\n{value}tags: [a]\n---\n"
    changed = split_frontmatter(text).with_fields({"description": "Short one"})
    assert changed.block == "---\ntitle: T\ndescription: Short one\ntags: [a]\n---\n"


def test_a_block_list_with_a_blank_line_is_one_list() -> None:
    text = "---\ntitle: T\ntags:\n  - rust\n\n  - web\n\nauthor: me\n---\n"
    changed = split_frontmatter(text).with_fields({"tags": ["rust"]})
    assert changed.fields() == {"title": "T", "tags": ["rust"], "author": "me"}
    assert changed.block.endswith("  - rust\n\n\nauthor: me\n---\n")  # (its blank lines kept)


def test_a_key_said_twice_is_set_where_it_is_read_and_removed_each_time() -> None:
    """PyYAML reads a key said twice the last time: the first was set, and "publish it" said
    "Published" of a post still a draft."""
    text = "---\ntitle: T\ndraft: false\ntags: [a]\ndraft: true\n---\n"
    found = split_frontmatter(text)
    assert found.with_fields({"draft": False}).fields()["draft"] is False
    assert found.with_fields({}, remove=["draft"]).block == "---\ntitle: T\ntags: [a]\n---\n"


def test_a_number_in_a_flow_list_stays_as_written() -> None:
    text = "---\ntags: [go, 1.20]\n---\n"
    changed = split_frontmatter(text).with_fields({"tags": ["go", "1.2", "generics"]})
    assert changed.block == "---\ntags: [go, 1.20, generics]\n---\n"


@pytest.mark.parametrize(
    ("text", "changes"),
    [
        ("---\ntitle: T\ntags: &t [rust, go]\nkeywords: *t\n---\n", {"tags": ["x"]}),
        ("---\n  title: Indented\n  draft: true\n---\n", {"draft": False}),
    ],
)
def test_a_change_that_does_not_read_back_is_refused(text: str, changes: dict[str, object]) -> None:
    """An anchor's alias left dangling; an indented block whose keys were not found, so the
    key was added a second time at column 0: refused, as readable, not written."""
    from skillrt.exceptions import FrontmatterNotKept

    found = split_frontmatter(text, "posts/x.md")
    found.fields()  # readable
    with pytest.raises(FrontmatterNotKept) as refused:
        found.with_fields(changes)
    assert isinstance(refused.value, InvalidFrontmatter) and refused.value.path == "posts/x.md"


def test_a_new_toml_key_in_a_crlf_block_is_crlf() -> None:
    text = '+++\r\ntitle = "T"\r\n[taxonomies]\r\ntags = ["a"]\r\n+++\r\n\r\nB.\r\n'
    changed = split_frontmatter(text).with_fields({"draft": True, "extra": {"x": 1}})
    assert "\n" not in changed.text.replace("\r\n", "")
    assert changed.fields()["draft"] is True and changed.body == "\r\nB.\r\n"


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: A\nimage:\ndraft: true\n---\nbody\n",
        "---\ntitle: A\ndescription: ~\ndraft: true\n---\nbody\n",
        "---\ntitle: A\nweight: .nan\ndraft: true\n---\nbody\n",
        '{\n  "title": "A",\n  "image": null,\n  "draft": true\n}\nbody\n',
        '"title": "A",\n"image": null,\n"draft": true\n;;;\nbody\n',
        '+++\ntitle = "A"\ndraft = true\n[extra]\nimage = ""\n+++\nbody\n',
    ],
)
def test_an_empty_field_is_read_back_as_empty(text: str) -> None:
    """A field already empty (``image:``) was taken for one the change dropped: every change
    of such a post was refused (FrontmatterNotKept)."""
    changed = split_frontmatter(text).with_fields({"draft": False})
    assert changed.fields()["draft"] is False
    assert changed.text.count("\n") == text.count("\n")


def test_a_table_set_with_an_empty_value_drops_that_key() -> None:
    text = '+++\ntitle = "A"\n[extra]\na = 1\nb = 2\n+++\n'
    changed = split_frontmatter(text).with_fields({"extra": {"a": 1, "b": None}})
    assert changed.block == '+++\ntitle = "A"\n[extra]\na = 1\n+++\n'


@pytest.mark.parametrize(
    ("text", "changes", "expected"),
    [
        (  # a comment under a key, after a blank line, is not its value
            "---\ntitle: A\n\n  # note: keep me\ndraft: true\n---\n",
            {"title": "X"},
            "---\ntitle: X\n\n  # note: keep me\ndraft: true\n---\n",
        ),
        (
            "---\ndraft: true\n  # draft: false  (flip when ready)\ntitle: A\n---\n",
            {"draft": False},
            "---\ndraft: false\n  # draft: false  (flip when ready)\ntitle: A\n---\n",
        ),
        (  # a comment at column 0 inside a list ("toggle comment"): the list goes on after it
            "---\ntags:\n  - a\n# - b\n  - c\n---\n",
            {"tags": ["a", "c", "d"]},
            "---\ntags:\n  - a\n# - b\n  - c\n  - d\n---\n",
        ),
        (  # in a | block, a line that starts with # is text
            "---\nscript: |\n  pip install x\n  # done\ntitle: T\n---\n",
            {"script": "new"},
            "---\nscript: new\ntitle: T\n---\n",
        ),
    ],
)
def test_comment_lines_around_a_value_stay_where_they_are(
    text: str, changes: dict[str, object], expected: str
) -> None:
    assert split_frontmatter(text).with_fields(changes).block == expected


HEXO_BARE = (
    "title: Hello Hexo\ndate: 2024-01-01 10:00:00\ntags: [hexo, blog]\n---\n\n"
    "This is my very first post on the new Hexo blog.\n"
)


@pytest.mark.parametrize(
    "text", [HEXO_BARE, "\ufeff" + HEXO_BARE.replace("\n", "\r\n")], ids=["lf", "bom-crlf"]
)
def test_hexo_yaml_without_its_opening_line_is_the_frontmatter(text: str) -> None:
    """A Hexo post whose fields have no opening "---" (Hexo 2's scaffolds wrote it so) had
    them taken as body: sent to the model, and saved as one line with no frontmatter."""
    found = split_frontmatter(text, "source/_posts/hello.md")
    assert found.format == "yaml" and found.text == text
    assert found.fields()["title"] == "Hello Hexo" and found.fields()["tags"] == ["hexo", "blog"]
    assert found.body.strip() == "This is my very first post on the new Hexo blog."
    changed = found.with_fields({"tags": ["hexo", "blog", "notes"]})
    assert changed.text == text.replace("[hexo, blog]", "[hexo, blog, notes]")
    assert split_frontmatter(text, "source/_drafts/hello.md").block == found.block
    assert split_frontmatter(text, "", hexo=True).block == found.block
    assert split_frontmatter(text, "posts/hello.md").format is None  # not a Hexo site's


@pytest.mark.parametrize(
    "text",
    [
        "Note: this post moved.\n\nIt is at the new address now.\n\n---\n\nOld text.\n",
        "Note: this post moved.\n---\n\nOld text.\n",  # no field of a post
        "title: x\nsome words\n---\n",  # not fields only
        "\ntitle: x\n---\n",
        "title: x\n\n```\n---\n",
    ],
)
def test_a_hexo_body_that_opens_like_a_field_stays_the_body(text: str) -> None:
    found = split_frontmatter(text, "source/_posts/a.md")
    assert found.format is None and found.body == text
