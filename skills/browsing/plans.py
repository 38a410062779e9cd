"""Predefined plans: named step lists the planner follows as a checklist.

Plans ship as ``config/plans/<name>.toml`` (``name``, ``goal``, ``steps``) in the package
``skillrt.config`` and are read with ``importlib.resources``; a caller may also pass steps.
"""

from __future__ import annotations

import re
import tomllib
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillrt.exceptions import ConfigError, UserError

__all__ = ["PredefinedPlan", "available_plans", "load_plan", "plan_from"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class PredefinedPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    goal: str = ""
    steps: list[str] = Field(min_length=1, max_length=30)

    def todo_markdown(self) -> str:
        return "\n".join(f"- [ ] {step}" for step in self.steps)


def _plans_dir() -> resources.abc.Traversable:
    return resources.files("skillrt.config").joinpath("plans")


def available_plans() -> list[str]:
    """The names of the shipped plans."""
    folder = _plans_dir()
    if not folder.is_dir():
        return []
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_plan(name: str) -> PredefinedPlan:
    """The shipped plan ``name``; ``UserError`` naming the known plans when there is none."""
    if not _NAME.match(name):
        raise UserError(f"not a plan name: {name!r}")
    source = _plans_dir().joinpath(f"{name}.toml")
    if not source.is_file():
        known = ", ".join(available_plans()) or "(none)"
        raise UserError(f"no predefined plan {name!r}; known plans: {known}")
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
        return PredefinedPlan.model_validate({"name": name, **data})
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"plans/{name}.toml", "(syntax)", f"valid TOML ({exc})") from exc
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(p) for p in error["loc"])
        raise ConfigError(f"plans/{name}.toml", key, error["msg"]) from exc


def plan_from(plan: str | list[str] | None) -> PredefinedPlan | None:
    """A plan from a name, a list of steps, or text with one step a line (numbered or not)."""
    if plan is None or (isinstance(plan, str) and not plan.strip()):
        return None
    if isinstance(plan, list):
        steps = [s.strip() for s in plan if s.strip()]
    elif "\n" not in plan.strip() and _NAME.match(plan.strip()):
        return load_plan(plan.strip())
    else:
        lines = (re.sub(r"^\s*(?:[-*]|\d+[.)])\s*", "", line) for line in plan.splitlines())
        steps = [line.strip() for line in lines if line.strip()]
    if not steps:
        raise UserError("a plan needs at least one step")
    return PredefinedPlan(name="custom", goal="", steps=steps)
