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

The store's own group commit does not have SQLite parse the JSON it has just written: the
runtime takes a record's listing when it serialises it (``records.listing_of``), and since
layout 3 the commit's row carries it, in columns of diskcache's that a checkpoint store never
reads otherwise (it never evicts and never expires): ``tag``, the fields' JSON array (text;
other writers put a number there, the record's ``updated_at``), ``size``, the progress's
JSON, ``access_time``, the number of steps. That row is marked (``access_count`` = -1) so the
triggers leave it alone, and has no ``Listed`` row: the commit deletes one an earlier write
left (an older skillrt's), in the same statement. A commit so writes the record's page alone,
not a ``Listed`` page too (a task's four commits: 6 pages of the write-ahead log, not 10). The
listing reads a ``Listed`` row when there is one, else the carried listing, else checks the
record in full. A row written any other way (diskcache's ``set``, another version of skillrt)
has its ``Listed`` row made from its JSON as before; an ``UPDATE`` by hand (which keeps the
row's ``store_time``) also unmarks the row (layout 3's ``Listed_update``), so the listing it
carried is no longer read. (Layout 2 had the commit write the ``Listed`` row itself, right
after the record's; layout 1 had the triggers parse every write: a third of a commit of a
small record, 89% of one of 100 KB.) A carried listing and a row the triggers make list the
same (``tests/test_listing_carried.py``, ``tests/test_listing_in_row.py``).

``ensure_listing`` runs at every opening: if the table or one of its triggers is missing or not
as this version makes it (a store made before them, or by an older version, or damaged by
hand), they are made again and the table filled from the JSON of every record, every row
unmarked (listed from its JSON from then on), all in one transaction, so a crash leaves either
the old store or the complete new one. A store whose triggers are exactly those of layout 1
(no ``WHEN``) or layout 2 only has its triggers made again: its ``Listed`` rows are right as
they are.

**Layouts and versions.** The layout is kept in SQLite's ``user_version`` (``LAYOUT``, 3 now;
versions of skillrt before layout 2 never set it, and never read it). This version goes
forward only: a store of a later layout (a higher ``user_version``, its table and triggers
there) is left as it is; its commits stay right under any triggers, since a ``Listed`` row a
trigger makes of their row is deleted in the same statement. A later layout must therefore
keep ``Listed``'s columns and the carried listing's meaning (older versions move a database
with other columns aside as foreign anyway). A version of layout 2 (stop 39) opening a
layout-3 store leaves it as it is (a later layout); its commits write their ``Listed`` rows,
which this version reads first, and its listing finds no ``Listed`` row for a row that carries
its listing, and checks that record in full (parsed: slower, never wrong). A version before
layout 2 does not know ``user_version``: it finds triggers not as it makes them and rebuilds
the table from every record's JSON with its own triggers, once per opening; this version,
opening it next, only makes its triggers again. All list the same and lose nothing, whichever
opened last; only the rebuilds, the older listings of carried rows and, under the old
triggers, this version's commits cost more. (Stores of 2026-11-26 had ``Listed`` keyed by the
task id, ``WITHOUT ROWID``: a text key to look up for every row listed, 2-3 ms of 10,000; the
table of the first, column-per-field layout, ``Listing``, which lived on main for an hour that
day and cost three times as much per write, is dropped in the same transaction.)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import diskcache

from skillrt._state.embedded.schema import LISTED_COLUMNS, RETIRED_COLUMNS
from skillrt._state.protocol import LISTED

__all__ = [
    "FIELDS",
    "LAYOUT",
    "LISTED_BY_WRITER",
    "LISTED_COLUMNS",
    "LISTED_QUERY",
    "RETIRED_COLUMNS",
    "TRIGGERS",
    "ensure_listing",
]

LAYOUT = 3
"""The listing's layout, in SQLite's ``user_version`` (see the module docstring)."""
LISTED_BY_WRITER = -1
"""``Cache.access_count`` of a row its writer lists (the group commit): layout 3's row carries
its listing; layout 2's writer made its ``Listed`` row."""

TRIGGERS = ("Listed_insert", "Listed_update", "Listed_delete")
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
_DELETE = (
    "CREATE TRIGGER Listed_delete AFTER DELETE ON Cache BEGIN"
    " DELETE FROM Listed WHERE rowid = OLD.rowid; END"
)
# The triggers of layout 1, as that version made them (no WHEN: every write parsed its JSON).
_MADE_1 = {
    "Listed": _TABLE,
    "Listed_insert": f"CREATE TRIGGER Listed_insert AFTER INSERT ON Cache BEGIN {_INSERT}; END",
    "Listed_update": "CREATE TRIGGER Listed_update AFTER UPDATE ON Cache BEGIN"  # noqa: S608
    f" DELETE FROM Listed WHERE rowid = OLD.rowid; {_INSERT}; END",
    "Listed_delete": _DELETE,
}
# A row its writer lists is left alone: an insert marked so, an update marked so that stores
# it anew (a new store_time; an UPDATE by hand keeps the row's, and is listed from its JSON).
_MARKED = f"NEW.access_count IS {LISTED_BY_WRITER}"
_MADE_2 = {
    "Listed": _TABLE,
    "Listed_insert": f"CREATE TRIGGER Listed_insert AFTER INSERT ON Cache WHEN NOT {_MARKED}"
    f" BEGIN {_INSERT}; END",
    "Listed_update": "CREATE TRIGGER Listed_update AFTER UPDATE ON Cache"  # noqa: S608
    f" WHEN NOT ({_MARKED} AND NEW.store_time IS NOT OLD.store_time)"
    f" BEGIN DELETE FROM Listed WHERE rowid = OLD.rowid; {_INSERT}; END",
    "Listed_delete": _DELETE,
}
# Layout 3: a row updated any other way than by the group commit (an UPDATE by hand, which
# keeps the row's store_time) no longer vouches for the listing it carried (unmarked: listed
# from its JSON, or, when that is not JSON, checked in full).
_MADE = {
    **_MADE_2,
    "Listed_update": "CREATE TRIGGER Listed_update AFTER UPDATE ON Cache"  # noqa: S608
    f" WHEN NOT ({_MARKED} AND NEW.store_time IS NOT OLD.store_time)"
    f" BEGIN DELETE FROM Listed WHERE rowid = OLD.rowid; {_INSERT};"
    f" UPDATE Cache SET access_count = 0 WHERE rowid = NEW.rowid AND {_MARKED}; END",
}
"""Each object of the listing as ``sqlite_master`` holds it: one that reads otherwise (another
layout, an older trigger) has the table built again at opening."""

_UNMARK = f"UPDATE Cache SET access_count = 0 WHERE access_count = {LISTED_BY_WRITER}"  # noqa: S608
_FILL = (
    f"INSERT INTO {_COLUMNS} SELECT "  # noqa: S608 - SQL built from constants
    + _row_of("c.value", "c.key", "c.rowid")
    + " FROM Cache AS c WHERE "
    + _LISTABLE.format(r="c")
)

# A row as the store writes it: its own (raw, text key), in the row as JSON text.
_OWN = (
    f"c.raw = 1 AND typeof(c.key) = 'text' AND c.mode = {diskcache.core.MODE_RAW}"
    " AND c.filename IS NULL"
)
# The listing the row carries in its tag (the group commit's, see the module docstring); the
# tag of an older skillrt's row is a number (its ``updated_at``), never text. (SQLite orders
# numbers before text and text before BLOBs: ``>= '' AND < x''`` is "text", without a call of
# ``typeof``, ~800 instructions a row.)
_CARRIED = f"c.access_count = {LISTED_BY_WRITER} AND c.tag >= '' AND c.tag < x''"
_IN_WINDOW = "NOT (typeof(c.tag) IN ('integer', 'real') AND c.tag < ?)"
LISTED_QUERY = (
    "SELECT c.key, CAST(c.value AS BLOB),"  # noqa: S608 - SQL built from constants
    f" CASE WHEN NOT ({_OWN}) THEN c.rowid"
    " WHEN l.key = c.key AND l.fields IS NOT NULL THEN CAST(l.fields AS BLOB)"
    f" WHEN l.rowid IS NULL AND {_CARRIED} THEN CAST(c.tag AS BLOB)"
    " ELSE c.rowid END,"
    " CASE WHEN l.rowid IS NULL THEN CAST(c.size AS BLOB) ELSE CAST(l.progress AS BLOB) END,"
    " CASE WHEN l.rowid IS NULL THEN CAST(c.access_time AS INTEGER) ELSE l.steps END"
    " FROM Cache AS c LEFT JOIN Listed AS l ON l.rowid = c.rowid"
    f" WHERE {_IN_WINDOW}"
)
"""Every row but those whose ``updated_at`` tag is outside the window (parameter: the cutoff),
with what lists it: its ``Listed`` row's fields, progress and steps; or, with no ``Listed``
row, the listing its row carries (its tag: the fields' JSON array; its size: the progress's
JSON; its access time: the number of steps; the window is then checked on the fields'
``updated_at`` by the reader); or, for a row
with neither, or that is not a record's own row as the store writes it, the row's rowid
instead: one pass over ``Cache``. A row whose fields are a rowid is parsed by the listing (and
moved aside if unusable). A ``Listed`` row comes first: the group commit deletes it when it
writes a row that carries its listing, so one that is there was written later (by the
triggers, after an ``UPDATE`` by hand or a write of another version). Five columns, as few as
can be: Python's ``sqlite3`` releases and takes the GIL again for every column of every
row."""


def ensure_listing(execute: Callable[..., sqlite3.Cursor]) -> bool:
    """Make the ``Listed`` table and its triggers if any is missing, filled from the records'
    JSON, in one transaction (``execute``: the store's connection's); a store of layout 1
    gets this layout's triggers only. True when it changed the store."""
    if _found(execute) in ("current", "later"):
        return False
    ((waited,),) = execute("PRAGMA busy_timeout").fetchall()
    execute("PRAGMA busy_timeout = 10000")  # another process may be opening it too
    try:
        execute("BEGIN IMMEDIATE")
        try:
            found = _found(execute)
            if found in ("current", "later"):  # that other process made it meanwhile
                execute("ROLLBACK")
                return False
            for trigger in (*TRIGGERS, *_RETIRED_TRIGGERS):
                execute(f"DROP TRIGGER IF EXISTS {trigger}")
            if found != "layout 1":  # its Listed rows are right as they are
                execute("DROP TABLE IF EXISTS Listed")
                execute("DROP TABLE IF EXISTS Listing")
                execute(_TABLE)
                execute(_FILL)
                # Rows written while no trigger watched may carry a listing their JSON no
                # longer says: every row is listed from its JSON now.
                execute(_UNMARK)
            for trigger in TRIGGERS:
                execute(_MADE[trigger])
            execute(f"PRAGMA user_version = {LAYOUT}")
        except BaseException:
            execute("ROLLBACK")
            raise
        execute("COMMIT")
    finally:
        execute(f"PRAGMA busy_timeout = {int(waited)}")
    return True


def _found(execute: Callable[..., sqlite3.Cursor]) -> str:
    """What the store holds: "current" (the table and its triggers as this version makes
    them, no retired table left, the layout noted), "layout 1" (exactly as layout 1 made
    them, or this layout's not noted yet: the rows are right, the triggers made again),
    "later" (a later layout's: the table and three triggers of these names, under a
    higher ``user_version``), or "other" (to be built again)."""
    found = dict(
        execute(
            "SELECT name, sql FROM sqlite_master WHERE name IN (?, ?, ?, ?, ?)",
            (*_MADE, "Listing"),
        ).fetchall()
    )
    ((layout,),) = execute("PRAGMA user_version").fetchall()
    if found == _MADE and layout >= LAYOUT:
        return "current"
    if found in (_MADE, _MADE_2, _MADE_1):
        return "layout 1"
    if layout > LAYOUT and found.keys() == _MADE.keys() and found["Listed"] == _TABLE:
        return "later"
    return "other"
