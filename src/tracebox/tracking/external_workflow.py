"""The triage half of ``ExternalSource``: status with Sentry's own conditions, assignee
and review go to the linked Sentry server (``PUT /api/0/issues/{id}/``, the fields
Sentry's web UI sends); its activity, environments and releases are read from it.
Comments and "all matching" bulk changes stay on Sentry's own UI."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from tracebox.errors import BadRequest
from tracebox.models import ErrorStatus
from tracebox.search import SearchQuery
from tracebox.sentry_client import SentryError
from tracebox.store.projects import ExternalLink
from tracebox.tracking import sentry_mapping as mapping
from tracebox.tracking.external_backend import ExternalBackend
from tracebox.tracking.models import (
    KEEP,
    Activity,
    ActivityKind,
    BulkResult,
    ErrorChange,
    ErrorSummary,
    Resolution,
    StatusChange,
    UserRef,
)

if TYPE_CHECKING:  # the client and httpx load on the first request
    from tracebox.sentry_client import SentryClient, SentryResponse

NOT_HERE = "{what} of an error linked to a Sentry server are made in Sentry itself"
Json = dict[str, Any]


class ExternalWorkflow:
    _backend: ExternalBackend
    _project_id: int
    _link: ExternalLink

    def _sentry(self) -> SentryClient:
        raise NotImplementedError  # ExternalSource's

    def _get(self, path: str, params: dict[str, str] | None = None) -> SentryResponse:
        raise NotImplementedError  # ExternalSource's

    def _issue(self, error_id: int, *, fresh: bool = False) -> Json:
        raise NotImplementedError  # ExternalSource's

    def _project_path(self) -> str:
        raise NotImplementedError  # ExternalSource's

    def update(self, error_id: int, change: ErrorChange, actor: UserRef | None) -> ErrorSummary:
        issue = self._issue(error_id, fresh=True)  # the project check, as GitLab
        body = sentry_change(change)
        answer = self._sentry().put(f"issues/{error_id}/", body).body
        self._backend.cache.forget(self._project_id)
        if isinstance(answer, dict):
            issue.update({k: v for k, v in answer.items() if k in ("status", "statusDetails")})
        return mapping.summary(issue, self._project_id)

    def bulk_update(
        self,
        *,
        ids: builtins.list[int] | None,
        query: SearchQuery | None,
        change: ErrorChange,
        actor: UserRef | None,
        viewer: int | None,
        max_errors: int,
        batch_size: int,
    ) -> BulkResult:
        if ids is None:
            raise BadRequest(NOT_HERE.format(what="Changes to all errors matching a query"))
        if len(ids) > max_errors:
            raise BadRequest(f"ids: at most {max_errors} errors at once")
        for error_id in ids:
            self.update(error_id, change, actor)
        return BulkResult(changed=len(ids), batches=len(ids))

    def activity(self, error_id: int) -> builtins.list[Activity]:
        raw = self._issue(error_id).get("activity")
        found = (
            [_activity(a, error_id) for a in raw if isinstance(a, dict)]
            if isinstance(raw, list)
            else []
        )
        return sorted((a for a in found if a is not None), key=lambda a: a.created_at)

    def add_comment(self, error_id: int, actor: UserRef, text: str) -> Activity:
        raise BadRequest(NOT_HERE.format(what="Comments"))

    def edit_comment(self, error_id: int, comment_id: int, actor: UserRef, text: str) -> Activity:
        raise BadRequest(NOT_HERE.format(what="Comments"))

    def delete_comment(self, error_id: int, comment_id: int) -> None:
        raise BadRequest(NOT_HERE.format(what="Comments"))

    def merge(
        self,
        error_ids: builtins.list[int],
        actor: UserRef | None,
        *,
        max_errors: int,
        batch_size: int,
    ) -> int:
        """Sentry's bulk PUT with ``merge: 1``: it answers the merge's parent."""
        if len(error_ids) > max_errors:
            raise BadRequest(f"ids: at most {max_errors} errors at once")
        for error_id in error_ids:
            self._issue(error_id, fresh=True)  # each must be of the linked project
        query = "&".join(f"id={i}" for i in sorted(set(error_ids)))
        answer = self._sentry().put(
            f"projects/{self._project_path()}/issues/?{query}", {"merge": 1}
        )
        self._backend.cache.forget(self._project_id)
        merge = answer.body.get("merge") if isinstance(answer.body, dict) else None
        parent = merge.get("parent") if isinstance(merge, dict) else None
        return mapping.issue_id(parent) if parent is not None else min(error_ids)

    def unmerge(self, error_id: int, fingerprint: str, actor: UserRef | None) -> int:
        raise BadRequest(NOT_HERE.format(what="Unmerges"))

    def environments(self) -> builtins.list[str]:
        """Choices for a selector: none when the server does not list them."""
        body = self._optional(f"projects/{self._project_path()}/environments/")
        return sorted(str(e["name"]) for e in _list(body) if isinstance(e.get("name"), str))

    def release_names(self) -> builtins.list[str]:
        body = self._optional(f"projects/{self._project_path()}/releases/")
        return [str(r["version"]) for r in _list(body) if isinstance(r.get("version"), str)]

    def _optional(self, path: str) -> Any:
        try:
            return self._get(path).body
        except SentryError:
            return None


def sentry_change(change: ErrorChange) -> Json:
    """An ``ErrorChange`` as the body of Sentry's issue PUT."""
    body: Json = {}
    if change.status is not None:
        body.update(_status(change.status))
    if change.assignee is not KEEP:
        body["assignedTo"] = change.assignee.username if change.assignee else ""
    if change.reviewed:
        body["inbox"] = False
    return body


def _status(s: StatusChange) -> Json:
    if s.status is ErrorStatus.RESOLVED and s.resolution is Resolution.IN_RELEASE:
        return {"status": "resolved", "statusDetails": {"inRelease": s.release}}
    if s.status is ErrorStatus.RESOLVED and s.resolution is Resolution.IN_NEXT_RELEASE:
        return {"status": "resolved", "statusDetails": {"inNextRelease": True}}
    if s.status is ErrorStatus.IGNORED:
        details = {
            k: v
            for k, v in (
                ("ignoreDuration", s.ignore_minutes),
                ("ignoreCount", s.ignore_count),
                ("ignoreUserCount", s.ignore_user_count),
            )
            if v is not None
        }
        return {"status": "ignored", "statusDetails": details}
    return {"status": s.status.value, "statusDetails": {}}


SENTRY_KINDS = {k.value: k for k in ActivityKind}


def _activity(a: Json, error_id: int) -> Activity | None:
    kind = SENTRY_KINDS.get(str(a.get("type")))
    if kind is None:
        return None
    user = a.get("user") if isinstance(a.get("user"), dict) else None
    ref = None
    if user is not None:
        name = str(user.get("name") or user.get("username") or user.get("email") or "")
        ref = UserRef(
            int(user["id"]) if str(user.get("id", "")).isdigit() else 0,
            str(user.get("username") or name),
            name,
            str(user.get("email") or ""),
        )
    data = a.get("data") if isinstance(a.get("data"), dict) else {}
    assert isinstance(data, dict)
    text = data.get("text") if kind is ActivityKind.NOTE else None
    return Activity(
        id=int(a["id"]) if str(a.get("id", "")).isdigit() else 0,
        error_id=error_id,
        kind=kind,
        user=ref,
        created_at=mapping.timestamp(a.get("dateCreated")),
        data=data,
        text=text if isinstance(text, str) else None,
    )


def _list(body: Any) -> list[Json]:
    return [x for x in body if isinstance(x, dict)] if isinstance(body, list) else []
