"""The runtime's side of the embedded model's worker process (``llama_worker``).

``WorkerProcess`` starts ``python -m skillrt.llm.llama_worker`` in one load mode, sends it
commands and reads its events. Its calls block, and are made from one thread (the provider's);
only ``stop`` and ``kill`` may come from any thread. When the process dies, the call that was
reading raises ``ModelCrashed`` naming the signal ("the embedded model crashed: SIGSEGV in
llama.cpp"); the process is then gone for good, and the provider starts another.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from skillrt.exceptions import BadRequest, ConfigError, ModelCrashed, ProviderUnavailable
from skillrt.llm.llama_modes import Mode

__all__ = ["WorkerProcess", "crash_message"]

_EXIT_WAIT_S = 5.0


def crash_message(returncode: int | None) -> tuple[str, str | None]:
    """The sentence for a worker that died with ``returncode``, and the signal's name."""
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        if name == "SIGKILL":  # not a fault of llama.cpp's: the kernel or a user killed it
            return (
                "the embedded model's worker was killed from outside (SIGKILL: out of memory?)",
                name,
            )
        return f"the embedded model crashed: {name} in llama.cpp", name
    if returncode is None:
        return "the embedded model stopped answering (its worker process hung up)", None
    return f"the embedded model's worker process exited with status {returncode}", None


class WorkerProcess:
    """One worker process, one model loaded in one mode."""

    def __init__(
        self,
        model_path: Path,
        *,
        mode: Mode,
        n_ctx: int,
        n_threads: int | None,
        seed: int,
        model: str = "",
    ) -> None:
        self.mode = mode
        self.model = model
        self.params: dict[str, Any] = {}
        self.last_stderr = ""  # the end of its stderr when it died
        self._args = {
            "mode": mode,
            "model_path": str(model_path),
            "n_ctx": n_ctx,
            "n_threads": n_threads,
            "seed": seed,
        }
        self._process: subprocess.Popen[str] | None = None
        self._stderr: IO[bytes] | None = None
        self._write_lock = threading.Lock()
        self._next_id = 0

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    # --- starting -------------------------------------------------------------------------

    def start(self) -> dict[str, Any]:
        """Start the process and load the model; returns the loader's parameters."""
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in kill()
        self._process = subprocess.Popen(  # noqa: S603 - this Python, our module, JSON args
            [sys.executable, "-m", "skillrt.llm.llama_worker", json.dumps(self._args)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            bufsize=1,
            start_new_session=True,  # Ctrl-C in a terminal goes to the runtime, which stops it
        )
        self._send({"op": "load"})
        event = self._read()
        if event.get("ev") == "error":
            self.kill()
            raise ConfigError(
                "config", "llm.model_path", str(event.get("message")), self._args["model_path"]
            )
        self.params = dict(event.get("params") or {})
        return self.params

    # --- talking --------------------------------------------------------------------------

    def _send(self, command: dict[str, Any]) -> None:
        process = self._process
        if process is None or process.stdin is None:
            return
        with self._write_lock:
            try:
                process.stdin.write(json.dumps(command, ensure_ascii=False) + "\n")
                process.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass  # it died: the reader sees the end of its output and says how

    def _read(self) -> dict[str, Any]:
        """The next event; ``ModelCrashed`` when the process has died."""
        process = self._process
        if process is None or process.stdout is None:
            raise self._crashed()
        while True:
            line = process.stdout.readline()
            if not line:
                raise self._crashed()
            try:
                event: dict[str, Any] = json.loads(line)
            except ValueError:
                continue
            return event

    def _crashed(self) -> ModelCrashed:
        process = self._process
        code: int | None = None
        if process is not None:
            try:
                code = process.wait(timeout=_EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                code = None
        self.last_stderr = self.stderr_tail()
        self.kill()
        message, name = crash_message(code)
        return ModelCrashed(
            message, signal_name=name, exit_code=code, provider="local", model=self.model
        )

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def generate(
        self, job: int, request: dict[str, Any], emit: Callable[[str], None]
    ) -> dict[str, Any]:
        """Run one generation (``request``: messages, max_tokens, temperature, repeat_penalty,
        schema) as job ``job``; each text piece goes to ``emit``; returns the ``done`` event."""
        self._send({"op": "generate", "id": job, **request})
        while True:
            event = self._read()
            kind = event.get("ev")
            if event.get("id") != job:
                continue
            if kind == "delta":
                emit(str(event.get("text") or ""))
            elif kind == "done":
                return event
            elif kind == "error":
                message = str(event.get("message"))
                if event.get("kind") == "request":
                    raise BadRequest(message, provider="local", model=self.model)
                raise ProviderUnavailable(message, provider="local", model=self.model)

    def stop(self, job: int) -> None:
        """Ask job ``job`` to stop (from any thread): it ends within a token's time."""
        self._send({"op": "stop", "id": job})

    # --- ending ---------------------------------------------------------------------------

    def stderr_tail(self, limit: int = 2000) -> str:
        """The end of what the process wrote to stderr (for logs)."""
        handle = self._stderr
        if handle is None or handle.closed:
            return ""
        try:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - limit))
            return handle.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def close(self) -> None:
        """Ask the process to exit; kill it if it does not within a few seconds."""
        process = self._process
        if process is not None and process.poll() is None:
            self._send({"op": "exit"})
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=_EXIT_WAIT_S)
        self.kill()

    def interrupt(self) -> None:
        """Kill the process from any thread; the thread reading it then sees it die."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()

    def kill(self) -> None:
        """End the process now and release its pipes (on the thread that reads it)."""
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                process.kill()
                process.wait()
            for pipe in (process.stdin, process.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        handle, self._stderr = self._stderr, None
        if handle is not None:
            handle.close()
