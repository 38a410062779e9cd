"""Browsing skills: ``Browse`` (a web task) and ``ResearchWeb`` (search, read, cite).

The pieces, each usable on its own: ``URLFirewall`` (checked at every request and redirect
hop), the ``Browser`` protocol with ``HttpBrowser`` (httpx, no JavaScript) and
``ChromiumBrowser`` (Playwright driving an installed Chromium, ``skillrt[browser]``),
``Observation`` (indexed elements with signatures plus readable text, within a token budget),
the ``Action`` union, ``BrowserAgent`` (the planner/navigator loop), search providers,
predefined plans (``config/plans/*.toml``) and the settings (``browser_config``: the
``[browser]`` section as ``BrowserConfig``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.skills.browsing.actions import (
        Action,
        ActionResult,
        BackAction,
        BrowserAction,
        ClickAction,
        DoneAction,
        ExtractAction,
        GotoAction,
        ScrollAction,
        SelectAction,
        SubmitAction,
        TypeAction,
    )
    from skillrt.skills.browsing.agent import AgentResult, AgentStep, BrowserAgent
    from skillrt.skills.browsing.backends import firewall_from_config, open_browser
    from skillrt.skills.browsing.browser import Browser, run_action
    from skillrt.skills.browsing.chromium_browser import ChromiumBrowser
    from skillrt.skills.browsing.config import BrowserConfig, SearchConfig, browser_config
    from skillrt.skills.browsing.firewall import URLFirewall, normalize_host
    from skillrt.skills.browsing.http_browser import HttpBrowser
    from skillrt.skills.browsing.observation import (
        Element,
        ElementSignature,
        Observation,
        find_by_signature,
    )
    from skillrt.skills.browsing.plans import PredefinedPlan, available_plans, load_plan
    from skillrt.skills.browsing.prompts import fence_untrusted
    from skillrt.skills.browsing.research import check_citations
    from skillrt.skills.browsing.schemas import (
        NavigatorOutput,
        NavigatorState,
        PlannerOutput,
        PredefinedPlannerOutput,
    )
    from skillrt.skills.browsing.search import SearchResult, search_provider
    from skillrt.skills.browsing.skills import browse, browsing_skills, research_web

__all__ = [
    "Action",
    "ActionResult",
    "AgentResult",
    "AgentStep",
    "BackAction",
    "Browser",
    "BrowserAction",
    "BrowserAgent",
    "BrowserConfig",
    "ChromiumBrowser",
    "ClickAction",
    "DoneAction",
    "Element",
    "ElementSignature",
    "ExtractAction",
    "GotoAction",
    "HttpBrowser",
    "NavigatorOutput",
    "NavigatorState",
    "Observation",
    "PlannerOutput",
    "PredefinedPlan",
    "PredefinedPlannerOutput",
    "ScrollAction",
    "SearchConfig",
    "SearchResult",
    "SelectAction",
    "SubmitAction",
    "TypeAction",
    "URLFirewall",
    "available_plans",
    "browse",
    "browser_config",
    "browsing_skills",
    "check_citations",
    "fence_untrusted",
    "find_by_signature",
    "firewall_from_config",
    "load_plan",
    "normalize_host",
    "open_browser",
    "research_web",
    "run_action",
    "search_provider",
]

# Loaded on first use (PEP 562): importing one part (its settings, say) loads no other.
_WHERE: dict[str, str] = {
    "Action": "skillrt.skills.browsing.actions",
    "ActionResult": "skillrt.skills.browsing.actions",
    "AgentResult": "skillrt.skills.browsing.agent",
    "AgentStep": "skillrt.skills.browsing.agent",
    "BackAction": "skillrt.skills.browsing.actions",
    "Browser": "skillrt.skills.browsing.browser",
    "BrowserAction": "skillrt.skills.browsing.actions",
    "BrowserAgent": "skillrt.skills.browsing.agent",
    "BrowserConfig": "skillrt.skills.browsing.config",
    "ChromiumBrowser": "skillrt.skills.browsing.chromium_browser",
    "ClickAction": "skillrt.skills.browsing.actions",
    "DoneAction": "skillrt.skills.browsing.actions",
    "Element": "skillrt.skills.browsing.observation",
    "ElementSignature": "skillrt.skills.browsing.observation",
    "ExtractAction": "skillrt.skills.browsing.actions",
    "GotoAction": "skillrt.skills.browsing.actions",
    "HttpBrowser": "skillrt.skills.browsing.http_browser",
    "NavigatorOutput": "skillrt.skills.browsing.schemas",
    "NavigatorState": "skillrt.skills.browsing.schemas",
    "Observation": "skillrt.skills.browsing.observation",
    "PlannerOutput": "skillrt.skills.browsing.schemas",
    "PredefinedPlan": "skillrt.skills.browsing.plans",
    "PredefinedPlannerOutput": "skillrt.skills.browsing.schemas",
    "ScrollAction": "skillrt.skills.browsing.actions",
    "SearchConfig": "skillrt.skills.browsing.config",
    "SearchResult": "skillrt.skills.browsing.search",
    "SelectAction": "skillrt.skills.browsing.actions",
    "SubmitAction": "skillrt.skills.browsing.actions",
    "TypeAction": "skillrt.skills.browsing.actions",
    "URLFirewall": "skillrt.skills.browsing.firewall",
    "available_plans": "skillrt.skills.browsing.plans",
    "browse": "skillrt.skills.browsing.skills",
    "browser_config": "skillrt.skills.browsing.config",
    "browsing_skills": "skillrt.skills.browsing.skills",
    "check_citations": "skillrt.skills.browsing.research",
    "fence_untrusted": "skillrt.skills.browsing.prompts",
    "find_by_signature": "skillrt.skills.browsing.observation",
    "firewall_from_config": "skillrt.skills.browsing.backends",
    "load_plan": "skillrt.skills.browsing.plans",
    "normalize_host": "skillrt.skills.browsing.firewall",
    "open_browser": "skillrt.skills.browsing.backends",
    "research_web": "skillrt.skills.browsing.skills",
    "run_action": "skillrt.skills.browsing.browser",
    "search_provider": "skillrt.skills.browsing.search",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
