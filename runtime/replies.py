"""The runtime's own replies, in Chinese and English: a table, read by ``reply``.

Replies follow the user's language (``TaskInput.language``). Values are filled in with
``str.format``; what they contain (an error message, a path) is never re-parsed.
"""

from __future__ import annotations

__all__ = ["REPLIES", "reply"]

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
    "paused": (
        "任务已暂停（{task}），可用 resume 继续。",
        "Task paused ({task}); resume it to continue.",
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
    "resumable": ("\n\n可以稍后恢复该任务（{task}）。", "\n\nYou can resume it later ({task})."),
    "running_elsewhere": (
        "任务 {task} 正在另一个进程中运行，无法在这里恢复。",
        "Task {task} is running in another process; it cannot be resumed here.",
    ),
    "repetition": (
        "\n\n（模型开始不断重复，已在重复处截断；上面是截断前的内容。）",
        "\n\n(The model started repeating itself and was stopped there; the text above is "
        "what came before.)",
    ),
    "ended_unexpectedly": ("任务异常结束。", "The task ended unexpectedly."),
}


def reply(key: str, language: str, **values: object) -> str:
    """The reply ``key`` in ``language`` ("zh" or anything else for English)."""
    zh, en = REPLIES[key]
    return (zh if language == "zh" else en).format(**values)
