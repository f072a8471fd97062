"""Projects' privacy settings (issue 11): one row per project that changed the defaults."""

from __future__ import annotations

import time
from collections.abc import Iterable

import orjson
from sqlalchemy import Connection, Row, select

from tracebox.privacy import DEFAULT_SETTINGS, IpMode, PrivacySettings
from tracebox.store import projects
from tracebox.store.tables import privacy_settings as t


def get(conn: Connection, project_id: int) -> PrivacySettings:
    """The project's settings; the defaults when it never changed them."""
    row = conn.execute(select(t).where(t.c.project_id == project_id)).first()
    return _settings(row) if row else DEFAULT_SETTINGS


def get_many(conn: Connection, project_ids: Iterable[int]) -> dict[int, PrivacySettings]:
    """Settings of several projects at once (the digest, per batch); every id is in the
    answer, with the defaults where no row exists."""
    ids = sorted(set(project_ids))
    found = {project_id: DEFAULT_SETTINGS for project_id in ids}
    for start in range(0, len(ids), 400):
        chunk = ids[start : start + 400]
        for row in conn.execute(select(t).where(t.c.project_id.in_(chunk))):
            found[row.project_id] = _settings(row)
    return found


def put(conn: Connection, project_id: int, settings: PrivacySettings) -> None:
    """Save the settings, and tell every digest and ingest node to reload its project
    configuration (shared decision 2)."""
    values = {
        "scrub_data": settings.scrub_data,
        "sensitive_fields": orjson.dumps(list(settings.sensitive_fields)).decode(),
        "safe_fields": orjson.dumps(list(settings.safe_fields)).decode(),
        "ip_mode": settings.ip_mode.value,
        "drop_user_ip": settings.drop_user_ip,
        "updated_at": time.time(),
    }
    updated = conn.execute(t.update().where(t.c.project_id == project_id).values(**values))
    if updated.rowcount == 0:
        conn.execute(t.insert().values(project_id=project_id, **values))
    projects.bump_config(conn, project_id)


def _settings(row: Row[tuple[object, ...]]) -> PrivacySettings:
    m = row._mapping
    return PrivacySettings(
        scrub_data=bool(m["scrub_data"]),
        sensitive_fields=tuple(_names(m["sensitive_fields"])),
        safe_fields=tuple(_names(m["safe_fields"])),
        ip_mode=IpMode(m["ip_mode"]) if m["ip_mode"] in set(IpMode) else IpMode.STORE,
        drop_user_ip=bool(m["drop_user_ip"]),
    )


def _names(text: object) -> list[str]:
    try:
        found = orjson.loads(text) if isinstance(text, str) else []
    except orjson.JSONDecodeError:
        return []
    return [n for n in found if isinstance(n, str)] if isinstance(found, list) else []
