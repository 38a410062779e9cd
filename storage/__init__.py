"""Durable storage: checkpoints, history, files, locks, the post index and the entity graph.

Imports nothing of the runtime or the skills (only the leaf module ``skillrt.exceptions``).
"""

from skillrt.storage.records import SCHEMA_VERSION, TaskRecord

__all__ = ["SCHEMA_VERSION", "TaskRecord"]
