"""The results store: every run, every result, every sample.

One interface (base.Store) with two back-ends: SQLite, the embedded default
(sqlite.py), and PostgreSQL for many hosts writing to one database (postgres.py), with
one schema (schema.py).  `Store(location)` opens the one the location names:
`postgresql://user@host[:port]/database` or the path of an SQLite file (default
$OSMETER_DB, else the user's data directory).
"""
from .base import AlreadyStored, Store, StoreError, default_location, is_url

__all__ = ["AlreadyStored", "Store", "StoreError", "default_location", "is_url"]
