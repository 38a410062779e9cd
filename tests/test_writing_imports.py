"""The first post a process writes imports python-slugify (for its file name) in a thread, not
on the event loop, where it held every other task and request ~7 ms
(``skillrt._io.lazy.import_off_loop``). In a process of its own: a module is imported once per
process, and other tests have imported it in this one."""

from __future__ import annotations

from pathlib import Path

from tests.import_watch import ROOT, in_fresh_process

_CASE = """
import asyncio, json, sys, threading
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from skillrt.testing import FunctionModel
from tests.blog import copy_blog
from tests.import_watch import watch
from tests.writing_support import WritingModelFn, writing_runtime

importers, already = watch(("slugify",))

async def main(tmp):
    rt = writing_runtime(copy_blog(Path(tmp) / "blog"), FunctionModel(WritingModelFn()))
    await rt.initialize()
    msg = await rt.run_skill("WriteArticle", {"topic": "Rust ownership"})
    await rt.close()
    return {"state": msg.state, "path": (msg.data or {}).get("path"), "importers": importers,
            "already": already, "loop": threading.current_thread().name}

print(json.dumps(asyncio.run(main(sys.argv[1]))))
"""


def test_the_first_article_imports_slugify_off_the_event_loop(tmp_path: Path) -> None:
    out = in_fresh_process(_CASE, str(tmp_path), str(ROOT))
    assert out["state"] == "COMPLETED", out
    assert out["path"] == "posts/rust-ownership.md"  # the slug, made once it was imported
    assert out["already"] == []  # not imported before the task: the task imported it
    importer = out["importers"].get("slugify")
    assert importer is not None and importer != out["loop"], out
