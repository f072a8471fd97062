"""The web UI: server-rendered HTML (Jinja2, autoescaped) enhanced by a vendored htmx.

``ui_routes(...)`` builds the UI's routes; ``app.py`` places them after ingestion and
the API. Project pages live under ``/<project path>/-/...`` as GitLab's do.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from tracebox.config import Settings
from tracebox.store import Database
from tracebox.tracking import ExternalBackend
from tracebox.ui import (
    firstrun,
    render,
    routes_admin,
    routes_alerts,
    routes_artifacts,
    routes_auth,
    routes_details,
    routes_errors,
    routes_members,
    routes_my_errors,
    routes_privacy,
    routes_projects,
    routes_sdkdata,
    routes_settings,
    routes_storage,
    routes_tokens,
    routes_triage,
)
from tracebox.ui.sessions import Signer, instance_secret
from tracebox.ui.throttle import SigninThrottle
from tracebox.ui.web import UiContext, endpoint, exception_handlers

__all__ = ["UiContext", "exception_handlers", "make_context", "ui_routes"]

P = "/{project:path}/-"  # a project's full path, then GitLab's "/-/" delimiter
GET, POST = ["GET"], ["POST"]


def make_context(
    settings: Settings,
    db: Database,
    *,
    on_key_deleted: Callable[[str], None],
    external: ExternalBackend | None = None,
) -> UiContext:
    static = render.load_static()
    return UiContext(
        settings=settings,
        db=db,
        env=render.make_environment(static),
        static=static,
        signer=Signer(instance_secret(settings)),
        throttle=SigninThrottle(
            max_per_user=settings.signin_max_failures,
            max_per_address=settings.signin_max_failures_per_ip,
            window_seconds=settings.signin_lockout_seconds,
        ),
        on_key_deleted=on_key_deleted,
        external=external or ExternalBackend.from_settings(settings),
    )


def ui_routes(ctx: UiContext) -> list[BaseRoute]:
    def page(path: str, handler: object, methods: list[str] = GET, **kw: bool) -> Route:
        return Route(path, endpoint(ctx, handler, **kw), methods=methods)  # type: ignore[arg-type]

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        return render.static_response(ctx.static, name, request.query_params.get("v"))

    tokens = "/-/user_settings/personal_access_tokens"
    return [
        Route("/-/static/{name}", static, methods=GET),
        page("/", routes_auth.home, public=True),
        page("/users/sign_in", routes_auth.sign_in_form, public=True),
        page("/users/sign_in", routes_auth.sign_in, POST, public=True),
        page("/users/sign_out", routes_auth.sign_out, POST, public=True),
        page("/projects", routes_projects.index),
        page("/dashboard/errors", routes_my_errors.my_errors),
        page("/projects/new", routes_projects.new_form),
        page("/projects/new", routes_projects.create, POST),
        page(tokens, routes_tokens.index),
        page(tokens, routes_tokens.create, POST),
        page(tokens + "/{token_id:int}/revoke", routes_tokens.revoke, POST),
        page("/admin/users", routes_admin.index),
        page("/admin/users/new", routes_admin.new_form),
        page("/admin/users/new", routes_admin.create, POST),
        page("/admin/users/{user_id:int}/block", routes_admin.block, POST),
        page("/admin/users/{user_id:int}/unblock", routes_admin.unblock, POST),
        page("/admin/storage", routes_storage.admin_storage),
        page("/admin/audit_events", routes_storage.admin_audit),
        *_project_routes(page),
    ]


def _project_routes(page: Callable[..., Route]) -> list[Route]:
    et = P + "/error_tracking"
    comment = et + "/{error_id:int}/comments/{comment_id:int}"
    monitor = P + "/settings/monitor"
    members = P + "/project_members"
    return [
        page(et, routes_errors.error_list),
        page(et + "/releases", routes_details.releases),
        page(et + "/artifacts", routes_artifacts.index),
        page(et + "/artifacts/delete", routes_artifacts.delete_all, POST),
        page(et + "/artifacts/{file_id:int}/delete", routes_artifacts.delete_file, POST),
        page(et + "/projects.json", routes_settings.projects_json),
        page(et + "/test_event", firstrun.send_test_event, POST),
        page(et + "/{error_id:int}", routes_details.error_details),
        page(et + "/{error_id:int}/status", routes_errors.change_status, POST),
        page(et + "/{error_id:int}/delete", routes_storage.delete_error, POST),
        page(P + "/usage", routes_storage.usage),
        page(P + "/audit_events", routes_storage.project_audit),
        page(P + "/settings/storage", routes_storage.storage_settings),
        page(P + "/settings/storage/retention", routes_storage.save_retention, POST),
        page(P + "/settings/storage/quotas", routes_storage.save_quotas, POST),
        page(P + "/settings/storage/user_deletions", routes_storage.delete_user, POST),
        page(P + "/settings/storage/erase", routes_storage.erase_data, POST),
        page(P + "/logs", routes_sdkdata.logs_page),
        page(P + "/user_feedback", routes_sdkdata.feedback_page),
        page(P + "/attachments/{attachment_id:int}", routes_sdkdata.download_attachment),
        page(et + "/{error_id:int}/assign", routes_triage.assign, POST),
        page(et + "/{error_id:int}/review", routes_triage.review, POST),
        page(et + "/{error_id:int}/issue", routes_triage.link_issue, POST),
        page(et + "/{error_id:int}/comments", routes_triage.add_comment, POST),
        page(et + "/{error_id:int}/comments/{comment_id:int}", routes_triage.edit_comment, POST),
        page(comment + "/delete", routes_triage.delete_comment, POST),
        page(et + "/bulk", routes_triage.bulk, POST),
        page(et + "/{error_id:int}/unmerge", routes_triage.unmerge, POST),
        page(monitor, routes_settings.monitor),
        page(monitor, routes_settings.save_monitor, POST),
        page(monitor + "/client_keys", routes_settings.create_key, POST),
        page(monitor + "/client_keys/{key_id:int}/revoke", routes_settings.revoke_key, POST),
        page(P + "/settings/privacy", routes_privacy.privacy_form),
        page(P + "/settings/privacy", routes_privacy.save_privacy, POST),
        page(P + "/settings/general", routes_projects.general_form),
        page(P + "/settings/general", routes_projects.general_save, POST),
        page(members, routes_members.index),
        page(members, routes_members.add, POST),
        page(members + "/{user_id:int}", routes_members.update, POST),
        page(members + "/{user_id:int}/remove", routes_members.remove, POST),
        *routes_alerts.routes(page, P),
        # GitLab's "View in Sentry" link: /{organization}/{project}/issues/{id}
        page(
            "/{project:path}/issues/{error_id:int}", routes_details.sentry_issue_link, public=True
        ),
        page("/{project:path}", routes_projects.project_home),
    ]
