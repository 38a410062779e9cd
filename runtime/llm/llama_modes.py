"""How llama.cpp is loaded: the modes, from fastest to safest, and which one to start with.

llama-cpp-python builds llama.cpp with the build machine's CPU flags. On a CPU with AMX
(``amx_tile``/``amx_int8``), llama.cpp repacks the weights into "extra buffer types" whose AMX
batch kernel faults in ``llama_decode`` for any prompt longer than one token (a SIGSEGV, or a
SIGILL on some virtual machines). Each mode is one step further from that code:

- ``default``: llama.cpp's own defaults (extra buffer types, prompt batches of 512);
- ``no-extra-bufts``: ``model_params.use_extra_bufts = False``: no repacked weights;
- ``n-batch-1``: that, and ``n_batch = 1``: every token decoded alone (slow prompts).

The first mode is the one remembered in the state folder for this llama.cpp library, else
``no-extra-bufts`` on a CPU that reports AMX, else ``default``; after a crash the worker is
started again one mode further down (``next_mode``), when the crash was a fault of llama.cpp's
own (``is_native_fault``). ``llm.local_mode`` forces one.
Nothing here imports llama_cpp.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "MODES",
    "MODE_FILE",
    "CpuInfo",
    "Mode",
    "ModeMemory",
    "cpu_has_amx",
    "first_mode",
    "is_native_fault",
    "library_fingerprint",
    "loader_options",
    "next_mode",
    "read_cpuinfo",
]

Mode = Literal["default", "no-extra-bufts", "n-batch-1"]
MODES: tuple[Mode, ...] = ("default", "no-extra-bufts", "n-batch-1")
MODE_FILE = "llama-mode.json"  # in the state folder
_AMX_FLAGS = frozenset({"amx_tile", "amx_int8"})
# The signals native code dies of by itself: a bad address, an instruction the CPU lacks
# (the AMX kernels on some virtual machines), a bus error, an arithmetic trap, an abort.
_FAULT_SIGNALS = frozenset({"SIGSEGV", "SIGILL", "SIGBUS", "SIGFPE", "SIGABRT"})
_DEFAULT_N_BATCH = 512

CpuInfo = Callable[[], str]
"""Returns the text of ``/proc/cpuinfo`` (injectable: a test simulates a CPU with it)."""


def read_cpuinfo() -> str:
    """``/proc/cpuinfo``, or "" where there is none (macOS, Windows)."""
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def cpu_has_amx(cpuinfo: CpuInfo = read_cpuinfo) -> bool:
    """Does a ``flags`` line of the CPU information name ``amx_tile`` or ``amx_int8``?"""
    for line in cpuinfo().splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags" and _AMX_FLAGS & set(value.split()):
            return True
    return False


def next_mode(mode: Mode) -> Mode | None:
    """The next safer mode, or None after the safest."""
    at = MODES.index(mode)
    return MODES[at + 1] if at + 1 < len(MODES) else None


def is_native_fault(signal_name: str | None) -> bool:
    """Did the worker die of a fault in native code, which a safer mode may step around?

    Not a SIGKILL: the out-of-memory killer, ``kill -9``, or skillrt itself ending a worker
    that did not stop. Two of those (kill -9 of the worker while it streamed, twice) put the
    chat in ``n-batch-1``, the slowest mode, and ``llama-mode.json`` kept it there for every
    later start, though no mode was ever at fault."""
    return signal_name in _FAULT_SIGNALS


def loader_options(mode: Mode) -> dict[str, Any]:
    """What a mode sets when llama.cpp loads: ``use_extra_bufts`` (a field of
    ``llama_model_params``) and ``n_batch`` (an argument of ``Llama``)."""
    return {
        "use_extra_bufts": mode == "default",
        "n_batch": 1 if mode == "n-batch-1" else _DEFAULT_N_BATCH,
    }


def library_fingerprint() -> str:
    """Which llama.cpp build is installed: llama-cpp-python's version and its shared
    library's size and modification time (a rebuild, say a portable one, changes it)."""
    try:
        version = importlib.metadata.version("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        return "none"
    spec = importlib.util.find_spec("llama_cpp")
    stamp = ""
    if spec is not None and spec.origin:
        lib = Path(spec.origin).parent / "lib"
        for name in ("libllama.so", "libllama.dylib", "llama.dll"):
            try:
                info = (lib / name).stat()
            except OSError:
                continue
            stamp = f" {info.st_size}:{int(info.st_mtime)}"
            break
    return version + stamp


@dataclass(slots=True)
class ModeMemory:
    """The mode that worked, kept in ``<state>/llama-mode.json`` for one library build."""

    path: Path | None

    def read(self, fingerprint: str) -> Mode | None:
        if self.path is None:
            return None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        mode = data.get("mode") if isinstance(data, dict) else None
        if data.get("library") != fingerprint or mode not in MODES:
            return None
        found: Mode = mode
        return found

    def write(self, fingerprint: str, mode: Mode) -> None:
        """Remember ``mode``; a state folder that cannot be written only loses the memory."""
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temp = self.path.with_name(self.path.name + ".tmp")
            temp.write_text(json.dumps({"mode": mode, "library": fingerprint}), encoding="utf-8")
            os.replace(temp, self.path)
        except OSError:
            pass


def first_mode(
    forced: Mode | Literal["auto"],
    memory: ModeMemory,
    fingerprint: str,
    cpuinfo: CpuInfo,
    *,
    setting: str = "llm.local_mode",
) -> tuple[Mode, str]:
    """The mode to start in and why. ``setting`` is the key that forced it (``llm.local.safe``
    sets ``llm.local_mode``: the reason named a key the user never wrote). A mode remembered
    after crashes says how to try the faster ones again: it stayed for good, and nothing
    said the file was the reason."""
    if forced != "auto":
        return forced, f"{setting} is set"
    remembered = memory.read(fingerprint)
    if remembered is not None:
        if remembered == "default":
            return remembered, f"it worked before ({memory.path})"
        return remembered, (
            f"it worked before ({memory.path}; delete that file to try the faster modes again)"
        )
    if cpu_has_amx(cpuinfo):
        return "no-extra-bufts", "the CPU reports AMX"
    return "default", "llama.cpp's defaults"
