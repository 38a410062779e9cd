"""Build the router's labelled set, data/routing/labelled.tsv, from each intent's examples.

    python scripts/make_routing_data.py        # rewrites data/routing/labelled.tsv

Each intent's declared examples (its section of config/intents.toml), the routing samples and
the rows of tests/data/routing_eval.tsv are the seeds; templates written here vary them:
wording, politeness, typos and homophones, mixed Chinese and English, pasted code, questions
about an action, negations, and follow-ups with a post in focus. The held-out split is made of
whole templates and topics that the training split never sees (and the evaluation set's own
held rows), so its figure is about phrasing the model was not trained on. Deterministic: the
same file comes out every time.
"""

from __future__ import annotations

import random
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "routing" / "labelled.tsv"

TOPICS_EN = [
    "Rust ownership",
    "async Python",
    "WebGPU",
    "vector databases",
    "Kubernetes operators",
    "SQLite for small web apps",
    "remote work",
    "burnout",
    "Go generics",
    "CRDTs",
    "home-made bread",
    "the Raft consensus algorithm",
    "minimalism",
    "Nix flakes",
    "learning Japanese",
    "static site generators",
    "TypeScript enums",
    "caching strategies",
    "my trip to Lisbon",
    "mechanical keyboards",
    "code review etiquette",
    "feature flags",
    "the history of Unix",
    "running a marathon",
    "personal finance",
    "Zig comptime",
    "htmx",
    "event sourcing",
    "GraphQL pagination",
    "the CAP theorem",
    "WebAssembly",
    "Docker layer caching",
    "Emacs vs Vim",
    "open source licensing",
    "sleep and productivity",
    "PostgreSQL vacuum",
    "React server components",
    "the Elm architecture",
    "Bun",
    "Deno",
]
TOPICS_ZH = [
    "Rust 所有权",
    "异步编程",
    "分布式锁",
    "向量数据库",
    "Kubernetes 网络",
    "远程办公",
    "读书笔记",
    "极简主义",
    "时间管理",
    "Go 泛型",
    "缓存",
    "微服务拆分",
    "家庭理财",
    "咖啡冲煮",
    "跑步",
    "Vim 插件",
    "SQLite",
    "前端性能优化",
    "技术写作",
    "副业",
    "大模型推理",
    "数据库索引",
    "代码评审",
    "单元测试",
    "开源协议",
    "躺平",
    "内卷",
    "Docker 镜像",
    "Linux 桌面",
    "旅行攻略",
    "装修",
    "学日语",
    "TCP 拥塞控制",
    "CAP 定理",
    "事件溯源",
    "WebAssembly",
    "Tailwind CSS",
    "Nginx 配置",
    "播客",
    "年度总结",
]
PATHS = [
    "posts/rust.md",
    "posts/go-generics.md",
    "posts/2024/recap.md",
    "posts/draft.md",
    "posts/notes/cache.md",
    "posts/life.md",
    "posts/old-laptop.md",
    "posts/vim-config.md",
    "blog/hello-world.md",
    "content/posts/raft.md",
    "posts/travel/lisbon.md",
    "posts/tea.md",
]
URLS = [
    "https://example.com",
    "github.com/trending",
    "https://news.ycombinator.com",
    "https://pypi.org/project/httpx",
    "docs.python.org",
    "https://example.org/pricing",
]
LANGS_EN = ["English", "French", "Japanese", "German", "Chinese", "Spanish", "Korean"]
LANGS_ZH = ["英文", "日文", "法语", "繁体中文", "德语", "韩语", "英语"]
TITLES = ["Reading List", "Weekend Notes", "2025 Plans", "读书笔记", "周报", "Trip Log", "面试复盘"]
ERRORS = [
    "TypeError: 'NoneType' object is not subscriptable",
    "KeyError: 'id'",
    "panic: runtime error: index out of range",
    "Segmentation fault (core dumped)",
    "ReferenceError: x is not defined",
    "error[E0502]: cannot borrow `v` as mutable",
]
CODE = [
    "def add(a, b): return a + b",
    "const xs = items.map((x) => x * 2);",
    'fn main() { println!("hi"); }',
    "SELECT id, count(*) FROM posts GROUP BY id;",
    "for i in range(10): print(i)",
    "if (!user) { throw new Error('no user'); }",
    "grep -rn TODO . | wc -l",
    "^(?:\\d{3}-)?\\d{4}$",
    "x = [a for a in b if a]",
    "func (s *Server) Run() error { return nil }",
]

# Templates: {t} a topic, {p} a path, {u} a URL, {l} a language, {n} a title, {c} code.
# Each intent's list is split: the last ``HELD_EVERY``th templates are held out.
EN: dict[str, list[str]] = {
    "WRITE_ARTICLE": [
        "write an article about {t}",
        "write a blog post on {t}",
        "draft a post about {t}",
        "I want a new article on {t}",
        "compose an essay about {t}",
        "write up {t} for the blog",
        "can you write a tutorial on {t}",
        "put together a long-form piece about {t}",
        "write a short post introducing {t}",
        "blog about {t}",
        "an article on {t}, please",
        "write me something for the blog about {t}",
        "do a write-up on {t}",
        "create an article about {t}",
        "author a guide to {t}",
        "I need a post explaining {t}",
        "generate a blog article covering {t}",
        # Pass 1 (after round 1).
        "could you pen a piece on {t}",
        "I'd love a blog article about {t}",
        "produce a write-up on {t}",
        "write about {t} for my readers",
        "a new post on {t} would be great, write it",
        "write a beginner's guide to {t}",
        "publish a post about {t}",
        "draft a blog entry on {t}",
        # Pass 4 (after round 4).
        "let's have a post about {t}",
        "a new article on {t}, go ahead and write it",
    ],
    "CREATE_ARTICLE": [
        "create a new post titled {n}",
        "make an empty article called {n}",
        "new post: {n}",
        "start a blank draft named {n}",
        "add an empty post with the title {n}",
        "create a blank article {n}, I'll write it myself",
        "open a new empty file for a post {n}",
        "create an empty post",
        "make a new blank article",
        "set up an empty draft titled {n}",
        # Pass 3: a new post with no title yet (docs/cli.md's example).
        "create a new article",
        "create a new post",
        "start a new post",
        "new article please",
        "add a new post",
        "make a new article",
    ],
    "DELETE_ARTICLE": [
        "delete {p}",
        "remove the post {p}",
        "trash {p}",
        "get rid of {p}",
        "please delete the article {p}",
        "throw away {p}",
        "erase {p} from the blog",
        "delete this post",
        "I no longer need {p}, delete it",
        "discard the draft {p}",
        "remove the article titled {n}",
        "move {p} to the trash",
    ],
    "EDIT_CONTENT": [
        "edit {p} to be more concise",
        "fix the typos in {p}",
        "polish the intro of {p}",
        "rewrite the conclusion of {p}",
        "make {p} sound friendlier",
        "shorten {p}",
        "add a section about {t} to {p}",
        "proofread {p}",
        "rephrase the first paragraph of {p}",
        "change the title of {p}",
        "tighten the wording in {p}",
        "replace foo with bar in {p}",
        "improve the flow of {p}",
        "update the date in {p}",
        "cut the second section of {p}",
    ],
    "SUMMARIZE": [
        "summarize {p}",
        "give me a summary of {p}",
        "tl;dr {p}",
        "what are the key points of {p}",
        "recap {p} in three bullets",
        "sum up {p}",
        "the gist of {p}, please",
        "what is {p} about",
        "condense {p} into a paragraph",
        "an overview of {p}",
        "summarise this post",
        "list the takeaways of {p}",
    ],
    "ANSWER_QUESTION": [
        "what is {t}?",
        "how does {t} work",
        "what did I write about {t}?",
        "have I written about {t}?",
        "did I ever post about {t}",
        "which of my posts mention {t}",
        "what's my take on {t} according to my blog",
        "explain the difference between {t} and {t2}",
        "why do my posts say {t} is overrated",
        "is {t} better than {t2}?",
        "how do I write a good post about {t}?",
        "do I have an article on {t}?",
        "what does my blog say about {t}",
        "where did I mention {t}",
        "tell me what I concluded about {t}",
        "how should I structure an article on {t}?",
        "when did I write about {t}?",
        "what are the downsides of {t}",
    ],
    "CODE_EXPLAIN": [
        "explain this code: {c}",
        "what does this do? {c}",
        "walk me through this snippet {c}",
        "why does this fail: {c}",
        "what does `{c}` mean",
        "can you explain {c}",
        "explain this function\n{c}",
        "how does this work:\n{c}",
        "what is this regex doing {c}",
        # Pass 1 (after round 1).
        "what does `{c}` do",
        "why am I getting {e}",
        "what does this error mean: {e}",
        "explain this shell command: {c}",
        "what does this line do {c}",
        "i got {e}, what's wrong",
        "explain the regex {c}",
        # Pass 4 (after round 4).
        "explain what `{c}` does here",
        "what is `{c}` doing",
    ],
    "UPDATE_GRAPH": [
        "update the knowledge graph",
        "rebuild the index",
        "refresh the backlinks",
        "reindex my blog",
        "regenerate the wiki links",
        "update the graph and the index",
        "recompute links between posts",
        "rebuild the knowledge graph please",
        "the index is stale, refresh it",
    ],
    "RESEARCH_WEB": [
        "research {t} on the web",
        "search online for {t}",
        "look up the latest on {t}",
        "google {t}",
        "find recent articles about {t}",
        "what's the latest news on {t}",
        "dig up sources about {t}",
        "search the internet for {t}",
        "find out online how people use {t}",
        "do some web research on {t}",
        "check the web for {t} benchmarks",
        "look online for {t}",
        # Pass 4 (after round 4).
        "look for the latest articles on {t} online",
        "find recent news about {t}",
    ],
    "BROWSE": [
        "open {u} and find the price",
        "go to {u} and check the latest version",
        "swing by {u} and see what's new",
        "on {u} click the login button",
        "open {u} and read the top story",
        "browse to {u} and tell me what's there",
        "navigate to {u} and search for {t}",
        "use the browser to open {u}",
    ],
    "TRANSLATE": [
        "translate {p} into {l}",
        "make a {l} version of {p}",
        "translate this post to {l}",
        "render {p} in {l}",
        "can you translate {p} to {l}",
        "translate it into {l}",
        "I need {p} in {l}",
        "produce a {l} translation of {p}",
    ],
    "CHAT": [
        "hello",
        "hi there",
        "thanks",
        "thank you so much",
        "thanks, that's exactly what I needed",
        "good morning",
        "bye",
        "see you tomorrow",
        "who are you",
        "how are you",
        "you're great",
        "lol",
        "nice, thanks",
        "that's all for now",
        "cool, thank you",
        "what can you do",
        "never mind",
        "ok thanks, bye",
        "appreciate it",
        "why?",
        "what do you mean?",
        "haha nice",
        "good night",
        "great job",
        # Pass 1 (after round 1).
        "how's it going",
        "hey there",
        "you rock",
        "thanks, exactly what I wanted",
        "cheers mate",
        "that helped a lot, thanks",
        "morning!",
        "what's up",
        "that's it for today",
        "great, thanks a bunch",
        # Pass 4 (after round 4).
        "haha, that's hilarious",
        "what kinds of things can you help with",
    ],
}
ZH: dict[str, list[str]] = {
    "WRITE_ARTICLE": [
        "写一篇关于{t}的文章",
        "帮我写篇{t}的博客",
        "写一篇介绍{t}的博文",
        "来一篇讲{t}的文章",
        "给我写一篇{t}的教程",
        "我想要一篇关于{t}的文章",
        "写个{t}的心得",
        "以{t}为题写一篇文章",
        "帮忙写一篇{t}的科普",
        "写篇博客聊聊{t}",
        "起草一篇关于{t}的文章",
        "整一篇{t}的博文",
        "写一篇{t}相关的长文",
        "撰写一篇{t}的文章",
        # Pass 1 (after round 1).
        "给我写篇博客，讲讲{t}",
        "帮我出一篇{t}的文章",
        # Pass 4 (after round 4).
        "写篇博客，主题是{t}",
        "帮我写一篇博文，题目就叫{t}",
    ],
    "CREATE_ARTICLE": [
        "新建一篇文章，标题为{n}",
        "创建一个空白文章《{n}》",
        "新建草稿{n}",
        "建一篇空文章叫{n}",
        "新开一个帖子，名字是{n}",
        "创建标题为“{n}”的空白文章",
        "新建一篇空白文章",
        "帮我建个新文章，内容我自己写",
        "先建一个空的草稿，标题{n}",
        # Pass 3: a new post with no title yet (docs/cli.md's example).
        "新建一篇文章",
        "创建一篇新文章",
        "新建文章",
        "建一篇新的帖子",
        "开一篇新文章",
        # Pass 4 (after round 4).
        "新增一篇博文：{n}",
        "加一篇空文章，名字是{n}",
    ],
    "DELETE_ARTICLE": [
        "删除 {p}",
        "把 {p} 删掉",
        "删了 {p}",
        "{p} 不要了，删除",
        "把 {p} 移到回收站",
        "删除这篇文章",
        "删掉《{n}》",
        "帮我删除文件 {p}",
        "移除 {p}",
        "把这篇删了",
    ],
    "EDIT_CONTENT": [
        "把 {p} 改得更简洁",
        "修改 {p} 的错别字",
        "润色一下 {p}",
        "把 {p} 的开头写得更吸引人",
        "精简 {p} 的第二段",
        "给 {p} 补一段{t}的内容",
        "把 {p} 的语气改正式一点",
        "校对 {p}",
        "重写 {p} 的结尾",
        "改一下 {p} 的标题",
        "把 {p} 里的 foo 换成 bar",
        "修改 {p}，加一个例子",
        "把 {p} 第三段删掉",
        "调整 {p} 的段落顺序",
    ],
    "SUMMARIZE": [
        "总结一下 {p}",
        "概括 {p} 的主要内容",
        "{p} 讲了什么",
        "给 {p} 写个摘要",
        "提炼 {p} 的要点",
        "用三句话总结 {p}",
        "{p} 的大意是什么",
        "归纳一下 {p}",
        "帮我总结这篇文章",
        "这篇文章讲了啥",
    ],
    "ANSWER_QUESTION": [
        "什么是{t}",
        "{t}是怎么回事",
        "我写过关于{t}的文章吗",
        "我有没有写过{t}相关的内容",
        "我的博客里关于{t}是怎么说的",
        "我之前怎么评价{t}的",
        "哪篇文章提到了{t}",
        "{t}和{t2}有什么区别",
        "为什么我说{t}不好",
        "怎么写好一篇关于{t}的文章",
        "我之前有没有写过关于{t}的文章",
        "博客里讲过{t}吗",
        "我对{t}的看法是什么",
        "{t}有哪些缺点",
        "如何理解{t}",
        "我在哪篇里提过{t}",
    ],
    "CODE_EXPLAIN": [
        "解释这段代码：{c}",
        "这段代码是干什么的 {c}",
        "帮我看看这个函数 {c}",
        "{c} 这是什么意思",
        "讲解一下这段：{c}",
        "为什么这段会报错 {c}",
        "这个正则什么意思 {c}",
        "解释下\n{c}",
        # Pass 1 (after round 1).
        "这段报错怎么回事 {e}",
        "解释一下这行命令：{c}",
        "`{c}` 是干嘛的",
        "{e} 这是什么错",
        # Pass 4 (after round 4).
        "这行 `{c}` 是啥意思",
        "为什么要这样写：{c}",
    ],
    "UPDATE_GRAPH": [
        "更新知识图谱",
        "重建索引",
        "刷新双链",
        "把知识图谱更新一下",
        "重新生成索引和图谱",
        "更新文章之间的链接",
        "索引过期了，重建一下",
        "刷新一下反向链接",
    ],
    "RESEARCH_WEB": [
        "上网查一下{t}",
        "调研一下{t}的现状",
        "在网上搜索{t}的资料",
        "帮我搜搜{t}",
        "网上找找{t}的最新进展",
        "查查{t}最近的新闻",
        "搜索一下{t}",
        "百度一下{t}",
        "联网查{t}的对比",
        "去网上调研{t}",
        # Pass 1 (after round 1).
        "调研下国内有哪些{t}的方案",
        "查查最新的{t}",
        "网上看看大家怎么评价{t}",
        "搜一下{t}的官方文档",
        "帮我在网上找{t}的资料",
    ],
    "BROWSE": [
        "打开 {u} 找到价格",
        "访问 {u} 看看最新版本",
        "用浏览器打开 {u}",
        "去 {u} 点登录",
        "打开 {u} 看一下头条",
        "访问 {u}，搜索{t}",
    ],
    "TRANSLATE": [
        "把 {p} 翻译成{l}",
        "{p} 译成{l}",
        "帮我出一个 {p} 的{l}版",
        "翻译 {p} 到{l}",
        "把它翻译成{l}",
        "把这篇翻成{l}",
        "帮我翻译一下 {p}",
        "翻译一下这篇文章",
    ],
    "CHAT": [
        "你好",
        "谢谢",
        "谢谢你，正是我需要的",
        "早上好",
        "再见",
        "拜拜",
        "你是谁",
        "你好吗",
        "辛苦了",
        "哈哈",
        "好的谢谢",
        "不用了，谢谢",
        "今天就到这",
        "你能做什么",
        "在吗",
        "为什么？",
        "什么意思？",
        "太棒了",
        "晚安",
        "多谢",
        # Pass 1 (after round 1).
        "嗨，在吗",
        "谢啦",
        "谢啦，很有用",
        "你真棒",
        "哈哈哈",
        "早呀",
        "你叫什么",
        "好嘞，先这样",
        "辛苦啦",
        "感谢感谢",
        # Pass 4 (after round 4).
        "笑死",
        "你都会干点啥",
    ],
}

# Follow-ups with a post in focus (context focus): "it" is the open post.
FOLLOW_EN = {
    "EDIT_CONTENT": [
        "make it shorter",
        "give it a better title",
        "fix the typos",
        "cut the intro in half",
        "add a section on {t}",
        "make the tone more casual",
        "rewrite the ending",
        "remove the last paragraph",
        "add a TL;DR at the top",
        "make it punchier",
    ],
    "SUMMARIZE": [
        "summarize it",
        "what's it about?",
        "give me the key points",
        "tl;dr",
        "boil it down for me",
        "the short version, please",
        "condense it into a few lines",
    ],
    "TRANSLATE": [
        "translate it into {l}",
        "now a {l} version",
        "do it in {l}",
        "put it into {l}",
        "I need it in {l}",
    ],
    "DELETE_ARTICLE": ["delete it", "trash this one", "remove this post"],
    "WRITE_ARTICLE": ["write a similar one about {t}", "another post like this on {t}"],
    "ANSWER_QUESTION": ["does it mention {t}?", "where does it talk about {t}?"],
    "UPDATE_GRAPH": ["link it with my other posts", "update its backlinks", "add it to the graph"],
}
FOLLOW_ZH = {
    "EDIT_CONTENT": [
        "改短一点",
        "换个更好的标题",
        "改一下错别字",
        "开头砍掉一半",
        "加一节关于{t}的内容",
        "语气轻松一点",
        "重写结尾",
        "最后一段删掉",
        "开头加个摘要",
        "改得更口语化",
        # Pass 1 (after round 1).
    ],
    "SUMMARIZE": [
        "总结一下",
        "这篇讲了什么",
        "说说要点",
        "长话短说，讲了啥",
        "给个简短版本",
        "来个概要",
        "太长不看，说重点",
    ],
    "TRANSLATE": ["翻译成{l}", "出一个{l}版本", "翻成{l}", "来个{l}版", "做一份{l}的"],
    "DELETE_ARTICLE": ["删掉它", "这篇删了吧", "把它扔进回收站"],
    "WRITE_ARTICLE": ["再写一篇类似的，讲{t}", "照这个风格写一篇{t}的"],
    "ANSWER_QUESTION": ["这篇里提到{t}了吗", "它哪里讲到{t}"],
    "UPDATE_GRAPH": ["把它和其他文章关联起来", "更新它的反向链接"],
}

# Pass 5 (after round 5): a wider vocabulary for each intent (the verbs and nouns people use
# for it), small talk that asks about the assistant, short questions about the post in focus,
# and questions about selected code. Appended, so that every fifth joins the held-out split.
PASS5_EN: dict[str, list[str]] = {
    "WRITE_ARTICLE": [
        "whip up a post about {t}",
        "write a how-to on {t}",
        "I'd like an essay on {t} for the blog",
        "make a blog post about {t}",
        "write a review of {t}",
        "draft an explainer on {t}",
        "pen something about {t}",
        "write a piece for my readers on {t}",
        "a long read on {t}, please write it",
        "author an article on {t}",
    ],
    "CREATE_ARTICLE": [
        "add a blank post called {n}",
        "new empty post named {n}",
        "make an empty page titled {n}",
        "create a post file named {n}, no content yet",
        "scaffold a new post {n}",
        "new draft, title it {n}",
    ],
    "DELETE_ARTICLE": [
        "discard {p}",
        "scrap {p}",
        "drop the post {p}",
        "wipe {p} from the blog",
        "erase the article {p}",
        "bin {p}",
        "purge {p}",
        "remove the draft {p}",
        "delete the post titled {n}",
        "{p} can go, delete it",
    ],
    "EDIT_CONTENT": [
        "reword the intro of {p}",
        "in {p}, swap the first two sections",
        "append a short update to {p}",
        "give {p} a better title",
        "clean up the formatting of {p}",
        "correct the spelling in {p}",
        "trim the conclusion of {p}",
        "add a code sample to {p}",
        "rename the title of {p} to {n}",
        "remove the section about {t} from {p}",
    ],
    "SUMMARIZE": [
        "a recap of {p}",
        "the main points of {p}",
        "the highlights of {p}, please",
        "a synopsis of {p}",
        "a quick rundown of {p}",
        "digest {p} for me",
        "sum {p} up in one sentence",
        "skim {p} and tell me what matters",
        "write an abstract for {p}",
        "what's the takeaway of {p}",
    ],
    "ANSWER_QUESTION": [
        "in which post did I cover {t}?",
        "look through my posts: what did I say about {t}",
        "according to my notes, how does {t} work",
        "did I ever mention {t}",
        "what's my opinion on {t}, based on my blog",
        "from my own articles, what are the pros of {t}",
        "how many of my posts are about {t}",
        "what tool did I recommend for {t}",
        "tell me what my blog says about {t}, no web",
        "when was the last time I blogged about {t}",
    ],
    "CODE_EXPLAIN": [
        "what's wrong with this: {c}",
        "explain this line: {c}",
        "what does this command do: {c}",
        "break down this snippet: {c}",
        "I don't understand this code: {c}",
        "what is the output of {c}",
        "what does this error mean? {e}",
        "walk me through `{c}`",
    ],
    "UPDATE_GRAPH": [
        "recalculate the links between my articles",
        "rebuild the link graph",
        "refresh the related posts",
        "resync the knowledge graph",
        "re-index all my posts",
        "update the relations between articles",
        "the graph is out of date, rebuild it",
        "recompute the backlinks please",
    ],
    "RESEARCH_WEB": [
        "find some material online about {t}",
        "look around the web for {t}",
        "what does the internet say about {t}",
        "check online whether there's news on {t}",
        "search for {t} reviews on the web",
        "gather sources from the web on {t}",
        "browse the web for opinions on {t}",
        "get me the latest info on {t} from the internet",
        "do an online search on {t}",
        "web search: {t}",
    ],
    "BROWSE": [
        "open {u} in the browser",
        "pull up {u}",
        "load {u} and tell me the title",
        "head to {u} and log in",
        "go to {u} and click the first link",
    ],
    "TRANSLATE": [
        "translate {p} to {l} as a new post",
        "a {l} translation of {p}, please",
        "put {p} into {l}",
        "convert {p} into {l}",
        "I'd like {p} in {l}",
    ],
    "CHAT": [
        "how's your day going",
        "how have you been",
        "what's up with you",
        "are you there?",
        "tell me a joke",
        "you're funny",
        "that's not what I meant",
        "never mind that",
        "sorry, my bad",
        "ok I see",
        "interesting!",
        "good evening",
        "have a nice day",
        "are you a robot?",
        "who built you?",
        "what's your name",
        "I'm back",
        "sounds good to me",
        "how are things on your side",
        "you're the best",
    ],
}
PASS5_ZH: dict[str, list[str]] = {
    "WRITE_ARTICLE": [
        "帮我码一篇{t}的文章",
        "写点关于{t}的东西发博客",
        "出一篇{t}的教程",
        "帮我写篇随笔，聊{t}",
        "写一篇{t}的测评",
        "给博客写一篇讲{t}的文章",
        "请撰写一篇{t}的入门文章",
        "写篇{t}的经验分享",
        "我需要一篇讲{t}的博文",
        "围绕{t}写一篇文章",
    ],
    "CREATE_ARTICLE": [
        "新增一篇空白文章：{n}",
        "新建个空的帖子叫{n}",
        "建篇草稿，标题是{n}，先不写内容",
        "创建一个名为{n}的新文章",
        "开个新帖子，标题{n}",
        "先建一篇空文章放着",
    ],
    "DELETE_ARTICLE": [
        "{p} 删了吧",
        "把 {p} 扔了",
        "帮我把 {p} 移除掉",
        "删除草稿 {p}",
        "把标题为《{n}》的文章删除",
        "丢掉 {p}",
        "清掉 {p} 这篇",
        "{p} 没用了，删掉",
    ],
    "EDIT_CONTENT": [
        "在 {p} 结尾加一段总结",
        "把 {p} 的标题换成《{n}》",
        "给 {p} 加几个小标题",
        "把 {p} 里关于{t}的那一节去掉",
        "修一下 {p} 的排版",
        "{p} 的第二段写得太啰嗦，精简一下",
        "把 {p} 的语气改得活泼点",
        "在 {p} 开头补一段背景",
        "{p} 里的句子太长，拆短一些",
        "把 {p} 的结论改得更有力",
    ],
    "SUMMARIZE": [
        "{p} 的重点是什么",
        "提炼一下 {p} 的核心观点",
        "用一句话概括 {p}",
        "{p} 太长了，帮我总结",
        "列出 {p} 的要点",
        "给 {p} 做个概述",
        "简述 {p}",
        "帮我把 {p} 浓缩成一段",
        "{p} 写了些什么，概括一下",
        "快速过一遍 {p}，说说讲了啥",
    ],
    "ANSWER_QUESTION": [
        "我的文章里哪里讲过{t}",
        "翻翻我的博客，{t}是怎么说的",
        "我以前怎么看{t}",
        "根据我的笔记，{t}要注意什么",
        "我写{t}是在哪一年",
        "我推荐过哪些{t}相关的工具",
        "博客里关于{t}的结论是什么",
        "我提到过几次{t}",
        "不用联网，按我的文章说说{t}",
        "我的哪篇文章讲了{t}",
    ],
    "CODE_EXPLAIN": [
        "这行代码什么意思：{c}",
        "这条命令是干嘛的 {c}",
        "帮我读懂这段：{c}",
        "{c} 输出什么",
        "这个报错是什么意思 {e}",
        "逐行解释 {c}",
        "看不懂这段代码 {c}",
    ],
    "UPDATE_GRAPH": [
        "重新计算文章之间的关系",
        "重建链接图",
        "同步知识图谱",
        "更新文章之间的关联",
        "刷新图谱",
        "把文章的双向链接重新算一遍",
        "图谱过期了，更新一下",
        "重新索引所有文章",
    ],
    "RESEARCH_WEB": [
        "找点网上的资料，关于{t}",
        "上网了解一下{t}",
        "帮我搜集一些{t}的资料",
        "去查一下{t}的最新消息",
        "在互联网上找找{t}的评测",
        "网上看看{t}有什么新动态",
        "用搜索引擎查{t}",
        "联网搜一下{t}",
        "帮我网上调查一下{t}",
        "查一查网上关于{t}的讨论",
    ],
    "BROWSE": [
        "打开网页 {u}",
        "进入 {u} 并登录",
        "用浏览器访问 {u}",
        "在 {u} 上点第一个链接",
        "打开 {u} 看看标题",
    ],
    "TRANSLATE": [
        "把 {p} 译成{l}，另存为新文章",
        "{p} 出一个{l}版本",
        "帮我把 {p} 翻成{l}",
        "给 {p} 做一份{l}翻译",
        "{p} 需要一个{l}版",
    ],
    "CHAT": [
        "最近怎么样",
        "今天过得如何",
        "在干嘛呢",
        "讲个笑话",
        "不是这个意思",
        "算了",
        "没事了",
        "你叫啥名字",
        "晚上好",
        "祝你愉快",
        "有意思",
        "我回来了",
        "听起来不错",
        "你是真人吗",
        "你是谁做的",
        "哈哈，好吧",
        "挺好的",
        "你好呀，忙吗",
        "明白了",
        "你真厉害",
    ],
}
for _name, _more in PASS5_EN.items():
    EN[_name].extend(_more)
for _name, _more in PASS5_ZH.items():
    ZH[_name].extend(_more)
FOLLOW_EN["SUMMARIZE"] += ["the gist?", "main points?", "give me the highlights",
                           "in a nutshell?", "quick recap please", "sum this up"]  # fmt: skip
FOLLOW_EN["ANSWER_QUESTION"] += [
    "what year was it written?", "who does it quote?", "does it link to any sources?",
    "which tools does it mention?", "is there a code sample in it?", "why does it recommend {t}?",
    "what database does it use?", "does it say anything about {t}?", "how long is it?",
    "are there references in it?",
]  # fmt: skip
FOLLOW_EN["EDIT_CONTENT"] += ["append the references at the end", "cut the part about {t}",
                              "rename it to {n}", "smooth out the ending",
                              "the intro drags, tighten it", "add headings to it"]  # fmt: skip
FOLLOW_EN["TRANSLATE"] += ["{l} please", "can I have it in {l}", "a {l} version, please"]
FOLLOW_EN["DELETE_ARTICLE"] += ["this one can go", "get rid of this post", "scrap this draft"]
FOLLOW_ZH["SUMMARIZE"] += ["一句话说说讲了啥", "要点列一下", "给这篇写个摘要", "概括一下",
                           "重点是什么", "出个浓缩版", "给我一个缩略版的概要"]  # fmt: skip
FOLLOW_ZH["ANSWER_QUESTION"] += [
    "这篇是哪年写的", "文中引用了谁的话", "有没有给出参考资料", "里面用的是什么工具",
    "它为什么推荐{t}", "里面讲到{t}没有", "这篇用的哪个数据库", "文中的结论有依据吗",
]  # fmt: skip
FOLLOW_ZH["EDIT_CONTENT"] += ["在最后加上参考链接", "把关于{t}的那一节去掉", "标题换成《{n}》",
                              "结尾改顺一点", "加几个小标题"]  # fmt: skip
FOLLOW_ZH["TRANSLATE"] += ["做一份{l}的", "来一份{l}的", "给我一个{l}版本", "译成{l}"]
FOLLOW_ZH["DELETE_ARTICLE"] += ["这篇不要了", "这篇可以删了", "把这篇扔了"]

# Pass 6 (after round 6): code quoted or pasted into a question (commands, queries, hooks),
# writing requests without the writing verbs the earlier templates use (a length, a colloquial
# verb, a topic line), more words for deleting, searching and browsing, summaries and short
# questions about the post in focus, reshaping selected text, translating a pasted sentence,
# and a negated write followed by what is wanted. Emitted after everything else with their own
# random stream (so every earlier row, and the earlier held-out rows, stay as they were); each
# list continues its intent's list, so every fifth template joins the held-out split.
SNIPPETS = [
    "git reset --soft HEAD~1",
    "ls -lh | sort -k5",
    "chmod 755 deploy.sh",
    "docker compose up -d",
    "SELECT title FROM posts ORDER BY created DESC LIMIT 5",
    "const [open, setOpen] = useState(false)",
    "while true; do sleep 1; done",
    "a ?? b",
    "def f(*args, **kwargs)",
    "tar -czf out.tgz dist/",
    "awk -F, '{print $2}' data.csv",
    "[...new Set(arr)]",
    "git cherry-pick abc123",
    "kill -9 $(pgrep node)",
    "du -sh * | sort -h",
    "#[derive(Debug, Clone)]",
    "Promise.all(tasks)",
    "std::move(v)",
]
SENTENCES = [
    "the meeting is moved to Friday",
    "I'll be late, sorry",
    "明天我们一起去爬山吧",
    "这个功能下周上线",
    "where is the train station?",
    "谢谢你的帮助",
]
PASS6_EN: dict[str, list[str]] = {
    "CODE_EXPLAIN": [
        "what is `{k}` for?",
        "how does `{k}` work",
        "what happens if I run {k}",
        "can you explain `{k}` to me",
        "is `{k}` safe to run?",
        "I keep seeing `{k}` in scripts, what is it",
        "what would `{k}` print",
        "{k} -- what does each part mean?",
        "meaning of `{k}`?",
        "why is `{k}` written like that",
    ],
    "WRITE_ARTICLE": [
        "{N} words on {t} for the blog, please",
        "a long-form piece of about {N} words on {t}",
        "could I get a blog piece on {t}",
        "turn {t} into a blog post",
        "time for a post on {t}, go write it",
        "a blog post, topic: {t}",
        "get a post on {t} written for me",
        "I want to share my thoughts on {t}, write it up as a post",
        "make me an essay on {t}, around {N} words",
        "knock out a quick article on {t}",
    ],
    "DELETE_ARTICLE": [
        "axe {p}",
        "take down {p} and delete it",
        "get {p} off the blog for good",
        "delete my post about {t}",
        "remove the article about {t}",
        "get rid of my post on {t}",
        "throw away the draft about {t}",
        "kill the post {p}",
    ],
    "RESEARCH_WEB": [
        "look {t} up on google",
        "search google for {t}",
        "research {t} online and report back",
        "track down articles on the web about {t}",
        "find out online what people recommend for {t}",
        "dig around the internet for {t}",
        "what are the latest developments in {t}? check the web",
        "scour the web for {t}",
    ],
    "BROWSE": [
        "swing by {u} and see what's new",
        "check out {u} for me",
        "navigate to {u}",
        "go look at {u} and tell me what's there",
        "show me what's on {u}",
    ],
    "SUMMARIZE": [
        "what is {p} getting at",
        "condense {p} into a paragraph",
        "give me the essentials of {p}",
        "list the takeaways of {p}",
        "the one-paragraph version of {p}",
    ],
    "TRANSLATE": [
        "translate to {l}: {s}",
        "how do I say this in {l}: {s}",
        "render this in {l}: {s}",
        "what's this in {l}? {s}",
        "{l} translation of this sentence: {s}",
    ],
    "UPDATE_GRAPH": [
        "my posts' cross-references are out of date, redo them",
        "re-link my articles",
        "regenerate the backlinks graph",
        "my post links are stale, recompute them",
        "redo the related-posts index",
    ],
    "CREATE_ARTICLE": [
        "an empty post called {n}, I'll write the content later",
        "just create the file for {n}, leave it blank",
        "make a placeholder post named {n}",
        "I need a blank post named {n}",
        "set up a post titled {n} with nothing in it",
    ],
    "ANSWER_QUESTION": [
        "have I ever deleted a post on {t}?",
        "did my post on {t} get removed?",
        "what do my own notes say about {t}",
        "search my blog for what I said about {t}",
        "summarise what my posts say about {t}",
    ],
}
PASS6_ZH: dict[str, list[str]] = {
    "CODE_EXPLAIN": [
        "`{k}` 这句是做什么用的",
        "{k} 这个命令有什么作用",
        "运行 {k} 会发生什么",
        "给我讲讲 `{k}`",
        "`{k}` 里的参数分别是什么意思",
        "这条命令看不懂：{k}",
        "{k} 为什么要这么写",
        "这个写法什么意思 `{k}`",
        "`{k}` 执行完会输出什么",
        "解释下 {k}",
    ],
    "WRITE_ARTICLE": [
        "搞一篇{t}的博文",
        "来一篇讲{t}的长文",
        "写个{N}字左右的{t}文章",
        "博客缺一篇{t}的，帮忙写一下",
        "以{t}为题写一篇博客",
        "给我出一篇 blog，主题是{t}",
        "写篇短文聊聊{t}，发到博客上",
        "就{t}这个话题写点东西",
        "安排一篇{t}的文章",
        "写一写{t}吧，{N}字就够",
    ],
    "DELETE_ARTICLE": [
        "把讲{t}的那篇删掉",
        "从博客里撤掉 {p}",
        "下掉 {p} 这篇",
        "把 {p} 从站点上拿掉",
        "关于{t}的文章不要了，删除",
        "把那篇写{t}的博客删了",
    ],
    "RESEARCH_WEB": [
        "百度一下{t}",
        "谷歌一下{t}",
        "去网上调研一下{t}",
        "帮我在网上找找关于{t}的文献",
        "网上搜搜{t}有哪些方案",
        "上网查查{t}现在怎么样了",
    ],
    "BROWSE": [
        "进 {u} 看一眼",
        "上 {u} 逛逛",
        "帮我瞄一眼 {u}",
        "打开 {u} 告诉我上面写了啥",
        "浏览 {u}",
    ],
    "SUMMARIZE": [
        "{p} 的大意是什么",
        "把 {p} 的精华提出来",
        "三句话讲清楚 {p}",
        "{p} 说了哪些关键点",
        "给 {p} 写个内容提要",
    ],
    "TRANSLATE": [
        "把下面这句译成{l}：{s}",
        "翻成{l}：{s}",
        "{s} 用{l}怎么说",
        "帮忙译一下这句：{s}",
        "这句话的{l}是什么：{s}",
    ],
    "UPDATE_GRAPH": [
        "把博客的链接网络重建一下",
        "文章之间的链接旧了，重算一下",
        "把相关文章推荐重新跑一遍",
        "重新整理文章之间的引用关系",
        "博客的知识图谱该刷新了",
    ],
    "CREATE_ARTICLE": [
        "先建个空文件，标题叫{n}",
        "占个坑，新建一篇{n}",
        "建一个只有标题的文章：{n}",
        "新开一篇空白稿，名字{n}",
        "弄个空的新文章，叫{n}",
    ],
    "ANSWER_QUESTION": [
        "我删过讲{t}的文章吗",
        "我自己的笔记里{t}是怎么说的",
        "在我的博客里找找我对{t}的看法",
        "我的文章里有哪些关于{t}的结论",
        "照我博客里写的，{t}该怎么做",
    ],
}
PASS6_FOLLOW_EN: dict[str, list[str]] = {
    "SUMMARIZE": [
        "condense it for me",
        "key takeaways?",
        "what's the upshot",
        "the gist in three bullets",
        "break it down to the essentials",
        "summarise it briefly",
    ],
    "ANSWER_QUESTION": [
        "does it mention any books?",
        "is there a conclusion?",
        "what examples does it give?",
        "what's the author's main claim?",
        "does it have any images?",
    ],
    "EDIT_CONTENT": [
        "redo the opening paragraph, it's too dry",
        "make the second section less technical",
        "rephrase the intro to be more direct",
        "drop the paragraph about {t}",
        'replace every "very" with a stronger word',
    ],
    "DELETE_ARTICLE": ["take this one off my site", "delete this article for good"],
}
PASS6_FOLLOW_ZH: dict[str, list[str]] = {
    "SUMMARIZE": [
        "说下大意",
        "来个精华版",
        "它主要讲了什么",
        "核心内容是啥",
        "给我提炼一下",
        "抓一下重点",
    ],
    "ANSWER_QUESTION": [
        "文中有没有提到具体数据",
        "这篇有配图吗",
        "作者的观点是什么",
        "里面举了哪些例子",
        "结论部分说了什么",
    ],
    "EDIT_CONTENT": [
        "把第二节写得更通俗些",
        "开头那段太平淡了，改一下",
        "把文中的“非常”都换掉",
        "在文末补一段参考资料",
        "给每一节加个小结",
    ],
    "DELETE_ARTICLE": ["这篇作废，删除", "这篇下线并删除"],
}
PASS6_SELECTION: dict[str, list[str]] = {
    "EDIT_CONTENT": [
        "format this as a table",
        "break this paragraph in two",
        "make this sound less stiff",
        "把这段改成表格",
        "这段拆成两段",
        "把这几句合并成一句",
        "lay this out as numbered steps",
        "put these lines in alphabetical order",
        "restructure this as a short outline",
        "merge these two sentences",
        "把这些整理成清单",
        "给这段加上小标题",
        "rewrite this in the passive voice",
        "这几行排成一个表",
    ],
    "CODE_EXPLAIN": [
        "will this work with an empty list?",
        "what's the time complexity here",
        "why does this return None?",
        "这段有没有内存泄漏",
        "这里的复杂度是多少",
        "这个循环会不会死循环",
    ],
    "TRANSLATE": ["give me this passage in {l}", "把这段翻成{l}"],
}
TRICKY6 = [
    ("ANSWER_QUESTION", "不用写博客，给我讲讲{t}就行"),
    ("ANSWER_QUESTION", "先别发文章，聊聊{t}"),
    ("ANSWER_QUESTION", "别生成文章了，直接告诉我{t}是什么"),
    ("ANSWER_QUESTION", "no article needed, just tell me briefly what {t} is"),
    ("ANSWER_QUESTION", "skip the blog post, I only want a quick explanation of {t}"),
    ("WRITE_ARTICLE", "no web search needed, write a post on {t}"),
    ("WRITE_ARTICLE", "不用上网，直接写一篇{t}的文章"),
    ("SUMMARIZE", "no need to rewrite {p}, just summarise it"),
]

# Negations and questions about an action: the label is what should run (often no effect).
TRICKY = [
    ("ANSWER_QUESTION", "don't search the web, what do my posts say about {t}"),
    ("ANSWER_QUESTION", "no need to look online, just tell me what I wrote on {t}"),
    ("ANSWER_QUESTION", "don't write anything, just explain {t}"),
    ("ANSWER_QUESTION", "have I already written a post about {t}?"),
    ("ANSWER_QUESTION", "did I delete the post about {t}?"),
    ("ANSWER_QUESTION", "how do I write an article about {t}?"),
    ("ANSWER_QUESTION", "is there an article of mine on {t}?"),
    ("EDIT_CONTENT", "don't delete {p}, just change its title"),
    ("EDIT_CONTENT", "don't rewrite all of {p}, only fix the typos"),
    ("SUMMARIZE", "don't write a new post, summarize {p}"),
    ("RESEARCH_WEB", "don't check my blog, search the internet for {t}"),
    ("CHAT", "no thanks, I'm done"),
    ("ANSWER_QUESTION", "不用上网查，就说说我自己的文章里关于{t}是怎么讲的"),
    ("ANSWER_QUESTION", "不要搜索，根据我的博客讲讲{t}"),
    ("ANSWER_QUESTION", "别写文章，解释一下{t}"),
    ("ANSWER_QUESTION", "我之前有没有写过关于{t}的文章"),
    ("ANSWER_QUESTION", "我是不是删过讲{t}的那篇"),
    ("ANSWER_QUESTION", "怎么写{t}的文章比较好"),
    ("EDIT_CONTENT", "别删 {p}，改一下标题就行"),
    ("EDIT_CONTENT", "不要重写 {p}，只改错别字"),
    ("SUMMARIZE", "不用写新文章，总结一下 {p}"),
    ("RESEARCH_WEB", "不要看我的博客，去网上搜{t}"),
    ("TRANSLATE", "不要改原文，把 {p} 翻译成{l}"),
    ("TRANSLATE", "don't edit the original, translate {p} into {l}"),
]

POLITE_EN = ["", "", "please ", "could you ", "can you ", "hey, ", "I'd like you to ", "pls "]
TAIL_EN = ["", "", "", " please", " thanks", "?", "!", " asap"]
POLITE_ZH = ["", "", "请", "麻烦", "帮我", "能不能", "可以", "劳驾"]
TAIL_ZH = ["", "", "", "吧", "，谢谢", "？", "哈", "呗"]
QUESTION_START = (
    "what", "how", "have", "did", "is", "which", "why", "where", "when", "do", "don't", "no ",
    "tell", "hello", "hi", "thank", "good", "bye", "see", "who", "you", "lol", "nice", "that",
    "cool", "never", "ok", "appreciate", "haha", "great", "我", "什么", "为什么", "怎么", "哪",
    "不", "别", "如何", "博客", "你", "谢", "早", "再见", "拜拜", "辛苦", "哈", "好的", "今天",
    "在吗", "晚安", "多谢", "太棒",
    # Pass 5: questions about the post in focus and small talk ("请有没有给出参考资料" is no
    # request anyone types).
    "有没有", "文中", "这篇是", "这篇用", "里面", "它为什么", "are ", "does ", "who ", "最近",
    "今天过得", "在干嘛", "算了", "没事", "听起来", "挺好", "sorry", "sounds", "interesting",
    "have a", "i'm back", "ok i", "what's", "how's",
)  # fmt: skip
HOMOPHONES = {"的": "得", "在": "再", "篇": "片", "章": "张", "做": "作", "一下": "以下",
              "删": "山", "写": "些", "总结": "总节", "翻译": "翻议", "搜索": "收索"}  # fmt: skip
MIXED = {"文章": "article", "博客": "blog", "总结": "summarize", "翻译": "translate",
         "删除": "delete", "搜索": "search", "写": "write"}  # fmt: skip


def typo(rng: random.Random, text: str) -> str:
    """One typo in a word of four letters or more: a swap, a drop or a double."""
    words = text.split(" ")
    spots = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
    if not spots:
        return text
    i = rng.choice(spots)
    w, j = words[i], rng.randrange(1, len(words[i]) - 1)
    kind = rng.randrange(3)
    if kind == 0:
        w = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    elif kind == 1:
        w = w[:j] + w[j + 1 :]
    else:
        w = w[:j] + w[j] + w[j:]
    words[i] = w
    return " ".join(words)


def homophone(rng: random.Random, text: str) -> str:
    found = [k for k in HOMOPHONES if k in text]
    if not found:
        return text
    k = rng.choice(found)
    return text.replace(k, HOMOPHONES[k], 1)


def mixed(rng: random.Random, text: str) -> str:
    found = [k for k in MIXED if k in text]
    if not found:
        return text + " " + rng.choice(["pls", "thx", "ok?"])
    k = rng.choice(found)
    return text.replace(k, f" {MIXED[k]} ", 1).replace("  ", " ").strip()


def fill(rng: random.Random, template: str, zh: bool, topics: list[str]) -> str:
    topic, other = rng.sample(topics, 2)
    text = (
        template.replace("{t2}", other)
        .replace("{t}", topic)
        .replace("{p}", rng.choice(PATHS))
        .replace("{u}", rng.choice(URLS))
        .replace("{l}", rng.choice(LANGS_ZH if zh else LANGS_EN))
        .replace("{n}", rng.choice(TITLES))
        .replace("{c}", rng.choice(CODE))
        .replace("{e}", rng.choice(ERRORS))
    )
    # Pass 6's placeholders draw only when present, so earlier templates keep their rows.
    for key, values in (
        ("{k}", SNIPPETS),
        ("{s}", SENTENCES),
        ("{N}", ["500", "800", "1200", "2000"]),
    ):
        if key in text:
            text = text.replace(key, rng.choice(values))
    return text


def vary(rng: random.Random, text: str, zh: bool) -> str:
    """Politeness, case, punctuation, a typo or homophone, or mixed languages."""
    roll = rng.random()
    asks = text.lower().startswith(QUESTION_START)  # no "please" before a question
    if zh:
        text = ("" if asks else rng.choice(POLITE_ZH)) + text + rng.choice(TAIL_ZH)
        if roll < 0.15:
            text = homophone(rng, text)
        elif roll < 0.27:
            text = mixed(rng, text)
    else:
        text = ("" if asks else rng.choice(POLITE_EN)) + text + rng.choice(TAIL_EN)
        if roll < 0.18:
            text = typo(rng, text)
        elif roll < 0.25:
            text = text.capitalize()
        elif roll < 0.3:
            text = text.upper()
    return text


HELD_EVERY = 5  # every fifth template of a list is held out (never trained on)
# Another fifth is the validation split (pass 5): whole templates the first fits do not see,
# so that the regularisation and the temperature are chosen on phrasing new to the model, as
# the held-out split and the fresh rounds are (a random tenth of the rows shares its
# templates with the rest and made the probabilities overconfident). The final fit uses it.
VALID_AT = 2


def _split(i: int) -> str:
    if i % HELD_EVERY == HELD_EVERY - 1:
        return "held"
    return "valid" if i % HELD_EVERY == VALID_AT else "train"


def generate(rng: random.Random) -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    held_topics_en, held_topics_zh = set(TOPICS_EN[::6]), set(TOPICS_ZH[::6])
    train_en = [t for t in TOPICS_EN if t not in held_topics_en]
    train_zh = [t for t in TOPICS_ZH if t not in held_topics_zh]

    def emit(
        intent: str, context: str, templates: list[str], zh: bool, copies: int, start: int = 0
    ) -> None:
        for i, template in enumerate(templates, start):
            held = i % HELD_EVERY == HELD_EVERY - 1
            topics = sorted(held_topics_zh if zh else held_topics_en) if held else (
                train_zh if zh else train_en)  # fmt: skip
            if len(topics) < 2:
                topics = TOPICS_ZH if zh else TOPICS_EN
            n = copies if "{" in template else 5
            for _ in range(n):
                text = vary(rng, fill(rng, template, zh, topics), zh)
                rows.append((_split(i), intent, context, text))

    def emit_selection(texts: dict[str, list[str]], start: dict[str, int]) -> None:
        for intent, templates in texts.items():
            for i, template in enumerate(templates, start.get(intent, 0)):
                zh = not template.isascii()
                for _ in range(4):
                    text = vary(rng, fill(rng, template, zh, TOPICS_ZH if zh else TOPICS_EN), zh)
                    rows.append((_split(i), intent, "selection", text))

    for intent, templates in EN.items():
        emit(intent, "-", templates, False, 14)
    for intent, templates in ZH.items():
        emit(intent, "-", templates, True, 14)
    for intent, templates in FOLLOW_EN.items():
        emit(intent, "focus", templates, False, 8)
    for intent, templates in FOLLOW_ZH.items():
        emit(intent, "focus", templates, True, 8)
    for i, (intent, template) in enumerate(TRICKY):
        zh = not template.isascii()
        topics = TOPICS_ZH if zh else TOPICS_EN
        for _ in range(10):
            text = vary(rng, fill(rng, template, zh, topics), zh)
            rows.append((_split(i), intent, "-", text))
    # Edits of the selected text (pass 2: a selection is not always code).
    for text in [
        "reword this",
        "make this shorter",
        "fix the grammar here",
        "rewrite this part",
        "make it more formal",
        "改得简洁一点",
        "润色这段",
        "把这段改通顺",
        "这段写得更生动些",
        "translate this into English",
        "summarize the selection",
        "总结一下选中的内容",
    ]:
        label = (
            "TRANSLATE"
            if "translate" in text
            else "SUMMARIZE"
            if "summar" in text or "总结" in text
            else "EDIT_CONTENT"
        )
        for _ in range(4):
            rows.append(("train", label, "selection", vary(rng, text, not text.isascii())))
    # Code explanations with a selection, and a selection without code.
    for text in ["explain this", "what does this do", "解释一下这段", "这段代码干嘛的",
                 "walk me through it", "这个函数什么意思",
                 # Pass 4 (after round 4): why it is written so, a bug, line by line.
                 "why is it written this way", "does this function have a bug",
                 "explain it line by line", "为什么这里要这么写", "这个函数有没有 bug",
                 "一行一行解释",
                 # Pass 5 (after round 5): why a part is there, what a query returns.
                 "why is there a lock here?", "what's the purpose of this decorator",
                 "what does this query return", "why use a set instead of a list here",
                 "这里为什么要加锁", "这个装饰器有什么用", "这条 SQL 返回什么",
                 "为什么这里用 map 而不是循环"]:  # fmt: skip
        for _ in range(4):
            rows.append(("train", "CODE_EXPLAIN", "selection", vary(rng, text, not text.isascii())))
    # Pass 6, with its own random stream: every row above stays as it was.
    rng.seed(26)
    for intent, templates in PASS6_EN.items():
        emit(intent, "-", templates, False, 14, len(EN[intent]))
    for intent, templates in PASS6_ZH.items():
        emit(intent, "-", templates, True, 14, len(ZH[intent]))
    for intent, templates in PASS6_FOLLOW_EN.items():
        emit(intent, "focus", templates, False, 8, len(FOLLOW_EN.get(intent, [])))
    for intent, templates in PASS6_FOLLOW_ZH.items():
        emit(intent, "focus", templates, True, 8, len(FOLLOW_ZH.get(intent, [])))
    # The selection rows above are all trained on; these continue from their counts.
    emit_selection(PASS6_SELECTION, {"EDIT_CONTENT": 9, "CODE_EXPLAIN": 20, "TRANSLATE": 1})
    for i, (intent, template) in enumerate(TRICKY6, len(TRICKY)):
        zh = not template.isascii()
        for _ in range(10):
            text = vary(rng, fill(rng, template, zh, TOPICS_ZH if zh else TOPICS_EN), zh)
            rows.append((_split(i), intent, "-", text))
    return rows


def seeds() -> list[tuple[str, str, str, str]]:
    """The intents' own examples, the routing samples and the evaluation set's rows."""
    rows: list[tuple[str, str, str, str]] = []
    table = tomllib.loads((ROOT / "config" / "intents.toml").read_text(encoding="utf-8"))
    for name, entry in table["intents"].items():
        for text in [*entry.get("examples_zh", []), *entry.get("examples_en", [])]:
            rows.append(("train", name, "-", text))
    sys.path.insert(0, str(ROOT))
    from skillrt.skills.samples import SAMPLE_INPUTS

    focus = {"make it shorter", "把它改得更口语化", "add a section about error handling to it",
             "给它加一节关于错误处理的内容", "delete it", "删掉它", "把它翻译成英文",
             "translate it into English"}  # fmt: skip
    for text, intent in SAMPLE_INPUTS:
        rows.append(("train", intent, "focus" if text in focus else "-", text))
    contexts = {"-": "-", "selection": "selection", "file": "focus", "focus": "focus",
                "browse": "browse"}  # fmt: skip
    for line in (ROOT / "tests" / "data" / "routing_eval.tsv").read_text("utf-8").splitlines():
        if not line.strip() or line.startswith(("#", "split\t")):
            continue
        split, intent, context, text = line.split("\t", 3)
        if intent == "UNKNOWN":
            continue
        part = "held" if split == "held" else "train"
        rows.append((part, intent, contexts[context], text))
        if context == "browse" and intent == "BROWSE" and "." not in text:
            # The same words outside a browsing session ask for nothing to browse.
            rows.append((part, "CHAT", "-", text))
    return rows


def main() -> None:
    rng = random.Random(25)
    rows = seeds() + generate(rng)
    seen: set[tuple[str, str]] = set()
    out = ["# Generated by scripts/make_routing_data.py: do not edit by hand.",
           "split\tintent\tcontext\ttext"]  # fmt: skip
    for split, intent, context, text in rows:
        text = " ".join(text.replace("\t", " ").split()) if "\n" not in text else text
        text = text.replace("\n", "\\n")
        if (context, text) in seen:
            continue
        seen.add((context, text))
        out.append(f"{split}\t{intent}\t{context}\t{text}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"{len(out) - 2} rows -> {OUT}")


if __name__ == "__main__":
    main()
