"""Record a Browse task's actions and run them again without a model (nanobrowser's
``replayHistory``).

Every Browse task writes its recording to ``<state>/replays/<task id>.json`` when it ends,
however it ends: completed, unfinished (out of steps, too many failures), failed or cancelled,
as its ``status`` says. A resumed task records the steps from before the interruption too (they
come back from its journal). The recording holds the start URL and, for each action that
succeeded, the action and the signature of the element it acted on (role, text, id, name,
label, href, placeholder, type).

``replay`` opens the start URL and runs the actions in order. An action on an element finds it
again *by its signature* on the page as it is now, so a reordered or re-rendered page still
works; when no element matches well enough, replay stops there with an error naming the step,
the element and the page. Secret typed text (a password field's, a key-shaped string) is not
in the recording (``typed_secrets``): such an entry is marked ``secret`` and replay refuses the
recording before it starts, saying which step needs the secret. Every field of a recording
goes through the redactor before it is written (``redact``); when a URL in it (the start URL,
a page's, a ``goto``'s, a link's) held a secret, the recording is marked ``secret_urls`` and
replay refuses it too: the URLs it would open are not the ones the task opened.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from skillrt.exceptions import BrowserError, UserError
from skillrt.skills.browsing.actions import BROWSER_ACTIONS, Action
from skillrt.skills.browsing.observation import ElementSignature, find_by_signature

if TYPE_CHECKING:
    from skillrt.skill.context import SkillContext
    from skillrt.skills.browsing.agent import AgentStep
    from skillrt.skills.browsing.browser import Browser

__all__ = ["ReplayMismatch", "SecretNotRecorded", "load_recording", "replay", "save_recording"]

_ACTION = TypeAdapter(Action)
_TASK_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
VERSION = 3
READABLE = (1, 2, 3)  # 1: without status and secret marks; 2: without secret_urls


class ReplayMismatch(BrowserError):
    """A recorded step found no matching element on the page as it is now."""

    def __init__(self, step: int, what: str, url: str) -> None:
        self.step = step
        self.what = what
        self.page = url
        super().__init__(
            f"replay stopped at step {step}: no element like {what} on {url}", recoverable=False
        )


class SecretNotRecorded(UserError):
    """A recording that typed a secret, which it does not hold, cannot be replayed."""

    def __init__(self, task_id: str, step: int, what: str) -> None:
        self.step = step
        why = f"its step {step} typed a secret into {what}" if step else what
        super().__init__(
            f"task {task_id} cannot be replayed: {why}, "
            "and recordings keep no secrets. Run the task again with Browse instead."
        )


def _path(ctx: SkillContext, task_id: str) -> Path:
    if not _TASK_ID.match(task_id):
        raise UserError(f"not a task id: {task_id!r}")
    return ctx.config.state_path / "replays" / f"{task_id}.json"


def save_recording(
    ctx: SkillContext,
    task: str,
    start_url: str | None,
    steps: list[AgentStep],
    *,
    status: str,
    detail: str = "",
    redact: Callable[[Any], Any] = lambda value: value,
) -> Path:
    """Write this task's recording (atomically); returns its path. ``status`` is how the task
    ended (completed, unfinished, failed, cancelled) and ``detail`` why; secret typed text is
    already out of ``steps`` (``typed_secrets``); every field goes through ``redact``."""
    actions = [
        {**entry, "step": step.number}
        for step in steps
        for entry in step.recorded
        if entry.get("success")
    ]
    raw = {
        "version": VERSION,
        "task": task,
        "start_url": start_url,
        "status": status,
        "detail": detail,
        "actions": actions,
    }
    data: dict[str, Any] = redact(raw)
    data["secret_urls"] = _urls(data) != _urls(raw)
    target = _path(ctx, ctx.task_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".replay-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def load_recording(ctx: SkillContext, task_id: str) -> dict[str, Any]:
    path = _path(ctx, task_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"no recorded browsing task {task_id!r} to replay") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"the recording of task {task_id!r} cannot be read: {exc}") from None
    if not isinstance(data, dict) or data.get("version") not in READABLE:
        raise UserError(f"the recording of task {task_id!r} is not one this skillrt can replay")
    data["task_id"] = task_id
    return data


def _urls(recording: dict[str, Any]) -> list[Any]:
    """Every URL a recording holds: the start URL, each page's, each goto's, each link's."""
    urls: list[Any] = [recording.get("start_url")]
    for entry in recording.get("actions") or []:
        action = entry.get("action") or {}
        signature = entry.get("signature") or {}
        urls += [entry.get("url"), action.get("url"), signature.get("href")]
    return urls


def _needs_secret(recording: dict[str, Any]) -> None:
    """Refuse a recording with a secret typed text in it, before anything is replayed."""
    if recording.get("secret_urls"):
        task_id = str(recording.get("task_id", "?"))
        raise SecretNotRecorded(task_id, 0, "its URLs held a secret, redacted here")
    for number, entry in enumerate(recording.get("actions") or [], 1):
        if isinstance(entry, dict) and entry.get("secret"):
            signature = entry.get("signature") or {}
            label = signature.get("aria_label") or signature.get("name") or signature.get("id")
            kind = "a password field" if signature.get("type") == "password" else "a text field"
            what = f'{kind} ("{label}")' if label else kind
            raise SecretNotRecorded(str(recording.get("task_id", "?")), number, what)


async def replay(ctx: SkillContext, browser: Browser, recording: dict[str, Any]) -> list[str]:
    """Run the recorded actions; returns what each did. Raises ``ReplayMismatch``."""
    _needs_secret(recording)
    entries: list[dict[str, Any]] = list(recording.get("actions") or [])
    start = recording.get("start_url") or (entries[0]["url"] if entries else None)
    if start:
        await browser.goto(str(start))
    done: list[str] = []
    for number, entry in enumerate(entries, 1):
        ctx.signal.raise_if_aborted()
        try:
            action = _ACTION.validate_python(entry["action"])
        except (ValidationError, KeyError) as exc:
            raise UserError(f"replay step {number} is not a valid action: {exc}") from None
        if not isinstance(action, BROWSER_ACTIONS):
            continue  # extract and done need the model: nothing to redo
        ctx.progress(number, len(entries), f"Replaying {action.action}", browser.url)
        signature = None
        if entry.get("signature"):
            signature = ElementSignature(**entry["signature"])
            observation = await browser.observe()
            index = getattr(action, "index", None)
            element = find_by_signature(signature, observation.elements, near=index)
            if element is None:
                label = signature.text or signature.name or signature.aria_label or signature.id
                what = f'{signature.role} "{label}"'
                raise ReplayMismatch(number, what, browser.url)
            action = action.model_copy(update={"index": element.index})
        result = await browser.act(action, signature)
        if not result.success:
            raise BrowserError(f"replay step {number} ({action.action}) failed: {result.error}")
        index = getattr(action, "index", None)
        where = f" [{index}]" if index is not None else ""
        done.append(f"{number}. {action.action}{where} on {browser.url}")
    return done
