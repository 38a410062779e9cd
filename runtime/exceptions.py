"""Every exception skillrt raises, in one tree.

Exceptions carry data and do nothing else: no logging, no side effects.

::

    SkillrtError
    ├── UserError                    a usage mistake: fix the call, the input or the config
    │   ├── BadParam                 a skill refuses a parameter: blank, too long... (field, reply)
    │   ├── ConfigError              a config file or variable is malformed (file, key, expected)
    │   ├── PathNotAllowed           a path escapes the content root, or is malformed
    │   ├── FileMissing              a file to read does not exist (path relative to the root)
    │   ├── InvalidFrontmatter       a post's YAML frontmatter cannot be read (path, reason)
    │   │   └── FrontmatterNotKept   a field change its frontmatter cannot take as written
    │   ├── MissingDependency        an optional extra is not installed (says what to install)
    │   └── UnknownSkill             no skill of that name is registered
    ├── ModelRetry                   a signal back to the model: its output was unusable, try again
    └── RunError                     the run failed
        ├── InvalidTransition        a state change the transition table does not allow
        ├── TaskCancelled            the task's abort signal fired (reason says why)
        ├── TaskPaused               the task was asked to pause: raised at its next step
        ├── WatchdogTimeout          a working state lasted longer than its watchdog allows
        ├── BudgetExceeded           the task used more tokens or money than its budget
        ├── LockConflict             another task holds the lock on a path (names the holder)
        ├── FileChanged              a file changed on disk since it was read
        ├── CheckpointCorrupt        a checkpoint record or database could not be read
        ├── StoreUnavailable         the shared task store cannot be used (unreachable, schema)
        ├── TaskNotFound             no task record with that id
        ├── ServerError              a skillrt server answered with a problem (status, code)
        ├── URLNotAllowed            the URL firewall refused a URL (says why)
        ├── BrowserError             a page action failed (recoverable or not)
        │   └── HostUnresolved       a host name did not resolve (no network?), not a refusal
        ├── RepetitionStopped        a generation fell into a loop and was cut (kept: the text
        │                            before the loop); TaskLLM turns it into a shorter answer
        └── ProviderError            the model provider failed
            ├── AuthenticationError  401: bad or missing key            (fatal)
            ├── PermissionDenied     403: the key may not do this       (fatal)
            ├── BadRequest           400/404/422: the request is wrong   (fatal)
            ├── RateLimited          429: slow down (retry_after)        (retryable)
            ├── ProviderUnavailable  5xx, timeouts, connection errors    (retryable)
            │   └── ModelCrashed     the embedded model's worker died (signal_name, exit_code)
            ├── StructuredOutputError  the model's answer never matched the schema (raw text)
            └── ScriptExhausted      a ScriptedModel was asked more often than it has answers

``fatal`` on a ProviderError tells loops (the browsing executor) to stop at once
instead of counting a failure and trying again.
"""

from __future__ import annotations

__all__ = [
    "AuthenticationError",
    "BadParam",
    "BadRequest",
    "BrowserError",
    "BudgetExceeded",
    "CheckpointCorrupt",
    "ConfigError",
    "FileChanged",
    "FileMissing",
    "FrontmatterNotKept",
    "HostUnresolved",
    "InvalidFrontmatter",
    "InvalidTransition",
    "LockConflict",
    "MissingDependency",
    "ModelCrashed",
    "ModelRetry",
    "PathNotAllowed",
    "PermissionDenied",
    "ProviderError",
    "ProviderUnavailable",
    "RateLimited",
    "RepetitionStopped",
    "RunError",
    "ScriptExhausted",
    "ServerError",
    "SkillrtError",
    "StoreUnavailable",
    "StructuredOutputError",
    "TaskCancelled",
    "TaskNotFound",
    "TaskPaused",
    "URLNotAllowed",
    "UnknownSkill",
    "UserError",
    "WatchdogTimeout",
]


class SkillrtError(Exception):
    """Root of every exception skillrt raises on purpose."""


# --- usage mistakes -------------------------------------------------------------------------


class UserError(SkillrtError):
    """The caller, the input or the configuration is wrong; retrying will not help."""


class BadParam(UserError):
    """A skill refuses a parameter's value (blank, too long, unknown...).

    ``reply`` names the reply that says so in the user's language, looked up in the skill's
    ``Replies`` (then the runtime's generic ones); it is also the result's ``data["error"]``.
    ``values`` fill in that reply (``field`` is always there).
    """

    def __init__(self, field: str, reply: str, **values: object) -> None:
        self.field = field
        self.reply = reply
        self.values = values
        shown = ", ".join(f"{k}={v!r}" for k, v in values.items())
        super().__init__(f"bad parameter {field!r}: {reply}" + (f" ({shown})" if shown else ""))


class ConfigError(UserError):
    def __init__(self, source: str, key: str, expected: str, got: object = None) -> None:
        self.source = source
        self.key = key
        self.expected = expected
        self.got = got
        shown = "" if got is None else f", got {got!r}"
        super().__init__(f"{source}: {key}: expected {expected}{shown}")


class PathNotAllowed(UserError):
    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"path not allowed: {path!r}: {reason}")


class FileMissing(UserError):
    """A file to read does not exist; ``path`` is relative to the content root (an absolute
    path of the machine never reaches a reply)."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"{path} does not exist")


class InvalidFrontmatter(UserError):
    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: unreadable frontmatter: {reason}")


class FrontmatterNotKept(InvalidFrontmatter):
    """A change of a post's fields that could not be made in its frontmatter as written
    without changing what else it says (a duplicate key, an anchor, an indented block): the
    frontmatter is readable, and nothing was written."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.args = (f"{path}: frontmatter not changed: {reason}",)


class MissingDependency(UserError):
    def __init__(self, feature: str, extra: str, hint: str = "") -> None:
        self.feature = feature
        self.extra = extra
        self.hint = hint
        message = f"{feature} needs an optional extra: pip install 'skillrt[{extra}]'"
        super().__init__(f"{message}. {hint}" if hint else message)


class UnknownSkill(UserError):
    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"no skill named {name!r}; registered: {', '.join(sorted(known))}")


# --- signal back to the model --------------------------------------------------------------


class ModelRetry(SkillrtError):
    """The model's output could not be used; the message is sent back so it can try again."""


# --- run failures ----------------------------------------------------------------------------


class RunError(SkillrtError):
    """A task or an operation failed while running."""


class InvalidTransition(RunError):
    def __init__(self, task_id: str, source: str, dest: str) -> None:
        self.task_id = task_id
        self.source = source
        self.dest = dest
        super().__init__(f"task {task_id}: invalid transition {source} -> {dest}")


class TaskCancelled(RunError):
    def __init__(self, reason: str = "cancelled") -> None:
        self.reason = reason
        super().__init__(f"task cancelled: {reason}")


class TaskPaused(RunError):
    """Raised at a step boundary (``ctx.step``) when the task was asked to pause. A skill lets
    it through; the runtime ends the run PAUSED, resumable from that step."""

    def __init__(self, step: str = "") -> None:
        self.step = step
        super().__init__(f"task paused before step {step!r}" if step else "task paused")


class WatchdogTimeout(RunError):
    def __init__(self, state: str, timeout_s: float) -> None:
        self.state = state
        self.timeout_s = timeout_s
        super().__init__(f"WATCHDOG_TIMEOUT: state {state} lasted more than {timeout_s:g} s")


class BudgetExceeded(RunError):
    def __init__(self, kind: str, limit: float, used: float) -> None:
        self.kind = kind  # "tokens" or "cost"
        self.limit = limit
        self.used = used
        super().__init__(f"budget exceeded: {kind} used {used:g} of {limit:g}")


class LockConflict(RunError):
    def __init__(self, path: str, holder: str) -> None:
        self.path = path
        self.holder = holder
        super().__init__(f"{path} is locked by task {holder}")


class FileChanged(RunError):
    def __init__(self, path: str, expected_hash: str, actual_hash: str | None) -> None:
        self.path = path
        self.expected_hash = expected_hash
        self.actual_hash = actual_hash
        what = "was deleted" if actual_hash is None else "changed on disk"
        super().__init__(
            f"{path} {what} since it was read; not overwriting it (reload and try again)"
        )


class CheckpointCorrupt(RunError):
    def __init__(self, where: str, detail: str) -> None:
        self.where = where
        self.detail = detail
        super().__init__(f"corrupt checkpoint {where}: {detail}")


class StoreUnavailable(RunError):
    """The shared task store (PostgreSQL) cannot be used: unreachable, or on another schema.

    ``reason`` is a stable code: ``unreachable``, ``schema_newer``, ``lease_lost``, ``busy``
    (every pooled connection in use; the server answers).
    """

    def __init__(self, message: str, *, reason: str = "unreachable") -> None:
        self.reason = reason
        super().__init__(message)


class TaskNotFound(RunError):
    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        super().__init__(f"no task {task_id!r}")


class ServerError(RunError):
    """A ``skillrt serve`` answered with an RFC 9457 problem (``skillrt.client``)."""

    def __init__(self, status: int, code: str, detail: str) -> None:
        self.status = status
        self.code = code
        self.detail = detail
        super().__init__(f"{status} {code}: {detail}")


class URLNotAllowed(RunError):
    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"URL not allowed: {url}: {reason}")


class BrowserError(RunError):
    def __init__(self, message: str, *, recoverable: bool = True) -> None:
        self.recoverable = recoverable
        super().__init__(message)


class HostUnresolved(BrowserError):
    """A host name did not resolve: a network problem (no network, no DNS), not a refusal.

    The message names the host only, never the URL (which a model may have invented).
    """

    def __init__(self, host: str, url: str, detail: str = "") -> None:
        self.host = host
        self.url = url
        self.detail = detail
        super().__init__(f"cannot resolve host {host} (no network?)")


class RepetitionStopped(RunError):
    """A streamed generation repeated itself far past normal use and was stopped.

    ``kept`` is the text before the loop (plus one copy of the repeated part when that is a
    sentence rather than a few characters), ``unit`` the
    repeated part, ``streamed`` how many characters had arrived when it was stopped.
    """

    def __init__(self, kept: str, *, unit: str, streamed: int) -> None:
        self.kept = kept
        self.unit = unit
        self.streamed = streamed
        super().__init__(f"the model repeated {unit[:40]!r} over and over; stopped it")


class ProviderError(RunError):
    """The model provider failed. ``fatal`` errors are not worth retrying."""

    fatal: bool = False

    def __init__(
        self, message: str, *, status: int | None = None, provider: str = "", model: str = ""
    ) -> None:
        self.status = status
        self.provider = provider
        self.model = model
        super().__init__(message)


class AuthenticationError(ProviderError):
    fatal = True


class PermissionDenied(ProviderError):
    fatal = True


class BadRequest(ProviderError):
    fatal = True


class RateLimited(ProviderError):
    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        status: int | None = 429,
        provider: str = "",
        model: str = "",
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, status=status, provider=provider, model=model)


class ProviderUnavailable(ProviderError):
    pass


class ModelCrashed(ProviderUnavailable):
    """The embedded model's worker process died: ``signal_name`` (``SIGSEGV``) or
    ``exit_code`` says how. The runtime lives on; the worker starts again at the next call."""

    def __init__(
        self,
        message: str,
        *,
        signal_name: str | None = None,
        exit_code: int | None = None,
        provider: str = "",
        model: str = "",
    ) -> None:
        self.signal_name = signal_name
        self.exit_code = exit_code
        super().__init__(message, provider=provider, model=model)


class StructuredOutputError(ProviderError):
    def __init__(self, message: str, *, raw: str, provider: str = "", model: str = "") -> None:
        self.raw = raw
        super().__init__(message, provider=provider, model=model)


class ScriptExhausted(ProviderError):
    fatal = True
