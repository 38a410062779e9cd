"""The first browsing task imports its machinery in a thread, not on the event loop: the agent
and its backends (~90 ms) and, when Chromium first starts, Playwright (~65 ms) held every other
task and request that long (``skillrt._io.lazy.import_off_loop``).

Each case runs in a process of its own: a module is imported once per process, and other tests
have imported these in this one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browsing_support import require_chromium
from tests.import_watch import ROOT, in_fresh_process

_CASE = """
import asyncio, json, sys, threading
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from tests.browsing_support import agent_model, make_runtime
from tests.site import TestSite
from tests.test_browsing_agent import run_browse, search_policy
from tests.import_watch import watch

importers, already = watch(("skillrt.skills.browsing.agent", "playwright.async_api"))

async def main(tmp, backend):
    with TestSite() as site:
        rt = make_runtime(Path(tmp), agent_model(search_policy))
        task = "Find out from the Atlas Wiki what the capital of Atlantis is"
        msg = await run_browse(rt, task=task, url=site.url("/"), backend=backend)
    return {"state": msg.state, "content": msg.content, "importers": importers,
            "already": already, "loop": threading.current_thread().name}

print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
"""


def _run(tmp_path: Path, backend: str) -> dict[str, Any]:
    return in_fresh_process(_CASE, str(tmp_path), backend, str(ROOT), timeout=180)


def test_the_first_browse_imports_the_agent_off_the_event_loop(tmp_path: Path) -> None:
    out = _run(tmp_path, "http")
    assert out["state"] == "COMPLETED" and "Poseidonia" in str(out["content"])
    assert out["already"] == []  # not imported before the task: the task imported it
    importers = out["importers"]
    assert isinstance(importers, dict)
    agent = importers.get("skillrt.skills.browsing.agent")
    assert agent is not None and agent != out["loop"], importers


@pytest.mark.chromium
def test_the_first_chromium_start_imports_playwright_off_the_event_loop(tmp_path: Path) -> None:
    require_chromium()
    out = _run(tmp_path, "chromium")
    assert out["state"] == "COMPLETED" and "Poseidonia" in str(out["content"])
    assert out["already"] == []
    importers = out["importers"]
    assert isinstance(importers, dict)
    for name in ("skillrt.skills.browsing.agent", "playwright.async_api"):
        assert importers.get(name) not in (None, out["loop"]), importers
