"""Client keys (DSN credentials) of a project."""

from __future__ import annotations

import secrets
import time

from sqlalchemy import Connection, Row, select

from tracebox.models import ClientKey, IngestKey
from tracebox.store.tables import client_keys, error_tracking_settings


def _key(row: Row[tuple[object, ...]]) -> ClientKey:
    m = row._mapping
    return ClientKey(
        id=m["id"],
        project_id=m["project_id"],
        public_key=m["public_key"],
        secret_key=m["secret_key"],
        active=m["active"],
        created_at=m["created_at"],
    )


def create(conn: Connection, project_id: int) -> ClientKey:
    """A new active key: 32 lowercase hex public and secret keys (Relay's ProjectKey rule)."""
    now = time.time()
    public_key, secret_key = secrets.token_hex(16), secrets.token_hex(16)
    result = conn.execute(
        client_keys.insert().values(
            project_id=project_id,
            public_key=public_key,
            secret_key=secret_key,
            active=True,
            created_at=now,
        )
    )
    key_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
    assert key_id is not None
    return ClientKey(int(key_id), project_id, public_key, secret_key, True, now)


def list_for_project(
    conn: Connection, project_id: int, *, after_id: int = 0, limit: int = 100
) -> list[ClientKey]:
    query = (
        select(client_keys)
        .where(client_keys.c.project_id == project_id, client_keys.c.id > after_id)
        .order_by(client_keys.c.id)
        .limit(limit)
    )
    return [_key(r) for r in conn.execute(query)]


def count_for_project(conn: Connection, project_id: int) -> int:
    from sqlalchemy import func

    query = select(func.count()).where(client_keys.c.project_id == project_id)
    return int(conn.execute(query).scalar_one())


def get(conn: Connection, project_id: int, key_id: int) -> ClientKey | None:
    query = select(client_keys).where(
        client_keys.c.project_id == project_id, client_keys.c.id == key_id
    )
    row = conn.execute(query).first()
    return _key(row) if row else None


def delete(conn: Connection, project_id: int, key_id: int) -> ClientKey | None:
    key = get(conn, project_id, key_id)
    if key is not None:
        conn.execute(client_keys.delete().where(client_keys.c.id == key_id))
    return key


def find_for_ingest(conn: Connection, public_key: str) -> IngestKey | None:
    """The key and whether its project accepts events, in one query (ingest hot path)."""
    k, s = client_keys, error_tracking_settings
    query = (
        select(
            k.c.id,
            k.c.project_id,
            k.c.public_key,
            k.c.secret_key,
            k.c.active,
            s.c.active.label("tracking_active"),
            s.c.integrated,
        )
        .select_from(k.outerjoin(s, s.c.project_id == k.c.project_id))
        .where(k.c.public_key == public_key)
    )
    row = conn.execute(query).first()
    if row is None:
        return None
    m = row._mapping
    return IngestKey(
        key_id=m["id"],
        project_id=m["project_id"],
        public_key=m["public_key"],
        secret_key=m["secret_key"],
        key_active=bool(m["active"]),
        tracking_active=bool(m["tracking_active"]) and bool(m["integrated"]),
    )


def list_page(conn: Connection, project_id: int, *, offset: int, limit: int) -> list[ClientKey]:
    """One page of a project's keys, oldest first (GitLab's page/per_page)."""
    query = (
        select(client_keys)
        .where(client_keys.c.project_id == project_id)
        .order_by(client_keys.c.id)
        .offset(offset)
        .limit(limit)
    )
    return [_key(r) for r in conn.execute(query)]


def has_active(conn: Connection, project_id: int) -> bool:
    query = select(client_keys.c.id).where(
        client_keys.c.project_id == project_id, client_keys.c.active.is_(True)
    )
    return conn.execute(query.limit(1)).first() is not None
