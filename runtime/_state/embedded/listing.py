"""The checkpoint database's ``Listed`` table: what a listing shows of each record, kept by
SQLite itself, so that a start-up lists thousands of tasks without parsing their JSON.

Triggers on diskcache's ``Cache`` table write a record's ``Listed`` row from the JSON text
being stored, in the statement that stores it (so in its transaction): after an insert, an
update or a delete of a row, by whichever path (the group commit, diskcache's own ``set`` and
``delete``, a quarantine). A crash between two commits leaves both tables as of the last one;
the two never disagree.

Each row holds, as one small JSON array read by one ``json_extract`` (a trigger's cost is its
function calls, so it makes few), the fields that decide whether the task can be resumed
(state, error reason, schema version, id, ``updated_at``) and those of ``LISTED`` but the last
two, which are columns of their own: the progress as JSON text (a dormant task then holds no
dict for the cyclic GC to scan) and the number of completed steps. The listing checks every
field's type in Python, exactly as when it read the JSON itself; a row that is not as the
runtime writes it, or a ``Cache`` row with no ``Listed`` row, is read the slow way (its record
parsed, and moved aside if unusable). A ``Listed`` row's rowid is its ``Cache`` row's, so the
listing joins them on an integer.

``ensure_listing`` runs at every opening: if the table or one of its triggers is missing or not
as this version makes it (a store made before them, or by an older version, or damaged by
hand), they are made again and the table filled from the JSON of every record, all in one
transaction, so a crash leaves either the old store or the complete new one. (Stores of
2026-11-26 had ``Listed`` keyed by the task id, ``WITHOUT ROWID``: a text key to look up for
every row listed, 2-3 ms of 10,000; the table of the first, column-per-field layout, ``Listing``,
which lived on main for an hour that day and cost three times as much per write, is dropped in
the same transaction.)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import diskcache

from skillrt._state.protocol import LISTED

__all__ = [
    "FIELDS",
    "LISTED_COLUMNS",
    "LISTED_QUERY",
    "RETIRED_COLUMNS",
    "TRIGGERS",
    "ensure_listing",
]

LISTED_COLUMNS = ("key", "fields", "progress", "steps")
TRIGGERS = ("Listed_insert", "Listed_update", "Listed_delete")
RETIRED_COLUMNS = (
    "key", "ok", "version", "state", "error_reason", "updated_at", "session_id", "question",
    "skill", "intent", "raw_input", "created_at", "last_error", "tokens", "cost", "progress",
    "steps",
)  # fmt: skip
"""The columns of the retired ``Listing`` table (see the module docstring)."""
_RETIRED_TRIGGERS = ("Listing_insert", "Listing_update", "Listing_delete")

FIELDS = ("state", "error_reason", "schema_version", "id", "updated_at", *LISTED[:-2])
"""The paths read into ``Listed.fields``, in order."""

# A rowid table whose rowid is the ``Cache`` row's own (diskcache declares ``rowid INTEGER
# PRIMARY KEY``, so it never changes, not even in a VACUUM): the listing joins the two tables on
# an integer instead of a text key. Its columns are those of the first layout (``key`` kept for
# whoever reads the table), so ``PRAGMA table_info`` reads the same for both.
_TABLE = "CREATE TABLE Listed (key TEXT, fields TEXT, progress TEXT, steps INTEGER)"


def _row_of(value: str, key: str, rowid: str) -> str:
    """The SELECT list of a ``Listed`` row made from the JSON ``value`` stored under ``key``
    in ``Cache`` row ``rowid`` (SQLite parses the JSON once for all of the fields). A progress
    or steps that is not an object is stored as NULL, which the listing's checks refuse."""
    paths = ", ".join(f"'$.{path}'" for path in FIELDS)
    steps = f"(SELECT count(*) FROM json_each({value}, '$.steps'))"  # noqa: S608
    return (
        f"{rowid}, {key}, json_extract({value}, {paths}),"
        f" CASE coalesce(json_type({value}, '$.progress'), 'missing') WHEN 'missing' THEN '{{}}'"
        f" WHEN 'object' THEN json_extract({value}, '$.progress') END,"
        f" CASE coalesce(json_type({value}, '$.steps'), 'missing') WHEN 'missing' THEN 0"
        f" WHEN 'object' THEN {steps} END"
    )


# Only a record's own rows (a str key, stored as JSON text in the row) get a Listed row; a
# value that is not JSON gets none (json_extract would fail the write), and is found by the
# slow path of the listing, which moves it aside.
_LISTABLE = "{r}.raw = 1 AND typeof({r}.key) = 'text' AND json_valid({r}.value)"
_COLUMNS = "Listed (rowid, key, fields, progress, steps)"
_INSERT = (
    f"INSERT INTO {_COLUMNS} SELECT "
    + _row_of("NEW.value", "NEW.key", "NEW.rowid")
    + " WHERE "
    + _LISTABLE.format(r="NEW")
)
_MADE = {
    "Listed": _TABLE,
    "Listed_insert": f"CREATE TRIGGER Listed_insert AFTER INSERT ON Cache BEGIN {_INSERT}; END",
    "Listed_update": "CREATE TRIGGER Listed_update AFTER UPDATE ON Cache BEGIN"  # noqa: S608
    f" DELETE FROM Listed WHERE rowid = OLD.rowid; {_INSERT}; END",
    "Listed_delete": "CREATE TRIGGER Listed_delete AFTER DELETE ON Cache BEGIN"
    " DELETE FROM Listed WHERE rowid = OLD.rowid; END",
}
"""Each object of the listing as ``sqlite_master`` holds it: one that reads otherwise (another
layout, an older trigger) has the table built again at opening."""
_FILL = (
    f"INSERT INTO {_COLUMNS} SELECT "  # noqa: S608 - SQL built from constants
    + _row_of("c.value", "c.key", "c.rowid")
    + " FROM Cache AS c WHERE "
    + _LISTABLE.format(r="c")
)

# A row as the store writes it: its own (raw, text key), in the row as JSON text, and the
# Listed row made from it (the same key).
_SOUND = (
    f"c.raw = 1 AND typeof(c.key) = 'text' AND c.mode = {diskcache.core.MODE_RAW}"
    " AND c.filename IS NULL AND l.key = c.key"
)
_IN_WINDOW = "NOT (typeof(c.tag) IN ('integer', 'real') AND c.tag < ?)"
LISTED_QUERY = (
    "SELECT c.key, CAST(c.value AS BLOB),"  # noqa: S608 - SQL built from constants
    f" CASE WHEN {_SOUND} AND l.fields IS NOT NULL THEN CAST(l.fields AS BLOB) ELSE c.rowid END,"
    " CAST(l.progress AS BLOB), l.steps"
    " FROM Cache AS c LEFT JOIN Listed AS l ON l.rowid = c.rowid"
    f" WHERE {_IN_WINDOW}"
)
"""Every row but those whose ``updated_at`` tag is outside the window (parameter: the cutoff),
with its ``Listed`` row's fields (its JSON text; or, for a row with none, or that is not a
record's own row as the store writes it, the row's rowid instead), progress and steps: one
pass over ``Cache``. A row whose fields are a rowid is parsed by the listing (and moved aside
if unusable). Five columns, as few as can be: Python's ``sqlite3`` releases and takes the GIL
again for every column of every row."""


def ensure_listing(execute: Callable[..., sqlite3.Cursor]) -> bool:
    """Make the ``Listed`` table and its triggers if any is missing, filled from the records'
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
            for trigger in (*TRIGGERS, *_RETIRED_TRIGGERS):
                execute(f"DROP TRIGGER IF EXISTS {trigger}")
            execute("DROP TABLE IF EXISTS Listed")
            execute("DROP TABLE IF EXISTS Listing")
            execute(_TABLE)
            execute(_FILL)
            for trigger in TRIGGERS:
                execute(_MADE[trigger])
        except BaseException:
            execute("ROLLBACK")
            raise
        execute("COMMIT")
    finally:
        execute(f"PRAGMA busy_timeout = {int(waited)}")
    return True


def _complete(execute: Callable[..., sqlite3.Cursor]) -> bool:
    """Whether the table and its triggers are there as this version makes them, and no
    retired table is left."""
    found = execute(
        "SELECT name, sql FROM sqlite_master WHERE name IN (?, ?, ?, ?, ?)",
        (*_MADE, "Listing"),
    ).fetchall()
    return dict(found) == _MADE
