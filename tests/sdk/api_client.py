"""A small client for the error tracking endpoints of the REST API (``/api/v4``).

Only what the SDK matrix reads: errors, one error, its events, release health. It
authenticates with a personal access token (``PRIVATE-TOKEN``) and raises on any
non-2xx answer, so an API failure reads as such and never as "no data yet".
"""

from __future__ import annotations

from typing import Any

import httpx

PER_PAGE = 100  # the API's maximum; every list the matrix reads is far shorter


class ErrorTrackingClient:
    def __init__(self, base_url: str, token: str) -> None:
        self._http = httpx.Client(
            base_url=f"{base_url}/api/v4", headers={"PRIVATE-TOKEN": token}, timeout=10
        )

    def close(self) -> None:
        self._http.close()

    def _get(self, path: str, **params: Any) -> Any:
        response = self._http.get(path, params=params)
        response.raise_for_status()
        return response.json()

    def errors(self, project_id: int) -> list[dict[str, Any]]:
        """Every error of the project, whatever its status."""
        return list(
            self._get(
                f"/projects/{project_id}/error_tracking/errors", status="all", per_page=PER_PAGE
            )
        )

    def error(self, project_id: int, error_id: int) -> dict[str, Any]:
        return dict(self._get(f"/projects/{project_id}/error_tracking/errors/{error_id}"))

    def events(self, project_id: int, error_id: int) -> list[dict[str, Any]]:
        path = f"/projects/{project_id}/error_tracking/errors/{error_id}/events"
        return list(self._get(path, per_page=PER_PAGE))

    def latest_event(self, project_id: int, error_id: int) -> dict[str, Any]:
        path = f"/projects/{project_id}/error_tracking/errors/{error_id}/events/latest"
        return dict(self._get(path))

    def releases(self, project_id: int) -> list[dict[str, Any]]:
        """Release health per release and environment."""
        path = f"/projects/{project_id}/error_tracking/releases"
        return list(self._get(path, per_page=PER_PAGE))
