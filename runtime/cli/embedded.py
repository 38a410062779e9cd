"""What ``skillrt chat`` says about the embedded model, once, and the local servers it finds.

The embedded SmolLM2-135M is there to try skillrt with nothing to set up; its answers are
poor, as a 135M model's must be. The first chat in a state folder says so and how to connect
a real model (a marker file in the state folder keeps it to once). Every chat on the embedded
model also looks for a local OpenAI-compatible server on its usual port (127.0.0.1 only) and,
when one answers, says how to use it; ``/model`` lists them. The chat starts the model's
worker as it starts (``start_worker``), and says at once when the model cannot run.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from skillrt.exceptions import ProviderError, UserError
from skillrt.llm.discover import LocalServer, find_local_servers

__all__ = ["NOTE_MARKER", "first_time", "local_servers", "start_worker"]

NOTE_MARKER = "embedded-model-note-shown"


def first_time(state: Path) -> bool:
    """True the first time it is asked for this state folder (then a marker is left there;
    a folder that cannot be written asks again next time)."""
    marker = state / NOTE_MARKER
    if marker.exists():
        return False
    with contextlib.suppress(OSError):
        marker.write_text("The chat said once that the embedded model is a tiny one.\n")
    return True


async def local_servers() -> list[LocalServer]:
    """The local model servers that answer, found off the event loop."""
    return await asyncio.to_thread(find_local_servers)


async def start_worker(llm: object) -> UserError | ProviderError | None:
    """Start the embedded model's worker and load its model now; the error that stops it, if
    one does.

    The worker used to start at the first request, so a missing or unreadable model file (or
    a llama.cpp that crashes in every mode) went unsaid: "hi" got the Chat skill's own
    greeting, "completed", and the first request that needed the model failed. Loaded here,
    the chat says so before the first prompt, and the first answer does not wait for a load.
    """
    load = getattr(llm, "load", None)
    if load is None:
        return None
    try:
        await load()
    except (UserError, ProviderError) as exc:
        return exc
    return None
