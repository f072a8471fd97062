"""Real receivers in the test process: an HTTP server that records what it gets and
answers from a script, and an SMTP server (aiosmtpd) with optional TLS."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller

from tests.helpers import free_port


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int  # what the receiver answered


@dataclass
class Receiver:
    """``answers``: (status, headers, body) for the first requests, then ``default``."""

    answers: list[tuple[int, dict[str, str], bytes]] = field(default_factory=list)
    default: tuple[int, dict[str, str], bytes] = (200, {}, b'{"ok": true}')
    requests: list[Request] = field(default_factory=list)
    port: int = 0
    hold: threading.Event | None = None  # set: requests wait for it before answering

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def answered(self, status: int) -> list[Request]:
        return [r for r in self.requests if r.status == status]


@contextmanager
def http_receiver(receiver: Receiver | None = None, port: int = 0) -> Iterator[Receiver]:
    receiver = receiver or Receiver()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if receiver.hold is not None:
                receiver.hold.wait(30)
            with lock:
                status, headers, answer = (
                    receiver.answers.pop(0) if receiver.answers else receiver.default
                )
                receiver.requests.append(Request(self.path, dict(self.headers), body, status))
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        if receiver.hold is not None:
            receiver.hold.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def verify_signature(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """What docs/alerts.md tells receivers to do."""
    timestamp = headers["X-Tracebox-Timestamp"]
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return hmac.compare_digest("sha256=" + expected.hexdigest(), headers["X-Tracebox-Signature"])


@dataclass
class Mailbox:
    messages: list[EmailMessage] = field(default_factory=list)
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)
    port: int = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        raw = envelope.original_content or envelope.content
        self.messages.append(message_from_bytes(raw, policy=policy.default))  # type: ignore[arg-type]
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        return "250 Message accepted for delivery"


def self_signed(tmp: Path) -> tuple[Path, Path]:
    """A certificate for localhost and 127.0.0.1 (it is its own CA), and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "smtp-cert.pem", tmp / "smtp-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@contextmanager
def smtp_server(mode: str = "none", tmp: Path | None = None) -> Iterator[Mailbox]:
    """aiosmtpd on 127.0.0.1: ``none`` (plain), ``starttls`` (required) or ``tls``."""
    box = Mailbox(port=free_port())
    kwargs: dict[str, Any] = {}
    if mode != "none":
        assert tmp is not None
        cert, key = self_signed(tmp)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        if mode == "starttls":
            kwargs.update(tls_context=context, require_starttls=True)
        else:
            kwargs.update(ssl_context=context)
    controller = Controller(box, hostname="127.0.0.1", port=box.port, **kwargs)
    controller.start()
    try:
        yield box
    finally:
        controller.stop()
