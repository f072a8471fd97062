"""Old raven clients send no ``sdk``: the SDK panel names the client from the auth
header's ``sentry_client``, else the User-Agent (issue 12, item 9)."""

from __future__ import annotations

import orjson
import pytest
import sqlalchemy as sa

from tests.ingest.conftest import Ingest
from tracebox.protocol.client import sdk_from_client
from tracebox.store.payloads import decode
from tracebox.store.tables import events


def stored_sdk(ingest: Ingest) -> object:
    ingest.digest()
    with ingest.db.read() as conn:
        (payload,) = conn.execute(sa.select(events.c.payload)).scalars()
    return decode(payload).get("sdk")


def test_raven_python_is_named_from_its_auth_header(ingest: Ingest) -> None:
    auth = ingest.auth()["X-Sentry-Auth"] + ", sentry_client=raven-python/6.10.0"
    event = {"message": "hello from raven", "level": "error"}
    r = ingest.client.post(
        ingest.url("store"), content=orjson.dumps(event), headers={"X-Sentry-Auth": auth}
    )
    assert r.status_code == 200, r.text
    assert stored_sdk(ingest) == {"name": "raven-python", "version": "6.10.0"}


def test_the_user_agent_names_a_client_without_sentry_client(ingest: Ingest) -> None:
    event = {"message": "hello", "level": "error"}
    headers = {**ingest.auth(), "User-Agent": "raven-ruby/2.13.0"}
    ingest.client.post(ingest.url("store"), content=orjson.dumps(event), headers=headers)
    assert stored_sdk(ingest) == {"name": "raven-ruby", "version": "2.13.0"}


def test_an_sdk_that_names_itself_is_left_alone(ingest: Ingest) -> None:
    auth = ingest.auth()["X-Sentry-Auth"] + ", sentry_client=raven-python/6.10.0"
    event = {"message": "hi", "sdk": {"name": "sentry.python", "version": "2.75.0"}}
    ingest.client.post(
        ingest.url("store"), content=orjson.dumps(event), headers={"X-Sentry-Auth": auth}
    )
    assert stored_sdk(ingest) == {"name": "sentry.python", "version": "2.75.0"}


@pytest.mark.parametrize(
    ("client", "sdk"),
    [
        ("raven-js/3.27.0", {"name": "raven-js", "version": "3.27.0"}),
        ("Mozilla/5.0 (X11; Linux x86_64)", {"name": "Mozilla", "version": "5.0"}),
        ("curl", {"name": "curl"}),
        ("   ", None),
    ],
)
def test_sdk_from_client(client: str, sdk: dict[str, str] | None) -> None:
    assert sdk_from_client(client) == sdk
