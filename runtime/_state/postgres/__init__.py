"""The shared state backend: one PostgreSQL database for several workers (extra ``postgres``).

Selected by ``state_url = "postgresql://…"`` (psycopg 3 and its pool). It keeps the embedded
backend's promises and adds what sharing needs: ``PgTaskStore`` (checkpoints, fenced by
leases), ``PgHistory``, ``PgRunLocks`` (leases, renewed by a thread; a dead worker's tasks are
taken over) and ``PgFileLocks`` (advisory locks), over ``PgDatabase`` (its pools and schema).
``PostgresBackend`` puts them together behind the ``StateBackend`` protocol. psycopg is imported
when a database is opened, not here.
"""

from skillrt._state.postgres.database import PgDatabase, inspect_database, redact_url
from skillrt._state.postgres.history import PgHistory
from skillrt._state.postgres.leases import PgRunLocks
from skillrt._state.postgres.locks import PgFileLocks
from skillrt._state.postgres.tasks import PgTaskStore

PgBackend = PgDatabase  # its name before the state backend was a protocol (issue 21)

__all__ = [
    "PgBackend",
    "PgDatabase",
    "PgFileLocks",
    "PgHistory",
    "PgRunLocks",
    "PgTaskStore",
    "inspect_database",
    "redact_url",
]
