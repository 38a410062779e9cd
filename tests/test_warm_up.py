"""``AgentRuntime.warm_up``: routing's tables are built in a thread before the first input,
which waits for them instead of building them a second time on the event loop. Without a
warm-up, the first input has what it needs built in that thread too, and waits for it: the
event loop is never held for them (0.1-0.4 s).

Each case runs in a process of its own: the tables are kept by their modules for the life of
a process, and other tests have built them already in this one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.import_watch import in_fresh_process

_CASE = """
import asyncio, json, sys, threading
from pathlib import Path
from skillrt import AgentRuntime, load_config
from skillrt.testing import FunctionModel
from skillrt._routing import classifier, intent_table, matching

built = []
for module, name in ((intent_table, "_default_table"), (classifier, "_packaged")):
    cached = getattr(module, name)
    def counted(cached=cached, name=name):
        built.append((name, threading.current_thread().name))
        return cached()
    counted.cache_info = cached.cache_info
    setattr(module, name, counted)

build_index = matching._build_index  # each kind of text's index, built (then kept)
def indexed(*args):
    built.append(("index", threading.current_thread().name))
    return build_index(*args)
matching._build_index = indexed

async def main(root, warm):
    rt = AgentRuntime(load_config(content_root=root), llm=FunctionModel(lambda m, o: "hello"))
    await rt.initialize()
    if warm:
        rt.warm_up()
        rt.warm_up()  # once is enough
    first = await rt.process_input("summarize posts/a.md")  # at once: waits for the warm-up
    # Its kind of text again (a session of its own: no post in focus yet), built by now.
    again = await rt.process_input("summarize posts/a.md again", {"session_id": "other"})
    second = await rt.process_input("hi")
    built.append(("later", ""))
    # Kinds of text the warm-up did not route (for the cold case: none but the first's). One
    # short word is screened first, against its script's index with a file and a selection.
    word = await rt.process_input("zebra")
    await rt.process_input("总结一下 posts/a.md")
    await rt.process_input("fix the grammar here", {"current_file": "posts/a.md",
                                                    "has_selection": True})
    await rt.close()
    misses = [intent_table._default_table.cache_info().misses,
              classifier._packaged.cache_info().misses]
    return {"states": [first.state, again.state, second.state], "misses": misses,
            "built": built, "word": word.data.get("outcome")}

print(json.dumps(asyncio.run(main(Path(sys.argv[1]), sys.argv[2] == "warm"))))
"""


def _run(tmp_path: Path, warm: bool) -> dict[str, Any]:
    root = tmp_path / ("warm" if warm else "cold")
    (root / "posts").mkdir(parents=True)
    (root / "posts" / "a.md").write_text("# A\n\nA post.\n", encoding="utf-8")
    return in_fresh_process(_CASE, str(root), "warm" if warm else "cold")


def test_warm_up_builds_routings_tables_once_in_a_thread_before_the_first_input(
    tmp_path: Path,
) -> None:
    warm = _run(tmp_path, warm=True)
    assert warm["states"] == ["COMPLETED", "COMPLETED", "COMPLETED"]
    assert warm["misses"] == [1, 1]  # built once each: the first input waited for them
    built = warm["built"]
    assert isinstance(built, list)
    # Asked by the warm-up's thread first; the router's own asks later find them built.
    assert [tuple(b) for b in built if b[0] != "index"][:2] == [
        ("_default_table", "skillrt-warm-up"),
        ("_packaged", "skillrt-warm-up"),
    ]
    # The index of the first input's kind of text too: the runtime's router finds it built.
    before = built[: built.index(["later", ""])]
    indexes = [thread for name, thread in before if name == "index"]
    assert indexes and set(indexes) == {"skillrt-warm-up"}
    # And none is ever built on the event loop, for the kinds that come later either.
    assert all(thread != "MainThread" for name, thread in built if name == "index"), built


def test_without_a_warm_up_the_first_input_has_them_built_in_a_thread(tmp_path: Path) -> None:
    """Not on the event loop (every other task and request would wait): in a thread, with
    the index of the input's own kind of text, and the input waits for them."""
    cold = _run(tmp_path, warm=False)
    assert cold["states"] == ["COMPLETED", "COMPLETED", "COMPLETED"]
    assert cold["misses"] == [1, 1]
    built = cold["built"]
    assert isinstance(built, list) and built
    # Built (asked first) in that thread; the router's own asks later find them built.
    assert [tuple(b) for b in built if b[0] != "index"][:2] == [
        ("_default_table", "skillrt-warm-up"),
        ("_packaged", "skillrt-warm-up"),
    ], built
    before = built[: built.index(["later", ""])]
    indexes = [thread for name, thread in before if name == "index"]
    assert indexes and set(indexes) == {"skillrt-warm-up"}, built


def test_a_later_input_of_a_new_kind_of_text_has_its_index_built_in_a_thread(
    tmp_path: Path,
) -> None:
    """One short word, Chinese, or a selection in an open file, after English: each kind of
    text's index (20-60 ms) is built off the event loop too, by ``router.prepared`` (before
    the word is screened, and before a request is routed)."""
    cold = _run(tmp_path, warm=False)
    assert cold["word"] == "chat"  # screened: no task
    built = cold["built"]
    assert isinstance(built, list)
    later = built[built.index(["later", ""]) + 1 :]
    indexes = [thread for name, thread in later if name == "index"]
    # One per new kind, each built once: the word's (English, with a file and a selection),
    # Chinese, English with a file open (``has_selection`` is not in a route context).
    assert len(indexes) == 3, later
    assert "MainThread" not in indexes, later


def test_skillrt_serve_warms_routing_up_when_it_starts(tmp_path: Path) -> None:
    """A server starts the warm-up with the runtime, before its first request arrives."""
    from skillrt.testing import FunctionModel
    from tests.server_support import LiveServer, make_runtime

    rt = make_runtime(tmp_path, FunctionModel(lambda m, o: "ok"))
    live = LiveServer(rt)
    try:
        with live.client() as c:
            assert c.get("/healthz").status_code == 200
        assert rt._warming is not None
    finally:
        live.stop()


async def test_prepared_takes_what_is_built_without_a_turn_of_the_loop(tmp_path: Path) -> None:
    """What another router built already (the warm-up's, another runtime's: the table, the
    classifier, a kind of text's index) is taken by ``prepared`` without letting the loop run
    anything else: no turn of the loop in a task's routing (its state changes would be written
    apart meanwhile, one more commit)."""
    from skillrt import AgentRuntime, load_config
    from skillrt.testing import FunctionModel

    def runtime() -> AgentRuntime:
        return AgentRuntime(
            load_config(content_root=tmp_path), llm=FunctionModel(lambda m, o: "ok")
        )

    first = runtime()
    await first.initialize()
    await first.router.prepared("write an article about rust")  # built now (or found built)
    await first.close()
    second = runtime()  # a router of its own: it has built nothing yet
    await second.initialize()
    ran: list[str] = []

    async def other() -> None:
        ran.append("other")

    waiting = asyncio.ensure_future(other())
    await second.router.prepared("write an article about go")  # its kind: built by the first
    assert ran == []
    await waiting
    await second.close()
