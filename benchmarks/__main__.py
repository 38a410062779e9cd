"""``python -m benchmarks``: run every benchmark, print one table, write JSON.

Options: ``--quick`` (smaller sizes, for a check that everything runs), ``--only NAME,...``
(suite names as listed by ``--list``), ``--out PATH`` (default ``benchmarks/results.json``),
``--markdown PATH`` (the table as Markdown), ``--profile`` (also run the
pyinstrument profiles; ``--profile-html DIR`` keeps their HTML reports).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import math
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks._common import machine, row

DEFAULT_OUT = Path(__file__).resolve().parent / "results.json"


@dataclass(frozen=True)
class Suite:
    """One benchmark function: where it lives and its sizes for a full and a quick run."""

    name: str
    module: str
    function: str
    full: dict[str, Any] = field(default_factory=dict)
    quick: dict[str, Any] = field(default_factory=dict)
    profile_only: bool = False


SUITES: tuple[Suite, ...] = (
    Suite(
        "per_task",
        "bench_runtime",
        "per_task_overhead",
        {"tasks": 600},
        {"tasks": 90, "warmup": 10},
    ),
    Suite(
        "concurrency",
        "bench_runtime",
        "concurrency",
        {"tasks": 1000, "checkpoints": True},
        {"tasks": 200, "checkpoints": True},
    ),
    Suite(
        "concurrency_memory",
        "bench_runtime",
        "concurrency",
        {"tasks": 1000, "checkpoints": False},
        {"tasks": 200, "checkpoints": False},
    ),
    Suite("routing", "bench_routing", "routing", {"passes": 200}, {"passes": 20}),
    Suite("first_input", "bench_first", "first_inputs", {"runs": 3}, {"runs": 1}),
    Suite(
        "resume",
        "bench_runtime",
        "resume_startup",
        {"records": 10_000, "runs": 5},
        {"records": 1000, "runs": 2},
    ),
    Suite("cli", "bench_cli", "cli_commands", {"runs": 5}, {"runs": 1, "tasks": 3}),
    Suite("abort", "bench_llm", "abort_latency"),
    Suite("serve", "bench_serve", "serve_concurrency", {"clients": 200}, {"clients": 20}),
    Suite("serve_disconnect", "bench_serve", "disconnect_abort", {"runs": 100}, {"runs": 20}),
    Suite("local_model", "bench_llm", "local_model_speed"),
    Suite("local_worker", "bench_local_worker", "local_worker"),
    Suite("observation", "bench_observation", "observation_size"),
    Suite(
        "postgres",
        "bench_postgres",
        "postgres_store",
        {"tasks": 2000, "concurrency": 8, "sequential": 200, "rounds": 3},
        {
            "tasks": 40,
            "concurrency": 4,
            "sequential": 20,
            "rounds": 1,
            "repeats": 30,
            "concurrent": 100,
        },
    ),
    Suite(
        "profile_per_task",
        "bench_profile",
        "profile_per_task",
        {"tasks": 300},
        {"tasks": 50},
        profile_only=True,
    ),
    Suite(
        "profile_concurrency",
        "bench_profile",
        "profile_concurrency",
        {"tasks": 1000},
        {"tasks": 200},
        profile_only=True,
    ),
    Suite(
        "profile_serve",
        "bench_profile",
        "profile_serve",
        {"seconds": 10.0},
        {"seconds": 3.0},
        profile_only=True,
    ),
)


def _resolve(suite: Suite) -> tuple[Callable[..., Any] | None, str | None]:
    """The suite's function, or None and why it is missing (a module not there yet)."""
    qualified = f"benchmarks.{suite.module}"
    try:
        module = importlib.import_module(qualified)
    except ModuleNotFoundError as exc:
        if exc.name in (qualified, "langgraph", "pyinstrument", "fastapi", "uvicorn"):
            return None, f"{qualified} is not available ({exc.name} missing)"
        raise
    fn = getattr(module, suite.function, None)
    if not callable(fn):
        return None, f"{qualified} has no function {suite.function}()"
    return fn, None


def _accepted(fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    params = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params}


def _as_rows(value: Any, prefix: str = "") -> list[dict[str, Any]]:
    """Rows for a result that does not bring its own: its scalars, flattened."""
    rows: list[dict[str, Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            rows += _as_rows(item, f"{prefix}{key}" if not prefix else f"{prefix}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value[:20]):
            rows += _as_rows(item, f"{prefix}[{i}]")
    elif isinstance(value, bool | int | float | str) or value is None:
        rows.append(row(prefix or "value", value))
    return rows


def normalise(suite: Suite, result: Any) -> dict[str, Any]:
    """Every result as ``{name, title, params, rows, details}``."""
    if isinstance(result, dict) and isinstance(result.get("rows"), list):
        out = dict(result)
        out.setdefault("name", suite.name)
        out.setdefault("title", suite.name)
        return out
    details = result if isinstance(result, dict) else {"value": result}
    return {
        "name": suite.name,
        "title": str(details.get("title", suite.name)) if isinstance(details, dict) else suite.name,
        "params": {},
        "rows": _as_rows(details),
        "details": details,
    }


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        magnitude = abs(value)
        if magnitude >= 1000:
            return f"{value:,.0f}"
        if magnitude >= 100:
            return f"{value:.0f}"
        if magnitude >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}" if magnitude >= 0.01 or value == 0 else f"{value:.2g}"
    if value is None:
        return "-"
    return str(value)


def _status(r: dict[str, Any]) -> str:
    if r.get("met") is None:
        return ""
    return "met" if r["met"] else "NOT met"


def _machine_line(m: dict[str, Any]) -> str:
    load = m.get("load_avg")
    loaded = f", load average {load[0]:g} at the start" if load else ""
    return (
        f"{m['cpu']}, {m['cores']} cores, {m['memory_gb']} GiB RAM, {m['os']}, {m['python']},"
        f" {m['date']}{loaded}"
    )


def print_table(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    m = report["machine"]
    console = Console(width=None if sys.stdout.isatty() else 160)
    table = Table(
        title=f"skillrt benchmarks ({'quick' if report['quick'] else 'full'} run)",
        caption=_machine_line(m),
        show_lines=False,
    )
    table.add_column("metric")
    table.add_column("value", justify="right")
    for col in ("unit", "target", "", "note"):
        table.add_column(col)
    for result in report["results"]:
        table.add_section()
        table.add_row(f"[bold]{result['title']}[/bold]")
        for r in result["rows"]:
            table.add_row(
                r["metric"], _fmt(r["value"]), r.get("unit") or "", r.get("target") or "",
                _status(r), r.get("note") or "",
            )  # fmt: skip
    for name, why in report["skipped"].items():
        table.add_section()
        table.add_row(f"[bold]{name}[/bold]", "skipped", "", "", "", why)
    for name, why in report["errors"].items():
        table.add_section()
        table.add_row(f"[bold]{name}[/bold]", "FAILED", "", "", "", why.splitlines()[-1])
    console.print(table)


def markdown(report: dict[str, Any]) -> str:
    """The table as Markdown, with the machine it ran on."""
    m = report["machine"]
    lines = [
        f"Machine: {_machine_line(m)}; {'quick' if report['quick'] else 'full'} run,"
        f" {report['duration_s']:.0f} s.",
        "",
        "| benchmark | metric | value | unit | target | status | note |",
        "| --- | --- | ---: | --- | --- | --- | --- |",
    ]
    for result in report["results"]:
        title = result["title"]
        for r in result["rows"]:
            cells = [
                title,
                r["metric"],
                _fmt(r["value"]),
                r.get("unit") or "",
                r.get("target") or "",
                _status(r),
                r.get("note") or "",
            ]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
            title = ""
    for name, why in {**report["skipped"], **report["errors"]}.items():
        lines.append(f"| {name} | skipped | - | | | | {why.splitlines()[-1]} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, to check everything runs"
    )
    parser.add_argument("--only", default="", help="comma-separated suite names (see --list)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument(
        "--markdown", type=Path, default=None, help="also write the table as Markdown"
    )
    parser.add_argument("--profile", action="store_true", help="also run the pyinstrument profiles")
    parser.add_argument("--profile-html", type=Path, default=None, help="keep HTML profiles here")
    parser.add_argument("--list", action="store_true", help="list the suites and exit")
    args = parser.parse_args(argv)

    if args.list:
        for s in SUITES:
            extra = "  (with --profile)" if s.profile_only else ""
            print(f"{s.name:22} benchmarks.{s.module}.{s.function}{extra}")
        return 0
    wanted = {n.strip() for n in args.only.split(",") if n.strip()}
    unknown = wanted - {s.name for s in SUITES}
    if unknown:
        parser.error(f"unknown suite(s): {', '.join(sorted(unknown))}; see --list")

    report: dict[str, Any] = {
        "machine": machine(),
        "quick": args.quick,
        "results": [],
        "skipped": {},
        "errors": {},
    }
    started = time.perf_counter()
    for suite in SUITES:
        if wanted and suite.name not in wanted:
            continue
        if suite.profile_only and not (args.profile or suite.name in wanted):
            continue
        fn, why = _resolve(suite)
        if fn is None:
            report["skipped"][suite.name] = why or "not available"
            print(f"- {suite.name}: skipped ({why})", file=sys.stderr)
            continue
        kwargs = dict(suite.quick if args.quick else suite.full)
        if args.quick:
            kwargs.setdefault("quick", True)
        if suite.profile_only and args.profile_html is not None:
            kwargs["html_dir"] = args.profile_html
        print(f"- {suite.name} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            result = fn(**_accepted(fn, kwargs))
        except Exception:
            report["errors"][suite.name] = traceback.format_exc()
            print(report["errors"][suite.name], file=sys.stderr)
            continue
        out = normalise(suite, result)
        out["seconds"] = round(time.perf_counter() - t0, 2)
        report["results"].append(out)
        print(f"  done in {out['seconds']} s", file=sys.stderr, flush=True)
    report["duration_s"] = round(time.perf_counter() - started, 1)

    print_table(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    print(f"results written to {args.out}", file=sys.stderr)
    if args.markdown is not None:
        args.markdown.write_text(markdown(report), encoding="utf-8")
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
