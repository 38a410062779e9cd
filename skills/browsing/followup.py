"""Follow-ups in a browsing session (nanobrowser's ``follow_up_task``).

When a Browse task ends, the page it ended on is remembered for its session (in
``<state>/browsing/``, one small JSON file per session). The session's next Browse task that
names no URL of its own ("now open the second result") starts from that page instead of a
blank one, for ``browser.follow_up_s`` seconds (600 by default; 0 turns it off). The note goes
through the redactor (``redact``); a page whose URL held a secret is not remembered at all
(its redacted URL would lead elsewhere), and any older note of the session is removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.skills.browsing.config import browser_config

if TYPE_CHECKING:
    from skillrt.skill.context import SkillContext

__all__ = ["recall", "remember"]


def _path(ctx: SkillContext) -> Path:
    name = hashlib.sha256(ctx.session_id.encode("utf-8")).hexdigest()[:32]
    return ctx.config.state_path / "browsing" / f"{name}.json"


def remember(
    ctx: SkillContext, *, url: str, task: str, redact: Callable[[Any], Any] = lambda v: v
) -> None:
    """Keep where this session's Browse task ended (best effort: a failure loses nothing)."""
    if not url or browser_config(ctx.config).follow_up_s <= 0:
        return
    target = _path(ctx)
    if redact(url) != url:  # a URL with a secret in it: no note (and no older one)
        with suppress(OSError):
            target.unlink(missing_ok=True)
        return
    note = {"task_id": ctx.task_id, "url": url, "task": task[:500], "at": time.time()}
    data = redact(note)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".session-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False)
        os.replace(tmp, target)
    except OSError:
        return


def recall(ctx: SkillContext) -> dict[str, Any] | None:
    """Where this session's last Browse task ended, if that was within ``follow_up_s``."""
    window = browser_config(ctx.config).follow_up_s
    if window <= 0:
        return None
    try:
        data = json.loads(_path(ctx).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return None
    if time.time() - float(data.get("at", 0)) > window:
        return None
    return data
