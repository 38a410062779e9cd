"""The actions the model may take, as one pydantic union discriminated on ``action``.

``goto``, ``click``, ``type``, ``select``, ``submit``, ``scroll`` and ``back`` act on the
browser; ``extract`` (a question over the page text) and ``done`` are the executor's.

``browser.run_action`` carries them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Action",
    "ActionResult",
    "BackAction",
    "BrowserAction",
    "ClickAction",
    "DoneAction",
    "ExtractAction",
    "GotoAction",
    "ScrollAction",
    "SelectAction",
    "SubmitAction",
    "TypeAction",
    "describe_action",
]


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore")


class GotoAction(_Action):
    """Open a URL."""

    action: Literal["goto"] = "goto"
    url: str


class ClickAction(_Action):
    """Click element [index] (a link, a button, a checkbox)."""

    action: Literal["click"] = "click"
    index: int


class TypeAction(_Action):
    """Type text into the text field [index], replacing what it held."""

    action: Literal["type"] = "type"
    index: int
    text: str


class SelectAction(_Action):
    """Choose an option (by its text or value) in the drop-down [index]."""

    action: Literal["select"] = "select"
    index: int
    option: str


class SubmitAction(_Action):
    """Submit the form that holds element [index] (or the form last typed into)."""

    action: Literal["submit"] = "submit"
    index: int | None = None


class ScrollAction(_Action):
    """Show the next (or previous) part of a long page."""

    action: Literal["scroll"] = "scroll"
    direction: Literal["up", "down"] = "down"


class BackAction(_Action):
    """Go back to the previous page."""

    action: Literal["back"] = "back"


class ExtractAction(_Action):
    """Answer a question from the current page's text (the answer goes to your memory)."""

    action: Literal["extract"] = "extract"
    question: str


class DoneAction(_Action):
    """Say the task is finished, with the answer (the planner confirms it)."""

    action: Literal["done"] = "done"
    answer: str
    success: bool = True


Action: TypeAlias = Annotated[
    GotoAction
    | ClickAction
    | TypeAction
    | SelectAction
    | SubmitAction
    | ScrollAction
    | BackAction
    | ExtractAction
    | DoneAction,
    Field(discriminator="action"),
]

BrowserAction: TypeAlias = (
    GotoAction | ClickAction | TypeAction | SelectAction | SubmitAction | ScrollAction | BackAction
)
BROWSER_ACTIONS = (
    GotoAction,
    ClickAction,
    TypeAction,
    SelectAction,
    SubmitAction,
    ScrollAction,
    BackAction,
)


@dataclass(slots=True)
class ActionResult:
    """What an action did. ``error`` is for the model; ``stale`` means the target was not found.

    ``resolved_by`` says how the target element was found: ``index`` (as given),
    ``signature`` (re-found after the page changed) or ``refresh`` (after re-reading the page).
    """

    action: str
    success: bool = True
    message: str = ""
    error: str | None = None
    navigated: bool = False
    url: str = ""
    stale: bool = False
    resolved_by: Literal["index", "signature", "refresh"] | None = None
    is_recoverable: bool = True

    @classmethod
    def failed(cls, action: str, error: str, *, stale: bool = False) -> ActionResult:
        return cls(action=action, success=False, error=error, stale=stale)

    @classmethod
    def scrolled(cls, action: str, direction: str, moved: bool) -> ActionResult:
        """A scroll's result: failed (with the same message) when there was nothing that way."""
        message = f"scrolled {direction}" if moved else "already at the edge"
        return cls(action, success=moved, message=message, error=None if moved else message)

    def summary(self) -> str:
        if not self.success:
            return f"failed: {self.error}"
        return self.message or "ok"


def describe_action(action: BaseModel) -> str:
    """A short human form: ``click [3]``, ``type [2] "rust"``, ``goto https://...``."""
    data = action.model_dump(exclude={"action"}, exclude_none=True)
    name = str(getattr(action, "action", type(action).__name__))
    parts = [name]
    if "index" in data:
        parts.append(f"[{data.pop('index')}]")
    parts.extend(f"{v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in data.items())
    return " ".join(parts)
