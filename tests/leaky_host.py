"""A tiny host program: every part that logs meets an error holding ``LEAK_SECRET``.

``python leaky_host.py configured|unconfigured STATE``: ``configured`` sets up stdlib logging
at DEBUG on stderr first (as an application would); ``unconfigured`` sets up nothing. The parts
used on their own (router, event bus, abort signal, committer) know no secret; the runtime is
given it as a configured secret. ``test_no_secret_leaks.py`` reads stdout and stderr.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any

from skillrt import AbortController, AgentRuntime, EventBus, IntentRouter, load_config
from skillrt._state.committer import Committer
from skillrt._state.embedded.checkpoints import MemoryCheckpointStore
from skillrt._state.records import TaskRecord
from skillrt.testing import FunctionModel

SECRET = os.environ["LEAK_SECRET"]


def boom(*_: Any) -> Any:
    raise RuntimeError(f"boom {SECRET}")


class FailingStore(MemoryCheckpointStore):
    def apply(self, saves: list[TaskRecord], deletes: list[str]) -> None:
        boom()


async def main(mode: str, state: Path) -> None:
    if mode == "configured":
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    router = IntentRouter(FunctionModel(boom))
    print("routed:", (await router.parse("hmm, that thing from before")).type, flush=True)
    bus = EventBus()
    bus.on("x", boom)
    bus.emit("x")
    controller = AbortController()
    controller.signal.add_callback(boom)
    controller.abort()
    committer = Committer(FailingStore(), threaded=False)
    committer.put(TaskRecord(id="t", session_id="s", state="IDLE", created_at=0, updated_at=0))
    try:
        await committer.durable()
    except RuntimeError:
        print("commit failed", flush=True)
    config = load_config(content_root=state, secrets=[SECRET])
    runtime = AgentRuntime(config, llm=FunctionModel(boom), skills=[])
    print("runtime:", (await runtime.process_input("hmm, that thing")).state, flush=True)
    await runtime.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
