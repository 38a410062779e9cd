"""PostgreSQL: a task's route worked out while its lease is in flight (issue 29, stop 38).

A new task's lease is a round trip; the routing that needs no effect (the table, the skills'
patterns, the classifier: ``IntentRouter.decide``) is done while it is on the wire, and
everything with an effect (the state change, its event and checkpoint, the model's call, the
router's cache and counters) waits for the lease. A refused lease leaves nothing behind. On
SQLite (a local lock, taken at once) nothing changes. Against a real server."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
from skillrt.testing import FunctionModel, ModelOptions

from .helpers import TopicParams, make_runtime

UNSURE = "hmm, that thing from yesterday about the garden"  # no pattern: a model is wanted


@skill(name="Writer", params=TopicParams, intents=["WRITE_ARTICLE"], description="writes")
async def _writer(ctx: SkillContext, params: TopicParams) -> SkillResult:
    async def outline() -> str:
        return "an outline"

    await ctx.step("outline", outline)
    return SkillResult(message="done")


class _Model:
    """A model that answers routing with its first candidate and logs each call."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def __call__(self, messages: list[Any], options: ModelOptions) -> Any:
        self.log.append("model")
        if options.response_model is None:
            return "ok"
        field = options.response_model.model_fields["type"]
        names = [n for n in field.annotation.__args__ if n != "UNKNOWN"]  # type: ignore[union-attr]
        return {"type": names[0], "confidence": 0.99, "parameters": {"topic": "the garden"}}


@pytest.fixture
async def pg_runtime(pg_url: str, tmp_path: Path) -> AsyncIterator[tuple[AgentRuntime, list[str]]]:
    log: list[str] = []
    config = load_config(content_root=tmp_path, state_url=pg_url, failover=False,
                         llm={"router_trust": "high"})  # fmt: skip
    rt = AgentRuntime(config, llm=FunctionModel(_Model(log)), skills=[_writer])
    await rt.initialize()
    warm = await rt.process_input("write an article about warming up")  # sessions connected
    assert warm.state == "COMPLETED", warm.content
    log.clear()
    yield rt, log
    await rt.close()


def _watch(rt: AgentRuntime, log: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Log the lease's statement going out, its answer, the router's work and its effects."""
    state: Any = rt._services.state  # type: ignore[union-attr]
    runlocks, router = state.runlocks, rt.router
    real_send: Callable[..., bool] = runlocks.hold_many_now

    def send(task_ids: list[str], done: Callable[..., None]) -> bool:
        log.append("lease sent")
        return real_send(task_ids, done)

    real_held = state._held

    def held(asked: Any, found: Any, exc: Any) -> None:
        log.append("lease answered")
        real_held(asked, found, exc)

    def logged(name: str) -> None:
        real: Callable[..., Any] = getattr(router, name)

        @functools.wraps(real)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            log.append(name)
            return real(*args, **kwargs)

        monkeypatch.setattr(router, name, wrapper)

    monkeypatch.setattr(runlocks, "hold_many_now", send)
    monkeypatch.setattr(state, "_held", held)
    logged("ranked")  # the classifier: routing's work that has no effect
    cache = router._cache

    class Logged(type(cache)):  # type: ignore[misc]
        def get(self, key: Any) -> Any:
            log.append("cache get")
            return super().get(key)

        def put(self, key: Any, value: Any) -> None:
            log.append("cache put")
            super().put(key, value)

    logged_cache = Logged(cache.maxsize, cache.ttl, cache._timer)
    logged_cache._data = cache._data
    monkeypatch.setattr(router, "_cache", logged_cache)
    rt.events.on("*", lambda event: log.append(f"event {event.type}"))


async def test_the_route_is_worked_out_while_the_lease_is_on_the_wire(
    pg_runtime: tuple[AgentRuntime, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, log = pg_runtime
    _watch(rt, log, monkeypatch)
    reply = await rt.process_input("write an article about tomatoes")
    assert reply.state == "COMPLETED", reply.content
    sent, answered = log.index("lease sent"), log.index("lease answered")
    # The classifier ran after the lease went out and before its answer came (before: after).
    assert sent < log.index("ranked") < answered, log
    # Nothing with an effect before the answer: no event, no cache read or write.
    before = log[:answered]
    assert not [e for e in before if e.startswith(("event", "cache", "model"))], log
    assert log.index("cache get") > answered and log.index("cache put") > answered


async def test_the_model_is_asked_only_once_the_lease_is_held(
    pg_runtime: tuple[AgentRuntime, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, log = pg_runtime
    _watch(rt, log, monkeypatch)
    drafts: list[Any] = []
    real_decide = rt.router.decide
    monkeypatch.setattr(
        rt.router, "decide", lambda *a: drafts.append(real_decide(*a)) or drafts[-1]
    )
    reply = await rt.process_input(UNSURE)
    assert drafts and drafts[0].wants_model, drafts  # worked out early, wanting the model
    answered = log.index("lease answered")
    assert log.index("ranked") < answered < log.index("model"), log
    assert reply.state in ("COMPLETED", "WAITING_INPUT"), reply.content


def _rows(url: str, table: str, task_id: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        query = f"SELECT count(*) FROM {table} WHERE task_id = %s"
        row = conn.execute(query, (task_id,)).fetchone()
        return int(row[0]) if row else 0


async def test_a_refused_lease_leaves_nothing_behind(
    pg_runtime: tuple[AgentRuntime, list[str]], pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillrt._state.postgres import PgDatabase, PgRunLocks

    rt, log = pg_runtime
    other = PgDatabase(pg_url, worker_id="another-worker")
    try:
        assert PgRunLocks(other, lease_s=60).hold("taken") is True  # another worker runs it
        _watch(rt, log, monkeypatch)
        drafts: list[Any] = []
        real_decide = rt.router.decide
        monkeypatch.setattr(
            rt.router, "decide", lambda *a: drafts.append(real_decide(*a)) or drafts[-1]
        )
        cache = rt.router.cache_info()
        driver: Any = rt._driver
        task = driver.new_task(UNSURE, {}, "s", task_id="taken")
        reply = await driver.start(task, route=True)
        assert reply.data.get("error") == "running_elsewhere", reply
        assert drafts and drafts[0].wants_model  # the route was worked out meanwhile ...
        # ... and nothing of it is left: no event, model call, cache entry or count, state
        # change, history entry or checkpoint; the task is not kept.
        assert [e for e in log if not e.startswith("lease")] == ["ranked"], log
        assert rt.router.cache_info() == cache
        assert task.state.value == "IDLE" and "taken" not in driver.tasks
        await rt._services.state.committer.settled()  # type: ignore[union-attr]
        assert _rows(pg_url, "skillrt_tasks", "taken") == 0
        assert _rows(pg_url, "skillrt_history_tasks", "taken") == 0
    finally:
        other.close()


async def test_on_sqlite_nothing_is_routed_before_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = make_runtime(tmp_path, FunctionModel(lambda m, o: "ok"), [_writer])
    await rt.initialize()
    try:
        assert rt._services.state.hold_soon("t") is None  # type: ignore[union-attr]
        decided: list[str] = []
        real_decide = rt.router.decide
        monkeypatch.setattr(rt.router, "decide", lambda *a: decided.append("x") or real_decide(*a))
        reply = await rt.process_input("write an article about tomatoes")
        assert reply.state == "COMPLETED" and decided == []
    finally:
        await rt.close()
