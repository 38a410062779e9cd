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
    "question_left": (
        "没有回答上一个问题（{question}），它的任务已停止，什么也没有再做。",
        "The question “{question}” was left unanswered: its task stopped, nothing more done.",
    ),
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
    "unknown_command": (
        "未知命令 /{name}；/help 列出所有命令。",
        "Unknown command /{name}; /help lists the commands.",
    ),
    "keys": (
        "Ctrl-C 取消正在运行的任务，Ctrl-Z 暂停它；Ctrl-C 或 Ctrl-D 退出。",
        "Ctrl-C cancels a running task, Ctrl-Z pauses it; Ctrl-C or Ctrl-D quits.",
    ),
    "type_a_request": (
        "输入请求；/help 列出命令。Ctrl-C 取消任务，Ctrl-D 退出。",
        "Type a request; /help lists commands. Ctrl-C cancels a task, Ctrl-D quits.",
    ),
    "resumable_at_start": (
        "有 {n} 个未完成的任务可以恢复（/resume ID，/abandon ID）：",
        "{n} unfinished task{s} can be resumed (/resume ID, /abandon ID):",
    ),
    # /help: what each command does
    "cmd_help": ("本列表", "this list"),
    "cmd_tasks": (
        "可以恢复的任务（以及等你回答的任务）",
        "tasks that can be resumed (and one waiting for you)",
    ),
    "cmd_resume": ("从最后完成的一步继续任务", "continue a task from its last completed step"),
    "cmd_abandon": ("彻底放弃一个可恢复的任务", "give up a resumable task for good"),
    "cmd_cancel": (
        "取消等待回答的任务（或指定 ID 的任务）",
        "cancel the task waiting for an answer (or ID)",
    ),
    "cmd_pause": ("在下一步暂停正在运行的任务", "pause the running task at its next step"),
    "cmd_cost": ("本会话用掉的 token 和费用", "tokens and money of this session"),
    "cmd_history": ("本会话的任务（或全部任务）", "tasks of this session (or all)"),
    "cmd_model": ("正在使用的模型及其原因", "the model in use and why"),
    "cmd_open": (
        "把一篇文章设为当前文章（“它”所指的文章）",
        "make a post the focus (what “it” means)",
    ),
    "cmd_publish": (
        "发布草稿（给出的文章或当前文章）：去掉草稿标记，回答时可以引用",
        "publish a draft (PATH or the focus): its draft mark taken off, answers may use it",
    ),
    "published": ("已发布 {path}{moved}。", "Published {path}{moved}."),
    "published_moved": ("（从 {source} 移来）", " (moved from {source})"),
    "published_scheduled": (
        "它的日期是 {day}：{generator} 从那天起才把它放到网站上。",
        "Its date is {day}: {generator} puts it on the site from that day.",
    ),
    "published_expired": (
        "它的过期日期 {day} 已经过了：{generator} 不会显示它。",
        "Its expiry date, {day}, has passed: {generator} will not show it.",
    ),
    "not_a_draft": ("{path} 不是草稿，没有改动。", "{path} is not a draft; nothing changed."),
    "cmd_focus": ("后续请求作用的文章", "the post follow-ups act on"),
    "cmd_undo": (
        "撤销最近一次写入（或对 PATH 的最近一次写入），逐字节恢复",
        "undo the last write (or the last one of PATH), byte for byte",
    ),
    "cmd_new": (
        "开始新会话（没有之前的对话和当前文章）",
        "start a new session (no turns, no focus)",
    ),
    "cmd_quit": ("退出（也可以用 /exit 或 Ctrl-D）", "leave (also /exit, Ctrl-D)"),
    "cmd_exit": ("退出", "leave"),
    # /tasks, /cost, /history
    "task_waits": (
        "任务 {task} 在等你回答：{question}",
        "Task {task} waits for your answer: {question}",
    ),
    "no_resumable": ("没有可恢复的任务。", "No resumable tasks."),
    "session_cost": (
        "本会话：{calls}{unpriced}，{cost}",
        "This session: {calls}{unpriced}, {cost}",
    ),
    "model_calls": ("{n} 次模型调用", "{n} model call{s}"),
    "unpriced_calls": ("（{n} 次未计价）", ", {n} unpriced"),
    "no_history": ("没有历史记录。", "No history."),
    "no_tasks_yet": ("还没有任务。", "No tasks yet."),
    "no_tasks_in_session": (
        "本会话还没有任务（/history all 查看全部）。",
        "No tasks yet in this session (/history all).",
    ),
    "history_columns": ("时间|状态|技能|tokens|请求", "when|state|skill|tokens|request"),
    # /model
    "model_name": ("模型：{value}", "model: {value}"),
    "model_provider": ("提供方：{value}", "provider: {value}"),
    "model_file": ("文件：{value}", "file: {value}"),
    "model_endpoint": ("端点：{value}", "endpoint: {value}"),
    "model_why": ("原因：{value}", "why: {value}"),
    "model_injected": ("由宿主程序提供", "given by the host program"),
    "model_crashed": (
        "注意：这次请求中内置模型的工作进程崩溃了（{error}）；它已重新启动，加载方式：{mode}。",
        "Note: the embedded model's worker died during this request ({error}); it starts"
        " again, in load mode {mode}.",
    ),
    "model_mode": ("加载方式：{value}", "load mode: {value}"),
    "model_local_server": ("本机服务：{value}", "local server: {value}"),
    "model_no_local_server": (
        "本机（127.0.0.1）的 11434、1234、8080 端口上没有模型服务",
        "no model server on 127.0.0.1 (ports 11434, 1234, 8080)",
    ),
    "embedded_note": (
        "注意：内置模型 {model} 很小（1.35 亿参数），只用于试用 skillrt，回答质量较差。"
        "要用真正的模型，请设置 SKILLRT_LLM__BASE_URL（以及 SKILLRT_LLM__API_KEY、"
        "SKILLRT_LLM__MODEL），见 docs/models.md。",
        "Note: the embedded model {model} is a tiny one (135M parameters), for trying skillrt;"
        " expect poor answers. To connect a real model, set SKILLRT_LLM__BASE_URL (and"
        " SKILLRT_LLM__API_KEY, SKILLRT_LLM__MODEL): see docs/models.md.",
    ),
    "loading_model": ("正在加载模型…", "Loading the model…"),
    "embedded_unusable": (
        "内置模型无法运行：{error}。在修好之前，需要模型的请求都会失败；"
        "skillrt doctor 会检查它，也可以改用其他模型（见 docs/models.md）。",
        "The embedded model cannot run: {error}. Requests that need it will fail until this"
        " is fixed; skillrt doctor checks it, or connect another model (docs/models.md).",
    ),
    "local_server_found": (
        "本机发现 {server}。要使用它：{settings} skillrt chat",
        "Found {server} on this machine. To use it: {settings} skillrt chat",
    ),
    "endpoint_key": ("{url}（API 密钥{state}）", "{url} (API key {state})"),
    "key_set": ("已设置", "set"),
    "key_not_set": ("未设置", "not set"),
    "saved": ("已保存：{path}", "saved: {path}"),
    "next": ("下一步：{steps}", "next: {steps}"),
    "refused_tail": ("未完成：什么也没做", "refused: nothing done"),
    "error": ("错误：{error}", "error: {error}"),
}


def line(key: str, language: str, **values: object) -> str:
    """The line ``key`` in ``language`` ("zh" or anything else for English)."""
    zh, en = LINES[key]
    return (zh if language == "zh" else en).format(**values)
