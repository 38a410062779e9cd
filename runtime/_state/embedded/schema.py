"""Whether a state database holds its own tables and nothing foreign.

A database file in the state folder may have been made by something else: another program's
``Settings`` table (``id, owner, blob``) in the checkpoint database made every command exit 74
when diskcache wrote its own settings into it. Before a store opens its file, the schema is
read (read-only) and compared with the one the store makes: for the checkpoints, diskcache's
tables ``Settings (key, value)`` and ``Cache`` (twelve columns), its indexes and triggers, and
the store's own ``Listed`` table and its triggers (``listing.py``); for
the history, ``tasks`` and ``messages``. Anything else is a foreign schema, and the store moves
the database aside and starts a fresh one, as for a damaged file.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CHECKPOINT_SCHEMA",
    "HISTORY_SCHEMA",
    "LISTED_COLUMNS",
    "RETIRED_COLUMNS",
    "Schema",
    "foreign_schema",
]


@dataclass(frozen=True)
class Schema:
    """A store's tables with their columns, and the name prefixes of its indexes, triggers."""

    tables: Mapping[str, tuple[str, ...]]
    prefixes: Mapping[str, tuple[str, ...]]


_DISKCACHE = {
    "Settings": ("key", "value"),
    "Cache": (
        "rowid",
        "key",
        "raw",
        "store_time",
        "expire_time",
        "access_time",
        "access_count",
        "tag",
        "size",
        "mode",
        "filename",
        "value",
    ),
}
# The columns of the listing's table (listing.py imports them from here, so that skillrt doctor
# compares a schema without loading the listing, diskcache and the records).
LISTED_COLUMNS = ("key", "fields", "progress", "steps")
RETIRED_COLUMNS = (
    "key", "ok", "version", "state", "error_reason", "updated_at", "session_id", "question",
    "skill", "intent", "raw_input", "created_at", "last_error", "tokens", "cost", "progress",
    "steps",
)  # fmt: skip
"""The columns of the retired ``Listing`` table (see listing.py's docstring)."""

# The listing's table beside diskcache's (``listing.py``); a store made before it has none.
# The retired ``Listing`` is let through: opening the store drops it.
_LISTING = {"Listed": LISTED_COLUMNS, "Listing": RETIRED_COLUMNS}
CHECKPOINT_SCHEMA = Schema(
    {**_DISKCACHE, **_LISTING},
    {"index": ("Cache_", "sqlite_autoindex_"), "trigger": ("Settings_", "Listed_", "Listing_")},
)
HISTORY_SCHEMA = Schema(
    {
        "tasks": ("seq", "task_id", "session_id", "data"),
        "messages": ("seq", "session_id", "data"),
        "sqlite_sequence": ("name", "seq"),  # SQLite's own, for AUTOINCREMENT
    },
    {"index": ("tasks_", "messages_", "sqlite_autoindex_")},
)


def foreign_schema(db_path: Path, schema: Schema) -> str | None:
    """Why the database at ``db_path`` holds more or other than ``schema``, or None when it
    does not, is empty, or cannot be read at all (then opening it reports that). A schema whose
    names are not UTF-8 (a damaged page) is a reason too: Python's ``sqlite3`` raises
    ``UnicodeDecodeError`` reading it, which no store's handler of SQLite errors caught."""
    try:
        uri = db_path.resolve().as_uri() + "?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=10)
    except (sqlite3.Error, OSError, ValueError):
        return None
    with contextlib.closing(conn):
        try:
            objects = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
            for kind, name in objects:
                if kind == "table":
                    wanted = schema.tables.get(name)
                    if wanted is None:
                        return f"a foreign table {name!r} in the database"
                    rows = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
                    columns = tuple(row[1] for row in rows)
                    if columns != wanted:
                        return (
                            f"table {name!r} has columns {', '.join(columns)},"
                            f" not {', '.join(wanted)}"
                        )
                elif not str(name).startswith(schema.prefixes.get(kind, ("\0",))):
                    return f"a foreign {kind} {name!r} in the database"
        except sqlite3.Error:
            return None  # not a database, or damaged: opening it says so and moves it aside
        except UnicodeDecodeError as exc:
            return f"its schema is damaged (a name that is not UTF-8: {exc})"
    return None
