"""The benchmarks keep working: every benchmark function at tiny sizes, and the entry point.

Not timed tests: nothing here checks a figure, only that each benchmark runs, checks what
it claims to check (tasks completed, recorded) and returns rows. The LangGraph side, the
profiles and the observation benchmark need the ``bench`` extra and are skipped without it
(CI does not install it).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import __main__ as entry
from benchmarks import bench_routing, bench_runtime

HAVE_LANGGRAPH = importlib.util.find_spec("langgraph") is not None
HAVE_PYINSTRUMENT = importlib.util.find_spec("pyinstrument") is not None


def check(result: dict[str, Any]) -> dict[str, Any]:
    assert result["name"] and result["title"]
    assert result["rows"], "a benchmark returns at least one row"
    for r in result["rows"]:
        assert set(r) >= {"metric", "value", "unit", "target", "met", "note"}
    json.dumps(result, default=str)  # the report is written as JSON
    return result


def test_per_task_overhead_runs_both_sides() -> None:
    result = check(bench_runtime.per_task_overhead(tasks=3, rounds=1, warmup=1))
    stats = result["details"]["stats"]
    assert {"skillrt", "skillrt_memory", "skillrt_model", "skillrt_direct"} <= set(stats)
    metrics = [r["metric"] for r in result["rows"]]
    assert "skillrt run_skill (no routing), checkpoints on" in metrics
    assert "  run_skill (no routing) p50 / floor" in metrics
    assert ("langgraph" in stats) is HAVE_LANGGRAPH
    writes = result["details"]["skillrt_writes_per_task"]
    assert writes["checkpoint_saves"] >= 3  # one per durable step at least


def test_concurrency_completes_and_records_every_task() -> None:
    result = check(bench_runtime.concurrency(tasks=8, delay_s=0.01, checkpoints=True))
    details = result["details"]
    assert details["completed"] == details["recorded"] == 8
    assert details["model_calls"] == 24
    assert details["records_left"] == 0
    assert details["peak_rss_mb"] > 0
    # Where the time goes: the loop's CPU, and each of the three calls' first and last start,
    # in order (a task's second call starts after its first one's answer).
    assert details["loop_cpu_s"] > 0
    started = details["calls_started_s"]
    assert 0 <= started["context"][0] <= started["context"][1] < started["outline"][1]
    assert started["outline"][1] < started["write"][1] <= details["wall_s"]
    assert details["routing_us"] > 0
    metrics = [r["metric"] for r in result["rows"]]
    assert "  the last task's first model call started after" in metrics


def test_first_inputs_measures_how_long_the_loop_is_held() -> None:
    from benchmarks import bench_first

    result = check(bench_first.first_inputs(runs=1))
    [cold], [warm] = result["details"]["cold"], result["details"]["warm"]
    for case, keys in ((cold, ("first", "new_kind")), (warm, ("first",))):
        for key in keys:
            took, held = case[f"{key}_s"], case[f"{key}_hold_s"]
            assert 0 < held <= took + 0.05  # the ticker's longest gap, while the call ran
    assert len(result["rows"]) == 3


def test_resume_startup_restores_every_record() -> None:
    result = check(bench_runtime.resume_startup(records=25, runs=2))
    assert result["details"]["resumable"] == 25


def test_routing_measures_the_three_paths() -> None:
    result = check(bench_routing.routing(passes=1, eval_passes=1))
    details = result["details"]
    assert details["eval"]["counts"]["all"] >= 300  # the evaluation set's accuracy row
    assert result["rows"][0]["unit"] == "%"
    assert details["regex_inputs"] > 0
    assert details["stats"]["cache_hit"]["n"] == details["regex_inputs"] + details["model_inputs"]
    assert details["stats"]["model_miss_all"]["n"] == details["samples"]


@pytest.mark.skipif(not HAVE_PYINSTRUMENT, reason="pyinstrument is in the bench extra")
def test_profiles_run(tmp_path: Path) -> None:
    from benchmarks import bench_profile

    per_task = check(bench_profile.profile_per_task(tasks=3, html_dir=tmp_path))
    assert per_task["details"]["checkpoints_on"]["areas"]
    conc = check(bench_profile.profile_concurrency(tasks=5, delay_s=0.01))
    assert conc["details"]["checkpoints_off"]["completed"] == 5
    assert (tmp_path / "per_task_checkpoints_on.html").is_file()


def test_abort_latency_runs() -> None:
    from benchmarks import bench_llm

    result = check(bench_llm.abort_latency(aborts=4, quick=True))
    assert result["details"]


@pytest.mark.slow
def test_observation_size_runs() -> None:
    pytest.importorskip("markdownify")  # in the bench extra
    from benchmarks import bench_observation

    check(bench_observation.observation_size())


def test_every_suite_resolves_or_says_why_not() -> None:
    # local_model_speed is only resolved, not run: loading the model takes ~15 s, and
    # tests/test_llm_local.py already runs it.
    for suite in entry.SUITES:
        fn, why = entry._resolve(suite)
        assert (fn is None) == (why is not None), suite.name
        if fn is not None:
            entry._accepted(fn, {**suite.full, "quick": True})  # the sizes fit the signature


def test_entry_point_writes_json_and_markdown(tmp_path: Path) -> None:
    out, md = tmp_path / "results.json", tmp_path / "table.md"
    code = entry.main(["--quick", "--only", "routing", "--out", str(out), "--markdown", str(md)])
    assert code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["machine"]["cores"] and report["machine"]["python"]
    assert [r["name"] for r in report["results"]] == ["routing"]
    assert "| benchmark | metric |" in md.read_text(encoding="utf-8")


def test_results_without_rows_are_flattened() -> None:
    suite = entry.Suite("other", "bench_other", "fn")
    result = entry.normalise(suite, {"latency": {"p99_ms": 1.5}, "ok": True})
    assert [(r["metric"], r["value"]) for r in result["rows"]] == [
        ("latency.p99_ms", 1.5),
        ("ok", True),
    ]


def test_serve_benchmark_runs() -> None:
    pytest.importorskip("fastapi")
    from benchmarks import bench_serve

    result = check(
        bench_serve.serve_concurrency(
            clients=5, steps=2, delay_s=0.01, requests=32, rate_clients=4, rate_seconds=0.5,
            rate_rounds=1,
        )
    )  # fmt: skip
    details = result["details"]
    assert details["completed"] == 5
    assert details["first_event_ms"]["p99"] > 0
    assert details["tasks_list_rps"] > 0
    rate = details["rate"]["medians"]  # the skill with no steps beside the bare endpoint
    assert rate["fastapi"]["requests"] > 0 and rate["skillrt"]["requests"] > 0
    assert rate["skillrt"]["cpu_ms_per_request"] > 0
    calls = details["rate"]["calls"]  # noise-free: function calls per request
    assert calls["skillrt"] > calls["fastapi"] > 0
    metrics = [r["metric"] for r in result["rows"]]
    assert "skillrt / bare FastAPI, requests/s" in metrics


def test_serve_disconnect_benchmark_runs() -> None:
    pytest.importorskip("fastapi")
    from benchmarks import bench_serve

    result = check(bench_serve.disconnect_abort(runs=2))
    assert set(result["details"]["ms"]) == {"served", "served_cancel", "local", "local_cancel"}
    assert all(stat["p50"] > 0 for stat in result["details"]["ms"].values())
