"""Several processes opening a brand-new state folder at the same instant (issue found while
timing start-up): one made the SQLite file, 0 bytes until its first write, and another moved
it aside as empty, so the first wrote its checkpoints into the quarantined file. Now one
process at a time checks and makes a database (``_io/opening.py``): every record is in the
store afterwards and nothing is moved aside."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.embedded.history import History

CHILD = """
import sys, time
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.embedded.history import History
from skillrt._state.records import TaskRecord
folder, name, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
while time.time() < start:
    pass
store = CheckpointStore(f"{folder}/checkpoints")
history = History(f"{folder}/history")
now = time.time()
store.save(TaskRecord(id=name, session_id="s", state="EXECUTING", created_at=now, updated_at=now))
history.add_task({"task_id": name, "session_id": "s", "state": "COMPLETED"})
store.close()
history.close()
"""

PROCESSES = 4
ROUNDS = 6


def test_processes_opening_a_new_state_folder_at_once_lose_nothing(tmp_path: Path) -> None:
    for n in range(ROUNDS):
        folder = tmp_path / f"state{n}"
        start = time.time() + 1.5  # every child imported and spinning before it opens
        names = [f"{n:02d}{i:06d}ab" for i in range(PROCESSES)]
        children = [
            subprocess.Popen(
                [sys.executable, "-c", CHILD, str(folder), name, str(start)],
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in names
        ]
        try:
            for child in children:
                _, err = child.communicate(timeout=60)
                assert child.returncode == 0, err
        finally:
            for child in children:
                child.kill()
                child.communicate()
        store = CheckpointStore(folder / "checkpoints")
        history = History(folder / "history")
        try:
            loaded = store.load_recent(max_age_s=3600, now=time.time())
            assert sorted(r.id for r in loaded.records) == sorted(names)
            assert not loaded.quarantined
            assert sorted(t["task_id"] for t in history.tasks(limit=10)) == sorted(names)
            assert not history.quarantined
        finally:
            store.close()
            history.close()
        assert not list(folder.rglob("quarantine"))
