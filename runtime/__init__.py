"""skillrt: an explicit state-machine skill runtime for AI agents.

Chat input in; durable, cancellable, resumable tasks out::

    rt = AgentRuntime.get_instance()
    await rt.initialize()
    msg = await rt.process_input("write an article about Rust ownership")

The builtin skills live in ``skillrt.skills`` (``builtin_skills()``); test models in
``skillrt.testing``.

Every name is loaded on first use (PEP 562), so importing one part (``skillrt.storage``,
``skillrt.exceptions``) does not load the runtime.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.abort import (
        AbortController,
        AbortSignal,
    )
    from skillrt.agent import (
        AgentRuntime,
    )
    from skillrt.context import (
        SkillContext,
        TaskInput,
    )
    from skillrt.conversation import (
        Conversation,
        Turn,
    )
    from skillrt.events import (
        Event,
        EventBus,
    )
    from skillrt.exceptions import (
        AuthenticationError,
        BadParam,
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
        TaskPaused,
        UnknownSkill,
        URLNotAllowed,
        UserError,
        WatchdogTimeout,
    )
    from skillrt.llm.base import (
        LLM,
        LLMMessage,
        LLMResult,
        Usage,
    )
    from skillrt.machine import (
        State,
    )
    from skillrt.messages import (
        ChatMessage,
        TaskSummary,
    )
    from skillrt.replies import (
        Replies,
    )
    from skillrt.router import (
        IntentRouter,
        ParsedIntent,
    )
    from skillrt.settings import (
        RuntimeConfig,
        load_config,
    )
    from skillrt.skill import (
        Skill,
        SkillResult,
        skill,
    )

__version__ = "0.1.0"

__all__ = [
    "LLM",
    "AbortController",
    "AbortSignal",
    "AgentRuntime",
    "AuthenticationError",
    "BadParam",
    "BadRequest",
    "BrowserError",
    "BudgetExceeded",
    "ChatMessage",
    "CheckpointCorrupt",
    "ConfigError",
    "Conversation",
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
    "Replies",
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
    "TaskPaused",
    "TaskSummary",
    "Turn",
    "URLNotAllowed",
    "UnknownSkill",
    "Usage",
    "UserError",
    "WatchdogTimeout",
    "__version__",
    "load_config",
    "skill",
]

_LAZY: dict[str, str] = {
    "LLM": "skillrt.llm.base",
    "AbortController": "skillrt.abort",
    "AbortSignal": "skillrt.abort",
    "AgentRuntime": "skillrt.agent",
    "AuthenticationError": "skillrt.exceptions",
    "BadParam": "skillrt.exceptions",
    "BadRequest": "skillrt.exceptions",
    "BrowserError": "skillrt.exceptions",
    "BudgetExceeded": "skillrt.exceptions",
    "ChatMessage": "skillrt.messages",
    "CheckpointCorrupt": "skillrt.exceptions",
    "ConfigError": "skillrt.exceptions",
    "Conversation": "skillrt.conversation",
    "Event": "skillrt.events",
    "EventBus": "skillrt.events",
    "FileChanged": "skillrt.exceptions",
    "HostUnresolved": "skillrt.exceptions",
    "IntentRouter": "skillrt.router",
    "InvalidTransition": "skillrt.exceptions",
    "LLMMessage": "skillrt.llm.base",
    "LLMResult": "skillrt.llm.base",
    "LockConflict": "skillrt.exceptions",
    "MissingDependency": "skillrt.exceptions",
    "ModelRetry": "skillrt.exceptions",
    "ParsedIntent": "skillrt.router",
    "PathNotAllowed": "skillrt.exceptions",
    "PermissionDenied": "skillrt.exceptions",
    "ProviderError": "skillrt.exceptions",
    "ProviderUnavailable": "skillrt.exceptions",
    "RateLimited": "skillrt.exceptions",
    "Replies": "skillrt.replies",
    "RunError": "skillrt.exceptions",
    "RuntimeConfig": "skillrt.settings",
    "Skill": "skillrt.skill",
    "SkillContext": "skillrt.context",
    "SkillResult": "skillrt.skill",
    "SkillrtError": "skillrt.exceptions",
    "State": "skillrt.machine",
    "StructuredOutputError": "skillrt.exceptions",
    "TaskCancelled": "skillrt.exceptions",
    "TaskPaused": "skillrt.exceptions",
    "TaskInput": "skillrt.context",
    "TaskNotFound": "skillrt.exceptions",
    "TaskSummary": "skillrt.messages",
    "Turn": "skillrt.conversation",
    "URLNotAllowed": "skillrt.exceptions",
    "UnknownSkill": "skillrt.exceptions",
    "Usage": "skillrt.llm.base",
    "UserError": "skillrt.exceptions",
    "WatchdogTimeout": "skillrt.exceptions",
    "load_config": "skillrt.settings",
    "skill": "skillrt.skill",
}


class _Package(types.ModuleType):
    """``skillrt.skill`` names both the decorator and the module that defines it. Importing the
    module sets it as an attribute of the package, which would hide the decorator; the eager
    ``__init__`` rebound the name afterwards, the lazy one refuses the module instead (it stays
    importable as ``from skillrt.skill import ...``, through ``sys.modules``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "skill" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'skillrt' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # loaded once: later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
