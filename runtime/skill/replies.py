"""Replies in Chinese and English: the runtime's own table (``REPLIES``, read by ``reply``) and
``Replies``, the table a skill module declares for its own words (read by ``ctx.reply``).

Replies follow the user's language (``TaskInput.language``). Values are filled in with
``str.format``; what they contain (an error message, a path) is never re-parsed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from skillrt.exceptions import UserError

__all__ = ["REPLIES", "Replies", "reply"]

REPLIES: dict[str, tuple[str, str]] = {
    "empty_input": (
        "请输入要做的事情，例如：写一篇关于 Rust 所有权的文章。",
        "Please type a request, for example: write an article about Rust ownership.",
    ),
    "input_too_long": (
        "输入太长（{chars} 个字符，上限 {limit}）。"
        "请缩短后再试，或把内容保存为文件后让我处理该文件。",
        "That input is too long ({chars} characters; the limit is {limit})."
        " Shorten it, or save it to a file and ask me to work on the file.",
    ),
    "no_skill": (
        "抱歉，我暂时无法处理这个请求（{intent}）。",
        "Sorry, I cannot handle that request yet ({intent}).",
    ),
    "bad_params": (
        "这个请求缺少必要的信息（{missing}），请补充后再试。",
        "That request is missing something I need ({missing}); please add it.",
    ),
    "params_problem": ("{skill} 的参数有误：{problems}", "Bad parameters for {skill}: {problems}"),
    "paused": (
        "任务已暂停（{task}），可用 resume 继续。",
        "Task paused ({task}); resume it to continue.",
    ),
    "store_outage": (
        "任务存储暂时无法访问；任务停在最后完成的步骤（{task}），存储恢复后会继续。",
        "The task store stopped answering; the task stopped at its last completed step"
        " ({task}) and goes on once the store is back.",
    ),
    "lease_lost": (
        "任务 {task} 已由另一个进程接手（本进程失去了它的租约），这里已停止运行；"
        "之后由那个进程继续或结束它。",
        "Task {task} was taken over by another worker (this one lost its lease), so it stopped"
        " here; that worker goes on with it, or has ended it.",
    ),
    "interrupted": (
        "运行时已关闭；该任务可在下次启动时恢复。",
        "The runtime closed; the task can be resumed at the next start.",
    ),
    "watchdog": (
        "任务超时已停止（{error}）。可以恢复该任务（{task}）继续。",
        "The task timed out and was stopped ({error}). You can resume it ({task}).",
    ),
    "cancelled": ("任务已取消。", "Task cancelled."),
    "budget": (
        "任务超出预算，已停止：{error}",
        "The task went over its budget and was stopped: {error}",
    ),
    "no_network": ("无法解析主机 {host}（没有网络？）", "cannot resolve host {host} (no network?)"),
    "failed": ("执行过程中出现错误：{error}", "The task failed: {error}"),
    "resume_budget": (
        "\n\n已完成的步骤已保存。提高预算后可继续："
        "skillrt resume {task} --max-tokens N --max-cost X",
        "\n\nThe completed steps are kept. Raise the budget and go on: "
        "skillrt resume {task} --max-tokens N --max-cost X",
    ),
    "resume_auth": (
        "\n\n已完成的步骤已保存。修正密钥（SKILLRT_LLM__API_KEY）后可继续：skillrt resume {task}",
        "\n\nThe completed steps are kept. Fix the key (SKILLRT_LLM__API_KEY) and go on: "
        "skillrt resume {task}",
    ),
    "resumable": ("\n\n可以稍后恢复该任务（{task}）。", "\n\nYou can resume it later ({task})."),
    # Said to a resume of a task another process holds, and to the caller of a queued task
    # another worker took over (who asked no resume: "it cannot be resumed here" was untrue).
    "running_elsewhere": (
        "任务 {task} 已由另一个进程接手，在那里运行（或已运行完），不在这里。",
        "Task {task} was taken over by another process: it runs (or ran) there, not here.",
    ),
    "repetition": (
        "\n\n（模型开始不断重复，已在重复处截断；上面是截断前的内容。）",
        "\n\n(The model started repeating itself and was stopped there; the text above is "
        "what came before.)",
    ),
    "not_saved": (
        "任务已停止，但无法保存进度（{error}），重启后无法恢复。问题解决后请重新运行。",
        "The task stopped, but its progress could not be saved ({error}), so it could not be"
        " resumed after a restart. Run it again once that is fixed.",
    ),
    "nothing_to_undo": ("没有可以撤销的修改{path}。", "There is nothing to undo{path}."),
    "undo_changed": (
        "`{path}` 在那次写入之后又被修改过，为了不丢失这些改动，没有撤销。",
        "`{path}` changed after that write, so it was not undone (that would lose the change).",
    ),
    "undo_refused": ("无法撤销：{error}", "Cannot undo: {error}"),
    "undo_busy": (
        "`{path}` 正被任务 {task} 使用，暂时无法撤销：请在该任务结束后再试。",
        "`{path}` is busy (task {task} is writing it), so it was not undone: try again when"
        " that task ends.",
    ),
    "undone_edit": (
        "已撤销对 `{path}` 的修改，恢复为之前的版本。",
        "Undid the edit of `{path}`: it is back as it was.",
    ),
    "undone_create": (
        "已撤销 `{path}` 的创建：文件已移到回收站。",
        "Undid the creation of `{path}`: it was moved to the trash.",
    ),
    "undone_delete": ("已从回收站恢复 `{path}`。", "Brought `{path}` back from the trash."),
    "undone_publish": (
        "已撤销发布：草稿 `{path}` 已恢复，`{moved}` 已移到回收站。",
        "Undid the publish: the draft `{path}` is back, and `{moved}` was moved to the trash.",
    ),
    "undone_unpublish": (
        "已撤销取消发布：`{path}` 已恢复，草稿 `{moved}` 已移到回收站。",
        "Undid the unpublish: `{path}` is back, and the draft `{moved}` was moved to the trash.",
    ),
    "ended_unexpectedly": ("任务异常结束。", "The task ended unexpectedly."),
    "closed": ("运行时已关闭。", "The runtime closed."),
    "memory_only": (
        "\n\n注意：该任务的请求中含有密钥，因此只保存在内存中：skillrt 退出后将无法恢复。",
        "\n\nNote: its request holds a secret, so it is kept in memory only: it cannot be"
        " resumed once skillrt stops.",
    ),
    # --- routing: questions asked instead of guessing (see clarify.py) ---
    # An intent's own question and choice label come with it (its section of config/intents.toml
    # or the skill's Intent declaration); this is the question for one that declares none.
    "confirm_action": ("要执行「{action}」吗？(y/n)", "Go ahead: “{action}”? (y/n)"),
    "choose": (
        "我不太确定您想做什么。请回复编号选择：",
        "I'm not sure what you'd like me to do. Reply with a number:",
    ),
    "choose_more": ("或者直接输入新的请求。", "Or just type a new request."),
    "declined": ("好的，不做了。", "OK, I won't."),
    # Said to a greeting, a thanks or an "ok" alike (with no chat skill): "我在。" answered "谢谢",
    # which it does not answer.
    "small_talk": (
        "随时为你效劳。请告诉我要做什么，例如：「写一篇关于 Rust 所有权的文章」"
        "或「我的博客里关于 Zig 写了什么？」",
        "Happy to help. Tell me what to do, for example “write an article about Rust ownership”"
        " or “what did I write about Zig?”",
    ),
    "noise_input": (
        "这段输入大多是控制字符，已忽略。",
        "That input was mostly control characters; it was ignored.",
    ),
}


def reply(key: str, language: str, **values: object) -> str:
    """The reply ``key`` in ``language`` ("zh" or anything else for English)."""
    zh, en = REPLIES[key]
    return (zh if language == "zh" else en).format(**values)


class Replies(Mapping[str, tuple[str, str]]):
    """One module's replies: ``key -> (Chinese, English)``, read in the user's language.

    A skill module declares its words once (``REPLIES = Replies({"saved": ("已保存 {path}",
    "Saved {path}")})``), hands the table to ``@skill(replies=REPLIES)`` and reads it with
    ``ctx.reply("saved", path=...)``. ``a | b`` is one table holding both (a helper module's
    words joined to a skill's); a key in both must say the same thing in both.
    """

    __slots__ = ("_texts",)

    def __init__(self, texts: Mapping[str, tuple[str, str]] | None = None) -> None:
        for key, pair in (texts or {}).items():
            if not (
                isinstance(pair, tuple)
                and len(pair) == 2
                and all(isinstance(t, str) and t for t in pair)
            ):
                raise UserError(f"reply {key!r} must be a (Chinese, English) pair of texts")
        self._texts: dict[str, tuple[str, str]] = dict(texts or {})

    def __getitem__(self, key: str) -> tuple[str, str]:
        return self._texts[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def __or__(self, other: Replies) -> Replies:
        clash = [k for k in other if k in self._texts and self._texts[k] != other[k]]
        if clash:
            raise UserError(f"replies {', '.join(map(repr, clash))} are worded twice, differently")
        return Replies({**self._texts, **other})

    def text(self, key: str, language: str, /, **values: object) -> str:
        """The reply ``key`` in ``language`` ("zh", or English for anything else)."""
        if key not in self._texts:
            raise KeyError(f"no reply {key!r} in this table (known: {', '.join(sorted(self))})")
        zh, en = self._texts[key]
        return (zh if language == "zh" else en).format(**values)
