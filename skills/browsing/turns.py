"""What one turn of the browsing loop leaves in the task's journal: a ``TurnRecord``.

Each turn is a durable step (``browser-step-N``) whose result is a ``TurnRecord`` as JSON: the
step as it went (``StepRecord``: URL, plan, navigator state, actions, results, error, refused
URLs, nudge, what replay needs), its one-line summary, where the browser is, the agent's state
after it (failures in a row, memory, extracts, pending answer, replan and rejected flags,
nudge, plan, repeat counts) and the outcome when the turn ended the task. A resumed task
validates each stored turn into a ``TurnRecord`` and takes on its state without running it.

The JSON keys are the ones the untyped dict of earlier versions had, so their journals read
as they are; unknown keys are ignored and missing ones take their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from skillrt.skills.browsing.schemas import (
    NavigatorState,
    PlannerOutput,
    PredefinedPlannerOutput,
)

__all__ = ["AgentStep", "EndReason", "Plan", "StepRecord", "TurnOutcome", "TurnRecord"]

EndReason = Literal["completed", "max_steps", "max_failures", "repeated_action", "unsuccessful"]
Plan = PlannerOutput | PredefinedPlannerOutput


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")


class StepRecord(_Record):
    """An ``AgentStep`` as journalled (the plan stays JSON: its model depends on the task)."""

    number: int
    url: str = ""
    plan: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    actions: list[str] = Field(default_factory=list)
    results: list[str] = Field(default_factory=list)
    error: str | None = None
    refused: list[str] = Field(default_factory=list)
    nudge: str | None = None
    recorded: list[dict[str, Any]] = Field(default_factory=list)  # for replay (replay.py)


class TurnOutcome(_Record):
    """How the task ended, when this turn ended it."""

    success: bool
    answer: str = ""
    reason: EndReason
    detail: str = ""


class TurnRecord(_Record):
    """One turn of the loop, as the journal keeps it."""

    step: StepRecord
    summary: str = ""
    url: str | None = None  # where the browser was after the turn (a resume reopens it)
    failures: int = 0
    memory: str | None = None
    extracted: list[str] = Field(default_factory=list)
    pending_answer: str | None = None
    replan: bool = False
    rejected: bool = False
    nudge: str | None = None
    plan: dict[str, Any] | None = None
    repeats: dict[str, int] = Field(default_factory=dict)
    outcome: TurnOutcome | None = None
    # The pages' text the model was first shown in this turn (observations, extracts' pages):
    # what a final answer is judged by, so a resumed task judges it by the same pages.
    seen: list[str] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_nothing_seen(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Its JSON without ``seen`` when there is none: a record keeps the keys an older
        version wrote, so each version reads the other's journal as it is."""
        data: dict[str, Any] = dump(self)
        if not data.get("seen"):
            data.pop("seen", None)
        return data


@dataclass(slots=True)
class AgentStep:
    """One turn of the loop, appended to the history whatever happened."""

    number: int
    url: str = ""
    plan: Plan | None = None
    state: NavigatorState | None = None
    actions: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    error: str | None = None
    refused: list[str] = field(default_factory=list)
    nudge: str | None = None
    recorded: list[dict[str, Any]] = field(default_factory=list)  # for replay (replay.py)

    def to_record(self) -> StepRecord:
        return StepRecord(
            number=self.number,
            url=self.url,
            plan=None if self.plan is None else self.plan.model_dump(mode="json"),
            state=None if self.state is None else self.state.model_dump(mode="json"),
            actions=self.actions,
            results=self.results,
            error=self.error,
            refused=self.refused,
            nudge=self.nudge,
            recorded=self.recorded,
        )

    @classmethod
    def from_record(cls, record: StepRecord, plan_model: type[Plan]) -> AgentStep:
        return cls(
            number=record.number,
            url=record.url,
            plan=None if record.plan is None else plan_model.model_validate(record.plan),
            state=None if record.state is None else NavigatorState.model_validate(record.state),
            actions=list(record.actions),
            results=list(record.results),
            error=record.error,
            refused=list(record.refused),
            nudge=record.nudge,
            recorded=list(record.recorded),
        )

    def summary(self) -> str:
        where = f" at {self.url}" if self.url else ""
        done = "; ".join(self.results) or ("skipped: " + self.nudge if self.nudge else "-")
        error = f" [error: {self.error}]" if self.error and self.error not in done else ""
        return f"Step {self.number}{where}: {done}{error}"
