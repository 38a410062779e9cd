"""Browsing skills: ``Browse`` (a web task) and ``ResearchWeb`` (search, read, cite).

The pieces, each usable on its own: ``URLFirewall`` (checked at every request and redirect
hop), the ``Browser`` protocol with ``HttpBrowser`` (httpx, no JavaScript) and
``ChromiumBrowser`` (Playwright driving an installed Chromium, ``skillrt[browser]``),
``Observation`` (indexed elements with signatures plus readable text, within a token budget),
the ``Action`` union, ``BrowserAgent`` (the planner/navigator loop), search providers,
predefined plans (``config/plans/*.toml``) and the settings (``browser_config``: the
``[browser]`` section as ``BrowserConfig``).
"""

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
    run_action,
)
from skillrt.skills.browsing.agent import AgentResult, AgentStep, BrowserAgent
from skillrt.skills.browsing.browser import Browser, firewall_from_config, open_browser
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
