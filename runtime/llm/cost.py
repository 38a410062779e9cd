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
    """Adds up usage as it is recorded. A call of an unpriced model counts as unpriced, not free.

    Per task, only the ``keep_tasks`` most recent tasks are kept (a reply's caller reads its
    task's totals just after it ends; a long-lived runtime must not grow for ever).
    """

    def __init__(self, *, keep_tasks: int = 1000) -> None:
        self.keep_tasks = keep_tasks
        self.by_task: dict[str, CostTotals] = {}
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
        totals = self.by_task.get(task_id)
        if totals is None:
            totals = self.by_task[task_id] = CostTotals()
            while len(self.by_task) > self.keep_tasks:  # the oldest task first
                del self.by_task[next(iter(self.by_task))]
        totals.add(tokens, cost)
        self.by_session[session_id].add(tokens, cost)
        self.by_model[model].add(tokens, cost)
        if skill:
            self.by_skill[skill].add(tokens, cost)

    def task(self, task_id: str) -> CostTotals:
        return self.by_task.get(task_id) or CostTotals()

    def session(self, session_id: str) -> CostTotals:
        return self.by_session.get(session_id) or CostTotals()
