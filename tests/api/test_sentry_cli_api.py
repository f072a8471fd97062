"""The /api/0 endpoints sentry-cli uses, called as sentry-cli calls them (its source:
``src/api/mod.rs``): Bearer tokens, organization = namespace, chunked uploads, legacy
release files. The real CLI drives them in tests/sourcemaps/test_sentry_cli_e2e.py."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.inprocess import Api, api_client
from tests.sourcemaps.bundles import MINIFIED, SOURCE_MAP, app_bundle
from tracebox.api.sentry_artifacts import MULTIPART_OVERHEAD_BYTES
from tracebox.config import Settings
from tracebox.models import AccessLevel, Project, User
from tracebox.store import Database, artifacts


def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


class Cli:
    """What sentry-cli sends: ``Authorization: Bearer <token>``."""

    def __init__(self, api: Api, token: str | None) -> None:
        self.api, self.token = api, token

    def __call__(self, method: str, path: str, **kw: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return self.api.client.request(method, "/api/0" + path, headers=headers, **kw)


@pytest.fixture
def owner(api: Api) -> User:
    return api.user("owner")


@pytest.fixture
def project(api: Api, owner: User) -> Project:
    return api.project("acme/web", owner)


@pytest.fixture
def cli(api: Api, owner: User, project: Project) -> Cli:
    return Cli(api, api.token(owner))


def upload_bundle(cli: Cli, data: bytes, *, gzipped: bool = True, **body: Any) -> dict[str, Any]:
    options = cli("GET", "/organizations/acme/chunk-upload/").json()
    field = "file_gzip" if gzipped else "file"
    payload = gzip.compress(data) if gzipped else data
    files = [(field, (sha1(data), payload, "application/octet-stream"))]
    assert cli("POST", options["url"].split("/api/0", 1)[1], files=files).status_code == 200
    request = {"checksum": sha1(data), "chunks": [sha1(data)], "projects": ["web"], **body}
    found: dict[str, Any] = cli(
        "POST", "/organizations/acme/artifactbundle/assemble/", json=request
    ).json()
    return found


def test_auth_info_names_the_tokens_user(api: Api, cli: Cli, owner: User) -> None:
    info = cli("GET", "/").json()
    assert info["user"]["email"] == owner.email
    assert "project:releases" in info["auth"]["scopes"]
    assert Cli(api, None)("GET", "/").json() == {"version": "0", "auth": None, "user": None}
    assert Cli(api, "tbpat-wrong")("GET", "/").status_code == 401


def test_organizations_are_namespaces(api: Api, cli: Cli, owner: User) -> None:
    api.project("acme/team/app", owner)
    assert [o["slug"] for o in cli("GET", "/organizations/").json()] == ["acme", "acme/team"]
    assert [p["slug"] for p in cli("GET", "/organizations/acme/projects/").json()] == ["web"]
    # sentry-cli sends a slash inside an organization as U+FFFD; %2F works too.
    for org in ("acme%EF%BF%BDteam", "acme%2Fteam"):
        assert [p["slug"] for p in cli("GET", f"/organizations/{org}/projects/").json()] == ["app"]
    assert cli("GET", "/organizations/nobody/projects/").status_code == 404


def test_release_lifecycle(cli: Cli) -> None:
    created = cli(
        "POST", "/organizations/acme/releases/", json={"version": "web@1", "projects": ["web"]}
    )
    assert created.status_code == 201, created.text
    assert created.json()["projects"] == [
        {"id": created.json()["projects"][0]["id"], "slug": "web", "name": "web"}
    ]
    again = cli(
        "POST", "/organizations/acme/releases/", json={"version": "web@1", "projects": ["web"]}
    )
    assert again.status_code == 201  # idempotent, as `releases new` in every CI run
    done = cli(
        "PUT",
        "/organizations/acme/releases/web@1/",
        json={"dateReleased": "2026-01-02T03:04:05.678Z"},
    )
    assert done.json()["dateReleased"] == "2026-01-02T03:04:05.678000Z"
    deploy = cli(
        "POST",
        "/organizations/acme/releases/web@1/deploys/",
        json={"environment": "production", "name": "d1"},
    )
    assert deploy.status_code == 201
    assert [
        d["environment"] for d in cli("GET", "/organizations/acme/releases/web@1/deploys/").json()
    ] == ["production"]
    listed = cli("GET", "/organizations/acme/releases/").json()
    assert [(r["version"], r["deployCount"]) for r in listed] == [("web@1", 1)]
    assert cli("GET", "/projects/acme/web/releases/").json()[0]["version"] == "web@1"
    assert cli("DELETE", "/organizations/acme/releases/web@1/").status_code == 204
    assert cli("GET", "/organizations/acme/releases/web@1/").status_code == 404


@pytest.mark.parametrize("version", ["", "a/b", "latest", ".", "x" * 201, "tab\there"])
def test_invalid_versions_are_refused(cli: Cli, version: str) -> None:
    r = cli("POST", "/organizations/acme/releases/", json={"version": version, "projects": ["web"]})
    assert r.status_code == 400
    assert "version" in r.json()["detail"]


def test_chunk_upload_options_as_sentry_cli_reads_them(api: Api, cli: Cli) -> None:
    options = cli("GET", "/organizations/acme/chunk-upload/").json()
    s = api.settings
    assert options["url"] == f"{s.external_url}/api/0/organizations/acme/chunk-upload/"
    assert (options["chunkSize"], options["chunksPerRequest"]) == (
        s.artifact_chunk_bytes,
        s.artifact_max_chunks_per_request,
    )
    assert options["maxFileSize"] == s.artifact_max_upload_bytes
    assert options["hashAlgorithm"] == "sha1" and "gzip" in options["compression"]
    assert "artifact_bundles_v2" in options["accept"]


@pytest.mark.parametrize("gzipped", [True, False])
def test_bundle_upload_and_assemble(cli: Cli, gzipped: bool) -> None:
    result = upload_bundle(cli, app_bundle(), gzipped=gzipped, version="web@2")
    assert result == {"state": "ok", "missingChunks": [], "detail": None}
    files = cli("GET", "/projects/acme/web/releases/web@2/files/").json()
    assert sorted(f["name"] for f in files) == ["~/static/app.min.js", "~/static/app.min.js.map"]
    assert {f["sha1"] for f in files} == {sha1(MINIFIED), sha1(SOURCE_MAP)}


def test_assemble_names_missing_chunks(cli: Cli) -> None:
    data = app_bundle()
    body = {"checksum": sha1(data), "chunks": [sha1(data)], "projects": ["web"]}
    found = cli("POST", "/organizations/acme/artifactbundle/assemble/", json=body).json()
    assert found["state"] == "not_found" and found["missingChunks"] == [sha1(data)]
    bad = cli(
        "POST", "/organizations/acme/artifactbundle/assemble/", json={**body, "chunks": ["nope"]}
    )
    assert bad.status_code == 400


def test_a_chunk_must_match_its_name(cli: Cli) -> None:
    files = [("file", ("0" * 40, b"some bytes", "application/octet-stream"))]
    r = cli("POST", "/organizations/acme/chunk-upload/", files=files)
    assert r.status_code == 400 and "does not match its SHA-1" in r.json()["detail"]


def test_chunk_size_limit_at_and_past(api: Api, cli: Cli) -> None:
    limit = api.settings.artifact_chunk_bytes
    at = b"a" * limit
    ok = cli(
        "POST",
        "/organizations/acme/chunk-upload/",
        files=[("file_gzip", (sha1(at), gzip.compress(at), "x"))],
    )
    assert ok.status_code == 200
    past = b"a" * (limit + 1)
    r = cli(
        "POST",
        "/organizations/acme/chunk-upload/",
        files=[("file_gzip", (sha1(past), gzip.compress(past), "x"))],
    )
    assert r.status_code == 413


def test_legacy_release_files(cli: Cli) -> None:
    cli("POST", "/organizations/acme/releases/", json={"version": "web@3", "projects": ["web"]})
    path = "/projects/acme/web/releases/web@3/files/"
    form = {"name": "~/static/app.min.js", "header": "Sourcemap:app.min.js.map"}
    created = cli("POST", path, data=form, files={"file": ("app.min.js", MINIFIED)})
    assert created.status_code == 201, created.text
    assert created.json()["headers"] == {"Sourcemap": "app.min.js.map"}
    again = cli("POST", path, data=form, files={"file": ("app.min.js", MINIFIED)})
    assert again.status_code == 409
    cli(
        "POST",
        path,
        data={"name": "~/static/app.min.js.map"},
        files={"file": ("app.min.js.map", SOURCE_MAP)},
    )
    by_org = cli("GET", "/organizations/acme/releases/web@3/files/").json()
    assert len(by_org) == 2
    file_id = created.json()["id"]
    assert cli("GET", f"{path}{file_id}/").json()["sha1"] == sha1(MINIFIED)
    assert (
        cli("GET", f"{path}?checksum={sha1(SOURCE_MAP)}").json()[0]["name"]
        == "~/static/app.min.js.map"
    )
    assert cli("DELETE", f"{path}{file_id}/").status_code == 204
    assert cli("GET", f"{path}{file_id}/").status_code == 404


def test_roles_and_scopes(api: Api, project: Project, owner: User) -> None:
    reporter, developer, stranger = api.user("rep"), api.user("dev"), api.user("stranger")
    api.member(project, reporter, AccessLevel.REPORTER)
    api.member(project, developer, AccessLevel.DEVELOPER)
    new = {"version": "web@4", "projects": ["web"]}
    assert (
        Cli(api, api.token(reporter))("POST", "/organizations/acme/releases/", json=new).status_code
        == 403
    )
    assert (
        Cli(api, api.token(owner, "read_api"))(
            "POST", "/organizations/acme/releases/", json=new
        ).status_code
        == 403
    )
    assert (
        Cli(api, api.token(stranger))("POST", "/organizations/acme/releases/", json=new).status_code
        == 404
    )
    dev = Cli(api, api.token(developer))
    assert dev("POST", "/organizations/acme/releases/", json=new).status_code == 201
    assert upload_bundle(dev, app_bundle(), version="web@4")["state"] == "ok"
    assert dev("DELETE", "/organizations/acme/releases/web@4/").status_code == 403  # Maintainer+
    assert (
        Cli(api, api.token(reporter))("GET", "/organizations/acme/releases/web@4/").status_code
        == 200
    )


def test_legacy_chunked_release_files(cli: Cli) -> None:
    """sentry-cli before artifact bundles: chunks, then ``releases/{version}/assemble/``."""
    cli("POST", "/organizations/acme/releases/", json={"version": "web@5", "projects": ["web"]})
    data = app_bundle(debug_id=None)
    files = [("file_gzip", (sha1(data), gzip.compress(data), "application/octet-stream"))]
    assert cli("POST", "/organizations/acme/chunk-upload/", files=files).status_code == 200
    body = {"checksum": sha1(data), "chunks": [sha1(data)]}
    found = cli("POST", "/organizations/acme/releases/web@5/assemble/", json=body).json()
    assert found["state"] == "ok", found
    names = sorted(f["name"] for f in cli("GET", "/projects/acme/web/releases/web@5/files/").json())
    assert names == ["~/static/app.min.js", "~/static/app.min.js.map"]
    missing = cli("POST", "/organizations/acme/releases/nope/assemble/", json=body)
    assert missing.status_code == 404


@pytest.fixture
def tight(settings: Settings, db: Database) -> Iterator[Api]:
    """The app with small upload limits: 2 chunks of 64 bytes per request, 300 bytes."""
    small = dataclasses.replace(
        settings,
        artifact_chunk_bytes=64,
        artifact_max_chunks_per_request=2,
        artifact_max_request_bytes=300,
    )
    yield from api_client(small, db)


def _chunks(n: int) -> list[tuple[str, tuple[str, bytes, str]]]:
    parts = [bytes([65 + i]) * 64 for i in range(n)]
    return [("file", (sha1(p), p, "application/octet-stream")) for p in parts]


def test_chunks_per_request_at_and_past_the_limit(tight: Api) -> None:
    owner = tight.user("owner")
    tight.project("acme/web", owner)
    cli = Cli(tight, tight.token(owner))
    assert cli("POST", "/organizations/acme/chunk-upload/", files=_chunks(2)).status_code == 200
    past = cli("POST", "/organizations/acme/chunk-upload/", files=_chunks(3))
    assert past.status_code == 400 and set(past.json()) == {"detail"}


def test_request_size_at_and_past_the_limit(tight: Api) -> None:
    owner = tight.user("owner")
    tight.project("acme/web", owner)
    cli = Cli(tight, tight.token(owner))
    limit = 300 + MULTIPART_OVERHEAD_BYTES
    headers = {
        "Authorization": f"Bearer {cli.token}",
        "Content-Type": "multipart/form-data; boundary=x",
    }
    url = "/api/0/organizations/acme/chunk-upload/"
    body = b"--x--\r\n".ljust(limit, b" ")
    at = tight.client.post(url, content=body, headers=headers)
    assert at.status_code == 200, at.text
    past = tight.client.post(url, content=body + b" ", headers=headers)
    assert past.status_code == 413


def test_chunks_never_assembled_expire(api: Api, cli: Cli) -> None:
    ttl = api.settings.artifact_chunk_ttl_hours * 3600
    with api.db.write() as conn:
        old = artifacts.save_chunk(conn, b"old chunk", now=time.time() - ttl - 1)
        kept = artifacts.save_chunk(conn, b"recent chunk", now=time.time() - ttl + 60)
    cli("POST", "/organizations/acme/chunk-upload/", files=_chunks(1))
    with api.db.read() as conn:
        assert artifacts.missing_chunks(conn, [old, kept]) == [old]
