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
import importlib.machinery
import sys
import types
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

    from skillrt._routing.router import (
        IntentRouter,
        ParsedIntent,
    )
    from skillrt._tasks.machine import (
        State,
    )
    from skillrt.abort import (
        AbortController,
        AbortSignal,
    )
    from skillrt.agent import (
        AgentRuntime,
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
    from skillrt.messages import (
        ChatMessage,
        TaskSummary,
    )
    from skillrt.settings import (
        RuntimeConfig,
        load_config,
    )
    from skillrt.skill.context import (
        SkillContext,
        TaskInput,
    )
    from skillrt.skill.conversation import (
        Conversation,
        Turn,
    )
    from skillrt.skill.definition import (
        Skill,
        SkillResult,
        skill,
    )
    from skillrt.skill.intent import Intent
    from skillrt.skill.replies import (
        Replies,
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
    "Intent",
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
    "Conversation": "skillrt.skill.conversation",
    "Event": "skillrt.events",
    "EventBus": "skillrt.events",
    "FileChanged": "skillrt.exceptions",
    "HostUnresolved": "skillrt.exceptions",
    "IntentRouter": "skillrt._routing.router",
    "InvalidTransition": "skillrt.exceptions",
    "LLMMessage": "skillrt.llm.base",
    "LLMResult": "skillrt.llm.base",
    "LockConflict": "skillrt.exceptions",
    "MissingDependency": "skillrt.exceptions",
    "ModelRetry": "skillrt.exceptions",
    "ParsedIntent": "skillrt._routing.router",
    "PathNotAllowed": "skillrt.exceptions",
    "PermissionDenied": "skillrt.exceptions",
    "ProviderError": "skillrt.exceptions",
    "ProviderUnavailable": "skillrt.exceptions",
    "RateLimited": "skillrt.exceptions",
    "Replies": "skillrt.skill.replies",
    "RunError": "skillrt.exceptions",
    "RuntimeConfig": "skillrt.settings",
    "Intent": "skillrt.skill.intent",
    "Skill": "skillrt.skill.definition",
    "SkillContext": "skillrt.skill.context",
    "SkillResult": "skillrt.skill.definition",
    "SkillrtError": "skillrt.exceptions",
    "State": "skillrt._tasks.machine",
    "StructuredOutputError": "skillrt.exceptions",
    "TaskCancelled": "skillrt.exceptions",
    "TaskPaused": "skillrt.exceptions",
    "TaskInput": "skillrt.skill.context",
    "TaskNotFound": "skillrt.exceptions",
    "TaskSummary": "skillrt.messages",
    "Turn": "skillrt.skill.conversation",
    "URLNotAllowed": "skillrt.exceptions",
    "UnknownSkill": "skillrt.exceptions",
    "Usage": "skillrt.llm.base",
    "UserError": "skillrt.exceptions",
    "WatchdogTimeout": "skillrt.exceptions",
    "load_config": "skillrt.settings",
    "skill": "skillrt.skill.definition",
}


class _Package(types.ModuleType):
    """``skillrt.skill`` names both the decorator and the skill author's subpackage. Importing the
    subpackage sets it as an attribute of this package, which would hide the decorator, so that
    attribute refuses a module (the subpackage stays importable as ``skillrt.skill``, through
    ``sys.modules``)."""

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


# Modules that moved when the package was grouped into rooms (issue 21), by their old names. An
# import of an old name gets the moved module itself (one module object, not a copy), so code
# written against the old paths keeps working. New code imports the new paths.
_MOVED: dict[str, str] = {
    "skillrt.chatlog": "skillrt._chat.chatlog",
    "skillrt.checkpointing": "skillrt._tasks.checkpointing",
    "skillrt.clarify": "skillrt._routing.clarify",
    "skillrt.committer": "skillrt._state.committer",
    "skillrt.context": "skillrt.skill.context",
    "skillrt.conversation": "skillrt.skill.conversation",
    "skillrt.cost": "skillrt.llm.cost",
    "skillrt.driver": "skillrt._tasks.run",
    "skillrt.inputs": "skillrt._routing.inputs",
    "skillrt.intent_table": "skillrt._routing.intent_table",
    "skillrt.listing": "skillrt._state.summary",
    "skillrt.logs": "skillrt._io.logs",
    "skillrt.machine": "skillrt._tasks.machine",
    "skillrt.params": "skillrt.skill.params",
    "skillrt.planning": "skillrt._tasks.planning",
    "skillrt.prefilter": "skillrt._routing.prefilter",
    "skillrt.redaction": "skillrt._io.redaction",
    "skillrt.refusals": "skillrt.skill.refusals",
    "skillrt.replies": "skillrt.skill.replies",
    "skillrt.router": "skillrt._routing.router",
    "skillrt.router_samples": "skillrt.skills.samples",
    "skillrt.shared": "skillrt._tasks.failover",
    "skillrt.syncloop": "skillrt._io.syncloop",
    "skillrt.task": "skillrt._tasks.task",
    "skillrt.tasktable": "skillrt._tasks.tasktable",
    "skillrt.storage.checkpoints": "skillrt._state.embedded.checkpoints",
    "skillrt.storage.faults": "skillrt._io.faults",
    "skillrt.storage.files": "skillrt.blog.files",
    "skillrt.storage.graph": "skillrt.blog.graph",
    "skillrt.storage.history": "skillrt._state.embedded.history",
    "skillrt.storage.layout": "skillrt._io.layout",
    "skillrt.storage.locks": "skillrt.blog.locks",
    "skillrt.storage.markdown": "skillrt.blog.markdown",
    "skillrt.storage.memory": "skillrt.blog.memory",
    "skillrt.storage.pg": "skillrt._state.postgres",
    "skillrt.storage.pg_schema": "skillrt._state.postgres.schema",
    "skillrt.storage.posts": "skillrt.blog.posts",
    "skillrt.storage.records": "skillrt._state.records",
    "skillrt.storage.runlocks": "skillrt._state.embedded.runlocks",
    "skillrt.storage.sqlite": "skillrt.blog.sqlite",
    "skillrt.storage.tempfiles": "skillrt.blog.tempfiles",
    "skillrt.storage.wikilinks": "skillrt.blog.wikilinks",
}


class _MovedModules:
    """Finds each old module name of ``_MOVED`` and loads the moved module under it (a meta
    path finder and loader by their methods: the ``importlib.abc`` bases imported
    ``importlib.resources``, ``tempfile`` and ``shutil`` with every ``import skillrt``).

    ``skillrt.storage`` itself is an empty package that holds the old storage names.
    """

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name in _MOVED or name == "skillrt.storage":
            package = name == "skillrt.storage"
            return importlib.machinery.ModuleSpec(name, cast("Loader", self), is_package=package)
        return None

    def create_module(self, spec: Any) -> types.ModuleType | None:
        moved = _MOVED.get(spec.name)
        return None if moved is None else importlib.import_module(moved)

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the moved module ran when it was imported under its own name."""


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModules())
