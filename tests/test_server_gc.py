"""``skillrt serve``'s own process tunes the garbage collector once started (what lives then
is frozen, the young generation collected less often); a server inside another program leaves
the collector as it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

_SCRIPT = """
import asyncio, gc, sys
from pathlib import Path
from skillrt import AgentRuntime, load_config
from skillrt.server.run import make_server
from skillrt.testing import FunctionModel

root = Path(sys.argv[1])
(root / "posts").mkdir(parents=True)
config = load_config(content_root=root, state_dir=root / ".state", log_level="error")
runtime = AgentRuntime(config, llm=FunctionModel(lambda messages, options: "x"))
print(gc.get_threshold()[0], False, flush=True)  # as the interpreter has it
for tuned in (False, True):
    server = make_server(runtime, token="t" * 32, host="127.0.0.1", port=0, close_runtime=False)
    server.tune_gc = tuned

    def started(port, server=server):
        print(gc.get_threshold()[0], gc.get_freeze_count() > 0, flush=True)
        server.should_exit = True

    server.on_started = started
    asyncio.run(server.serve())
"""


def test_the_serve_process_tunes_the_collector_once_started(tmp_path: Path) -> None:
    from skillrt.server.run import GC_GEN0

    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path / "blog")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 0, done.stderr
    default, untuned, tuned = done.stdout.split("\n")[:3]
    assert untuned == default and tuned == f"{GC_GEN0} True"


def test_a_finished_task_leaves_no_garbage_cycle(tmp_path: Path) -> None:
    """A served task, with steps or without, is freed by reference counting when it ends: none
    of its objects (the task, its machine, its context, its model view) waits for the
    collector. Each used to: in a server, a young collection every few hundred requests."""
    import gc

    from skillrt.testing import FunctionModel
    from tests.server_support import LiveServer, make_runtime

    live = LiveServer(make_runtime(tmp_path, FunctionModel(lambda messages, options: "part")))
    try:
        with live.client() as c:
            assert c.post("/v1/skills/Steps/run", json={"params": {"topic": "warm"}}).is_success
            gc.collect()
            gc.disable()
            try:
                for n in range(5):
                    body = {"params": {"topic": f"t{n}", "steps": n % 3}}
                    r = c.post("/v1/skills/Steps/run", json=body)
                    assert r.status_code == 200 and r.json()["state"] == "COMPLETED", r.text
                r = c.post("/v1/input", json={"text": "steps of the garden"})
                assert r.status_code == 200, r.text
                gc.set_debug(gc.DEBUG_SAVEALL)
                gc.collect()
                left = [o for o in gc.garbage if type(o).__module__.startswith("skillrt")]
            finally:
                gc.set_debug(0)
                gc.garbage.clear()
                gc.enable()
        assert left == [], sorted({type(o).__qualname__ for o in left})
    finally:
        live.stop()
