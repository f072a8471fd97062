"""Alembic environment: run migrations against the URL given in the config."""

from __future__ import annotations

from alembic import context

from tracebox.store.engine import make_engine
from tracebox.store.tables import metadata

url = context.config.get_main_option("sqlalchemy.url")
assert url is not None
engine = make_engine(url)
with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=engine.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
