import pytest

from tracebox.errors import BadRequest, Unauthorized
from tracebox.protocol.auth import (
    SentryAuth,
    auth_from_envelope_dsn,
    auth_from_request,
    merge_auth,
    parse_auth_header,
)

KEY = "e12d836b15bb49d7bbf99e64295d995b"


@pytest.mark.parametrize(
    "header",
    [
        # sentry-go 0.20.0 and sentry-ruby 5.9.0: spaces after commas, a timestamp
        "Sentry sentry_version=7, sentry_timestamp=1680000000, "
        f"sentry_client=sentry.go/0.20.0, sentry_key={KEY}",
        # sentry-java 6.18.1: no spaces at all
        f"Sentry sentry_version=7,sentry_client=sentry.go/0.20.0,sentry_key={KEY}",
        # sentry-rust 0.31.0: float timestamp, key first
        f"Sentry sentry_key={KEY}, sentry_version=7, sentry_timestamp=1680000000.123, "
        "sentry_client=sentry.go/0.20.0",
        # case-insensitive prefix, odd spacing, unknown keys
        f"  sentry   sentry_key = {KEY} ,sentry_version=7.0 , foo=bar, junk ,"
        "sentry_client=sentry.go/0.20.0",
    ],
)
def test_parse_auth_header_shapes(header: str) -> None:
    assert parse_auth_header(header) == SentryAuth(KEY, None, 7, "sentry.go/0.20.0")


def test_parse_auth_header_with_secret_and_no_version() -> None:
    assert parse_auth_header(f"Sentry sentry_key={KEY},sentry_secret=abc") == SentryAuth(
        KEY, "abc", None, None
    )


@pytest.mark.parametrize(
    "header", ["Bearer abc", "Basic Zm9vOmJhcg==", "", "   ", "Sentryx sentry_key=a"]
)
def test_parse_auth_header_not_sentry(header: str) -> None:
    assert parse_auth_header(header) is None


@pytest.mark.parametrize("header", ["Sentry", "Sentry sentry_version=7", "Sentry sentry_key= ,x=1"])
def test_parse_auth_header_without_key(header: str) -> None:
    with pytest.raises(Unauthorized, match="missing sentry_key"):
        parse_auth_header(header)


def test_version_above_7_is_unsupported() -> None:
    with pytest.raises(BadRequest, match="unsupported protocol version"):
        parse_auth_header(f"Sentry sentry_key={KEY}, sentry_version=8")
    with pytest.raises(BadRequest, match="unsupported protocol version"):
        auth_from_request({}, {"sentry_key": KEY, "sentry_version": "8"})


def test_version_7_is_the_limit() -> None:
    assert parse_auth_header(f"Sentry sentry_key={KEY}, sentry_version=7") is not None


def test_bad_version_is_unauthorized() -> None:
    with pytest.raises(Unauthorized, match="sentry_version"):
        parse_auth_header(f"Sentry sentry_key={KEY}, sentry_version=seven")


def test_request_header_names_are_case_insensitive() -> None:
    for name in (
        "X-Sentry-Auth",
        "x-sentry-auth",
        "X-SENTRY-AUTH",
        "Authorization",
        "authorization",
    ):
        auth = auth_from_request({name: f"Sentry sentry_key={KEY}"}, {})
        assert auth is not None and auth.public_key == KEY


def test_request_query_string_as_sentry_javascript() -> None:
    query = {
        "sentry_key": KEY,
        "sentry_version": "7",
        "sentry_client": "sentry.javascript.node/7.38.0",
    }
    assert auth_from_request({}, query) == SentryAuth(KEY, None, 7, "sentry.javascript.node/7.38.0")


def test_request_without_credentials() -> None:
    assert (
        auth_from_request({"Authorization": "Bearer token", "User-Agent": "x"}, {"a": "b"}) is None
    )


def test_request_agreeing_credentials_are_merged() -> None:
    headers = {
        "X-Sentry-Auth": f"Sentry sentry_key={KEY}, sentry_client=php",
        "Authorization": f"Sentry sentry_key={KEY}, sentry_secret=s",
    }
    query = {"sentry_key": KEY, "sentry_version": "7"}
    assert auth_from_request(headers, query) == SentryAuth(KEY, "s", 7, "php")


def test_request_disagreeing_keys() -> None:
    with pytest.raises(Unauthorized, match="multiple authorization payloads disagree"):
        auth_from_request({"X-Sentry-Auth": f"Sentry sentry_key={KEY}"}, {"sentry_key": "other"})


def test_request_disagreeing_secrets() -> None:
    headers = {
        "X-Sentry-Auth": f"Sentry sentry_key={KEY}, sentry_secret=a",
        "Authorization": f"Sentry sentry_key={KEY}, sentry_secret=b",
    }
    with pytest.raises(Unauthorized, match="disagree on the secret"):
        auth_from_request(headers, {})


def test_request_query_without_key_is_ignored() -> None:
    assert auth_from_request({}, {"sentry_version": "7"}) is None


def test_envelope_dsn() -> None:
    auth, project_id = auth_from_envelope_dsn(f"https://{KEY}:@sentry.io/42")
    assert auth == SentryAuth(KEY, None, None, None)
    assert project_id == "42"


def test_envelope_dsn_invalid() -> None:
    with pytest.raises(Unauthorized, match="invalid dsn"):
        auth_from_envelope_dsn("nonsense")


def test_merge_with_envelope_dsn() -> None:
    header = parse_auth_header(
        f"Sentry sentry_key={KEY}, sentry_version=7, sentry_client=sentry-ruby/5.9.0"
    )
    assert header is not None
    dsn_auth, _ = auth_from_envelope_dsn(f"https://{KEY}@h/1")
    assert merge_auth([header, dsn_auth]) == header
    other, _ = auth_from_envelope_dsn("https://ffffffffffffffffffffffffffffffff@h/1")
    with pytest.raises(Unauthorized):
        merge_auth([header, other])
    assert merge_auth([]) is None
