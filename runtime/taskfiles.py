"""The blog's files as one task sees them: locked for the task, and every save logged."""

from __future__ import annotations

from pathlib import Path

import structlog

from skillrt.storage.files import FileStore

__all__ = ["TaskFiles"]


class TaskFiles(FileStore):
    """A ``FileStore`` bound to a task that logs ``agent.file.saved`` for every write."""

    def __init__(self, base: FileStore, task_id: str, logger: structlog.stdlib.BoundLogger) -> None:
        # A view of ``base``: its root and trash (already resolved), writes locked for this
        # task. Copying base's attributes instead of calling FileStore.__init__ skips two path
        # resolutions (syscalls per path component), the costliest part of starting a task.
        vars(self).update(vars(base))
        self.owner = task_id
        self._logger = logger

    def write(
        self,
        path: str | Path,
        content: str,
        *,
        expected_hash: str | None = None,
        create_only: bool = False,
        wait: float | None = None,
    ) -> tuple[Path, str]:
        saved, digest = super().write(
            path, content, expected_hash=expected_hash, create_only=create_only, wait=wait
        )
        self._logger.info(
            "agent.file.saved",
            path=self.relative(saved),
            size=len(content.encode("utf-8")),
            sha256=digest[:16],
        )
        return saved, digest
