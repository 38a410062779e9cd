"""The embedded model in its worker process: a native crash in llama.cpp (a real SIGSEGV in a
real child process) ends the call with a named error and never the runtime; the worker comes
back, one load mode safer; the AMX check chooses the loader's parameters."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
from skillrt.exceptions import ModelCrashed
from skillrt.llm.base import LLMMessage
from skillrt.llm.llama_modes import (
    ModeMemory,
    cpu_has_amx,
    first_mode,
    loader_options,
    next_mode,
)
from skillrt.llm.local import MODE_FILE, LocalProvider
from skillrt.llm.worker_client import crash_message
from skillrt.testing import Answer, FunctionModel, ModelOptions
from tests.helpers import make_runtime

AMX_CPU = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512f amx_bf16 amx_tile amx_int8\n"
PLAIN_CPU = "processor\t: 0\nflags\t\t: fpu sse avx2 fma f16c\n"
HI = [{"role": "user", "content": "Say hello in one short sentence."}]


class Topic(BaseModel):
    topic: str


def streaming_skill(on_delta: list[object]) -> object:
    """A skill whose one durable step streams a story; ``on_delta[0]`` sees each delta."""

    @skill(name="Story", intents=["WRITE_ARTICLE"], params=Topic)
    async def story(ctx: SkillContext, params: Topic) -> SkillResult:
        async def draft() -> str:
            answer = await ctx.llm.chat(
                [{"role": "user", "content": f"Tell me a long story about {params.topic}."}],
                max_tokens=60,
                stream_cb=lambda delta: on_delta[0](delta) if on_delta else None,  # type: ignore[operator]
            )
            return answer.content

        text = await ctx.step("draft", draft)
        return SkillResult(message=text or "(empty)", data={"topic": params.topic})

    return story


# --- without a model ----------------------------------------------------------------------------


def test_amx_is_read_from_the_flags_line() -> None:
    assert cpu_has_amx(lambda: AMX_CPU)
    assert not cpu_has_amx(lambda: PLAIN_CPU)
    assert not cpu_has_amx(lambda: "model name : amx_tile in a name is not a flag\n")
    assert not cpu_has_amx(lambda: "")  # no /proc/cpuinfo (macOS, Windows)


def test_modes_step_down_and_the_memory_is_per_library(tmp_path: Path) -> None:
    assert next_mode("default") == "no-extra-bufts"
    assert next_mode("no-extra-bufts") == "n-batch-1"
    assert next_mode("n-batch-1") is None
    assert loader_options("default") == {"use_extra_bufts": True, "n_batch": 512}
    assert loader_options("n-batch-1") == {"use_extra_bufts": False, "n_batch": 1}
    memory = ModeMemory(tmp_path / MODE_FILE)
    assert first_mode("auto", memory, "lib 1", lambda: AMX_CPU)[0] == "no-extra-bufts"
    assert first_mode("auto", memory, "lib 1", lambda: PLAIN_CPU)[0] == "default"
    memory.write("lib 1", "n-batch-1")
    assert first_mode("auto", memory, "lib 1", lambda: PLAIN_CPU)[0] == "n-batch-1"
    assert first_mode("auto", memory, "lib 2", lambda: PLAIN_CPU)[0] == "default"  # rebuilt
    assert first_mode("default", memory, "lib 1", lambda: AMX_CPU)[0] == "default"  # forced
    (tmp_path / MODE_FILE).write_text("{not json", encoding="utf-8")
    assert memory.read("lib 1") is None


def test_a_crash_is_named_by_its_signal() -> None:
    assert crash_message(-signal.SIGSEGV) == (
        "the embedded model crashed: SIGSEGV in llama.cpp",
        "SIGSEGV",
    )
    assert "out of memory" in crash_message(-signal.SIGKILL)[0]
    assert "status 3" in crash_message(3)[0]


def test_a_worker_killed_from_outside_is_not_said_to_have_crashed_in_llama_cpp() -> None:
    """A SIGKILL (the out-of-memory killer, ``kill -9``) was "the embedded model crashed:
    SIGKILL in llama.cpp (killed: out of memory?)": no fault of llama.cpp's."""
    message, name = crash_message(-signal.SIGKILL)
    assert name == "SIGKILL"
    assert "killed from outside" in message and "out of memory" in message
    assert "crashed" not in message and "in llama.cpp" not in message


def test_the_load_modes_reason_names_the_key_that_forced_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``llm.local.safe = true`` sets ``local_mode``; the reason said "llm.local_mode is set",
    a key the user never wrote, and the doctor said to unset it."""
    from skillrt.llm.probe import Probe

    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith("SKILLRT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("SKILLRT_LLM__LOCAL__SAFE", "true")
    llm = load_config().llm
    assert (llm.local_mode, llm.local_mode_setting) == ("no-extra-bufts", "llm.local.safe")
    memory = ModeMemory(tmp_path / MODE_FILE)
    mode, why = first_mode(llm.local_mode, memory, "lib", lambda: PLAIN_CPU,
                           setting=llm.local_mode_setting)  # fmt: skip
    assert (mode, why) == ("no-extra-bufts", "llm.local.safe is set")
    probe = Probe("crashed", mode, why, crashes=[(mode, "SIGSEGV")])
    assert probe.describe().endswith(", or unset llm.local.safe")
    monkeypatch.delenv("SKILLRT_LLM__LOCAL__SAFE")
    monkeypatch.setenv("SKILLRT_LLM__LOCAL_MODE", "n-batch-1")
    assert load_config().llm.local_mode_setting == "llm.local_mode"


def test_a_mode_remembered_after_crashes_says_how_to_try_the_faster_ones(tmp_path: Path) -> None:
    """Stepped down by crashes, the mode stayed in llama-mode.json for good, and nothing said
    how to try llama.cpp's defaults again (after a fix, a new CPU)."""
    memory = ModeMemory(tmp_path / MODE_FILE)
    memory.write("lib", "n-batch-1")
    mode, why = first_mode("auto", memory, "lib", lambda: PLAIN_CPU)
    assert mode == "n-batch-1"
    assert str(tmp_path / MODE_FILE) in why and "delete that file" in why
    memory.write("lib", "default")  # the fastest already: nothing to try
    assert "delete" not in first_mode("auto", memory, "lib", lambda: PLAIN_CPU)[1]


# --- the real worker ----------------------------------------------------------------------------


@pytest.mark.local_model
async def test_amx_loads_without_extra_buffer_types(tmp_path: Path) -> None:
    amx = LocalProvider(n_ctx=512, cpuinfo=lambda: AMX_CPU, state_dir=tmp_path)
    plain = LocalProvider(n_ctx=512, cpuinfo=lambda: PLAIN_CPU, state_dir=tmp_path)
    forced = LocalProvider(n_ctx=512, cpuinfo=lambda: PLAIN_CPU, mode="n-batch-1")
    try:
        await amx.load()
        assert amx.mode == "no-extra-bufts" and "AMX" in amx.mode_reason
        assert amx.loader_params["use_extra_bufts"] is False
        assert amx.loader_params["n_batch"] == 512
        await plain.load()  # loading alone does not reach the faulting kernel
        assert plain.mode == "default"
        assert plain.loader_params["use_extra_bufts"] is True
        await forced.load()
        assert forced.loader_params == {"use_extra_bufts": False, "n_batch": 1, "n_ubatch": 1}
        # Each runs in a worker of its own, not in this process.
        pids = {amx.worker_pid, plain.worker_pid, forced.worker_pid}
        assert len(pids) == 3 and os.getpid() not in pids
    finally:
        for provider in (amx, plain, forced):
            await provider.aclose()


@pytest.mark.local_model
async def test_a_sigsegv_mid_stream_fails_the_call_and_the_runtime_serves_on(
    tmp_path: Path,
) -> None:
    llm = LocalProvider(n_ctx=1024, cpuinfo=lambda: AMX_CPU, mode="no-extra-bufts")
    deltas: list[str] = []
    killed: list[int] = []

    def kill_the_worker_mid_stream(delta: str) -> None:
        deltas.append(delta)
        if len(deltas) == 3 and not killed:
            pid = llm.worker_pid
            assert pid is not None and pid != os.getpid()
            killed.append(pid)
            os.kill(pid, signal.SIGSEGV)  # a real signal to the real child process

    hook: list[object] = [kill_the_worker_mid_stream]
    rt = make_runtime(tmp_path, llm, [streaming_skill(hook)])  # type: ignore[list-item]
    try:
        msg = await rt.run_skill("Story", {"topic": "a fox"})
        assert killed, "the model never streamed"
        assert msg.state == "ERROR"
        assert "the embedded model crashed: SIGSEGV in llama.cpp" in msg.content
        assert [t.id for t in rt.get_resumable_tasks()] == [msg.task_id]
        assert llm.crashes and llm.crashes[-1].signal_name == "SIGSEGV"
        # The runtime lives on: the next request gets a new worker and completes.
        hook.clear()
        again = await rt.run_skill("Story", {"topic": "a cat"})
        assert again.state == "COMPLETED", again.content
        assert llm.worker_pid not in (None, killed[0]) and llm.starts == 2
        # And the crashed task resumes from its journal and completes.
        resumed = await rt.resume_task(msg.task_id or "")
        assert resumed is not None and resumed.state == "COMPLETED", resumed
    finally:
        await rt.close()
        await llm.aclose()


@pytest.mark.local_model
async def test_a_worker_killed_from_outside_keeps_its_mode(tmp_path: Path) -> None:
    # kill -9 of the worker mid-stream (or the out-of-memory killer) is no fault of llama.cpp's
    # kernels: two such kills put the chat in n-batch-1, the slowest mode, and kept it there in
    # llama-mode.json for every later start.
    llm = LocalProvider(n_ctx=1024, cpuinfo=lambda: PLAIN_CPU, state_dir=tmp_path)
    try:
        for _ in range(2):
            killed: list[int] = []

            def kill_mid_stream(_delta: str, killed: list[int] = killed) -> None:
                if not killed and (pid := llm.worker_pid) is not None:
                    killed.append(pid)
                    os.kill(pid, signal.SIGKILL)

            with pytest.raises(ModelCrashed, match="SIGKILL"):
                await llm.chat(HI, max_tokens=40, stream_cb=kill_mid_stream)
            assert killed
        assert [c.signal_name for c in llm.crashes] == ["SIGKILL", "SIGKILL"]
        result = await llm.chat(HI, max_tokens=4)  # a new worker, in the same mode
        assert result.content and llm.mode == "default"
        assert llm.loader_params["use_extra_bufts"] is True
        assert not (tmp_path / MODE_FILE).exists()
    finally:
        await llm.aclose()


@pytest.mark.local_model
async def test_a_call_killed_before_any_text_is_tried_once_more_in_the_same_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLRT_TEST_LLAMA_CRASH", "decode:default")
    monkeypatch.setenv("SKILLRT_TEST_LLAMA_SIGNAL", "SIGKILL")
    llm = LocalProvider(n_ctx=1024, cpuinfo=lambda: PLAIN_CPU, state_dir=tmp_path)
    try:
        with pytest.raises(ModelCrashed, match="SIGKILL"):
            await llm.chat(HI, max_tokens=4)
        assert [c.signal_name for c in llm.crashes] == ["SIGKILL", "SIGKILL"]
        assert llm.starts == 2 and llm.mode == "default"
        assert not (tmp_path / MODE_FILE).exists()
    finally:
        await llm.aclose()


@pytest.mark.local_model
async def test_a_crash_at_first_load_is_retried_in_a_safe_mode_that_completes_the_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker sends itself SIGSEGV when it loads in the default mode (a test hook).
    monkeypatch.setenv("SKILLRT_TEST_LLAMA_CRASH", "load:default")
    state = tmp_path / ".skillrt"
    llm = LocalProvider(n_ctx=1024, cpuinfo=lambda: PLAIN_CPU, state_dir=state)
    rt = make_runtime(tmp_path, llm, [streaming_skill([])])
    try:
        msg = await rt.run_skill("Story", {"topic": "a fox"})
        assert msg.state == "COMPLETED", msg.content
        assert [c.signal_name for c in llm.crashes] == ["SIGSEGV"]
        assert llm.mode == "no-extra-bufts" and llm.starts == 2
        assert "default crashed (SIGSEGV)" in llm.mode_reason
    finally:
        await rt.close()
        await llm.aclose()
    # What worked is remembered: the next start uses it at once, with no crash.
    assert json.loads((state / MODE_FILE).read_text(encoding="utf-8"))["mode"] == "no-extra-bufts"
    again = LocalProvider(n_ctx=1024, cpuinfo=lambda: PLAIN_CPU, state_dir=state)
    try:
        result = await again.chat(HI, max_tokens=4)
        assert result.content and again.mode == "no-extra-bufts"
        assert again.starts == 1 and not again.crashes
        assert "worked before" in again.mode_reason
    finally:
        await again.aclose()


@pytest.mark.local_model
async def test_a_crash_in_decode_steps_down_to_one_token_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLRT_TEST_LLAMA_CRASH", "decode:default,no-extra-bufts")
    llm = LocalProvider(n_ctx=1024, cpuinfo=lambda: PLAIN_CPU, state_dir=tmp_path)
    try:
        result = await llm.chat(HI, max_tokens=4)
        assert result.content and result.usage.completion_tokens > 0
        assert llm.mode == "n-batch-1" and llm.loader_params["n_batch"] == 1
        assert len(llm.crashes) == 2
    finally:
        await llm.aclose()


@pytest.mark.local_model
async def test_a_forced_mode_is_not_changed_after_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLRT_TEST_LLAMA_CRASH", "decode:default")
    llm = LocalProvider(n_ctx=1024, mode="default", state_dir=tmp_path)
    try:
        with pytest.raises(ModelCrashed, match=r"SIGSEGV in llama\.cpp"):
            await llm.chat(HI, max_tokens=4)
        assert llm.mode == "default" and not (tmp_path / MODE_FILE).exists()
    finally:
        await llm.aclose()


@pytest.mark.local_model
async def test_a_worker_that_dies_at_load_is_one_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLRT_TEST_LLAMA_CRASH", "load:default")
    llm = LocalProvider(n_ctx=512, mode="default", state_dir=tmp_path)
    try:
        with pytest.raises(ModelCrashed, match="SIGSEGV"):
            await llm.chat(HI, max_tokens=2)
        assert llm.starts == 1 and [c.signal_name for c in llm.crashes] == ["SIGSEGV"]
    finally:
        await llm.aclose()


# --- routing ------------------------------------------------------------------------------------


class EmbeddedStandIn(FunctionModel):
    """A FunctionModel that says it is the embedded model (``provider = "local"``)."""

    __test__ = False
    provider = "local"


async def test_the_embedded_model_is_not_asked_to_route_unless_a_setting_asks(
    tmp_path: Path,
) -> None:
    from tests.test_routing_trust import recording_skills

    asked: list[type[BaseModel] | None] = []

    def answer(_messages: list[LLMMessage], options: ModelOptions) -> Answer:
        asked.append(options.response_model)
        return {"type": "RESEARCH_WEB", "confidence": 1.0, "parameters": {}}

    ran: list[tuple[str, dict[str, Any]]] = []
    rt = make_runtime(tmp_path, EmbeddedStandIn(answer), recording_skills(ran))
    try:
        assert rt.router.llm is None
        msg = await rt.process_input("blorp the flux capacitor")  # no pattern decides
        assert asked == [] and ran == []  # the model was not asked; numbered choices instead
        assert msg.state in ("WAITING_INPUT", "IDLE"), msg
    finally:
        await rt.close()

    asked.clear()
    # Asked under high trust: under low trust no model routes (docs/routing.md).
    llm = {"route_with_embedded": True, "router_trust": "high"}
    config = load_config(content_root=tmp_path, llm=llm)
    routed = AgentRuntime(config, llm=EmbeddedStandIn(answer), skills=recording_skills(ran))
    try:
        assert routed.router.llm is not None
        await routed.process_input("blorp the flux capacitor")
        assert asked, "llm.route_with_embedded = true asks the embedded model"
    finally:
        await routed.close()
