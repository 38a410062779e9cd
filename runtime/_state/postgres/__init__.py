"""The shared state backend: one PostgreSQL database for several workers (extra ``postgres``)."""
