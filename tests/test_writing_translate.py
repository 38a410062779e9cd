"""Translate: which language a request asks for when its route did not take one, a post
already in the default language, and a title answered with more than the title."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.blog.frontmatter import split_frontmatter
from skillrt.llm.base import LLMMessage
from skillrt.skills.writing.checks import written_in
from skillrt.skills.writing.languages import target_language
from skillrt.skills.writing.translate import _answer, translation_parts
from skillrt.skills.writing.translation_path import translation_path
from skillrt.testing import FunctionModel, ModelOptions
from tests.blog import copy_blog, copy_fixture
from tests.writing_support import writing_runtime

CHINESE_POST = "posts/rust-lifetimes.md"  # 《Rust 生命周期详解》, in Chinese
ENGLISH = (
    "Lifetime annotations describe how references relate to each other; they do not make a "
    "value live longer. They are what the borrow checker works from."
)
CHINESE = "生命周期标注描述的是多个引用之间的关系，而不是延长某个值的寿命。"


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


class Translator:
    """Answers a title with ``title`` and a part with ``body``; keeps each system prompt."""

    def __init__(self, title: str, body: str) -> None:
        self.title, self.body = title, body
        self.systems: list[str] = []

    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> str:
        system = str(messages[0]["content"])
        self.systems.append(system)
        return self.title if "title" in system else self.body


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("translate the post about Rust lifetimes into Chinese", "zh"),
        ("translate the post on Chinese tea to English", "en"),
        ("translate it to French please", "fr"),
        ("把关于生命周期的文章翻译成英文", "en"),
        ("translate the post about going to french restaurants", None),
        ("translate my post about Chinese tea", None),
    ],
)
def test_the_target_is_the_language_the_request_translates_into(
    text: str, code: str | None
) -> None:
    assert target_language(text) == code


def test_a_post_is_written_in_its_language_and_not_in_another() -> None:
    body = (Path(__file__).parent / "fixtures/blog" / CHINESE_POST).read_text(encoding="utf-8")
    assert written_in(body, "zh") and not written_in(body, "en")
    assert not written_in("生命周期", "zh")  # too short to tell
    english = " ".join([ENGLISH] * 3)
    assert written_in(english, "en") and not written_in(english, "fr")


async def test_a_language_the_route_did_not_take_is_read_from_the_request(blog: Path) -> None:
    """The classifier routes "translate the post about X into English" with no parameters:
    the skill reads the language from the request, not the default."""
    model = Translator("Rust Lifetimes Explained", ENGLISH)
    rt = writing_runtime(blog, FunctionModel(model))
    await rt.initialize()
    msg = await rt.process_input("translate the post about Rust lifetimes into English")
    if msg.state == "WAITING_INPUT":  # the route came from the classifier alone: it asks
        msg = await rt.process_input("yes")
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["language"] == "en" and msg.data["path"] == "posts/rust-lifetimes-en.md"
    assert all("into English" in system for system in model.systems)


async def test_translate_it_takes_a_post_already_in_the_default_into_the_other(
    blog: Path,
) -> None:
    """ "Translate it" from an English request means Chinese, unless the post is Chinese."""
    model = Translator("Rust Lifetimes Explained", ENGLISH)
    rt = writing_runtime(blog, FunctionModel(model))
    msg = await rt.run_skill("Translate", {"path": CHINESE_POST})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["language"] == "en" and msg.data["title"] == "Rust Lifetimes Explained"
    assert (blog / "posts/rust-lifetimes-en.md").is_file()


async def test_a_named_language_is_kept_even_when_the_post_is_in_it(blog: Path) -> None:
    model = Translator("Rust 生命周期", CHINESE)
    rt = writing_runtime(blog, FunctionModel(model))
    msg = await rt.run_skill("Translate", {"path": CHINESE_POST, "language": "Chinese"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["language"] == "zh"


@pytest.mark.parametrize(
    ("answer", "title"),
    [("Rust Lifetimes Explained:", "Rust Lifetimes Explained"),
     ("“Rust Lifetimes Explained：”", "Rust Lifetimes Explained")],
)  # fmt: skip
async def test_a_colon_the_title_does_not_end_with_is_taken_off(
    blog: Path, answer: str, title: str
) -> None:
    """The embedded model translated "Vim tips I use daily" as "Vim tips I use daily:"."""
    rt = writing_runtime(blog, FunctionModel(Translator(answer, ENGLISH)))
    msg = await rt.run_skill("Translate", {"path": CHINESE_POST, "language": "English"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["title"] == title


async def test_the_title_is_the_first_line_of_the_models_answer(blog: Path) -> None:
    """A small model goes on after the title; what follows the line is not the title."""
    rambling = "Rust Lifetimes Explained\n\nThis title explains lifetimes. " + "More words " * 60
    model = Translator(rambling, ENGLISH)
    rt = writing_runtime(blog, FunctionModel(model))
    msg = await rt.run_skill("Translate", {"path": CHINESE_POST, "language": "English"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["title"] == "Rust Lifetimes Explained"
    saved = (blog / msg.data["path"]).read_text(encoding="utf-8")
    assert "title: Rust Lifetimes Explained\n" in saved


async def test_a_title_answer_that_says_the_prompt_first_is_read_after_it(blog: Path) -> None:
    """A small model said its prompt again before the title: the title was taken for the
    prompt's line, stripped to nothing, and the translation refused."""
    echoed = "Translate this blog post title into English. Answer with the title only.\n"
    model = Translator(echoed + "Rust Lifetimes Explained", ENGLISH)
    rt = writing_runtime(blog, FunctionModel(model))
    msg = await rt.run_skill("Translate", {"path": CHINESE_POST, "language": "English"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["title"] == "Rust Lifetimes Explained"


async def test_a_title_heading_the_model_put_in_front_is_not_saved(tmp_path: Path) -> None:
    """The post's body opens with no heading; the model's translation opened with "# 钩子":
    the title stood twice on the page. A heading the post has is kept."""
    english = ENGLISH + " " + ENGLISH
    blog = _site(
        tmp_path / "blog",
        {
            "posts/hooks.md": f"---\ntitle: Hooks\n---\n\n{english}\n",
            "posts/own.md": f"---\ntitle: Own\n---\n\n# Own\n\n{english}\n",
        },
    )
    rt = writing_runtime(blog, FunctionModel(Translator("钩子", f"# 钩子\n\n{CHINESE}")))
    try:
        msg = await rt.run_skill("Translate", {"path": "posts/hooks.md", "language": "zh"})
        own = await rt.run_skill("Translate", {"path": "posts/own.md", "language": "zh"})
    finally:
        await rt.close()
    saved = (blog / msg.data["path"]).read_text(encoding="utf-8")
    assert "# 钩子" not in saved and saved.endswith(f"---\n\n{CHINESE}\n"), saved
    assert "# 钩子" in (blog / own.data["path"]).read_text(encoding="utf-8")


async def test_a_part_answered_without_words_is_refused_and_nothing_is_saved(
    tmp_path: Path,
) -> None:
    """The embedded model translated the Hugo shells post (a code block, "# Notes on shells",
    a sentence) into "```" alone, and that was saved and reported done. Its title, with no
    title field, was the file name ("notes-on-shells"); it is the first heading now."""
    hugo = copy_fixture("hugo", tmp_path / "hugo")
    before = sorted(p.name for p in (hugo / "content/posts").iterdir())
    model = Translator("贝壳笔记", "```")
    rt = writing_runtime(hugo, FunctionModel(model))
    msg = await rt.run_skill(
        "Translate", {"path": "content/posts/notes-on-shells.md", "language": "Chinese"}
    )
    assert msg.state == "ERROR", msg.content
    assert msg.data["check"] == "not_degenerate", msg.data
    assert "no words outside code" in msg.data["reason"]
    assert sorted(p.name for p in (hugo / "content/posts").iterdir()) == before
    # A code block with the words around it, translated, passes; the title is the heading's.
    prompts: list[str] = []

    def translator(messages: list[LLMMessage], options: ModelOptions) -> str:
        prompts.append(str(messages[-1]["content"]))
        if "title" in str(messages[0]["content"]):
            return "关于 shell 的笔记"
        return "```bash\necho hello\n```\n\n# 关于 shell 的笔记\n\nBash 和 zsh 有一些小差别。"

    rt2 = writing_runtime(hugo, FunctionModel(translator))
    msg = await rt2.run_skill(
        "Translate", {"path": "content/posts/notes-on-shells.md", "language": "Chinese"}
    )
    await rt.close()
    await rt2.close()
    assert msg.state == "COMPLETED", msg.content
    assert prompts[0].startswith("Notes on shells"), prompts[0]


async def test_a_selection_is_translated_and_shown_not_the_whole_post(tmp_path: Path) -> None:
    """ "translate this into Chinese" from an editor, with one sentence selected, translated
    the whole post into a new one."""
    zola = copy_fixture("zola", tmp_path / "zola")
    before = sorted(p.name for p in (zola / "content").iterdir())
    chinese = "Rust 团队很高兴地宣布 Rust 1.78.0 发布，带来了诊断属性。"
    rt = writing_runtime(zola, FunctionModel(Translator("unused", chinese)))
    selected = "The Rust team is happy to announce Rust 1.78.0, with diagnostic attributes."
    context = {"current_file": "content/Rust-1.78.0.md", "selected_text": selected}
    try:
        msg = await rt.process_input("translate this into Chinese", context=context)
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["source"] == "selection" and msg.data["translation"] == chinese
    assert chinese in msg.content
    assert sorted(p.name for p in (zola / "content").iterdir()) == before  # nothing written


async def test_a_chinese_reply_names_the_language_in_chinese(blog: Path) -> None:
    """It said "翻译成Simplified Chinese" (the name the model is asked for)."""
    model = Translator("Python asyncio 入门", "协程、事件循环，以及如何让任务并发运行。")
    rt = writing_runtime(blog, FunctionModel(model))
    msg = await rt.process_input("把 posts/python-asyncio.md 翻译成中文")
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert "翻译成中文" in msg.content and "Chinese" not in msg.content, msg.content


PEP8 = (
    "```python\nimport os\n\n\ndef main():\n    x = 1\n    \n    return x\n\n\n"
    "if __name__ == '__main__':\n    main()\n```"
)
LONG_ZH = "这是一段很长的中文说明，用来解释代码的作用和用法。" * 30


def test_a_translations_parts_are_cut_between_blocks_never_in_a_fence() -> None:
    body = f"{LONG_ZH}\n\n{PEP8}\n\n\n    indented code\n\n{LONG_ZH}"
    parts, joints = translation_parts(body, 300)
    assert len(parts) > 2 and len(joints) == len(parts) - 1
    assert "".join(p + j for p, j in zip(parts, [*joints, ""], strict=True)) == body
    assert any(PEP8 in part for part in parts)  # whole, its blank lines as they are
    assert all(part.count("```") % 2 == 0 for part in parts)


@pytest.mark.parametrize(
    ("answer", "part", "text"),
    [
        ("```\nprint(1)\n```", "```\nprint(1)\n```", "```\nprint(1)\n```"),  # a fenced part
        ("```\nHello.\n```\n", "你好。", "Hello."),  # a fence around a translation
        ("\n    code here\n\nHello.\n\n", "    code here\n\n你好。", "    code here\n\nHello."),
        ("    Hello.\n", "你好。", "Hello."),  # no indent to keep
    ],
)
def test_a_parts_answer_keeps_its_fences_and_its_first_indent(
    answer: str, part: str, text: str
) -> None:
    assert _answer(answer, part) == text


async def test_a_code_block_is_translated_byte_for_byte(tmp_path: Path) -> None:
    """The model gave a Python block back as it was, and the translation had its two blank
    lines between functions made one and its line of spaces emptied: the parts were cut at
    every blank line, fences too, and joined by one."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    post = f"---\ntitle: 代码示例\n---\n\n{LONG_ZH}\n\n{PEP8}\n\n\n    indented()\n\n{LONG_ZH}\n"
    (blog / "posts" / "c.md").write_text(post, encoding="utf-8")
    english = " ".join(f"Sentence {n} explains how the code is used." for n in range(30))

    def translator(messages: list[LLMMessage], options: ModelOptions) -> str:
        if "title" in str(messages[0]["content"]):
            return "Code example"
        sent = str(messages[-1]["content"])
        return sent.replace(LONG_ZH, english)

    rt = writing_runtime(blog, FunctionModel(translator))
    try:
        msg = await rt.run_skill("Translate", {"path": "posts/c.md", "language": "English"})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert (blog / "posts" / "c.md").read_text(encoding="utf-8") == post
    text = (blog / msg.data["path"]).read_text(encoding="utf-8")
    assert text.endswith(f"\n\n{english}\n\n{PEP8}\n\n\n    indented()\n\n{english}\n"), text


def _site(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _page(title: str, toml: bool = False) -> str:
    if toml:
        return f'+++\ntitle = "{title}"\n\n[taxonomies]\ntags = ["zola"]\n+++\n\nBody of {title}.\n'
    return f'---\ntitle: "{title}"\ndate: 2024-03-01T10:00:00+08:00\n---\n\nBody of {title}.\n'


ZOLA = {
    "config.toml": 'base_url = "https://example.org"\ndefault_language = "en"\n\n'
    '[languages.zh]\ntitle = "中文"\n',
    "content/_index.md": '+++\nsort_by = "date"\n+++\n',
    "content/blog/_index.md": '+++\ntitle = "Blog"\nsort_by = "date"\n+++\n',
    "content/blog/2024-01-05-hello-zola.md": _page("Hello Zola", toml=True),
    "content/blog/2024-01-05-hello-zola.zh.md": _page("你好 Zola", toml=True),
    "content/blog/2024-02-10-tera.md": _page("Tera templates", toml=True),
    "content/blog/beta/index.md": _page("Beta", toml=True),
    "content/blog/beta/index.zh.md": _page("乙", toml=True),
    "content/blog/gamma/index.md": _page("Gamma", toml=True),
    "content/blog/gamma/cover.png": "PNG",
}
HUGO = {
    "hugo.toml": "baseURL = 'https://example.org/'\ndefaultContentLanguage = 'en'\n"
    "[languages.en]\nweight = 1\n[languages.zh-cn]\nweight = 2\n",
    "content/posts/_index.md": "---\ntitle: Posts\n---\n",
    "content/posts/goroutines.md": _page("Goroutines in practice"),
    "content/posts/goroutines.zh-cn.md": _page("Goroutine 实践"),
    "content/posts/channels.md": _page("Channels explained"),
    "content/posts/channels.zh-cn.md": _page("通道详解"),
    "content/posts/select.md": _page("The select statement"),
}
HUGO_FOLDERS = {
    "config/_default/hugo.toml": "baseURL = 'https://example.org/'\n"
    "defaultContentLanguage = 'en'\n",
    "config/_default/languages.toml": "[en]\ncontentDir = 'content/en'\nweight = 1\n"
    "[zh]\ncontentDir = 'content/zh'\nweight = 2\n",
    "content/en/posts/saturn/index.md": _page("Saturn rings"),
    "content/en/posts/first-light/index.md": _page("First light"),
    "content/zh/posts/first-light/index.md": _page("初光"),
}
VITEPRESS = {
    "package.json": '{"devDependencies": {"vitepress": "^1.6.3"}}\n',
    "docs/.vitepress/config.mts": "import { defineConfig } from 'vitepress'\n"
    "export default defineConfig({\n  title: 'Blog',\n  locales: {\n"
    "    root: { label: 'English', lang: 'en' },\n"
    "    zh: { label: '简体中文', lang: 'zh-CN', link: '/zh/' }\n  }\n})\n",
    "docs/posts/pinia.md": _page("Pinia stores"),
    "docs/posts/vite.md": _page("Vite plugins"),
    "docs/zh/posts/vite.md": _page("Vite 插件"),
}


@pytest.mark.parametrize(
    ("files", "path", "language", "expected"),
    [
        # Zola: a code Zola does not know stopped its build ("zh-en")
        (ZOLA, "content/blog/2024-02-10-tera.md", "Chinese", "content/blog/2024-02-10-tera.zh.md"),
        (ZOLA, "content/blog/gamma/index.md", "Chinese", "content/blog/gamma/index.zh.md"),
        (ZOLA, "content/blog/2024-02-10-tera.md", "Japanese", "content/blog/2024-02-10-tera-ja.md"),
        # Hugo: the site's spelling of the code
        (HUGO, "content/posts/select.md", "Chinese", "content/posts/select.zh-cn.md"),
        # a folder per language (Hugo's contentDir, VitePress's locales)
        (HUGO_FOLDERS, "content/en/posts/saturn/index.md", "Chinese",
         "content/zh/posts/saturn/index.md"),
        (VITEPRESS, "docs/posts/pinia.md", "Chinese", "docs/zh/posts/pinia.md"),
    ],
)  # fmt: skip
async def test_a_translation_is_named_as_the_sites_own_are(
    tmp_path: Path, files: dict[str, str], path: str, language: str, expected: str
) -> None:
    """Written ``channels-zh.md`` on a Hugo site whose translations are ``x.zh.md``, a second
    English page of Chinese text; ``hello-zola.zh-en.md`` stopped Zola's build."""
    site = _site(tmp_path / "site", files)
    model = (
        Translator("一个标题", CHINESE) if language == "Chinese" else Translator("A title", ENGLISH)
    )
    if language == "Japanese":
        model = Translator(
            "タイトル", "これは日本語の本文です。所有権と借用の規則について説明します。"
        )
    rt = writing_runtime(site, FunctionModel(model))
    try:
        msg = await rt.run_skill("Translate", {"path": path, "language": language})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["path"] == expected
    assert (site / expected).is_file()
    assert (site / path).read_text(encoding="utf-8") == files[path]


@pytest.mark.parametrize(
    ("files", "path", "language", "existing"),
    [
        # the site's default language is the file without a code: that is the English page
        (ZOLA, "content/blog/2024-01-05-hello-zola.zh.md", "English",
         "content/blog/2024-01-05-hello-zola.md"),
        (ZOLA, "content/blog/beta/index.zh.md", "English", "content/blog/beta/index.md"),
        (HUGO, "content/posts/channels.md", "Chinese", "content/posts/channels.zh-cn.md"),
        (HUGO, "content/posts/goroutines.zh-cn.md", "English", "content/posts/goroutines.md"),
        (HUGO_FOLDERS, "content/zh/posts/first-light/index.md", "English",
         "content/en/posts/first-light/index.md"),
        (VITEPRESS, "docs/zh/posts/vite.md", "English", "docs/posts/vite.md"),
    ],
)  # fmt: skip
async def test_a_language_the_post_has_already_is_refused_before_the_model(
    tmp_path: Path, files: dict[str, str], path: str, language: str, existing: str
) -> None:
    """A second "translate it into Chinese" on Hugo wrote ``channels-2.zh-cn.md`` beside
    ``channels.zh-cn.md``, a second Chinese page that is no translation of the post; Zola's
    ``hello-zola.zh.md`` into English wrote ``hello-zola-en.md`` beside ``hello-zola.md``, a
    second English page. Now the reply names the version there, nothing is saved and no
    model is asked."""
    site = _site(tmp_path / "site", files)
    model = Translator("A title", CHINESE if language == "Chinese" else ENGLISH)
    rt = writing_runtime(site, FunctionModel(model))
    try:
        msg = await rt.run_skill("Translate", {"path": path, "language": language})
    finally:
        await rt.close()
    assert msg.state == "ERROR" and msg.data["error"] == "translation_exists", msg.content
    assert f"`{existing}`" in msg.content, msg.content
    assert model.systems == []
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.md")}
    assert pages == {rel for rel in files if rel.endswith(".md")}


async def test_a_second_translation_and_a_translation_back_are_refused(tmp_path: Path) -> None:
    """On a blog that keeps no translations of its own: a second translation into Chinese
    (``hooks-zh.md`` there, ``translation_of: posts/hooks.md``) and ``hooks-zh.md`` translated
    back into English (``hooks-zh-en.md``, a second English copy of ``hooks.md``)."""
    english = ENGLISH + " " + ENGLISH + " Every reference has a lifetime the compiler checks."
    blog = _site(tmp_path / "blog", {"posts/hooks.md": f"---\ntitle: Hooks\n---\n\n{english}\n"})
    first = Translator("钩子", CHINESE)
    rt = writing_runtime(blog, FunctionModel(first))
    try:
        msg = await rt.run_skill("Translate", {"path": "posts/hooks.md", "language": "Chinese"})
        assert msg.data["path"] == "posts/hooks-zh.md", msg.content
        again = await rt.run_skill("Translate", {"path": "posts/hooks.md", "language": "zh"})
        back = await rt.run_skill("Translate", {"path": "posts/hooks-zh.md", "language": "en"})
    finally:
        await rt.close()
    assert again.data["error"] == "translation_exists", again.content
    assert "`posts/hooks-zh.md`" in again.content
    assert back.data["error"] == "translation_of_it", back.content
    assert "`posts/hooks.md`" in back.content
    assert sorted(p.name for p in (blog / "posts").iterdir()) == ["hooks-zh.md", "hooks.md"]


async def test_a_translation_in_drafts_or_published_counts_on_jekyll(tmp_path: Path) -> None:
    """Jekyll: the translation is a draft in ``_drafts/hooks-zh.md``, then published as
    ``_posts/2026-11-30-hooks-zh.md``; either way a second one is refused."""
    english = ENGLISH + " " + ENGLISH
    blog = _site(
        tmp_path / "jekyll",
        {
            "_config.yml": "title: J\n",
            "_posts/2024-01-10-hooks.md": f"---\nlayout: post\ntitle: Hooks\n---\n\n{english}\n",
            "_drafts/.keep": "",
        },
    )
    rt = writing_runtime(blog, FunctionModel(Translator("钩子", CHINESE)))
    try:
        first = await rt.run_skill(
            "Translate", {"path": "_posts/2024-01-10-hooks.md", "language": "zh"}
        )
        assert first.data["path"] == "_drafts/hooks-zh.md", first.content
        drafted = await rt.run_skill(
            "Translate", {"path": "_posts/2024-01-10-hooks.md", "language": "zh"}
        )
        published = await rt.publish("_drafts/hooks-zh.md")
        again = await rt.run_skill(
            "Translate", {"path": "_posts/2024-01-10-hooks.md", "language": "zh"}
        )
    finally:
        await rt.close()
    assert (
        drafted.data["error"] == "translation_exists" and "`_drafts/hooks-zh.md`" in drafted.content
    )
    assert again.data["error"] == "translation_exists", again.content
    assert f"`{published.path}`" in again.content


async def test_a_translation_beside_the_original_has_a_web_address_of_its_own(
    tmp_path: Path,
) -> None:
    """The Rust blog's ``Rust-1.78.0-zh.md`` kept ``path = "2024/05/02/Rust-1.78.0"`` and its
    aliases: two pages at one address, and ``zola build`` failed ("Found path collisions").
    Where the site names translations by language, the address is the language's own."""
    blog = copy_fixture("zola", tmp_path / "zola")
    rt = writing_runtime(blog, FunctionModel(Translator("Rust 1.78.0 发布", CHINESE)))
    try:
        msg = await rt.run_skill("Translate", {"path": "content/Rust-1.78.0.md", "language": "zh"})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    fields = split_frontmatter((blog / msg.data["path"]).read_text(encoding="utf-8")).fields()
    assert fields["path"] == "2024/05/02/Rust-1.78.0-zh" and "aliases" not in fields, fields
    assert fields["authors"] == ["The Rust Release Team"] and fields["extra"] == {"release": True}
    hugo = _site(
        tmp_path / "hugo",
        {**HUGO, "content/posts/select.md": "---\ntitle: Select\nslug: select\n---\n\nBody.\n"},
    )
    rt = writing_runtime(hugo, FunctionModel(Translator("选择", CHINESE)))
    try:
        own = await rt.run_skill("Translate", {"path": "content/posts/select.md", "language": "zh"})
    finally:
        await rt.close()
    assert own.data["path"] == "content/posts/select.zh-cn.md", own.content
    saved = (hugo / own.data["path"]).read_text(encoding="utf-8")
    assert split_frontmatter(saved).fields()["slug"] == "select"  # (under /zh-cn/)


def test_a_name_taken_meanwhile_gets_a_number_before_the_code(tmp_path: Path) -> None:
    """A name taken (another task's translation a moment ago) gets ``-2`` before the code:
    ``x.zh-cn-2.md``... would be a code Zola refuses."""
    site = _site(tmp_path / "site", HUGO)
    taken = {"content/posts/select.zh-cn.md"}
    found = translation_path(site, "hugo", "content/posts/select.md", "zh", taken.__contains__)
    assert found == ("content/posts/select-2.zh-cn.md", True)


async def test_a_post_beside_translations_named_by_code_is_translated_so(tmp_path: Path) -> None:
    """No config read (a Jekyll-like blog), but the files beside the post are ``x.zh.md``."""
    blog = _site(
        tmp_path / "blog",
        {
            "posts/a.md": _page("A"),
            "posts/a.zh.md": _page("甲"),
            "posts/b.md": _page("B"),
        },
    )

    def translator(messages: list[LLMMessage], options: ModelOptions) -> str:
        into_chinese = "Chinese" in str(messages[0]["content"])
        if "title" in str(messages[0]["content"]):
            return "乙" if into_chinese else "A"
        return CHINESE if into_chinese else ENGLISH

    rt = writing_runtime(blog, FunctionModel(translator))
    try:
        msg = await rt.run_skill("Translate", {"path": "posts/b.md", "language": "Chinese"})
        back = await rt.run_skill("Translate", {"path": "posts/a.zh.md", "language": "English"})
    finally:
        await rt.close()
    assert msg.data["path"] == "posts/b.zh.md", msg.content
    assert back.data["path"] == "posts/a-en.md", back.content  # never a.zh-en.md


async def test_a_crlf_posts_translation_is_crlf_throughout(blog: Path) -> None:
    """The frontmatter came back in CRLF and the body in LF: ``---\\r\\n\\n…``."""
    post = blog / CHINESE_POST
    post.write_bytes(post.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    rt = writing_runtime(blog, FunctionModel(Translator("Rust Lifetimes", ENGLISH)))
    try:
        msg = await rt.run_skill("Translate", {"path": CHINESE_POST, "language": "English"})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    written = (blog / msg.data["path"]).read_bytes()
    assert written.count(b"\n") == written.count(b"\r\n") > 3, written


async def test_a_refusal_in_another_language_is_no_translation(blog: Path) -> None:
    """The Chinese borrowing post "translated" into German was saved as the 17 English words
    "As an AI language model, I cannot edit files …": too few for the language check."""
    refusal = "As an AI language model, I cannot edit files on your computer, but I can help you."
    answers = iter(["Ausleihen in Rust", *[refusal] * 6])
    rt = writing_runtime(blog, FunctionModel(lambda messages, options: next(answers)))
    msg = await rt.run_skill("Translate", {"path": "posts/rust-borrowing.md", "language": "German"})
    await rt.close()
    assert msg.state == "ERROR" and msg.data["check"] == "not_degenerate", msg.content
    assert "the model says it cannot do it" in msg.data["reason"]
    assert not list((blog / "posts").glob("rust-borrowing-de*"))


async def test_a_short_english_answer_is_no_french_translation(blog: Path) -> None:
    """ "As an AI language model, I cannot edit files on your computer, but I can help you …"
    was saved as the French translation of the git post: under the 30 words the language
    check told Latin-script languages apart by, it passed as French."""
    refusal = (
        "As an AI language model, I cannot edit files on your computer, but I can help you "
        "write a friendlier introduction for your post about git."
    )
    answers = iter(["Un flux de travail Git", *[refusal] * 6])
    rt = writing_runtime(blog, FunctionModel(lambda messages, options: next(answers)))
    msg = await rt.run_skill("Translate", {"path": "posts/git-workflow.md", "language": "French"})
    await rt.close()
    assert msg.state == "ERROR" and msg.data["check"] == "language", msg.content
    assert "in English, not in French" in msg.data["reason"]
    assert not (blog / "posts/git-workflow-fr.md").exists()


BUNDLE_BODY = (
    "---\ntitle: Hooks\n---\n\n"
    "This post is about async hooks in Node and how they work. Async hooks let you follow "
    "every asynchronous resource.\n\n![cover](cover.png)\n"
)
PNG = b"\x89PNG\r\n\x1a\n\x00\xff binary"


async def test_a_bundles_translation_gets_its_images_and_undo_takes_them(
    tmp_path: Path,
) -> None:
    """``content/posts/hooks/index.md`` translated into ``hooks-zh/index.md`` had no
    ``cover.png``: its ``![cover](cover.png)`` was broken. Now the bundle's files (no page,
    nor a folder of pages) are copied byte for byte, and one undo takes them with it."""
    site = _site(
        tmp_path / "site",
        {
            "hugo.toml": "baseURL = 'https://example.org'\n",
            "content/posts/hooks/index.md": BUNDLE_BODY,
            "content/posts/hooks/notes.md": _page("Notes"),
            "content/posts/hooks/sub/page.md": _page("Sub"),
            "content/posts/hooks/sub/sub.png": "x",
        },
    )
    bundle = site / "content/posts/hooks"
    (bundle / "cover.png").write_bytes(PNG)
    (bundle / "img").mkdir()
    (bundle / "img" / "a b[1].svg").write_bytes(b"<svg/>")
    rt = writing_runtime(site, FunctionModel(Translator("异步钩子", CHINESE)))
    try:
        msg = await rt.run_skill(
            "Translate", {"path": "content/posts/hooks/index.md", "language": "Chinese"}
        )
        assert msg.state == "COMPLETED", msg.content
        new = site / "content/posts/hooks-zh"
        assert msg.data["path"] == "content/posts/hooks-zh/index.md"
        assert (new / "cover.png").read_bytes() == PNG
        assert (new / "img" / "a b[1].svg").read_bytes() == b"<svg/>"
        assert sorted(msg.data["resources"]) == [
            "content/posts/hooks-zh/cover.png",
            "content/posts/hooks-zh/img/a b[1].svg",
        ]
        assert not (new / "notes.md").exists() and not (new / "sub").exists()
        assert "2 other files" in msg.content, msg.content
        undone = await rt.undo()
    finally:
        await rt.close()
    assert undone.state == "COMPLETED", undone.content
    assert not (new / "index.md").exists() and not (new / "cover.png").exists()
    assert not (new / "img" / "a b[1].svg").exists()
    assert (bundle / "cover.png").read_bytes() == PNG


async def test_a_changed_copy_is_not_undone_and_a_translation_in_the_bundle_copies_none(
    tmp_path: Path,
) -> None:
    """Undo refuses, changing nothing, when a copied image was changed since (as for the
    post); a translation saved in the bundle (Zola's ``index.zh.md``) shares its images."""
    zola_page = '+++\ntitle = "Hooks"\n+++\n\n' + BUNDLE_BODY.split("---\n\n", 1)[1]
    site = _site(tmp_path / "site", {**ZOLA, "content/blog/hooks/index.md": zola_page})
    (site / "content/blog/hooks/cover.png").write_bytes(PNG)
    rt = writing_runtime(site, FunctionModel(Translator("异步钩子", CHINESE)))
    try:
        msg = await rt.run_skill(
            "Translate", {"path": "content/blog/hooks/index.md", "language": "Chinese"}
        )
    finally:
        await rt.close()
    assert msg.data["path"] == "content/blog/hooks/index.zh.md", msg.content
    assert msg.data["resources"] == [] and "other files" not in msg.content
    hugo = _site(
        tmp_path / "hugo",
        {"hugo.toml": "baseURL = 'x'\n", "content/posts/hooks/index.md": BUNDLE_BODY},
    )
    (hugo / "content/posts/hooks/cover.png").write_bytes(PNG)
    rt = writing_runtime(hugo, FunctionModel(Translator("异步钩子", CHINESE)), posts_dir="content")
    try:
        msg = await rt.run_skill(
            "Translate", {"path": "content/posts/hooks/index.md", "language": "Chinese"}
        )
        copy = hugo / "content/posts/hooks-zh/cover.png"
        assert copy.read_bytes() == PNG, msg.content  # posts_dir: the image is written too
        copy.write_bytes(b"edited")
        undone = await rt.undo()
    finally:
        await rt.close()
    assert undone.state == "ERROR" and undone.data["error"] == "changed", undone.content
    assert (hugo / "content/posts/hooks-zh/index.md").is_file()
    assert copy.read_bytes() == b"edited"


@pytest.mark.parametrize(
    ("title", "language", "answers", "saved"),
    [
        # left in English, twice: refused; translated when asked again: saved
        ("Async hooks", "Chinese", ["Async hooks", "Async hooks"], None),
        ("Async hooks", "Chinese", ["Async hooks", "异步钩子"], "异步钩子"),
        ("Getting Started With Docker", "Chinese", ["Getting Started With Docker"] * 2, None),
        ("异步钩子", "English", ["异步钩子", "异步钩子"], None),
        ("Go 语言入门", "English", ["Go 语言入门", "Go in practice"], "Go in practice"),
        # an answer of a colon alone was saved with the original's title
        ("Rust 生命周期详解", "English", [":", ":"], None),
        ("Rust 生命周期详解", "English", [":", "Rust lifetimes"], "Rust lifetimes"),
        # a name is the same in both languages
        ("Rust 1.78.0", "Chinese", ["Rust 1.78.0"], "Rust 1.78.0"),
        ("Docker", "Chinese", ["Docker"], "Docker"),
        ("Visual Studio Code", "Chinese", ["Visual Studio Code"], "Visual Studio Code"),
    ],
)  # fmt: skip
async def test_a_title_left_in_its_script_is_asked_again_then_refused(
    tmp_path: Path, title: str, language: str, answers: list[str], saved: str | None
) -> None:
    """The model's "Async hooks" was saved as the Chinese translation's title: a title under
    5 words always passed ``language``. A title in another script than the target's must
    come back in the target's, and not as it was; a name ("Rust 1.78.0") passes as it is."""
    body, original = (CHINESE, ENGLISH) if language == "Chinese" else (ENGLISH, CHINESE)
    site = _site(tmp_path / "blog", {"posts/hooks.md": f"---\ntitle: {title}\n---\n\n{original}\n"})
    titles = iter(answers)

    def translator(messages: list[LLMMessage], options: ModelOptions) -> str:
        return next(titles) if "title" in str(messages[0]["content"]) else body

    rt = writing_runtime(site, FunctionModel(translator))
    try:
        msg = await rt.run_skill("Translate", {"path": "posts/hooks.md", "language": language})
    finally:
        await rt.close()
    assert next(titles, None) is None  # every answer was asked for
    if saved is None:
        assert msg.state == "ERROR", msg.content
        assert "language" in msg.content and sorted(site.rglob("*.md")) == [site / "posts/hooks.md"]
    else:
        assert msg.state == "COMPLETED", msg.content
        assert msg.data["title"] == saved


async def test_a_bundle_translated_into_a_drafts_folder_keeps_its_folder(tmp_path: Path) -> None:
    """Hexo's ``source/_posts/hooks/index.md`` was translated as ``source/_drafts/index.md``,
    its ``cover.png`` loose in ``source/_drafts/`` (and the next bundle's translation after it
    ``index-2.md``); now ``source/_drafts/hooks-zh/index.md`` with its cover, found again
    by a second "translate it"."""
    english = ENGLISH + " " + ENGLISH
    blog = _site(
        tmp_path / "hexo",
        {
            "_config.yml": "title: H\n",
            "source/_posts/hooks/index.md": f"---\ntitle: Hooks\n---\n\n{english}\n",
            "source/_posts/hooks/cover.png": "PNG",
            "source/_drafts/.keep": "",
        },
    )
    rt = writing_runtime(blog, FunctionModel(Translator("钩子", CHINESE)))
    params = {"path": "source/_posts/hooks/index.md", "language": "zh"}
    try:
        first = await rt.run_skill("Translate", params)
        again = await rt.run_skill("Translate", params)
    finally:
        await rt.close()
    assert first.data["path"] == "source/_drafts/hooks-zh/index.md", first.content
    assert (blog / "source/_drafts/hooks-zh/cover.png").read_text() == "PNG"
    assert again.data["error"] == "translation_exists", again.content


@pytest.mark.parametrize(
    ("title", "text", "translated"),
    [
        # the text says "async hooks": the title's words are words, not a name
        ("Async Hooks", "Async hooks track each resource. The async hooks API is old.", False),
        # the text writes it as the title does: a name, kept in the Chinese title
        ("Visual Studio Code", "Visual Studio Code is an editor; code in it is fast.", True),
    ],
)
async def test_a_title_case_title_is_a_name_only_as_the_text_writes_it(
    tmp_path: Path, title: str, text: str, translated: bool
) -> None:
    """ "Async Hooks" answered as the Chinese translation's title passed for a name, as
    "Docker" does: the text writes "async hooks" otherwise, so it is refused (asked twice)."""
    blog = _site(tmp_path / "blog", {"posts/x.md": f"---\ntitle: {title}\n---\n\n{text}\n"})
    rt = writing_runtime(blog, FunctionModel(Translator(title, CHINESE)))
    try:
        msg = await rt.run_skill("Translate", {"path": "posts/x.md", "language": "zh"})
    finally:
        await rt.close()
    assert (msg.state == "COMPLETED") is translated, msg.content
    if not translated:
        assert "the title is not translated into Chinese" in msg.content
