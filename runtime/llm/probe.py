"""Does the embedded model really generate here? One token, in a worker process, with a timeout.

``skillrt doctor`` runs it: it starts the worker in the mode the runtime would start in
(``llama_modes.first_mode``), asks for one token and waits at most ``timeout_s``; a crash
(a fault signal: ``llama_modes.is_native_fault``) is tried again one mode safer, as the
runtime would. It writes nothing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from skillrt.exceptions import ModelCrashed, SkillrtError
from skillrt.llm.llama_modes import (
    MODE_FILE,
    CpuInfo,
    Mode,
    ModeMemory,
    first_mode,
    is_native_fault,
    library_fingerprint,
    next_mode,
    read_cpuinfo,
)
from skillrt.llm.worker_client import WorkerProcess

__all__ = ["Probe", "probe_local"]

PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"


@dataclass(slots=True)
class Probe:
    """``status``: ok (a token came), crashed (in every mode tried), slow (no token within
    the timeout) or error (the model cannot load); ``mode`` is the mode of the last try."""

    status: Literal["ok", "crashed", "slow", "error"]
    mode: Mode
    why: str  # why the first mode was chosen
    seconds: float = 0.0
    crashes: list[tuple[Mode, str]] = field(default_factory=list)  # (mode, signal or status)
    error: str = ""

    def describe(self) -> str:
        crashed = "; ".join(f"{mode} crashed ({what})" for mode, what in self.crashes)
        prefix = f"{crashed}; " if crashed else ""
        if self.status == "ok":
            text = f"{prefix}one token in {self.seconds:.1f} s in mode {self.mode}"
            if not self.crashes:
                return f"{text} ({self.why})"
            return (
                f"{text}: skillrt steps down to it by itself (or set llm.local_mode ="
                f' "{self.mode}"); a portable build avoids the crash: CMAKE_ARGS='
                f'"{PORTABLE_CMAKE_ARGS}" pip install --force-reinstall --no-cache-dir'
                " llama-cpp-python"
            )
        if self.status == "slow":
            return f"{prefix}no token within {self.seconds:.0f} s in mode {self.mode}: slow"
        if self.status == "error":
            return f"{prefix}{self.error}"
        if self.crashes and not is_native_fault(self.crashes[-1][1]):
            return (
                f"{crashed}: the worker was killed from outside (out of memory?), which no"
                " load mode or build steps around"
            )
        return (
            f"{crashed}: the embedded model cannot run here; try a portable build of"
            f' llama.cpp: CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" pip install --force-reinstall'
            " --no-cache-dir llama-cpp-python"
            + (f", or unset {self.why[:-7]}" if self.why.endswith(" is set") else "")
        )


def probe_local(
    model_path: Path,
    *,
    forced: Mode | Literal["auto"] = "auto",
    state_dir: Path | None = None,
    n_ctx: int = 512,
    n_threads: int | None = None,
    timeout_s: float = 60.0,
    cpuinfo: CpuInfo = read_cpuinfo,
    setting: str = "llm.local_mode",
) -> Probe:
    """One token from the model at ``model_path``, stepping down a mode after each crash
    (unless ``forced``, by the key ``setting``)."""
    memory = ModeMemory(state_dir / MODE_FILE if state_dir is not None else None)
    mode, why = first_mode(forced, memory, library_fingerprint(), cpuinfo, setting=setting)
    crashes: list[tuple[Mode, str]] = []
    while True:
        worker = WorkerProcess(model_path, mode=mode, n_ctx=n_ctx, n_threads=n_threads, seed=0)
        timed_out = threading.Event()

        def give_up(worker: WorkerProcess = worker, timed_out: threading.Event = timed_out) -> None:
            timed_out.set()
            worker.interrupt()

        timer = threading.Timer(timeout_s, give_up)
        timer.daemon = True
        started = time.perf_counter()
        timer.start()
        try:
            worker.start()
            request = {
                "messages": [{"role": "user", "content": "Say hi."}],
                "max_tokens": 1,
                "temperature": 0.0,
                "repeat_penalty": 1.0,
                "schema": None,
            }
            worker.generate(worker.new_id(), request, lambda _text: None)
        except ModelCrashed as crash:
            if timed_out.is_set():
                return Probe("slow", mode, why, timeout_s, crashes)
            crashes.append((mode, crash.signal_name or str(crash.exit_code)))
            fault = is_native_fault(crash.signal_name)
            safer = next_mode(mode) if forced == "auto" and fault else None
            if safer is None:
                return Probe("crashed", mode, why, time.perf_counter() - started, crashes)
            mode = safer
            continue
        except SkillrtError as exc:
            return Probe("error", mode, why, time.perf_counter() - started, crashes, str(exc))
        finally:
            timer.cancel()
            worker.close()
        return Probe("ok", mode, why, time.perf_counter() - started, crashes)
