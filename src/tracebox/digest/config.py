"""Project configuration the digest needs, read once per batch through one cache.

Each batch reads ``projects.config_version`` of the projects it holds (one query) and
reloads a project's configuration only when that moved (``store.projects.bump_config``
is called by whoever changes a setting the digest reads), so every node sees a change
from its next batch on. A project missing from the answer was deleted: its records are
set aside.

A feature whose digest stage needs a setting (scrubbing rules, retention, artifacts,
alert rules...) adds a field to ``ProjectConfig`` and fills it in ``_load``.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import Connection

from tracebox.digest.prepare import ProjectConfig as ProjectConfig
from tracebox.store import dictionaries, projects
from tracebox.store import privacy as privacy_store


class ConfigCache:
    """Per digest process; not thread-safe."""

    def __init__(self) -> None:
        self._configs: dict[int, ProjectConfig] = {}

    def load(self, conn: Connection, project_ids: Collection[int]) -> dict[int, ProjectConfig]:
        """The configuration of each project of ``project_ids`` that still exists."""
        versions = projects.config_versions(conn, project_ids)
        stale = [
            project_id
            for project_id, version in versions.items()
            if (cached := self._configs.get(project_id)) is None or cached.version != version
        ]
        if stale:
            self._configs.update(_load(conn, {p: versions[p] for p in stale}))
        for gone in set(project_ids) - versions.keys():
            self._configs.pop(gone, None)
        return {project_id: self._configs[project_id] for project_id in versions}


def _load(conn: Connection, versions: dict[int, int]) -> dict[int, ProjectConfig]:
    """Build the configurations of these projects (at these versions)."""
    trained = dictionaries.current(conn, versions)
    privacy = privacy_store.get_many(conn, versions)
    return {
        pid: ProjectConfig(
            project_id=pid, version=v, dictionary=trained.get(pid), privacy=privacy[pid]
        )
        for pid, v in versions.items()
    }
