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
