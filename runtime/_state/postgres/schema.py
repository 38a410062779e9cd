"""The PostgreSQL store's schema: numbered migrations, applied in order under an advisory lock.

A database records the version it is at in ``skillrt_schema``. At start-up every worker calls
``migrate``: inside one transaction it takes a transaction-level advisory lock (so when several
workers start together exactly one applies the migrations and the others wait, then find
nothing to do), reads the version, applies what is missing and records the new version. DDL is
transactional in PostgreSQL, so a migration is applied whole or not at all. A database on a
newer version than this package knows is refused: an older worker must not write to it.

Migrations are append-only: never edit one that has shipped, add the next.
"""

from __future__ import annotations

from typing import Any

from skillrt.exceptions import StoreUnavailable

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate", "schema_version"]

# (version, what it does, SQL). Version 1 is the task store and history; 2 adds the leases,
# the workers table and the file-lock holders that make several workers share one database;
# 3 the control requests (pause, abort, answer, follow) one worker sends to another; 4 the work
# queue; 5 its take as one function (one round trip).
MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "task records and history",
        """
        CREATE TABLE skillrt_tasks (
            task_id    text PRIMARY KEY,
            state      text NOT NULL,
            updated_at double precision NOT NULL,
            record     text NOT NULL
        );
        CREATE INDEX skillrt_tasks_updated ON skillrt_tasks (updated_at);
        CREATE TABLE skillrt_quarantine (
            id        bigserial PRIMARY KEY,
            task_id   text NOT NULL,
            reason    text NOT NULL,
            record    text NOT NULL,
            moved_at  timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE skillrt_history_tasks (
            seq        bigserial PRIMARY KEY,
            task_id    text NOT NULL UNIQUE,
            session_id text NOT NULL,
            data       text NOT NULL
        );
        CREATE INDEX skillrt_history_tasks_session ON skillrt_history_tasks (session_id, seq);
        CREATE TABLE skillrt_history_messages (
            seq        bigserial PRIMARY KEY,
            session_id text NOT NULL,
            data       text NOT NULL
        );
        CREATE INDEX skillrt_history_messages_session
            ON skillrt_history_messages (session_id, seq);
        """,
    ),
    (
        2,
        "run leases, live workers and file-lock holders",
        """
        CREATE TABLE skillrt_workers (
            worker_id    text PRIMARY KEY,
            host         text NOT NULL,
            pid          integer NOT NULL,
            started_at   timestamptz NOT NULL DEFAULT now(),
            heartbeat_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE skillrt_leases (
            task_id    text PRIMARY KEY,
            worker_id  text NOT NULL,
            expires_at timestamptz NOT NULL
        );
        CREATE INDEX skillrt_leases_worker ON skillrt_leases (worker_id);
        CREATE TABLE skillrt_file_locks (
            lock_key   bigint PRIMARY KEY,
            path       text NOT NULL,
            task_id    text NOT NULL,
            worker_id  text NOT NULL,
            since      timestamptz NOT NULL DEFAULT now()
        );
        """,
    ),
    (
        3,
        "control requests between workers",
        """
        CREATE TABLE skillrt_control (
            id         bigserial PRIMARY KEY,
            task_id    text NOT NULL,
            verb       text NOT NULL,
            payload    text NOT NULL DEFAULT '',
            sender     text NOT NULL,
            worker_id  text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            taken_at   timestamptz,
            done_at    timestamptz,
            result     text
        );
        CREATE INDEX skillrt_control_open ON skillrt_control (task_id) WHERE done_at IS NULL;
        """,
    ),
    (
        4,
        "the work queue",
        """
        CREATE TABLE skillrt_queue (
            id          bigserial PRIMARY KEY,
            task_id     text NOT NULL UNIQUE,
            priority    integer NOT NULL DEFAULT 0,
            request     text NOT NULL,
            sender      text NOT NULL,
            queued_at   timestamptz NOT NULL DEFAULT now(),
            taken_by    text,
            taken_at    timestamptz,
            limit_keys  text[] NOT NULL DEFAULT '{}',
            done_at     timestamptz,
            result      text
        );
        CREATE INDEX skillrt_queue_waiting ON skillrt_queue (priority DESC, id)
            WHERE taken_at IS NULL;
        CREATE INDEX skillrt_queue_running ON skillrt_queue USING gin (limit_keys)
            WHERE taken_at IS NOT NULL AND done_at IS NULL;
        """,
    ),
    (
        5,
        "the work queue's take in one round trip",
        # For each limited key: its advisory lock (held to the end of the transaction: the
        # statement's, in autocommit), then a count of what runs under it; then the taking.
        # Each statement of a PL/pgSQL function takes its own snapshot (READ COMMITTED), so a
        # count made after the lock sees every take committed before it: the limits hold
        # across workers, as when these were five round trips of one transaction.
        """
        CREATE FUNCTION skillrt_take(worker text, keys text[], limited text[],
                                     limits integer[], wanted integer)
        RETURNS TABLE (id bigint, task_id text, request text, sender text, priority integer)
        LANGUAGE plpgsql VOLATILE AS $take$
        DECLARE
            room bigint := wanted;
            running bigint;
        BEGIN
            FOR i IN 1 .. coalesce(array_length(limited, 1), 0) LOOP
                PERFORM pg_advisory_xact_lock(hashtextextended(limited[i], 7));
                SELECT count(*) INTO running FROM skillrt_queue r
                WHERE r.limit_keys @> ARRAY[limited[i]]
                  AND r.taken_at IS NOT NULL AND r.done_at IS NULL;
                room := least(room, limits[i] - running);
            END LOOP;
            IF room <= 0 THEN
                RETURN;
            END IF;
            RETURN QUERY
            UPDATE skillrt_queue q SET taken_by = worker, taken_at = now(), limit_keys = keys
            WHERE q.id IN (SELECT w.id FROM skillrt_queue w WHERE w.taken_at IS NULL
                           ORDER BY w.priority DESC, w.id LIMIT room FOR UPDATE SKIP LOCKED)
            RETURNING q.id, q.task_id, q.request, q.sender, q.priority;
        END
        $take$;
        """,
    ),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]

# One fixed advisory-lock key for migrations ("skillrt" in ASCII, as a bigint).
_MIGRATION_LOCK = 0x736B696C6C7274


def schema_version(conn: Any) -> int:
    """The version the database is at (0: no skillrt tables yet)."""
    row = conn.execute("SELECT to_regclass('skillrt_schema') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    row = conn.execute("SELECT version FROM skillrt_schema").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: Any, *, target: int = SCHEMA_VERSION) -> tuple[int, int]:
    """Bring the database to ``target``; returns (version before, version after).

    ``conn`` is a psycopg connection in autocommit mode. Raises ``StoreUnavailable`` when the
    database is newer than this package.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS skillrt_schema (version integer NOT NULL)")
        before = schema_version(conn)
        if before > SCHEMA_VERSION:
            raise StoreUnavailable(
                f"the database is at skillrt schema version {before}, newer than this "
                f"skillrt knows ({SCHEMA_VERSION}); upgrade skillrt on this worker",
                reason="schema_newer",
            )
        for version, _what, sql in MIGRATIONS:
            if before < version <= target:
                conn.execute(sql)
        after = max(before, min(target, SCHEMA_VERSION))
        conn.execute("DELETE FROM skillrt_schema")
        conn.execute("INSERT INTO skillrt_schema (version) VALUES (%s)", (after,))
    return before, after
