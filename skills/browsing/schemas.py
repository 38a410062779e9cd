"""The structured answers the browsing agent asks the model for.

``NavigatorOutput``: the navigator's read of the page and the next actions.
``PlannerOutput``: the dynamic planner's report (``proposed_actions`` at most five).
``PredefinedPlannerOutput``: the planner of a predefined plan, which keeps ``todo_markdown``
(``- [x] done`` / ``- [ ] open``) and may finish only when ``all_todos_complete``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from skillrt.skills.browsing.actions import Action

__all__ = [
    "ExtractOutput",
    "NavigatorOutput",
    "NavigatorState",
    "PlannerOutput",
    "PredefinedPlannerOutput",
]


class _Schema(BaseModel):
    model_config = ConfigDict(extra="ignore")


class NavigatorState(_Schema):
    evaluation_previous_goal: str = Field(
        default="", description="Did the last actions work? Success, failed or unknown, and why."
    )
    memory: str = Field(default="", description="What to remember: progress, facts found so far.")
    next_goal: str = Field(default="", description="What the next actions should achieve.")


class NavigatorOutput(_Schema):
    current_state: NavigatorState = Field(default_factory=NavigatorState)
    actions: list[Action] = Field(
        default_factory=list, description="The next actions, run in order."
    )


class PlannerOutput(_Schema):
    user_task: str = Field(default="", description="The task, in your own words.")
    execution_history: str = Field(default="", description="What was tried so far.")
    current_state: str = Field(default="", description="Where things stand on the current page.")
    challenges_identified: str = Field(default="", description="What is in the way, if anything.")
    step_by_step_reasoning: str = Field(default="", description="Because A, next B.")
    proposed_actions: list[str] = Field(
        default_factory=list, max_length=5, description="At most five next steps, in words."
    )
    task_complete: bool = False
    final_answer: str = Field(default="", description="The answer, when task_complete is true.")

    @property
    def done(self) -> bool:
        return self.task_complete


class PredefinedPlannerOutput(_Schema):
    execution_history: str = ""
    current_state: str = ""
    challenges_identified: str = ""
    step_by_step_reasoning: str = ""
    todo_markdown: str = Field(
        default="", description="The plan's steps as a checklist: '- [x] done', '- [ ] open'."
    )
    proposed_actions: list[str] = Field(default_factory=list, max_length=5)
    all_todos_complete: bool = False
    final_answer: str = Field(default="", description="Only when every todo is ticked.")

    @property
    def done(self) -> bool:
        return self.all_todos_complete


class ExtractOutput(_Schema):
    answer: str = Field(description="The answer from the page text, or what is missing.")
    found: bool = Field(default=True, description="False when the page does not say.")
