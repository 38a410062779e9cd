"""The embedded model's worker process: ``python -m skillrt.llm.llama_worker``.

The runtime starts it (``worker_client.WorkerProcess``), and it holds the one ``LlamaEngine``.
It speaks JSON lines: commands on stdin, events on its protocol pipe (the process's original
stdout; file descriptor 1 is pointed at stderr, so native code that prints cannot corrupt it).

Commands: ``{"op": "load"}``, ``{"op": "generate", "id": N, ...}``, ``{"op": "stop", "id": N}``
(read by a thread of its own, so it reaches a generation that is running), ``{"op": "exit"}``.
When stdin closes (the runtime exited or was killed), the running generation is stopped and
the worker ends.
Events: ``ready`` (the mode and the loader's parameters), ``delta``, ``done``, ``error``.

``SKILLRT_TEST_LLAMA_CRASH`` is a test hook: ``load:MODE[,MODE…]`` or ``decode:MODE[,…]`` makes
this process send itself SIGSEGV before loading, or before generating, in one of those modes
(a real signal in a real process, as llama.cpp's own faults are); ``SKILLRT_TEST_LLAMA_SIGNAL``
names another signal (``SIGKILL``: the out-of-memory killer, ``kill -9``).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading
from pathlib import Path
from typing import IO, Any

from skillrt.llm.llama_engine import EngineError, LlamaEngine
from skillrt.llm.llama_modes import MODES, Mode

__all__ = ["main"]

CRASH_HOOK = "SKILLRT_TEST_LLAMA_CRASH"
SIGNAL_HOOK = "SKILLRT_TEST_LLAMA_SIGNAL"


def _crash_if_asked(when: str, mode: Mode) -> None:
    stage, _, modes = os.environ.get(CRASH_HOOK, "").partition(":")
    if stage == when and mode in modes.split(","):
        os.kill(os.getpid(), signal.Signals[os.environ.get(SIGNAL_HOOK) or "SIGSEGV"])


class _Worker:
    def __init__(self, out: IO[str], engine: LlamaEngine) -> None:
        self.out = out
        self.engine = engine
        self.commands: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stops: dict[int, threading.Event] = {}
        self.gone = False  # stdin closed: the runtime has gone, so nothing is generated
        self.lock = threading.Lock()

    def send(self, event: dict[str, Any]) -> None:
        with self.lock:
            self.out.write(json.dumps(event, ensure_ascii=False) + "\n")
            self.out.flush()

    def read_commands(self, source: IO[str]) -> None:
        """Stdin, on its own thread: stops act at once, the rest is queued in order."""
        for line in source:
            try:
                command = json.loads(line)
            except ValueError:
                continue
            if command.get("op") == "stop":
                self.stop(int(command.get("id", -1)))
            else:
                self.commands.put(command)
        # The runtime has gone (it exited, or was killed): stop what runs, and end. A
        # generation left running would spin on for as long as its tokens last.
        with self.lock:
            self.gone = True
            for event in self.stops.values():
                event.set()
        self.commands.put(None)

    def stop(self, job: int) -> None:
        with self.lock:
            event = self.stops.setdefault(job, threading.Event())
        event.set()

    def load(self) -> None:
        _crash_if_asked("load", self.engine.mode)
        try:
            params = self.engine.load()
        except EngineError as exc:
            self.send({"ev": "error", "id": None, "kind": exc.kind, "message": str(exc)})
            return
        self.send({"ev": "ready", "mode": self.engine.mode, "params": params, "pid": os.getpid()})

    def generate(self, command: dict[str, Any]) -> None:
        job = int(command["id"])
        with self.lock:
            stop = self.stops.setdefault(job, threading.Event())
            if self.gone:
                stop.set()
        try:
            if stop.is_set():
                self.send({"ev": "done", "id": job, "content": "", "prompt_tokens": 0,
                           "completion_tokens": 0, "finish": None})  # fmt: skip
                return
            _crash_if_asked("decode", self.engine.mode)
            result = self.engine.generate(
                command["messages"],
                max_tokens=int(command["max_tokens"]),
                temperature=float(command["temperature"]),
                repeat_penalty=float(command["repeat_penalty"]),
                schema=command.get("schema"),
                emit=lambda text: self.send({"ev": "delta", "id": job, "text": text}),
                stop=stop,
            )
        except EngineError as exc:
            self.send({"ev": "error", "id": job, "kind": exc.kind, "message": str(exc)})
        else:
            self.send({"ev": "done", "id": job, "content": result.content,
                       "prompt_tokens": result.prompt_tokens,
                       "completion_tokens": result.completion_tokens,
                       "finish": result.finish_reason})  # fmt: skip
        finally:
            with self.lock:
                self.stops.pop(job, None)

    def serve(self) -> None:
        while (command := self.commands.get()) is not None:
            op = command.get("op")
            if op == "load":
                self.load()
            elif op == "generate":
                self.generate(command)
            elif op == "exit":
                break


def main(argv: list[str] | None = None) -> int:
    args = json.loads((argv if argv is not None else sys.argv[1:])[0])
    mode = args["mode"]
    if mode not in MODES:
        raise SystemExit(f"unknown mode {mode!r}")
    # The protocol gets the original stdout; fd 1 (what native code prints to) goes to stderr.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    engine = LlamaEngine(
        Path(args["model_path"]),
        mode=mode,
        n_ctx=int(args["n_ctx"]),
        n_threads=args.get("n_threads"),
        seed=int(args.get("seed", 0)),
    )
    worker = _Worker(protocol, engine)
    reader = threading.Thread(target=worker.read_commands, args=(sys.stdin,), daemon=True)
    reader.start()
    try:
        worker.serve()
    finally:
        engine.close()
        protocol.close()
    return 0


if __name__ == "__main__":
    # A quick exit: llama_cpp keeps /dev/null files open, and nothing is left to flush.
    code = main()
    sys.stderr.flush()
    os._exit(code)
