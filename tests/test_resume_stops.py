"""Stops that keep paid work: a budget or authentication stop ends in ERROR with its journal
kept; a raised budget or a fixed key lets it go on without asking the completed steps again;
only abandon deletes the journal. Each test that keeps a task runs on both task stores
(``store_kind``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillrt import SkillContext, SkillResult, skill
from skillrt.llm.base import LLMMessage, LLMResult, Usage
from skillrt.llm.openai_provider import OpenAIProvider
from skillrt.testing import FunctionModel, ModelOptions
from tests.cli_support import article, cli_env, make_blog, skillrt, write_script
from tests.helpers import TopicParams, make_runtime
from tests.openai_server import Fail, OpenAIServer, RecordedRequest, Reply
from tests.stores import StoreKind

STEPS = ["s1", "s2", "s3", "s4"]


def stepper(names: list[str] = STEPS) -> Any:
    @skill(name="Stepper", params=TopicParams)
    async def run(ctx: SkillContext, params: TopicParams) -> SkillResult:
        done: list[str] = []
        for name in names:

            async def ask(name: str = name) -> str:
                result = await ctx.llm.chat([{"role": "user", "content": name}])
                return result.content

            done.append(await ctx.step(name, ask))
        return SkillResult(success=True, message=" ".join(done))

    return run


def paid_model(calls: list[str]) -> FunctionModel:
    """200 tokens a call; answers ``<step> done`` and records which step asked."""

    def answer(messages: list[LLMMessage], options: ModelOptions) -> LLMResult:
        name = messages[-1]["content"]
        calls.append(name)
        return LLMResult(content=f"{name} done", usage=Usage(100, 100), model="function")

    return FunctionModel(answer)


@pytest.mark.usefixtures("store_kind")
async def test_budget_stop_then_a_raised_budget_resumes_without_paying_again(
    isolated: Path,
) -> None:
    calls: list[str] = []
    rt = make_runtime(isolated, paid_model(calls), [stepper()], budget={"max_tokens": 500})
    msg = await rt.run_skill("Stepper", {"topic": "go"})
    assert msg.state == "ERROR" and msg.data["outcome"] == "budget"
    assert "--max-tokens" in msg.content  # it says how to go on
    # s3 went over (600 > 500) but was paid for: its answer is kept; s4 was refused unasked.
    assert calls == ["s1", "s2", "s3"]
    task_id = msg.task_id
    assert task_id is not None
    [stopped] = rt.get_resumable_tasks()
    assert (stopped.id, stopped.error_reason, stopped.steps_done) == (
        task_id,
        "BUDGET_EXCEEDED",
        3,
    )

    # Resumed with the same budget: refused again before any call.
    again = await rt.resume_task(task_id)
    assert again is not None and again.state == "ERROR" and calls == ["s1", "s2", "s3"]
    await rt.close()

    # A new process, the budget raised: only s4 is asked.
    rt = make_runtime(isolated, paid_model(calls), [stepper()], budget={"max_tokens": 500})
    await rt.initialize()
    done = await rt.resume_task(task_id, budget={"max_tokens": 5000})
    assert done is not None and done.state == "COMPLETED", done.content
    assert done.content == "s1 done s2 done s3 done s4 done"
    assert calls == ["s1", "s2", "s3", "s4"]
    assert done.tokens == 800  # the task's whole bill, each call once
    assert rt.get_resumable_tasks() == []
    await rt.close()


@pytest.mark.usefixtures("store_kind")
async def test_a_raised_cost_limit_is_kept_with_the_task(isolated: Path) -> None:
    calls: list[str] = []

    def answer(messages: list[LLMMessage], options: ModelOptions) -> LLMResult:
        calls.append(messages[-1]["content"])
        return LLMResult(content="ok", usage=Usage(1, 1), cost=0.02, model="function")

    rt = make_runtime(isolated, FunctionModel(answer), [stepper()], budget={"max_cost": 0.01})
    msg = await rt.run_skill("Stepper", {"topic": "go"})
    assert msg.state == "ERROR" and calls == ["s1"]
    assert msg.task_id is not None
    done = await rt.resume_task(msg.task_id, budget={"max_cost": 1.0})
    assert done is not None and done.state == "COMPLETED"
    assert calls == STEPS
    await rt.close()


@pytest.mark.usefixtures("store_kind")
async def test_only_abandon_deletes_a_stopped_task(isolated: Path) -> None:
    calls: list[str] = []
    rt = make_runtime(isolated, paid_model(calls), [stepper()], budget={"max_tokens": 100})
    msg = await rt.run_skill("Stepper", {"topic": "go"})
    assert msg.state == "ERROR" and msg.task_id is not None
    await rt.close()
    rt = make_runtime(isolated, paid_model(calls), [stepper()])
    await rt.initialize()
    assert [t.id for t in rt.get_resumable_tasks()] == [msg.task_id]  # survived the restart
    assert await rt.abandon_task(msg.task_id)
    await rt.close()
    rt = make_runtime(isolated, paid_model(calls), [stepper()])
    await rt.initialize()
    assert rt.get_resumable_tasks() == []
    assert await rt.resume_task(msg.task_id) is None
    await rt.close()


async def test_a_bad_budget_at_resume_is_refused(isolated: Path) -> None:
    rt = make_runtime(isolated, paid_model([]), [stepper()])
    with pytest.raises(ValueError, match="max_tokens"):
        await rt.resume_task("nope", budget={"max_tokens": 0})
    await rt.close()


@pytest.mark.usefixtures("store_kind")
async def test_an_authentication_stop_resumes_with_a_fixed_key(isolated: Path) -> None:
    served: list[str] = []

    def keyed(request: RecordedRequest) -> Reply | Fail:
        key = request.headers.get("authorization", "")
        name = request.body["messages"][-1]["content"]
        # The old key works for two calls, then it is revoked.
        if key == "Bearer sk-new" or (key == "Bearer sk-old" and len(served) < 2):
            served.append(name)
            return Reply(f"{name} done")
        return Fail(401, "Incorrect API key provided", code="invalid_api_key")

    with OpenAIServer() as server:
        server.default = keyed
        old = OpenAIProvider(base_url=server.base_url, api_key="sk-old", model="m")
        rt = make_runtime(isolated, old, [stepper()])
        msg = await rt.run_skill("Stepper", {"topic": "go"})
        assert msg.state == "ERROR"
        assert "SKILLRT_LLM__API_KEY" in msg.content and "sk-old" not in msg.content
        assert served == ["s1", "s2"]
        [stopped] = rt.get_resumable_tasks()
        assert (stopped.error_reason, stopped.steps_done) == ("AUTH_FAILED", 2)
        await rt.close()
        await old.aclose()

        new = OpenAIProvider(base_url=server.base_url, api_key="sk-new", model="m")
        rt = make_runtime(isolated, new, [stepper()])
        await rt.initialize()
        assert msg.task_id is not None
        done = await rt.resume_task(msg.task_id)
        assert done is not None and done.state == "COMPLETED", done.content
        assert served == STEPS  # s1 and s2 were not asked again
        await rt.close()
        await new.aclose()


def test_cli_resume_with_a_raised_budget(tmp_path: Path, store_kind: StoreKind) -> None:
    blog = make_blog(tmp_path)
    answers = article("Budget Things", ["Section one.", "Section two."])
    # The outline call goes over a 1-token budget (it is kept); section 1 is refused.
    env = cli_env(blog, write_script(tmp_path / "first.json", answers[:1]), **store_kind.env())
    env["SKILLRT_BUDGET__MAX_TOKENS"] = "1"
    ran = skillrt("run", "--json", "write an article about budget things", env=env, cwd=tmp_path)
    assert ran.returncode == 1, ran.stderr
    stopped = json.loads(ran.stdout)
    assert stopped["state"] == "ERROR" and stopped["data"]["outcome"] == "budget"

    # Exactly the answers of the steps not done: a repeated outline would use them up.
    env = cli_env(blog, write_script(tmp_path / "rest.json", answers[1:]), **store_kind.env())
    env["SKILLRT_BUDGET__MAX_TOKENS"] = "1"
    refused = skillrt("resume", "--json", stopped["task_id"][:8], env=env, cwd=tmp_path)
    assert refused.returncode == 1  # the same budget: refused again, nothing asked
    resumed = skillrt(
        "resume", "--json", stopped["task_id"][:8], "--max-tokens", "1000000", env=env, cwd=tmp_path
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    done = json.loads(resumed.stdout)
    assert done["state"] == "COMPLETED"
    assert (blog / "posts").is_dir() and any(
        "Section two." in p.read_text() for p in (blog / "posts").rglob("*.md")
    )
