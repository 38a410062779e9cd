"""The embedded state backend: SQLite files in the state folder (the default)."""
