"""The cyclic GC's young generation while tasks run (``gc_tuning``, on by default).

A running task holds about 130 objects the collector tracks (its coroutines, futures, closures,
record and context) until its reply, and nearly none of them ends in a reference cycle (a
finished task is freed by reference counting). With CPython's default young threshold (700)
a thousand tasks at once made ~270 young collections, ~25 middle ones and two full ones, each
walking every live task again: 15-30% of the event loop's CPU in the concurrency benchmark.

While at least one task runs, the young threshold is raised to ``max(20_000, 50 x the tasks
running)``, at most 100,000, never lowered below what the process had; when the last task
ends, the process's own thresholds are put back, unless someone changed them meanwhile (then
theirs stand). Garbage in cycles is still collected, only after more allocations (at most
100,000 young objects). Nothing is frozen and nothing is disabled. One count for the process:
several runtimes (or loops in several threads) share it.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["MAX_GEN0", "MIN_GEN0", "PER_TASK", "task_ended", "task_started"]

MIN_GEN0 = 20_000
"""The young threshold while any task runs (``skillrt serve`` uses the same)."""
PER_TASK = 50
"""... raised by this many per task running,"""
MAX_GEN0 = 100_000
"""... up to this."""

_lock = threading.Lock()
_running = 0
_saved: tuple[int, int, int] | None = None  # the process's thresholds while ours stand
_ours = 0  # the young threshold we set (0: none)


def task_started() -> None:
    """A task of a runtime with ``gc_tuning`` on starts to run."""
    global _running, _saved, _ours
    # Called for every task: comparisons, not ``min``/``max`` (their keyword parsing alone
    # cost more than the rest).
    with _lock:
        _running = running = _running + 1
        want = PER_TASK * running
        if want < MIN_GEN0:
            want = MIN_GEN0
        elif want > MAX_GEN0:
            want = MAX_GEN0
        if want <= _ours:
            return
        current = gc.get_threshold()
        if _saved is None:
            if current[0] >= want:
                return  # the process collects less often than this already
            _saved = current
        elif current[0] != _ours:
            return  # changed by someone else meanwhile: theirs stand
        gc.set_threshold(want, current[1], current[2])
        _ours = want


def task_ended() -> None:
    """That task's run is over (whatever its ending)."""
    global _running, _saved, _ours
    with _lock:
        if _running > 0:
            _running -= 1
        if _running or _saved is None:
            return
        if gc.get_threshold()[0] == _ours:
            gc.set_threshold(*_saved)
        _saved, _ours = None, 0
