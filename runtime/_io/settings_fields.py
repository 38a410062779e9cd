"""``RuntimeConfig``'s fields and sections as plain pydantic models, free of pydantic-settings.

``skillrt.settings`` builds ``RuntimeConfig`` on ``RuntimeFields`` (it adds the sources: the
files, ``SKILLRT_*`` and keyword arguments, read by pydantic-settings) and exports every name
here. What validates one section on its own (``validate_section``, ``section_models``: the
browsing skills' ``[browser]``, ``skillrt doctor``) needs no pydantic-settings, nor does
``skillrt doctor`` when it reads the sources itself (cli/doctorconfig.py): importing it (with
asyncio, argparse, dotenv and its cloud sources) was ~150 M of doctor's instructions.
"""

# No ``from __future__ import annotations``: pydantic would evaluate each field's annotation
# from its text (compiled, one by one) as each model is defined (~7 M instructions here).
import os
import re
from pathlib import Path
from typing import Any, Literal, Self, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from skillrt._io.config_files import (
    ENV_PREFIX,
    a_log_file,
    config_files,
    read_toml,
    state_path_of,
)
from skillrt._io.layout import BlogLayout, configured_layout, detect_layout
from skillrt.exceptions import ConfigError

__all__ = [
    "SECTIONS_GROUP",
    "AnswerConfig",
    "BudgetConfig",
    "ConversationConfig",
    "DraftsConfig",
    "EditConfig",
    "LLMConfig",
    "McpConfig",
    "McpServerConfig",
    "NewPostConfig",
    "QueueConfig",
    "RuntimeFields",
    "SecretEntry",
    "ServeConfig",
    "UndoConfig",
    "config_error",
    "new_dict",
    "new_list",
    "section_models",
    "validate_section",
]

SECTIONS_GROUP = "skillrt.settings"
_SECRET_KEY = re.compile(r"(api[_-]?key|password|secret|token)$", re.IGNORECASE)
M = TypeVar("M", bound=BaseModel)


def new_list() -> list[Any]:
    """``[]``, as a default factory: pydantic reads every default factory's signature as it
    builds a model, and ``list``'s (or ``dict``'s) is parsed from its text with tokenize's
    regular expressions, compiled at the first one: ~16 M instructions for ``skillrt doctor``."""
    return []


def new_dict() -> dict[str, Any]:
    """``{}``, as a default factory (see ``new_list``)."""
    return {}


class _Section(BaseModel):
    # Built at first use, not at import: RuntimeConfig's own schema holds every section, so
    # a command that only loads the config (skillrt tasks) never builds a section's own
    # validator (~5 ms less for every command on the Intel Xeon).
    # No `inf` or `nan` (TOML has both): `timeout_s = inf` was taken, and a limit of `nan`
    # compared false with everything.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, defer_build=True)


class BudgetConfig(_Section):
    """Per-task limits; exceeding one stops the task with ``BudgetExceeded``."""

    max_tokens: int | None = Field(default=None, ge=1)
    max_cost: float | None = Field(default=None, ge=0)


class ConversationConfig(_Section):
    """What a skill gets of its session (``ctx.conversation``)."""

    max_tokens: int = Field(default=1500, ge=64)  # the recent turns sent to a model, at most


class AnswerConfig(_Section):
    """AnswerQuestion: when the blog has nothing on a question, also give a general answer
    from the model, marked as not from the blog."""

    general_fallback: bool = True


class NewPostConfig(_Section):
    """How new posts look. ``format`` ``auto``: the format most of the blog's posts use;
    ``template``: a post (path relative to the blog) whose frontmatter format, keys and
    values new posts take, filled where skillrt knows the value (docs/writing.md)."""

    format: Literal["auto", "yaml", "toml", "json"] = "auto"
    template: str | None = None


class DraftsConfig(_Section):
    """Posts skillrt writes are drafts, marked the blog's way (``mark``); drafts are left out
    of answers and related posts until published (``in_answers`` false)."""

    mark: bool = True
    in_answers: bool = False


class LocalSafety(_Section):
    """``[llm.local]``: DESIGN.md's name for how the embedded model loads. ``safe``: ``auto``
    (safe on AMX CPUs and after a crash: ``local_mode = "auto"``), true (no repacked weights:
    ``"no-extra-bufts"``) or false (llama.cpp's defaults: ``"default"``)."""

    safe: Literal["auto"] | bool = "auto"


class LLMConfig(_Section):
    provider: Literal["auto", "openai", "local", "scripted", "python"] = "auto"
    model: str = ""
    base_url: str | None = None
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    # OpenAI's range (llama.cpp takes any): -1 or 50 were taken, and failed each call later.
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    # openai: how structured answers are asked (docs/models.md, "Structured output")
    structured_output: Literal["auto", "json_schema", "json_object", "prompt"] = "auto"
    # local (llama.cpp)
    model_path: Path | None = None
    n_ctx: int = Field(default=4096, ge=256)
    n_threads: int | None = Field(default=None, ge=1)
    seed: int = 0
    repeat_penalty: float = Field(default=1.1, ge=1.0, le=2.0)
    # How llama.cpp loads (skillrt/llm/llama_modes.py): "auto" picks, and steps down after a
    # crash; "default", "no-extra-bufts" (no repacked weights) or "n-batch-1" force one.
    local_mode: Literal["auto", "default", "no-extra-bufts", "n-batch-1"] = "auto"
    # Ask the embedded (local) model to route requests the intent table leaves unsure; off
    # by default: a 135M model routes worse than no model at all.
    route_with_embedded: bool = False
    # DESIGN.md's names for the two above ([llm.local] safe, route_with_model): given, each
    # sets its twin. They were refused as unknown keys.
    local: LocalSafety = Field(default_factory=LocalSafety)
    route_with_model: bool | None = None
    # How far the router trusts the model's routing: "low" (the default for the embedded
    # model) means a model-only route never starts a web, write or delete task without the
    # user's yes; unset = "low" for the local provider, "high" for any other.
    router_trust: Literal["high", "low"] | None = None
    # scripted (a ScriptedModel script in JSON, for end-to-end tests of the CLI)
    script_path: Path | None = None
    # python: a model of your own, "package.module:name", a class or function that takes no
    # arguments and returns the model (an object with the LLM protocol's chat)
    factory: str | None = None

    @model_validator(mode="after")
    def _design_names(self) -> Self:
        """``llm.local.safe`` and ``llm.route_with_model`` (DESIGN.md), when given, set
        ``local_mode`` and ``route_with_embedded`` (the defaults file sets those, so a
        disagreement cannot be told from a default: DESIGN's names win)."""
        if self.local.safe != "auto":
            self.local_mode = "no-extra-bufts" if self.local.safe else "default"
        if self.route_with_model is not None:
            self.route_with_embedded = self.route_with_model
        return self

    @property
    def local_mode_setting(self) -> str:
        """The key that sets ``local_mode``, as the user wrote it: a load mode forced by
        ``llm.local.safe`` was said to be forced by "llm.local_mode is set"."""
        return "llm.local.safe" if self.local.safe != "auto" else "llm.local_mode"


class QueueConfig(_Section):
    """The work queue of a shared store (``state_url``; docs/shared-store.md). ``enabled``: a
    task started on this worker is queued, and whichever worker is free runs it. Every worker
    of the store takes queued work, up to ``concurrency`` tasks at once, interactive ones first;
    ``limits`` caps the tasks running at once on all workers together, per model
    (``"model:<name>"``) or per model server (``"server:<base_url>"``, ``"server:local"`` for an
    in-process model)."""

    enabled: bool = False
    concurrency: int = Field(default=8, ge=0)  # 0: this worker queues work but takes none
    limits: dict[str, int] = Field(default_factory=new_dict)
    poll_s: float = Field(default=1.0, gt=0)  # looks for work missed by a notification


class UndoConfig(_Section):
    """``[undo]``: the versions kept before each write, for ``skillrt undo``."""

    keep: int = Field(default=50, ge=0)  # at most this many (oldest dropped); 0 keeps none


class EditConfig(_Section):
    """``[edit]``: how EditContent writes."""

    # Show the diff and ask yes/no before writing. None: in the chat yes, for `run` and HTTP
    # no; a request's context {"confirm": bool} (--yes, confirm=false) decides over both.
    confirm: bool | None = None


class ServeConfig(_Section):
    """``skillrt serve``: the HTTP API and the web chat page (extra ``server``)."""

    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    token: SecretStr | None = None  # SKILLRT_SERVE__TOKEN; else <state>/serve-token
    cors_origins: list[str] = Field(default_factory=new_list)  # browser origins allowed to call
    allowed_hosts: list[str] = Field(default_factory=new_list)  # Host names besides the loopback
    max_body_bytes: int = Field(default=1_000_000, ge=1024)
    # The request line and headers together; beyond it: 431 before anything is parsed.
    max_header_bytes: int = Field(default=65_536, ge=4096)
    # HTTPS: both or neither. A non-loopback host needs them, or --insecure (plain HTTP).
    tls_cert: Path | None = None
    tls_key: Path | None = None
    # The event loop: auto = uvloop's when installed (the server extra installs it, not on
    # Windows), else asyncio's; asyncio = always asyncio's; uvloop = uvloop's or an error.
    loop: Literal["auto", "asyncio", "uvloop"] = "auto"


class McpServerConfig(_Section):
    """One MCP server skillrt uses (``[mcp.servers.NAME]``): a program it starts (stdio) or
    a URL (streamable HTTP). Its tools become skills; ``tools`` limits which."""

    command: str | None = None  # stdio: the program to start
    args: list[str] = Field(default_factory=new_list)
    env: dict[str, str] = Field(default_factory=new_dict)  # added to a safe minimal environment
    cwd: Path | None = None
    url: str | None = None  # streamable HTTP, e.g. http://127.0.0.1:3001/mcp
    headers: dict[str, str] = Field(default_factory=new_dict)  # e.g. Authorization (kept secret)
    tools: list[str] | None = None  # the tools allowed; unset: all of them
    read_only: list[str] = Field(default_factory=new_list)  # tools that neither write nor go online
    examples: dict[str, list[str]] = Field(default_factory=new_dict)  # tool -> example requests
    timeout_s: float = Field(default=60.0, gt=0)  # a connection, or one call
    skills: bool = True  # register its tools as skills (false: only ctx.tools.call)

    @model_validator(mode="after")
    def _one_way(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a program to start) or url, not both")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError("url must be an http:// or https:// URL")
        return self


class McpConfig(_Section):
    """``[mcp]``: the MCP servers whose tools skillrt uses (extra ``mcp``)."""

    servers: dict[str, McpServerConfig] = Field(default_factory=new_dict)

    @field_validator("servers")
    @classmethod
    def _names(cls, value: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,31}", name):
                raise ValueError(f"server name {name!r}: a letter, then letters, digits, _ or -")
        return value

    def secret_values(self) -> list[str]:
        """Header values and environment values under secret-named keys."""
        found: list[str] = []
        for server in self.servers.values():
            for value in server.headers.values():  # "Bearer <token>": the token alone too
                found.extend([value, value.partition(" ")[2].strip()])
            found.extend(v for k, v in server.env.items() if _SECRET_ENV.search(k))
        return found


_SECRET_ENV = re.compile(r"(key|password|secret|token|credential|auth)", re.IGNORECASE)


class SecretEntry(_Section):
    """A secret bound to the origins it may go to: ``{value = "…", origins = ["https://x"]}``.

    A plain string in ``secrets`` is the same with no origins: the browsing skills bind it to
    the origin their task started on."""

    value: SecretStr
    origins: list[str] = Field(default_factory=new_list)  # scheme://host[:port]


class RuntimeFields(BaseModel):
    """``RuntimeConfig``'s fields, validators and helpers, without its sources: validated from
    a dict, it holds what ``RuntimeConfig`` built from the same merged values holds."""

    # Built at its first use (skillrt doctor validates it): RuntimeConfig, which every other
    # command loads, builds its own validator, and would otherwise pay for both.
    model_config = ConfigDict(
        extra="forbid", allow_inf_nan=False, validate_default=True, defer_build=True
    )

    content_root: Path = Path()
    state_dir: Path | None = None
    # Unset (or empty): detected from the blog's layout (storage/layout.py), see ``layout``.
    posts_dir: str = ""
    session_id: str | None = None

    log_level: Literal["debug", "info", "warning", "error"] = "warning"
    log_format: Literal["console", "json"] = "console"
    log_file: Path | None = None
    secrets: list[SecretStr | SecretEntry] = Field(default_factory=new_list)

    watchdog_timeout_s: float = Field(default=300.0, gt=0)
    max_task_s: float | None = Field(default=None, gt=0)  # hard cap on EXECUTING; None: none
    checkpoints: bool = True
    # While tasks run, the cyclic GC's young generation is collected less often (see
    # _io/gcpolicy.py); the process's own thresholds come back when the last task ends.
    gc_tuning: bool = True
    # A task running alone commits its steps on the event loop when the disk is quick (no
    # hand-over to the commit thread and back). None: the front end decides (the chat REPL
    # and the one-shot commands: on; the Python API: off; ``skillrt serve``: always off).
    commit_on_loop: bool | None = None
    # The shared task store: unset = the embedded SQLite store in state_dir; "postgresql://…"
    # = PostgreSQL shared by several workers (extra ``postgres``). See storage/pg.py.
    state_url: str | None = None
    lease_s: float = Field(default=30.0, gt=0)  # a dead worker's tasks are free after this
    failover: bool = True  # resume a dead worker's running tasks here automatically
    # This worker's name in the shared store. Unset: from the host and the state folder, so a
    # restarted worker is the same worker and takes its own tasks back at once.
    worker_id: str | None = None
    # The longest a call to the shared store may wait (a pool connection, a statement).
    store_timeout_s: float = Field(default=5.0, gt=0)
    checkpoint_max_age_h: float = Field(default=24.0, gt=0)
    history_limit: int = Field(default=1000, ge=1)
    lock_expiry_s: float = Field(default=300.0, gt=0)

    intent_cache_size: int = Field(default=50, ge=1)
    intent_cache_ttl_s: float = Field(default=600.0, gt=0)
    confidence_threshold: float = Field(default=0.6, ge=0, le=1)
    # A write, delete or web task the classifier alone chose starts without a yes only at
    # this probability or more (below it, the runtime asks first).
    act_threshold: float = Field(default=0.8, ge=0, le=1)
    # The trained intent classifier decides when the table does not (false: the table and the
    # model alone, as before it was trained).
    intent_classifier: bool = True
    max_input_chars: int = Field(default=100_000, ge=1)
    # A blog file bigger than this is refused before it is read (2 MiB).
    max_post_bytes: int = Field(default=2 * 1024 * 1024, ge=1024)

    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    conversation: ConversationConfig = Field(default_factory=ConversationConfig)
    answer: AnswerConfig = Field(default_factory=AnswerConfig)
    new_post: NewPostConfig = Field(default_factory=NewPostConfig)
    drafts: DraftsConfig = Field(default_factory=DraftsConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    # [browser] and [browser.search], as written: the browsing skills validate them
    # (skillrt.skills.browsing.config.browser_config).
    browser: dict[str, Any] = Field(default_factory=new_dict)
    serve: ServeConfig = Field(default_factory=ServeConfig)
    queue: QueueConfig = Field(default_factory=QueueConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    undo: UndoConfig = Field(default_factory=UndoConfig)
    edit: EditConfig = Field(default_factory=EditConfig)

    _layout: BlogLayout | None = PrivateAttr(default=None)
    _keywords: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _find_posts(self) -> Self:
        if not self.posts_dir.strip():
            found = detect_layout(self.root)
            self.posts_dir = found.posts_dir
            self._layout = found
        return self

    @property
    def layout(self) -> BlogLayout:
        """Where the posts are and why: detected, or ``posts_dir`` as configured."""
        layout = self._layout
        if layout is not None and layout.posts_dir == (self.posts_dir.strip("/") or "."):
            return layout
        return configured_layout(self.root, self.posts_dir)

    @property
    def root(self) -> Path:
        """The content root, absolute."""
        return self.content_root.expanduser().resolve()

    @field_validator("browser")
    @classmethod
    def _hide_secrets(cls, value: dict[str, Any]) -> dict[str, Any]:
        hidden: dict[str, Any] = _hidden(value)
        return hidden

    _log_file = field_validator("log_file")(a_log_file)

    @field_validator("posts_dir")
    @classmethod
    def _posts_in_the_blog(cls, value: str, info: ValidationInfo) -> str:
        """``posts_dir`` is a folder of the blog: ``..`` or ``/etc`` were taken, ``index``
        then read Markdown outside the blog (and dropped every post of the index), while
        the layout read ``/etc`` as ``etc`` under the blog. One written absolute, inside the
        blog, is kept relative to it."""
        folder = value.strip()
        root = info.data.get("content_root")
        if not folder or not isinstance(root, Path):
            return value
        base = os.path.abspath(root.expanduser())
        target = os.path.normpath(os.path.join(base, folder))
        if os.path.commonpath([base, target]) != base:
            raise ValueError(
                "a folder inside the content root (posts, content/posts), not outside it"
            )
        return os.path.relpath(target, base) if os.path.isabs(folder) else value

    @field_validator("state_url")
    @classmethod
    def _check_state_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("state_url must be a postgresql:// URL (or unset for SQLite)")
        return value

    @property
    def state_path(self) -> Path:
        """The state folder: ``state_dir`` or ``<content_root>/.skillrt``, absolute."""
        return state_path_of(self.content_root, self.state_dir)

    def secret_values(self) -> list[str]:
        """Every configured secret, for the log redactor."""
        values = [
            (s if isinstance(s, SecretStr) else s.value).get_secret_value() for s in self.secrets
        ]
        for key in (self.llm.api_key, self.serve.token, *_secrets_in(self.browser)):
            if key is not None:
                values.append(key.get_secret_value())
        values.extend(self.mcp.secret_values())
        return [v for v in values if v]


def _hidden(value: Any, key: str = "") -> Any:
    """A raw section with the strings under secret-named keys wrapped in ``SecretStr``."""
    if isinstance(value, dict):
        return {k: _hidden(v, str(k)) for k, v in value.items()}
    if isinstance(value, str) and _SECRET_KEY.search(key):
        return SecretStr(value)
    return value


def _secrets_in(value: Any) -> list[SecretStr]:
    if isinstance(value, SecretStr):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _secrets_in(v)]
    return []


def validate_section(config: RuntimeFields, name: str, model: type[M]) -> M:
    """The raw section ``name`` of ``config`` validated into ``model`` (the package that owns
    the section calls this). Raises ``ConfigError`` naming the variable or file that set the
    bad value, its key (``browser.timeout_s``) and what was expected."""
    raw = getattr(config, name)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise config_error(exc, (name,), config._keywords) from exc


def section_models() -> dict[str, type[BaseModel]]:
    """The sections installed packages validate (entry point group ``skillrt.settings``):
    section name -> model. Loading one imports its package."""
    from importlib.metadata import entry_points

    return {ep.name: ep.load() for ep in entry_points(group=SECTIONS_GROUP)}


def _has_key(data: dict[str, Any], loc: tuple[str | int, ...]) -> bool:
    node: Any = data
    for part in loc:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _env_name(loc: tuple[str | int, ...]) -> str:
    return ENV_PREFIX + "__".join(str(p) for p in loc).upper()


def config_error(
    exc: ValidationError, prefix: tuple[str, ...], overrides: dict[str, Any]
) -> ConfigError:
    """The first error of ``exc`` as a ``ConfigError``: where the value came from (keyword
    arguments, an environment variable, a config file), its dotted key, what was expected.
    ``prefix`` is the section a model validated on its own (``("browser",)``)."""
    error = exc.errors()[0]
    loc = (*prefix, *error["loc"])
    key = ".".join(str(p) for p in loc)
    got = error.get("input")
    got = None if isinstance(got, dict) else got
    # A validator's own words, without pydantic's "Value error, " before them ("expected
    # Value error, a file, not a folder").
    expected = error["msg"].removeprefix("Value error, ")
    if loc and _has_key(overrides, loc):
        return ConfigError("keyword arguments", key, expected, got)
    for end in range(len(loc), 0, -1):  # SKILLRT_BROWSER__TIMEOUT_S, then SKILLRT_BROWSER
        if _env_name(loc[:end]) in os.environ:
            return ConfigError(f"${_env_name(loc[:end])}", key, expected, got)
    for path in reversed(config_files()):
        if _has_key(read_toml(path), loc):
            return ConfigError(str(path), key, expected, got)
    return ConfigError("config", key, expected, got)
