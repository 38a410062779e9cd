"""The checkpoint database's ``Listing`` table: what a listing shows of each record, kept by
SQLite itself, so that a start-up lists thousands of tasks without reading any JSON.

Triggers on diskcache's ``Cache`` table write a record's ``Listing`` row from the JSON text
being stored, in the statement that stores it (so in its transaction): after an insert, an
update or a delete of a row, by whichever path (the group commit, diskcache's own ``set`` and
``delete``, a quarantine). A crash between two commits leaves both tables as of the last one;
the two never disagree.

Each row holds the fields that decide whether the task can be resumed (state, error reason,
schema version, ``updated_at``) and the fields of ``LISTED``, typed as SQLite columns, with
``ok`` saying whether the JSON holds them as the runtime writes them (an id equal to the key,
strings where strings go, numbers where numbers go, objects where objects go). A row that is
not ``ok``, or a ``Cache`` row with no ``Listing`` row, is read the slow way (its record parsed,
and moved aside if unusable), exactly as before the table existed.

``ensure_listing`` runs at every opening: if the table or one of its triggers is missing (a
store made before them, or damaged by hand), they are made again and the table filled from
the JSON of every record, all in one transaction, so a crash leaves either the old store or
the complete new one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import diskcache

__all__ = ["LISTING_COLUMNS", "TRIGGERS", "ensure_listing"]

LISTING_COLUMNS = (
    "key",
    "ok",
    "version",
    "state",
    "error_reason",
    "updated_at",
    "session_id",
    "question",
    "skill",
    "intent",
    "raw_input",
    "created_at",
    "last_error",
    "tokens",
    "cost",
    "progress",
    "steps",
)
TRIGGERS = ("Listing_insert", "Listing_update", "Listing_delete")

_TABLE = (
    "CREATE TABLE Listing (key TEXT PRIMARY KEY, ok INTEGER, version INTEGER, state TEXT,"
    " error_reason TEXT, updated_at REAL, session_id TEXT, question TEXT, skill TEXT,"
    " intent TEXT, raw_input TEXT, created_at REAL, last_error TEXT, tokens INTEGER, cost REAL,"
    " progress TEXT, steps INTEGER) WITHOUT ROWID"
)


def _row_of(value: str, key: str) -> str:
    """The SELECT list of a ``Listing`` row made from the JSON ``value`` stored under ``key``
    (SQL expressions; SQLite parses the JSON once for all of them).

    ``ok``: the fields that decide resumability are as the runtime writes them (the listing
    reads the others only when they are). A listed field of the wrong JSON type is stored as
    the blob ``x'00'``, which no check in ``summarize_restored`` lets through: that record is
    then parsed, and moved aside if unusable, as when it was read from its JSON."""

    def t(path: str) -> str:
        return f"json_type({value}, '$.{path}')"

    def x(path: str) -> str:
        return f"json_extract({value}, '$.{path}')"

    def typed(path: str, types: str, missing: str = "x'00'", null: str = "x'00'") -> str:
        # json_type once per field (a CASE on it), json_extract only for a value to keep
        kinds = " ".join(f"WHEN {kind} THEN {x(path)}" for kind in types.split(", "))
        return (
            f"CASE coalesce({t(path)}, 'missing') WHEN 'missing' THEN {missing}"
            f" WHEN 'null' THEN {null} {kinds} ELSE x'00' END"
        )

    text, number = "'text'", "'integer', 'real'"
    ok = " AND ".join(
        [
            f"{t('id')} = 'text' AND {x('id')} = {key}",
            f"{t('schema_version')} = 'integer'",
            f"{t('state')} = 'text'",
            f"coalesce({t('error_reason')}, 'null') IN ('null', 'text')",
            f"{t('updated_at')} IN ({number})",
        ]
    )
    steps = f"(SELECT count(*) FROM json_each({value}, '$.steps'))"  # noqa: S608
    return ", ".join(
        [
            key,
            f"coalesce({ok}, 0)",
            x("schema_version"),
            x("state"),
            x("error_reason"),
            x("updated_at"),
            typed("session_id", text),
            typed("question", text, "NULL", "NULL"),
            typed("skill", text, "NULL", "NULL"),
            f"CASE {t('intent.type')} WHEN 'text' THEN {x('intent.type')} END",
            typed("raw_input", text, "''"),
            typed("created_at", number),
            typed("last_error", text, "NULL", "NULL"),
            typed("tokens", "'integer'", "0"),
            typed("cost", number, "0.0"),
            typed("progress", "'object'", "'{}'"),
            f"CASE coalesce({t('steps')}, 'missing') WHEN 'missing' THEN 0"
            f" WHEN 'object' THEN {steps} ELSE x'00' END",
        ]
    )


# Only a record's own rows (a str key, stored as JSON text in the row) get a Listing row; a
# value that is not JSON gets none (json_extract would fail the write), and is found by the
# slow path of the listing, which moves it aside.
_LISTABLE = "{r}.raw = 1 AND typeof({r}.key) = 'text' AND json_valid({r}.value)"
_INSERT = (
    "INSERT INTO Listing SELECT "
    + _row_of("NEW.value", "NEW.key")
    + " WHERE "
    + _LISTABLE.format(r="NEW")
)
_MAKE_TRIGGERS = (
    f"CREATE TRIGGER Listing_insert AFTER INSERT ON Cache BEGIN {_INSERT}; END",
    "CREATE TRIGGER Listing_update AFTER UPDATE ON Cache BEGIN"  # noqa: S608 - constants
    f" DELETE FROM Listing WHERE key = OLD.key; {_INSERT}; END",
    "CREATE TRIGGER Listing_delete AFTER DELETE ON Cache BEGIN"
    " DELETE FROM Listing WHERE key = OLD.key; END",
)
_FILL = (
    "INSERT INTO Listing SELECT "  # noqa: S608 - SQL built from constants
    + _row_of("c.value", "c.key")
    + " FROM Cache AS c WHERE "
    + _LISTABLE.format(r="c")
)

# The rows a listing reads without JSON: a record's own row whose Listing row says it is as
# the runtime writes it, at the schema version given, updated at or after the cutoff given.
_SOUND = (
    f"c.raw = 1 AND typeof(c.key) = 'text' AND c.mode = {diskcache.core.MODE_RAW}"
    " AND c.filename IS NULL AND l.ok = 1 AND l.version = ?"
)
LISTED_QUERY = (
    "SELECT c.key, l.state, l.error_reason, l.updated_at, CAST(c.value AS BLOB), l.session_id,"  # noqa: S608
    " l.question, l.skill, l.intent, l.raw_input, l.created_at, l.last_error, l.tokens, l.cost,"
    f" l.progress, l.steps FROM Cache AS c JOIN Listing AS l ON l.key = c.key WHERE {_SOUND}"
    " AND l.updated_at >= ?"
)
"""Parameters: the schema version, the cutoff. Columns: a ``LazyRecord``'s five, then
``LISTED``'s (progress as JSON text, steps as a count)."""
UNLISTED_QUERY = (
    "SELECT c.rowid FROM Cache AS c LEFT JOIN Listing AS l ON l.key = c.key"  # noqa: S608
    f" WHERE NOT coalesce({_SOUND}, 0)"
    " AND NOT (typeof(c.tag) IN ('integer', 'real') AND c.tag < ?)"
)
"""The rows the listing must parse (parameters: the schema version, the cutoff): every row not
read by ``LISTED_QUERY`` but those whose ``updated_at`` tag is outside the window."""


def ensure_listing(execute: Callable[..., sqlite3.Cursor]) -> bool:
    """Make the ``Listing`` table and its triggers if any is missing, filled from the records'
    JSON, in one transaction (``execute``: the store's connection's). True when it did."""
    if _complete(execute):
        return False
    ((waited,),) = execute("PRAGMA busy_timeout").fetchall()
    execute("PRAGMA busy_timeout = 10000")  # another process may be opening it too
    try:
        execute("BEGIN IMMEDIATE")
        try:
            if _complete(execute):  # that other process made it meanwhile
                execute("ROLLBACK")
                return False
            for trigger in TRIGGERS:
                execute(f"DROP TRIGGER IF EXISTS {trigger}")
            execute("DROP TABLE IF EXISTS Listing")
            execute(_TABLE)
            execute(_FILL)
            for statement in _MAKE_TRIGGERS:
                execute(statement)
        except BaseException:
            execute("ROLLBACK")
            raise
        execute("COMMIT")
    finally:
        execute(f"PRAGMA busy_timeout = {int(waited)}")
    return True


def _complete(execute: Callable[..., sqlite3.Cursor]) -> bool:
    found = execute(
        "SELECT name FROM sqlite_master WHERE name IN (?, ?, ?, ?)", ("Listing", *TRIGGERS)
    ).fetchall()
    return len(found) == 1 + len(TRIGGERS)
