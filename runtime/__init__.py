"""skillrt: an explicit state-machine skill runtime for AI agents.

Chat input in; durable, cancellable, resumable tasks out::

    rt = AgentRuntime.get_instance()
    await rt.initialize()
    msg = await rt.process_input("write an article about Rust ownership")

The builtin skills live in ``skillrt.skills`` (``builtin_skills()``); test models in
``skillrt.testing``.
"""

from skillrt.abort import AbortController, AbortSignal
from skillrt.agent import AgentRuntime
from skillrt.context import SkillContext, TaskInput
from skillrt.events import Event, EventBus
from skillrt.exceptions import (
    AuthenticationError,
    BadRequest,
    BrowserError,
    BudgetExceeded,
    CheckpointCorrupt,
    ConfigError,
    FileChanged,
    HostUnresolved,
    InvalidTransition,
    LockConflict,
    MissingDependency,
    ModelRetry,
    PathNotAllowed,
    PermissionDenied,
    ProviderError,
    ProviderUnavailable,
    RateLimited,
    RunError,
    SkillrtError,
    StructuredOutputError,
    TaskCancelled,
    TaskNotFound,
    UnknownSkill,
    URLNotAllowed,
    UserError,
    WatchdogTimeout,
)
from skillrt.llm.base import LLM, LLMMessage, LLMResult, Usage
from skillrt.machine import State
from skillrt.messages import ChatMessage, TaskSummary
from skillrt.router import IntentRouter, ParsedIntent
from skillrt.settings import RuntimeConfig, load_config
from skillrt.skill import Skill, SkillResult, skill

__version__ = "0.1.0"

__all__ = [
    "LLM",
    "AbortController",
    "AbortSignal",
    "AgentRuntime",
    "AuthenticationError",
    "BadRequest",
    "BrowserError",
    "BudgetExceeded",
    "ChatMessage",
    "CheckpointCorrupt",
    "ConfigError",
    "Event",
    "EventBus",
    "FileChanged",
    "HostUnresolved",
    "IntentRouter",
    "InvalidTransition",
    "LLMMessage",
    "LLMResult",
    "LockConflict",
    "MissingDependency",
    "ModelRetry",
    "ParsedIntent",
    "PathNotAllowed",
    "PermissionDenied",
    "ProviderError",
    "ProviderUnavailable",
    "RateLimited",
    "RunError",
    "RuntimeConfig",
    "Skill",
    "SkillContext",
    "SkillResult",
    "SkillrtError",
    "State",
    "StructuredOutputError",
    "TaskCancelled",
    "TaskInput",
    "TaskNotFound",
    "TaskSummary",
    "URLNotAllowed",
    "UnknownSkill",
    "Usage",
    "UserError",
    "WatchdogTimeout",
    "__version__",
    "load_config",
    "skill",
]
