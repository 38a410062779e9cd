"""The embedded model's tokens made text, one token at a time.

llama-cpp-python streams a completion (``Llama._create_completion``, ``stream=True``) by
looking for the longest run of the tokens it has not returned yet that decodes as UTF-8. Once
the model writes bytes that are not UTF-8 (a small model writing Chinese does: half of a
character, then something else), no run ever decodes again. Nothing more is returned, and
each new token tries every run again, so the generation goes on for hours with no text and no
chance to stop between tokens. We saw a translation into Chinese make no progress for 300 s
until the watchdog ended it, and a worker whose runtime had gone spin for 14 minutes.

So the engine runs the token loop itself (``LlamaEngine.generate``), and here each token's
bytes go through an incremental decoder that writes U+FFFD for a bad byte and goes on. The
chat format's stop strings are held back until they can no longer be one.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence

__all__ = ["TextStream"]


class TextStream:
    """Bytes in, text out: ``feed`` returns what may be shown so far, ``finish`` the rest.

    After a stop string, ``stopped`` is set and the text before it is all there is.
    """

    def __init__(self, stops: Sequence[str] = ()) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stops = [s for s in stops if s]
        self._pending = ""
        self.stopped = False

    def feed(self, data: bytes) -> str:
        if self.stopped:
            return ""
        self._pending += self._decoder.decode(data)
        return self._release()

    def finish(self) -> str:
        """The text still held; a character left open (the generation stopped inside it) is
        dropped, not shown as U+FFFD."""
        if self.stopped:
            return ""
        self._decoder.reset()
        text, self._pending = self._pending, ""
        return text

    def _release(self) -> str:
        pending = self._pending
        found = [at for at in (pending.find(s) for s in self._stops) if at >= 0]
        if found:
            self.stopped = True
            self._pending = ""
            return pending[: min(found)]
        keep = self._open_stop(pending)
        self._pending = pending[len(pending) - keep :] if keep else ""
        return pending[: len(pending) - keep]

    def _open_stop(self, text: str) -> int:
        """The length of the longest end of ``text`` that a stop string starts with."""
        longest = 0
        for stop in self._stops:
            for size in range(min(len(stop) - 1, len(text)), longest, -1):
                if text.endswith(stop[:size]):
                    longest = size
                    break
        return longest
