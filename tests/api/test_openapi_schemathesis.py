"""schemathesis against /api/v4/openapi.json, authenticated as an admin: no 5xx, and every
response matches the documented status codes, content type and schema.

Half of the generated path parameters are swapped for ids that exist (the project, its
error, event, key and member), so real objects, not only 404s, meet the schema checks.
The example count is bounded (MAX_EXAMPLES per operation) to keep ``make test`` quick.
"""

from __future__ import annotations

import zlib
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import BaseSchema, Case
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.inprocess import Api, exception_event
from tracebox.accounts.tokens import digest
from tracebox.app import create_app
from tracebox.store import client_keys, tokens

MAX_EXAMPLES = 25
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture
def admin_token(api: Api) -> str:
    return api.token(api.user("root", admin=True))


def _token_id(api: Api, secret: str) -> int:
    with api.db.read() as conn:
        found = tokens.find_by_digest(conn, digest(secret))
    assert found is not None
    return found[0].id


@pytest.fixture
def api_schema(api: Api, admin_token: str) -> BaseSchema:
    owner = api.user("owner")
    project = api.project("acme/web", owner)
    api.events(project, exception_event(event_id="b" * 32), exception_event("KeyError", "k"))
    with api.db.write() as conn:
        key = client_keys.create(conn, project.id)
    errors = api.call("GET", f"/api/v4/projects/{project.id}/error_tracking/errors", admin_token)
    real = {
        "id": str(project.id),
        "error_id": next(e["id"] for e in errors.json() if e["type"] == "ValueError"),
        "event_id": "b" * 32,
        "key_id": key.id,
        "user_id": owner.id,
        "token_id": _token_id(api, api.token(owner)),
    }
    own_token = _token_id(api, admin_token)
    # A second app on the same database: schemathesis runs its lifespan itself.
    schema = schemathesis.openapi.from_asgi("/api/v4/openapi.json", create_app(api.settings))

    @schema.hook("map_path_parameters")
    def use_real_ids(_ctx: Any, params: dict[str, Any] | None) -> dict[str, Any] | None:
        if not params:
            return params
        if zlib.crc32(repr(sorted(params.items())).encode()) % 2 == 0:
            params = {k: real.get(k, v) for k, v in params.items()}
        if params.get("token_id") == own_token:  # keep the token this test runs with
            params["token_id"] = real["token_id"]
        return params

    return schema


def test_openapi_conformance(api_schema: BaseSchema, admin_token: str) -> None:
    # schemathesis' pytest plugin (from_fixture) does not run on pytest 9, so the
    # operations are driven through its Python API, one Hypothesis run each.
    failures = []
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 20
    # Destructive operations last, so reads meet the seeded project as it was.
    operations.sort(key=lambda op: op.method == "delete" or op.path == "/projects/{id}")
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def run(case: Case) -> None:
            case.call_and_validate(headers={"PRIVATE-TOKEN": admin_token}, checks=CHECKS)

        try:
            run()
        except Exception as e:  # one report for every failing operation
            failures.append(f"{operation.method.upper()} {operation.path}: {e}")
    assert not failures, "\n\n".join(failures)
