"""``skillrt doctor``: what skillrt would use here, and what is missing. Writes nothing: no
state folder, no log, no index (the index is read through a read-only SQLite connection).

With the embedded model it really generates: one token in a worker process, with a timeout
(``skillrt.llm.probe``), and says ok, crashed (with the signal) or slow, and the load mode that
works. It also looks for a local OpenAI-compatible server (Ollama, LM Studio, a llama.cpp
server) on 127.0.0.1 and says how to use one. ``--no-generate`` skips the generation.

``doctor_command`` is the whole ``skillrt doctor``, free of Typer: the Typer command and the
quick path (cli/quick.py) both call it."""

from __future__ import annotations

import importlib
import json
import os
import platform
import re
import shutil
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from skillrt import __version__
from skillrt._io import distributions
from skillrt._io.config_files import config_files
from skillrt._io.settings_fields import (
    SECTIONS_GROUP,
    RuntimeFields,
    section_models,
    validate_section,
)
from skillrt._state.embedded.schema import CHECKPOINT_SCHEMA, HISTORY_SCHEMA, foreign_schema
from skillrt.cli.common import EXIT_FAILED, EXIT_OK, open_full_config, user_errors
from skillrt.exceptions import ConfigError

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["Check", "checks_table", "doctor_command", "run_checks"]

Status = Literal["ok", "warn", "fail", "info"]


class Check:
    """One finding: what was checked, what was found, its status, and details for ``--json``.
    Compared, hashed and shown as the frozen dataclass it was; a plain class because a
    dataclass's methods are generated and compiled as it is defined (~4 M instructions)."""

    __slots__ = ("detail", "name", "status", "value")

    def __init__(
        self, name: str, value: str, status: Status = "ok", detail: dict[str, Any] | None = None
    ) -> None:
        self.name = name
        self.value = value
        self.status = status
        self.detail = detail

    def _fields(self) -> tuple[str, str, Status, dict[str, Any] | None]:
        return (self.name, self.value, self.status, self.detail)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        name, value, status, detail = self._fields()
        return f"Check(name={name!r}, value={value!r}, status={status!r}, detail={detail!r})"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "value": self.value, "status": self.status}
        if self.detail is not None:
            out["detail"] = self.detail
        return out


def _version(dist: str) -> str | None:
    """The installed version, read from its folder where that is plainly what
    ``importlib.metadata`` reads (``_io/distributions.py``), else asked of it."""
    try:
        return distributions.version(dist)
    except distributions.Undecided:
        pass
    import importlib.metadata

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _section_models() -> dict[str, Any]:
    """``section_models()``, from the entry points read as ``importlib.metadata`` reads them
    where that is plain (``_io/distributions.py``): each loaded as ``EntryPoint.load`` loads."""
    try:
        found = distributions.entry_points(SECTIONS_GROUP)
    except distributions.Undecided:
        return section_models()
    models = {}
    for name, value in found:
        match = _ENTRY_POINT.match(value)
        if match is None:  # EntryPoint.load fails on it: its error, not ours
            return section_models()
        target: Any = importlib.import_module(match.group("module"))
        for attr in filter(None, (match.group("attr") or "").split(".")):
            target = getattr(target, attr)
        models[name] = target
    return models


# importlib.metadata's EntryPoint.pattern
_ENTRY_POINT = re.compile(
    r"(?P<module>[\w.]+)\s*"
    r"(:\s*(?P<attr>[\w.]+)\s*)?"
    r"((?P<extras>\[.*\])\s*)?$"
)


GENERATE_TIMEOUT_S = 60.0


def _generation(config: RuntimeFields, model_path: str) -> Check:
    """One token from the embedded model, in a worker process."""
    from skillrt.llm.probe import probe_local

    probe = probe_local(
        Path(model_path),
        forced=config.llm.local_mode,
        setting=config.llm.local_mode_setting,
        state_dir=config.state_path,
        n_threads=config.llm.n_threads,
        timeout_s=GENERATE_TIMEOUT_S,
    )
    status: Status = {"ok": "ok", "slow": "warn"}.get(probe.status, "fail")  # type: ignore[assignment]
    if probe.status == "ok" and probe.crashes:
        status = "warn"
    detail = {
        "status": probe.status,
        "mode": probe.mode,
        "seconds": round(probe.seconds, 2),
        "crashes": [{"mode": mode, "signal": what} for mode, what in probe.crashes],
    }
    return Check("generation", probe.describe(), status, detail)


def _local_servers() -> Check:
    from skillrt.llm.discover import KNOWN_SERVERS, find_local_servers

    found = find_local_servers()
    if not found:
        ports = ", ".join(str(port) for _name, port in KNOWN_SERVERS)
        return Check("local servers", f"none on 127.0.0.1 (ports {ports})", "info")
    value = "; ".join(f"{s.describe()}: to use it, set {s.settings}" for s in found)
    detail = {"servers": [{"name": s.name, "base_url": s.base_url, "models": list(s.models)}
                          for s in found]}  # fmt: skip
    return Check("local servers", value, "info", detail)


def _model(config: RuntimeFields, *, generate: bool = True) -> list[Check]:
    try:
        from skillrt.llm.select import describe_llm
    except ImportError as exc:
        return [Check("model", f"model selection is not available ({exc})", "fail")]
    try:
        info = describe_llm(config)
    except Exception as exc:  # a broken provider setting is a finding, not a crash
        return [Check("model", f"{type(exc).__name__}: {exc}", "fail")]
    provider = str(info.get("provider", config.llm.provider))
    model = str(info.get("model") or "(default)")
    reason = info.get("reason")
    value = f"{provider} · {model}" + (f" ({reason})" if reason else "")
    problem = info.get("problem") or info.get("error")
    ready = info.get("available", info.get("ready", True))
    status: Status = "fail" if problem or ready is False else "ok"
    checks = [Check("model", value + (f": {problem}" if problem else ""), status, dict(info))]
    if provider == "local":
        llama = _version("llama_cpp_python")
        checks.append(
            Check(
                "llama.cpp",
                llama or "not installed: pip install 'skillrt[local]'",
                "ok" if llama else "fail",
            )
        )
        if generate and not problem and info.get("model_path"):
            checks.append(_generation(config, str(info["model_path"])))
        checks.append(_local_servers())
    return checks


def _content(config: RuntimeFields) -> list[Check]:
    root = config.root
    if not root.is_dir():
        return [Check("content root", f"{root} (missing)", "fail")]
    layout = config.layout
    detail = {
        "posts_dir": layout.posts_dir,
        "kind": layout.kind,
        "reason": layout.reason,
        "markdown_files": layout.markdown_files,
    }
    hint = layout.hint()
    checks = [
        Check("content root", str(root)),
        Check("posts", layout.describe(), "warn" if hint else "ok", detail),
    ]
    if hint is not None:
        checks.append(Check("hint", hint, "info"))
    return checks


def _indexed_posts(index: Path) -> int:
    """Rows in the post index, read without writing (no journal, no migration).

    Without a ``-wal`` file (no one has the index open) it is opened immutable: even a
    read-only connection to a WAL database would otherwise create ``-wal`` and ``-shm``."""
    wal = index.with_name(index.name + "-wal")
    uri = f"{index.resolve().as_uri()}?" + ("mode=ro" if wal.exists() else "immutable=1")
    db = sqlite3.connect(uri, uri=True)
    try:
        row = db.execute("SELECT count(*) FROM posts").fetchone()
    finally:
        db.close()
    return int(row[0])


_SQLITE_HEADER = b"SQLite format 3\x00"
_LOW_DISK_BYTES = 50_000_000
# The columns each database's code reads, by table: another schema is a finding.
_SCHEMAS: dict[str, dict[str, tuple[str, ...]]] = {
    "checkpoints": {"Cache": ("key", "raw", "tag", "mode", "filename", "value")},
    "history": {"tasks": ("task_id", "session_id", "data"), "messages": ("session_id", "data")},
}


def _database(name: str, path: Path) -> Check | None:
    """A problem with one of the state folder's databases (None when there is none), read
    without writing: header, then tables and columns through an immutable connection."""
    label = f"{name} database"
    then = "moved aside with a timestamp at the next start"
    if path.is_dir():
        return Check(label, f"{path} is a folder, not a database file; {then}", "warn")
    if not path.exists():
        return None
    try:
        with path.open("rb") as fh:
            header = fh.read(len(_SQLITE_HEADER))
    except OSError as exc:
        return Check(label, f"{path} cannot be read ({exc})", "fail")
    if not header:
        return Check(label, f"{path} is empty (0 bytes); {then}", "warn")
    if header != _SQLITE_HEADER:
        return Check(label, f"{path} is not a SQLite database (corrupt); {then}", "warn")
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
        try:
            for table, columns in _SCHEMAS[name].items():
                have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                if have and not set(columns) <= have:
                    return Check(
                        label, f"{path} has another schema (table {table}); {then}", "warn"
                    )
        finally:
            db.close()
    except (sqlite3.Error, UnicodeDecodeError) as exc:  # (a name that is not UTF-8)
        return Check(label, f"{path} is unreadable ({exc}); {then}", "warn")
    foreign = foreign_schema(path, CHECKPOINT_SCHEMA if name == "checkpoints" else HISTORY_SCHEMA)
    if foreign is not None:
        return Check(label, f"{path} has another schema ({foreign}); {then}", "warn")
    if name == "checkpoints":
        try:
            bad = _unreadable_records(path)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            return Check(label, f"{path} is unreadable ({exc}); {then}", "warn")
        if bad:
            ids = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
            return Check(
                label,
                f"{path}: {len(bad)} task record(s) cannot be read ({ids}): each is moved to"
                " checkpoints/quarantine/ when skillrt next reads it",
                "warn",
                {"records": bad},
            )
    return Check(label, f"{path} ok")


def _read_only(path: Path) -> sqlite3.Connection:
    """A connection that writes nothing: immutable without a ``-wal`` file (no one has the
    database open), else read-only (the records still in the log are read too)."""
    wal = path.with_name(path.name + "-wal")
    uri = f"{path.resolve().as_uri()}?" + ("mode=ro" if wal.exists() else "immutable=1")
    return sqlite3.connect(uri, uri=True)


def _unreadable_records(path: Path) -> list[str]:
    """The task records of the checkpoint database whose key or listing is not UTF-8 or whose
    JSON does not parse (a damaged byte): the store moves each aside when it reads it."""
    db = _read_only(path)
    try:
        rows = db.execute(
            "SELECT rowid, CAST(key AS BLOB), CASE typeof(tag) WHEN 'text' THEN CAST(tag AS BLOB)"
            " END, CAST(value AS BLOB) FROM Cache WHERE raw = 1"
        ).fetchall()
    finally:
        db.close()
    bad = []
    for rowid, key, tag, value in rows:
        try:
            (key or b"").decode("utf-8")
            (tag or b"").decode("utf-8")
            json.loads(value or b"")
        except ValueError:  # (UnicodeDecodeError and JSONDecodeError are ValueErrors)
            name = (key or b"").decode("utf-8", "replace") or f"row {rowid}"
            bad.append(name)
    return bad


def _disk(state: Path) -> Check:
    try:
        free = shutil.disk_usage(state if state.is_dir() else state.parent).free
    except OSError as exc:
        return Check("disk", f"free space unknown ({exc})", "warn")
    if free < _LOW_DISK_BYTES:
        return Check("disk", f"{free // 1_000_000} MB free under {state}: nearly full", "fail")
    return Check("disk", f"{free // 1_000_000_000} GB free", "ok")


def _state(config: RuntimeFields) -> list[Check]:
    state = config.state_path
    if state.exists() and not state.is_dir():
        return [
            Check(
                "state folder", f"{state} is a file, not a folder: move it or set state_dir", "fail"
            ),
            _disk(state),
        ]
    if state.is_dir():
        writable = os.access(state, os.W_OK)
        checks = [
            Check(
                "state folder",
                str(state) + ("" if writable else " (not writable)"),
                "ok" if writable else "fail",
            )
        ]
    else:
        parent_ok = os.access(state.parent, os.W_OK)
        checks = [
            Check("state folder", f"{state} (created on first use)", "ok" if parent_ok else "fail")
        ]
    checks.append(_disk(state))
    for name, path in (
        ("checkpoints", state / "checkpoints" / "cache" / "cache.db"),
        ("history", state / "history" / "history.db"),
    ):
        found = _database(name, path)
        if found is not None:
            checks.append(found)
    checks.extend(_run_locks(state / "locks" / "running"))
    index = state / "index" / "posts.sqlite3"
    if index.is_file():
        damage = _index_damage(index) or _index_damage(state / "index" / "graph.sqlite3")
        if damage is not None:  # moved aside and built again from the posts
            checks.append(Check("index", f"{damage}; run skillrt index to rebuild it", "warn"))
        else:
            try:
                checks.append(Check("index", f"{_indexed_posts(index)} posts indexed"))
            except Exception as exc:  # a damaged index is reported, `skillrt index` rebuilds it
                checks.append(Check("index", f"unreadable ({exc}); run skillrt index", "warn"))
    else:
        checks.append(Check("index", "not built yet; run skillrt index", "warn"))
    return checks


def _run_locks(folder: Path) -> list[Check]:
    """A run-lock file that is not a file (a folder in its place): it is moved aside at the
    next start. Before, doctor said nothing while every command exited 74."""
    try:
        found = sorted(folder.glob("running-*.lock"))
    except OSError:
        return []
    return [
        Check(
            "run locks",
            f"{path} is a folder, not a lock file; moved aside at the next start (or move it)",
            "warn",
        )
        for path in found
        if path.is_dir()
    ]


def _index_damage(path: Path) -> str | None:
    """What is damaged in the post index or the entity graph at ``path`` (None: nothing, or
    no file): ``PRAGMA quick_check``, then every row of every table read (a text that is not
    UTF-8 fails only there). Before, a damaged index read "ok N posts indexed"."""
    if not path.is_file():
        return None
    try:
        db = _read_only(path)
        try:
            found = db.execute("PRAGMA quick_check").fetchall()
            if found != [("ok",)]:
                lines = [line for row in found for line in str(row[0]).splitlines()]
                first = next((line for line in lines if not line.startswith("***")), "damaged")
                return f"{path} is damaged (PRAGMA quick_check: {first})"
            tables = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            for (table,) in tables:
                db.execute(f'SELECT * FROM "{table}"').fetchall()  # noqa: S608
        finally:
            db.close()
    except UnicodeDecodeError:
        return f"{path} is damaged (a text that is not UTF-8)"
    except sqlite3.Error as exc:
        if "decode" in str(exc):  # Python's "Could not decode to UTF-8 column …"
            return f"{path} is damaged (a text that is not UTF-8)"
        return f"{path} is damaged ({exc})"
    return None


def _store(config: RuntimeFields) -> list[Check]:
    """The task store; for PostgreSQL its schema and the live workers (read only)."""
    if config.state_url is None:
        where = config.state_path / "checkpoints"
        return [Check("task store", f"SQLite in {where} (set state_url to share one)", "info")]
    from skillrt._state.postgres import inspect_database, redact_url

    url = redact_url(config.state_url)
    try:
        info = inspect_database(config.state_url, stale_s=config.lease_s)
    except ImportError:
        return [Check("task store", f"{url}: pip install 'skillrt[postgres]'", "fail")]
    except Exception as exc:  # an unreachable server is a finding, not a crash
        return [Check("task store", f"{url}: cannot connect ({type(exc).__name__})", "fail")]
    schema, ours = info["schema"], info["package_schema"]
    status: Status = "ok" if schema == ours else ("fail" if schema > ours else "warn")
    note = {0: " (empty: created at first start)"}.get(schema, "")
    if schema > ours:
        note = f" (newer than this skillrt's {ours}: upgrade skillrt)"
    elif 0 < schema < ours:
        note = f" (migrated to {ours} at the next start)"
    workers = info["workers"]
    names = ", ".join(str(w["worker_id"]) for w in workers) or "none"
    return [
        Check("task store", f"PostgreSQL {url}, schema {schema}{note}", status, info),
        Check("workers", f"{len(workers)} live: {names}; {info['tasks']} task records", "info"),
    ]


def _browser(config: RuntimeFields) -> list[Check]:
    """The browser the settings ask for (read as written: ``_sections`` validates them)."""
    backend = str(config.browser.get("backend", "http"))
    checks = [Check("browser backend", backend, "info")]
    configured = config.browser.get("chromium_path")
    found = (
        str(configured)
        if configured and Path(str(configured)).expanduser().exists()
        else next(
            (
                p
                for name in ("chromium", "chromium-browser", "google-chrome")
                if (p := shutil.which(name))
            ),
            None,
        )
    )
    wanted = backend == "chromium"
    bad: Status = "fail" if wanted else "warn"
    checks.append(Check("chromium", found or "not found", "ok" if found else bad))
    playwright = _version("playwright")
    checks.append(
        Check(
            "playwright",
            playwright or "not installed: pip install 'skillrt[browser]'",
            "ok" if playwright else bad,
        )
    )
    return checks


def _sections(config: RuntimeFields) -> list[Check]:
    """The sections skill packages own (``[browser]``), validated by their models."""
    try:
        models = _section_models()
    except Exception as exc:  # a broken plug-in is a finding, not a crash
        return [Check("settings", f"cannot load a section's model: {exc}", "fail")]
    checks = []
    for name, model in sorted(models.items()):
        try:
            validate_section(config, name, model)
        except ConfigError as exc:
            checks.append(Check(f"[{name}] settings", str(exc), "fail"))
        else:
            checks.append(Check(f"[{name}] settings", "valid", "ok"))
    return checks


def _mcp(config: RuntimeFields) -> list[Check]:
    """Each MCP server of ``[mcp.servers]``: started or reached, its tools listed, then closed."""
    if not config.mcp.servers:
        return []
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from skillrt.exceptions import MissingDependency
    from skillrt.mcp.client import check_servers

    try:
        with ThreadPoolExecutor(1) as pool:  # its own event loop, whoever calls doctor
            found = pool.submit(asyncio.run, check_servers(config.mcp)).result()
    except MissingDependency as exc:
        return [Check("MCP servers", str(exc), "fail")]
    return [
        Check(f"MCP server {name}", text, "ok" if ok else "fail", {"reachable": ok})
        for name, ok, text in found
    ]


def run_checks(config: RuntimeFields, *, generate: bool = True) -> list[Check]:
    """Every finding, in display order. Writes nothing, starts no browser; with the embedded
    model (and ``generate``) one token is generated in a worker process; the MCP servers of
    ``[mcp.servers]`` are started or reached, to say whether they answer."""
    files = [str(p) for p in config_files()]
    checks = [
        Check("skillrt", f"{__version__} (Python {platform.python_version()})", "info"),
        Check("config files", ", ".join(files), "info", {"files": files}),
    ]
    checks.extend(_model(config, generate=generate))
    for group in (_content, _state, _store, _browser, _sections, _mcp):
        checks.extend(group(config))
    return checks


def doctor_command(
    *, as_json: bool, root: Path | None, posts_dir: str | None, verbose: bool, generate: bool
) -> int:
    """``skillrt doctor``: every check as a table or JSON on stdout; exit 1 when one failed,
    else 0 (a config error exits through ``user_errors``)."""
    with user_errors():
        config = open_full_config(root, verbose=verbose, posts_dir=posts_dir, log_to_file=False)
        checks = run_checks(config, generate=generate)
    failed = any(c.status == "fail" for c in checks)
    if as_json:
        print(json.dumps({"ok": not failed, "checks": [c.to_dict() for c in checks]}))
    else:
        from skillrt.cli.plaintable import print_table

        if not print_table([(_MARKS[c.status], c.name, c.value) for c in checks]):
            from rich.console import Console

            Console().print(checks_table(checks), highlight=False)
    return EXIT_FAILED if failed else EXIT_OK


_MARKS = {"ok": "ok", "warn": "warn", "fail": "FAIL", "info": ""}


def checks_table(checks: list[Check]) -> Table:
    """The checks as doctor prints them: mark, name, value. Every cell is ``Text``: the marks
    were ``str`` once, parsed as markup with ``:emoji:`` codes, which loaded rich's emoji
    table (~12 M instructions) to print the same bytes."""
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    for check in checks:
        table.add_row(Text(_MARKS[check.status]), Text(check.name), Text(check.value))
    return table
