"""The only package with SQL. One module per aggregate; ``Database`` owns the engine."""

from tracebox.store.database import Database

__all__ = ["Database"]
