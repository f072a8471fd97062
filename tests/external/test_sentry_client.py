"""The Sentry client alone: Link paging, outbound safety, TLS refusal."""

from __future__ import annotations

import datetime as dt
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.external.fake_sentry import TOKEN, FakeSentry
from tests.helpers import WEB_WORKER, modules_loaded
from tracebox.sentry_client import ClientOptions, SentryClient, SentryError, parse_link_header
from tracebox.sentry_client.safety import check_destination

LOCAL = ClientOptions(allow_local_network=True)


def test_link_header_keeps_only_pages_with_results() -> None:
    header = (
        '<https://s/api/0/projects/o/p/issues/?&cursor=0:0:1>; rel="previous"; '
        'results="false"; cursor="0:0:1", <https://s/api/0/projects/o/p/issues/?&cursor='
        '0:100:0>; rel="next"; results="true"; cursor="0:100:0"'
    )
    links = parse_link_header(header)
    assert (links.next_cursor, links.prev_cursor) == ("0:100:0", None)
    assert parse_link_header(None).next_cursor is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/",
        "http://localhost/",
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0/",
    ],
)
def test_local_addresses_are_refused_by_default(url: str) -> None:
    with pytest.raises(SentryError) as e:
        check_destination(url, allow_local_network=False)
    assert e.value.kind == "refused_address"
    assert "TRACEBOX_EXTERNAL_ALLOW_LOCAL_NETWORK" in e.value.message


def test_only_http_and_https() -> None:
    with pytest.raises(SentryError, match="http or https"):
        check_destination("file:///etc/passwd", allow_local_network=True)


def test_the_client_refuses_a_local_server_unless_allowed(fake_sentry: FakeSentry) -> None:
    refused = SentryClient(fake_sentry.url, TOKEN, ClientOptions())
    with pytest.raises(SentryError, match="local network"):
        refused.get("projects/")
    assert fake_sentry.requests == []
    assert SentryClient(fake_sentry.url, TOKEN, LOCAL).get("projects/").body[0]["id"] == "42"


def test_paging_follows_the_link_cursor(fake_sentry: FakeSentry) -> None:
    client = SentryClient(fake_sentry.url, TOKEN, LOCAL)
    seen, cursor = [], None
    for _ in range(5):
        params = {"query": "is:unresolved", "limit": "10", **({"cursor": cursor} if cursor else {})}
        answer = client.get("projects/acme-org/web/issues/", params)
        seen += [i["id"] for i in answer.body]
        cursor = answer.links.next_cursor
        if cursor is None:
            break
    assert len(seen) == 25 and len(set(seen)) == 25


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[str]:
    """An https server whose self-signed certificate no CA vouches for."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    server = HTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_a_refused_certificate_is_named(tls_server: str) -> None:
    with pytest.raises(SentryError) as e:
        SentryClient(tls_server, TOKEN, LOCAL).get("projects/")
    assert e.value.kind == "tls"
    assert "TLS error with 127.0.0.1" in e.value.message
    assert "certificate" in e.value.message


def test_a_web_worker_does_not_load_the_client_until_one_is_needed(tmp_path: Path) -> None:
    """Every web worker's memory counts toward the server's 250 MB (issue 10); most
    servers never link a Sentry server, so httpx (~4 MB) loads when one is asked."""
    setup = f"{WEB_WORKER}; from tracebox.tracking import ExternalBackend"
    names = ("httpx", "tracebox.sentry_client.client")
    assert modules_loaded(setup, names, tmp_path / "data") == []
