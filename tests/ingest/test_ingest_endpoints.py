"""Ingestion over HTTP: endpoints, DSN forms, encodings, auth, item types."""

from __future__ import annotations

import base64
import gzip
import time
import zlib

import brotli
import orjson
import pytest
import sqlalchemy as sa
import zstandard

from tests.ingest.conftest import Ingest
from tracebox.ingest.routes import IngestApp
from tracebox.store import client_keys, projects
from tracebox.store.tables import client_keys as client_keys_table
from tracebox.store.tables import error_tracking_settings

EVENT = {
    "event_id": "a" * 32,
    "platform": "python",
    "level": "error",
    "exception": {
        "values": [
            {
                "type": "ValueError",
                "value": "invalid quantity: 7",
                "stacktrace": {
                    "frames": [
                        {
                            "filename": "app/orders.py",
                            "function": "process",
                            "module": "app.orders",
                            "lineno": 10,
                            "in_app": True,
                        },
                    ]
                },
            }
        ]
    },
    "user": {"id": "42", "ip_address": "{{auto}}"},
}


def event(n: int) -> dict[str, object]:
    return {**EVENT, "event_id": f"{n:032x}"}


def envelope(
    *items: tuple[dict[str, object], bytes], headers: dict[str, object] | None = None
) -> bytes:
    lines = [orjson.dumps(headers or {})]
    for item_headers, payload in items:
        lines += [orjson.dumps(item_headers), payload]
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize(
    "path",
    [
        "/api/{id}/store/",
        "/api/{id}/store",
        "/api/v4/error_tracking/collector/api/{id}/store/",
        "/api/v4/error_tracking/collector/{id}/store",
    ],
)
def test_store_paths_for_both_dsn_forms(ingest: Ingest, path: str) -> None:
    r = ingest.client.post(
        path.format(id=ingest.project_id), content=orjson.dumps(EVENT), headers=ingest.auth()
    )
    assert r.status_code == 200, r.text
    assert r.json() == {"id": "a" * 32}
    assert r.headers["access-control-allow-origin"] == "*"


ENCODINGS = {
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstandard.ZstdCompressor().compress,
    "identity": lambda b: b,
    "": lambda b: b,  # sentry-ruby sends an empty Content-Encoding
}


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_content_encodings(ingest: Ingest, encoding: str) -> None:
    body = ENCODINGS[encoding](envelope(({"type": "event"}, orjson.dumps(EVENT))))
    headers = {**ingest.auth(), "Content-Encoding": encoding}
    r = ingest.client.post(ingest.url("envelope"), content=body, headers=headers)
    assert r.status_code == 200, r.text
    assert ingest.counts()["events"] == 1


def test_store_legacy_base64_zlib_body(ingest: Ingest) -> None:
    body = base64.b64encode(zlib.compress(orjson.dumps(EVENT)))
    r = ingest.client.post(ingest.url("store"), content=body, headers=ingest.auth())
    assert r.status_code == 200, r.text
    assert ingest.counts()["events"] == 1


@pytest.mark.parametrize("style", ["x-sentry-auth", "authorization", "query", "envelope-dsn"])
def test_auth_styles(ingest: Ingest, style: str) -> None:
    key = ingest.key.public_key
    headers: dict[str, str] = {}
    url = ingest.url("envelope")
    env_headers: dict[str, object] = {"event_id": "b" * 32}
    if style == "x-sentry-auth":
        headers = ingest.auth()
    elif style == "authorization":
        headers = {"Authorization": f"Sentry sentry_key={key},sentry_version=7"}
    elif style == "query":
        url += f"?sentry_key={key}&sentry_version=7&sentry_client=test%2F1"
    else:
        env_headers["dsn"] = f"http://{key}@localhost:8000/{ingest.project_id}"
    body = envelope(({"type": "event"}, orjson.dumps(EVENT)), headers=env_headers)
    r = ingest.client.post(url, content=body, headers=headers)
    assert r.status_code == 200, r.text
    assert r.json() == {"id": "b" * 32}  # the envelope header's event_id wins


def test_agreeing_duplicate_credentials_are_fine(ingest: Ingest) -> None:
    key = ingest.key.public_key
    url = ingest.url("envelope") + f"?sentry_key={key}"
    dsn = f"http://{key}@localhost:8000/{ingest.project_id}"
    body = envelope(({"type": "event"}, orjson.dumps(EVENT)), headers={"dsn": dsn})
    r = ingest.client.post(url, content=body, headers=ingest.auth())
    assert r.status_code == 200, r.text


def test_secret_key_must_match_when_sent(ingest: Ingest) -> None:
    k = ingest.key
    good = {"X-Sentry-Auth": f"Sentry sentry_key={k.public_key}, sentry_secret={k.secret_key}"}
    bad = {"X-Sentry-Auth": f"Sentry sentry_key={k.public_key}, sentry_secret={'0' * 32}"}
    body = orjson.dumps(EVENT)
    assert ingest.client.post(ingest.url("store"), content=body, headers=good).status_code == 200
    r = ingest.client.post(ingest.url("store"), content=body, headers=bad)
    assert r.status_code == 401
    assert r.headers["x-sentry-error"]


def test_auth_failures(ingest: Ingest) -> None:
    body = orjson.dumps(EVENT)
    post = ingest.client.post
    assert post(ingest.url("store"), content=body).status_code == 401
    unknown = {"X-Sentry-Auth": f"Sentry sentry_key={'f' * 32}"}
    assert post(ingest.url("store"), content=body, headers=unknown).status_code == 401
    with ingest.db.write() as conn:
        other = projects.create(conn, "acme/other", "other")
        projects.put_settings(conn, other.id, active=True, integrated=True)
    r = post(ingest.url("store", other.id), content=body, headers=ingest.auth())
    assert r.status_code == 401  # the key belongs to another project
    r = post("/api/abc/store/", content=body, headers=ingest.auth())
    assert r.status_code in (400, 404)


def test_inactive_key_and_inactive_tracking_are_forbidden(ingest: Ingest) -> None:
    body = orjson.dumps(EVENT)
    with ingest.db.write() as conn:
        key2 = client_keys.create(conn, ingest.project_id)
        conn.execute(
            client_keys_table.update().where(client_keys_table.c.id == key2.id).values(active=False)
        )
    r = ingest.client.post(ingest.url("store"), content=body, headers=ingest.auth(key2))
    assert r.status_code == 403
    assert "retry-after" not in r.headers
    with ingest.db.write() as conn:
        conn.execute(error_tracking_settings.update().values(active=False))
    # A fresh key is not in the cache: its lookup sees tracking inactive at once.
    with ingest.db.write() as conn:
        key3 = client_keys.create(conn, ingest.project_id)
    r = ingest.client.post(ingest.url("store"), content=body, headers=ingest.auth(key3))
    assert r.status_code == 403


def test_envelope_items_stored_and_dropped(ingest: Ingest) -> None:
    session = {
        "sid": "c" * 32,
        "init": True,
        "started": time.time() - 60,
        "status": "exited",
        "attrs": {"release": "web@1.0", "environment": "prod"},
    }
    body = envelope(
        ({"type": "event"}, orjson.dumps(event(1))),
        ({"type": "session"}, orjson.dumps(session)),
        ({"type": "transaction"}, orjson.dumps({"type": "transaction"})),
        ({"type": "attachment", "length": 5, "filename": "a.txt"}, b"hello"),
        ({"type": "client_report"}, b"{}"),
        ({"type": "something_new"}, b"whatever"),
    )
    r = ingest.client.post(ingest.url("envelope"), content=body, headers=ingest.auth())
    assert r.status_code == 200, r.text
    counts = ingest.counts()
    assert counts["events"] == 1
    assert counts["sessions"] == 1
    # The attachment is kept with its event (tests/sdkdata); an empty client report and
    # a type no SDK documents are counted, like transactions.
    assert counts["dropped"] == {
        "transaction": 1,
        "client_report_empty": 1,
        "unknown": 1,
    }


def test_transaction_sent_to_store_is_dropped(ingest: Ingest) -> None:
    body = orjson.dumps({"type": "transaction", "event_id": "d" * 32, "spans": []})
    r = ingest.client.post(ingest.url("store"), content=body, headers=ingest.auth())
    assert r.status_code == 200
    assert ingest.counts()["dropped"] == {"transaction": 1}


def test_resent_event_is_stored_once(ingest: Ingest) -> None:
    for _ in range(3):
        r = ingest.client.post(
            ingest.url("store"), content=orjson.dumps(EVENT), headers=ingest.auth()
        )
        assert r.status_code == 200
    counts = ingest.counts()
    assert (counts["events"], counts["events_counted"]) == (1, 1)


def test_auto_ip_uses_the_connection_address(ingest: Ingest) -> None:
    from tracebox.store.payloads import decode as decompress_payload
    from tracebox.store.tables import events

    event_without_id = {**EVENT, "user": {"ip_address": "{{auto}}"}}
    ingest.client.post(
        ingest.url("store"), content=orjson.dumps(event_without_id), headers=ingest.auth()
    )
    ingest.digest()
    with ingest.db.read() as conn:
        row = conn.execute(sa.select(events.c.payload, events.c.user_key)).one()
    assert decompress_payload(row.payload)["user"]["ip_address"] == "203.0.113.7"
    assert row.user_key == "ip:203.0.113.7"


def test_cors_preflight(ingest: Ingest) -> None:
    r = ingest.client.options(
        ingest.url("envelope"),
        headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
    )
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == "*"
    assert "POST" in r.headers["access-control-allow-methods"]


ENVELOPE_PATHS = [
    "/api/{id}/envelope/",
    "/api/{id}/envelope",
    "/api/v4/error_tracking/collector/api/{id}/envelope/",
    "/api/v4/error_tracking/collector/{id}/envelope",
]


@pytest.mark.parametrize("path", ENVELOPE_PATHS)
def test_envelope_paths_for_both_dsn_forms(ingest: Ingest, path: str) -> None:
    body = envelope(({"type": "event"}, orjson.dumps(EVENT)))
    url = path.format(id=ingest.project_id)
    r = ingest.client.post(url, content=body, headers=ingest.auth())
    assert r.status_code == 200, r.text
    assert r.json() == {"id": "a" * 32}
    assert r.headers["content-type"] == "application/json"
    assert r.headers["access-control-allow-origin"] == "*"
    assert ingest.client.options(url).headers["access-control-max-age"] == "3600"


@pytest.mark.parametrize("method", ["GET", "HEAD", "PUT", "DELETE"])
@pytest.mark.parametrize("path", ["/api/{id}/store/", *ENVELOPE_PATHS])
def test_other_methods_are_refused_in_relay_shape(ingest: Ingest, path: str, method: str) -> None:
    r = ingest.client.request(method, path.format(id=ingest.project_id))
    assert r.status_code == 405
    assert r.headers["allow"] == "POST, OPTIONS"
    assert r.headers["access-control-allow-origin"] == "*"
    if method != "HEAD":
        assert "POST" in r.json()["detail"] and r.headers["x-sentry-error"]


def test_only_ingest_paths_are_ingestions(ingest: Ingest) -> None:
    """Near misses are not ingestion's: the other surfaces answer them, in their shape."""
    for path in ("/api/1/envelopes/", "/api/1/store//", "/api/1/2/store/", "/x/api/1/store/"):
        r = ingest.client.post(path, content=b"{}", headers=ingest.auth())
        assert r.status_code >= 400 and "x-sentry-error" not in r.headers, path
    app = IngestApp(ctx=None)  # type: ignore[arg-type]  # claims() reads the scope only
    assert app.claims({"path": "/tb/api/1/store/", "root_path": "/tb"})
    assert not app.claims({"path": "/tb/api/1/store/", "root_path": ""})
