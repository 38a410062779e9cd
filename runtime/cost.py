"""Tokens and money, per task, per skill and per session."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

__all__ = ["CostTotals", "CostTracker"]


@dataclass(slots=True)
class CostTotals:
    tokens: int = 0
    cost: float = 0.0
    calls: int = 0
    unpriced_calls: int = 0

    def add(self, tokens: int, cost: float | None) -> None:
        self.tokens += tokens
        self.calls += 1
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost += cost


class CostTracker:
    """Adds up usage as it is recorded. A call of an unpriced model counts as unpriced, not free."""

    def __init__(self) -> None:
        self.by_task: dict[str, CostTotals] = defaultdict(CostTotals)
        self.by_skill: dict[str, CostTotals] = defaultdict(CostTotals)
        self.by_session: dict[str, CostTotals] = defaultdict(CostTotals)
        self.by_model: dict[str, CostTotals] = defaultdict(CostTotals)

    def record(
        self,
        *,
        task_id: str,
        session_id: str,
        skill: str | None,
        model: str,
        tokens: int,
        cost: float | None,
    ) -> None:
        self.by_task[task_id].add(tokens, cost)
        self.by_session[session_id].add(tokens, cost)
        self.by_model[model].add(tokens, cost)
        if skill:
            self.by_skill[skill].add(tokens, cost)

    def task(self, task_id: str) -> CostTotals:
        return self.by_task.get(task_id) or CostTotals()

    def session(self, session_id: str) -> CostTotals:
        return self.by_session.get(session_id) or CostTotals()

    def forget_task(self, task_id: str) -> None:
        self.by_task.pop(task_id, None)
