"""The process ``test_browsing_durable.py`` kills: a Browse task on the local test site.

``python browse_crash_child.py start|resume STATE WORK SITE_URL``: a runtime with its state in
``STATE`` runs (``start``) or resumes (``resume``) the Atlas Wiki search task with the test
agent model. Every model call appends ``<kind> <page path> <start|resume>`` to
``WORK/calls.log``. With ``HANG_ON=<path>``, the first navigator call on that page writes
``WORK/hanging`` and blocks until the process is killed. The last line printed is JSON: the
final state and the answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillrt import AgentRuntime, load_config
from skillrt.skills.browsing import browsing_skills
from skillrt.skills.browsing.skills import close_pending_browsers
from skillrt.testing import FunctionModel
from tests.browsing_support import agent_model, page_in
from tests.test_browsing_agent import search_policy


def main() -> None:
    mode, state, work, site = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    hang_on = os.environ.get("HANG_ON", "")
    inner = agent_model(search_policy)

    def logged(messages: list[Any], options: Any) -> Any:
        kind = options.response_model.__name__ if options.response_model else "text"
        path = page_in(messages).path.split("?")[0]
        with (work / "calls.log").open("a", encoding="utf-8") as fh:
            fh.write(f"{kind} {path} {mode}\n")
        if hang_on and kind == "NavigatorOutput" and path == hang_on:
            (work / "hanging").write_text(path, encoding="utf-8")
            time.sleep(120)  # blocks the loop on purpose: the test kills us here
        return inner.fn(messages, options)

    config = load_config(
        content_root=work,
        state_dir=state,
        browser={"allow_private": ["127.0.0.1"], "max_steps": 10},
    )
    rt = AgentRuntime(config, llm=FunctionModel(logged), skills=browsing_skills())

    async def go() -> None:
        task = "Find out from the Atlas Wiki what the capital of Atlantis is"
        if mode == "start":
            msg = await rt.run_skill("Browse", {"task": task, "url": site})
        else:
            await rt.initialize()
            [summary] = rt.get_resumable_tasks()
            resumed = await rt.resume_task(summary.id)
            assert resumed is not None
            msg = resumed
        await rt.close()
        await close_pending_browsers()
        print(json.dumps({"state": msg.state, "answer": msg.data.get("answer")}))

    asyncio.run(go())


if __name__ == "__main__":
    main()
