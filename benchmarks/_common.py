"""What every benchmark shares: the machine description, result rows, timing, temp folders."""

from __future__ import annotations

import datetime as dt
import os
import platform
import resource
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "current_rss_mb",
    "machine",
    "peak_rss_mb",
    "percentile",
    "row",
    "temp_dir",
]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """CPU model, cores, memory, OS, Python, the date and the load: what a figure depends on."""
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory_gb: float | None = round(pages / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        memory_gb = None
    try:
        load: list[float] | None = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": memory_gb,
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load_avg": load,  # 1, 5, 15 min at the start: other work on the machine skews timings
    }


def row(
    metric: str,
    value: float | int | str | bool | None,
    unit: str = "",
    *,
    target: str | None = None,
    met: bool | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """One line of the results table."""
    return {
        "metric": metric,
        "value": value,
        "unit": unit,
        "target": target,
        "met": met,
        "note": note,
    }


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, interpolated; 0.0 when empty."""
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    cuts = statistics.quantiles(values, n=1000, method="inclusive")
    return cuts[min(len(cuts) - 1, max(0, round(q * 1000) - 1))]


def _proc_status_mb(field: str) -> float | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def peak_rss_mb() -> float:
    """This process's peak resident set size in MiB.

    ``VmHWM`` from ``/proc`` where there is one: ``ru_maxrss`` survives fork and exec on
    Linux, so a subprocess would report its parent's peak when that was higher.
    """
    hwm = _proc_status_mb("VmHWM")
    if hwm is not None:
        return hwm
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 / (1024 if sys.platform == "darwin" else 1)


def current_rss_mb() -> float | None:
    """This process's resident set size now, in MiB (Linux ``/proc``; None elsewhere)."""
    return _proc_status_mb("VmRSS")


@contextmanager
def temp_dir(prefix: str) -> Iterator[Path]:
    """A fresh folder on the same disk as the system temp folder, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=f"skillrt-bench-{prefix}-") as name:
        yield Path(name)
