"""The only package with SQL. One module per aggregate; ``Database`` owns the engine.

``Database`` is imported on first use: the plain row types (``store.rows``) and payload
encoding (``store.payloads``) serve the digest's prepare process, which has no database
and does without SQLAlchemy's import (~35 MB).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracebox.store.database import Database

__all__ = ["Database"]


def __getattr__(name: str) -> Any:
    if name == "Database":
        from tracebox.store.database import Database

        return Database
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
