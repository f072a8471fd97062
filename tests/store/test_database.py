"""``Database``: one read transaction per request (a snapshot), and the per-query time
limit, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import event, select, text

from tests.inprocess import Ui, ui_client
from tracebox.config import Settings
from tracebox.errors import QueryTimeout
from tracebox.store import Database, projects
from tracebox.store.tables import projects as projects_table

SLOW_SQLITE = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) "
    "SELECT count(*) FROM c"
)


def _names(db: Database) -> list[str]:
    with db.read() as conn:
        return list(conn.execute(select(projects_table.c.name)).scalars())


def test_reads_of_a_request_share_one_snapshot(db: Database, settings: Settings) -> None:
    other = Database(settings.resolved_database_url())  # another node, say
    with db.write() as conn:
        projects.create(conn, "acme/one", "one")
    try:
        with db.request_reads() as reads:
            assert _names(db) == ["one"]
            with other.write() as conn:
                projects.create(conn, "acme/two", "two")
            assert _names(db) == ["one"]  # same snapshot: the page stays consistent
            reads.close()
        assert _names(db) == ["one", "two"]  # the next request sees it
    finally:
        other.dispose()


def test_a_write_ends_the_snapshot_so_the_request_reads_it(db: Database) -> None:
    with db.request_reads() as reads:
        assert _names(db) == []
        with db.write() as conn:
            projects.create(conn, "acme/one", "one")
        assert _names(db) == ["one"]
        reads.close()


def test_a_page_checks_out_one_connection(db: Database, settings: Settings) -> None:
    """A list page reads the session's user, the project, the settings, the list and its
    counts: all in one transaction, one connection from the pool."""
    clients = ui_client(settings, db)
    ui: Ui = next(clients)
    try:
        owner = ui.user("owner")
        project = ui.project("acme/web", owner)
        ui.sign_in(owner)
        app_db: Database = ui.client.app.state.db  # type: ignore[attr-defined]
        checkouts: list[object] = []
        event.listen(app_db.engine, "checkout", lambda *a: checkouts.append(a))
        page = ui.client.get(f"/{project.path}/-/error_tracking")
        assert page.status_code == 200
        assert len(checkouts) == 1
    finally:
        clients.close()


def test_a_slow_read_is_cancelled_at_the_time_limit(db: Database, settings: Settings) -> None:
    limited = Database(settings.resolved_database_url(), query_timeout_ms=100)
    slow = SLOW_SQLITE if limited.is_sqlite else "SELECT pg_sleep(30)"
    try:
        with pytest.raises(QueryTimeout) as caught, limited.read() as conn:
            conn.execute(text(slow))
        assert caught.value.status_code == 503
        with limited.read() as conn:  # the connection is usable again, and fast reads pass
            assert conn.execute(text("SELECT 1")).scalar() == 1
        with limited.request_reads() as reads:
            with pytest.raises(QueryTimeout), limited.read() as conn:
                conn.execute(text(slow))
            reads.close()
    finally:
        limited.dispose()


def test_writes_are_not_bounded_by_the_read_limit(db: Database, settings: Settings) -> None:
    """The digest's batch write must never be cancelled half way by the web's limit."""
    limited = Database(settings.resolved_database_url(), query_timeout_ms=1)
    work = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) "
        "SELECT count(*) FROM c"
    )
    try:
        with limited.write() as conn:
            assert conn.execute(text(work)).scalar() == 300000
    finally:
        limited.dispose()
