"""The REPL's own lines, in Chinese and English: a table, read by ``line``.

The session's language is that of the user's last request (``detect_language``), so a
Chinese session reads "正在取消任务…" where an English one reads "Cancelling the task…".
"""

from __future__ import annotations

__all__ = ["LINES", "line"]

LINES: dict[str, tuple[str, str]] = {
    "no_last_session": (
        "这里没有之前的会话，开始新的会话。",
        "No earlier session here; starting a new one.",
    ),
    "continuing": (
        "继续会话 {session}：之前有 {count} 条消息{focus}。",
        "Continuing session {session}: {count} earlier messages{focus}.",
    ),
    "continuing_focus": ("；当前文章 {focus}", "; focus {focus}"),
    "answer_first": (
        "有任务在等待你的回答；请先回答或用 /cancel 取消它。",
        "A task is waiting for your answer; answer or /cancel it first.",
    ),
    "new_session": (
        "新会话 {session}：没有之前的对话，也没有当前文章。",
        "New session {session}: no earlier turns, no focus.",
    ),
    "open_usage": (
        "请给出文章路径，例如 /open posts/rust-ownership.md",
        "give a post's path, e.g. /open posts/rust-ownership.md",
    ),
    "focus_set": (
        "当前文章：{focus}（“把它改短一点”之类的后续请求会作用于它）",
        "Focus: {focus} (follow-ups such as “make it shorter” act on it)",
    ),
    "focus_is": ("当前文章：{focus}", "Focus: {focus}"),
    "no_focus": (
        "还没有当前文章：写、改或总结一篇文章，或用 /open PATH 打开一篇。",
        "No focus yet: write, edit or summarise a post, or /open PATH.",
    ),
    "cancelling": (
        "正在取消任务…（再按一次 Ctrl-C 不再等待它）",
        "Cancelling the task… (Ctrl-C again to stop waiting for it)",
    ),
    "still_stopping": (
        "仍在停止…（再按一次 Ctrl-C 不再等待）",
        "Still stopping… (Ctrl-C once more to stop waiting)",
    ),
    "pausing": (
        "将在下一步暂停…（之后用 /resume ID 继续）",
        "Pausing at the next step… (/resume ID continues it later)",
    ),
    "pause_requested": ("将在下一步暂停。", "Pausing at the next step."),
    "stopped_waiting": ("不再等待该任务。", "Stopped waiting for the task."),
    "cancelled_task": ("已取消任务 {task}。", "Cancelled task {task}."),
    "waiting_at_exit": (
        "任务 {task} 正在等待回答；下次启动时可以恢复它。",
        "Task {task} is waiting for an answer; it will be offered for resume.",
    ),
    "resuming": ("正在恢复 {task}：{what}", "Resuming {task}: {what}"),
    "cannot_resume": ("任务 {task} 现在无法恢复。", "Task {task} cannot be resumed now."),
    "cannot_cancel": ("任务 {task} 现在无法取消。", "Task {task} cannot be cancelled now."),
    "abandoned": ("已放弃任务 {task}。", "Abandoned task {task}."),
    "cannot_abandon": ("任务 {task} 现在无法放弃。", "Task {task} cannot be abandoned now."),
    "nothing_waiting": (
        "没有任务在等待回答；任务运行时按 Ctrl-C 取消它。",
        "No task is waiting; Ctrl-C cancels a running task.",
    ),
    "pause_waiting": (
        "任务正在等待你的回答：回答它、用 /cancel 取消，或退出（之后仍可恢复）。",
        "The task is waiting for your answer; answer it, /cancel it, or quit (it stays resumable).",
    ),
    "pause_idle": (
        "没有正在运行的任务；任务运行时按 Ctrl-Z 暂停它。",
        "No task is running; press Ctrl-Z while one runs to pause it.",
    ),
    "saved": ("已保存：{path}", "saved: {path}"),
    "next": ("下一步：{steps}", "next: {steps}"),
    "error": ("错误：{error}", "error: {error}"),
}


def line(key: str, language: str, **values: object) -> str:
    """The line ``key`` in ``language`` ("zh" or anything else for English)."""
    zh, en = LINES[key]
    return (zh if language == "zh" else en).format(**values)
