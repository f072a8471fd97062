import pytest

from tracebox.errors import BadRequest
from tracebox.protocol.dsn import Dsn, build_dsn, parse_dsn

KEY = "e12d836b15bb49d7bbf99e64295d995b"


def test_parse_plain_dsn() -> None:
    assert parse_dsn(f"https://{KEY}@sentry.example.com/42") == Dsn(
        scheme="https",
        public_key=KEY,
        secret_key=None,
        host="sentry.example.com",
        port=None,
        path_prefix="",
        project_id="42",
    )


def test_parse_keeps_path_prefix_and_port() -> None:
    dsn = parse_dsn(f"http://{KEY}@host:9000/prefix/deeper/42")
    assert (dsn.host, dsn.port, dsn.path_prefix, dsn.project_id) == (
        "host",
        9000,
        "/prefix/deeper",
        "42",
    )


def test_parse_gitlab_collector_dsn() -> None:
    dsn = parse_dsn(f"https://{KEY}@gitlab.example.com/api/v4/error_tracking/collector/7")
    assert dsn.path_prefix == "/api/v4/error_tracking/collector"
    assert dsn.project_id == "7"


def test_parse_secret_and_empty_secret() -> None:
    assert parse_dsn(f"https://{KEY}:s3cret@h/1").secret_key == "s3cret"
    # The develop docs' own example carries an empty secret: it means none.
    assert parse_dsn(f"https://{KEY}:@sentry.io/42").secret_key is None


def test_parse_tolerates_trailing_slash_and_whitespace() -> None:
    assert parse_dsn(f"  https://{KEY}@h/1/ \n").project_id == "1"


def test_parse_ipv6_host() -> None:
    dsn = parse_dsn(f"http://{KEY}@[::1]:8000/3")
    assert (dsn.host, dsn.port) == ("::1", 8000)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "scheme"),
        ("not a url", "scheme"),
        (f"ftp://{KEY}@h/1", "scheme"),
        ("https://h/1", "public key"),
        (f"https://{KEY}@/1", "host"),
        (f"https://{KEY}@h", "project id"),
        (f"https://{KEY}@h/", "project id"),
        (f"https://{KEY}@h:99999/1", "port"),
        (f"https://{KEY}@h:abc/1", "port"),
    ],
)
def test_parse_rejects_bad_dsn(text: str, message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        parse_dsn(text)


def test_build_collector_dsn() -> None:
    assert (
        build_dsn("https://errors.example.com", KEY, 12)
        == f"https://{KEY}@errors.example.com/api/v4/error_tracking/collector/12"
    )


def test_build_plain_dsn_keeps_base_path_and_port() -> None:
    url = build_dsn("http://localhost:8000/tracebox/", KEY, 5, collector=False)
    assert url == f"http://{KEY}@localhost:8000/tracebox/5"


@pytest.mark.parametrize(
    ("external_url", "host"),
    [
        ("https://h:443", "h"),
        ("http://h:80/", "h"),
        ("https://h:80", "h:80"),
        ("http://[::1]:81", "[::1]:81"),
    ],
)
def test_build_omits_default_ports(external_url: str, host: str) -> None:
    assert (
        build_dsn(external_url, KEY, 1, collector=False)
        == f"{external_url.split(':')[0]}://{KEY}@{host}/1"
    )


def test_build_with_secret() -> None:
    assert (
        build_dsn("https://h", KEY, 1, secret_key="sec", collector=False)
        == f"https://{KEY}:sec@h/1"
    )


@pytest.mark.parametrize("collector", [True, False])
def test_build_then_parse_round_trips(collector: bool) -> None:
    dsn = parse_dsn(build_dsn("https://h.example:8443/base", KEY, 99, collector=collector))
    assert (dsn.public_key, dsn.host, dsn.port, dsn.project_id) == (KEY, "h.example", 8443, "99")
    assert dsn.path_prefix.startswith("/base")


def test_build_rejects_non_http_external_url() -> None:
    with pytest.raises(BadRequest):
        build_dsn("localhost:8000", KEY, 1)
