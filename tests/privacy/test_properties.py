"""Property tests: events of random shape with secrets planted at random depths, under
random keys, in random fields; none may survive the default rules. The JSON-text scrubber
must also agree with the plain walk of ``reference.py`` on every event."""

from __future__ import annotations

import string
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.privacy.reference import Scrubber as ReferenceScrubber
from tests.privacy.reference import whole_json_scrub
from tracebox import privacy
from tracebox.privacy import PrivacySettings
from tracebox.privacy.text import luhn_valid
from tracebox.protocol.event import normalize_event

ALNUM = string.ascii_letters + string.digits
# Planted secrets start with "zq" or carry 16+ random characters: they cannot appear in
# an event by chance, so finding one in the output means it survived.
core = st.builds(
    lambda n, t: f"zq{n}q{t}", st.integers(0, 10**9), st.text(ALNUM, min_size=16, max_size=24)
)
SENSITIVE_NAMES = st.sampled_from(
    [
        "password",
        "Password",
        "PASSWD",
        "db_password",
        "secret",
        "client-secret",
        "token",
        "access_token",
        "X-Auth-Token",
        "api_key",
        "apiKey",
        "API-KEY",
        "authorization",
        "credentials",
        "cookie",
        "session",
        "sessionid",
        "csrf_token",
        "private_key",
        "privateKey",
        "mysql_pwd",
    ]
)


@st.composite
def card(draw: st.DrawFn) -> tuple[str, str]:
    prefix = draw(st.sampled_from(["4", "51", "55", "6011", "2221"]))
    body = prefix + draw(
        st.text(string.digits, min_size=15 - len(prefix), max_size=15 - len(prefix))
    )
    check = next(d for d in range(10) if luhn_valid([int(c) for c in body + str(d)]))
    digits = body + str(check)
    sep = draw(st.sampled_from(["", " ", "-"]))
    shown = sep.join(digits[i : i + 4] for i in range(0, 16, 4)) if sep else digits
    return shown, shown  # as written, separators and all


def _token(prefix: str, alphabet: str, size: int) -> st.SearchStrategy[tuple[str, str]]:
    return st.text(alphabet, min_size=size, max_size=size).map(lambda t: (prefix + t, prefix + t))


@st.composite
def value_secret(draw: st.DrawFn) -> tuple[str, str]:
    """(text as written, the part that must not survive)."""
    kind = draw(st.integers(0, 10))
    if kind == 0:
        return draw(card())
    if kind == 1:
        secret = draw(core)
        return f"Bearer {secret}", secret
    if kind == 2:
        return draw(_token("AKIA", string.ascii_uppercase + string.digits, 16))
    if kind == 3:
        return draw(_token("ghp_", ALNUM, 36))
    if kind == 4:
        return draw(_token("glpat-", ALNUM, 20))
    if kind == 5:
        head, body, sig = draw(st.tuples(core, core, core))
        jwt = f"eyJ{head}.eyJ{body}.{sig}"
        return jwt, jwt
    if kind == 6:
        return draw(_token("tbpat-", ALNUM, 40))
    if kind == 7:
        return draw(_token("xoxb-1234-", ALNUM, 20))
    if kind == 8:
        secret = draw(core)
        return f"https://0123abcd:{secret}@errors.example.com/1", secret
    if kind == 9:
        secret = draw(core)
        return f"-----BEGIN PRIVATE KEY-----\n{secret}\n-----END PRIVATE KEY-----", secret
    name, secret = draw(SENSITIVE_NAMES), draw(core)
    form = draw(st.sampled_from(["{}={}", '"{}": "{}"', "{}: {}", "{} = '{}'"]))
    return form.format(name, secret), secret


words = st.text(string.ascii_lowercase + " ", max_size=12)


@st.composite
def text_with_secret(draw: st.DrawFn, planted: list[str]) -> str:
    written, secret = draw(value_secret())
    planted.append(secret)
    sep = draw(st.sampled_from([" ", "\n", ", ", " (", "\t"]))
    return f"{draw(words)}{sep}{written}{sep}{draw(words)}".strip(" ")


plain = st.one_of(st.none(), st.booleans(), st.integers(-1000, 10**6), words)
keys = st.text(string.ascii_lowercase + "_", min_size=1, max_size=8).filter(
    lambda k: not any(w in k for w in ("pass", "secret", "token", "auth", "cookie", "sess"))
)


@st.composite
def tree(draw: st.DrawFn, planted: list[str], depth: int = 0) -> Any:
    """A JSON value with secrets planted in it: under sensitive keys (any depth), in text,
    in pair lists."""
    choice = draw(st.integers(0, 6 if depth < 4 else 2))
    if choice == 0:
        return draw(plain)
    if choice == 1:
        return draw(text_with_secret(planted))
    if choice == 2:
        secret = draw(core)
        planted.append(secret)
        return {draw(SENSITIVE_NAMES): secret}
    if choice == 3:
        secret = draw(core)
        planted.append(secret)
        return [draw(SENSITIVE_NAMES), secret]  # a pair list's item
    if choice == 4:
        items = draw(st.lists(tree(planted, depth + 1), max_size=3))
        return items
    if choice == 5:
        inner = draw(tree(planted, depth + 1))
        return {draw(SENSITIVE_NAMES): inner} if planted else {draw(keys): inner}
    return draw(st.dictionaries(keys, tree(planted, depth + 1), max_size=3))


@st.composite
def event(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
    planted: list[str] = []
    raw: dict[str, Any] = {
        "message": draw(text_with_secret(planted)),
        "extra": {"a": draw(tree(planted))},
        "contexts": {"c": {"x": draw(tree(planted))}},
        "request": {
            "url": f"https://x.example.com/p?{draw(SENSITIVE_NAMES)}={_plant(draw, planted)}",
            "data": draw(tree(planted)),
            "query_string": f"a=1&{draw(SENSITIVE_NAMES)}={_plant(draw, planted)}",
            "cookies": f"theme=dark; session={_plant(draw, planted)}",
            "headers": {
                draw(SENSITIVE_NAMES): _plant(draw, planted),
                "X-Note": draw(text_with_secret(planted)),
            },
        },
        "breadcrumbs": [
            {"message": draw(text_with_secret(planted)), "data": {"d": draw(tree(planted))}}
        ],
        "exception": {
            "values": [
                {
                    "type": "Error",
                    "value": draw(text_with_secret(planted)),
                    "stacktrace": {
                        "frames": [{"function": "f", "vars": {"v": draw(tree(planted))}}]
                    },
                }
            ]
        },
        "tags": {
            draw(SENSITIVE_NAMES): _plant(draw, planted),
            "t": draw(text_with_secret(planted))[:200],
        },
        "user": {"id": "1", "data": draw(tree(planted))},
    }
    return raw, planted


def _plant(draw: st.DrawFn, planted: list[str]) -> str:
    secret = draw(core)
    planted.append(secret)
    return secret


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event())
def test_no_planted_secret_survives(case: tuple[dict[str, Any], list[str]]) -> None:
    raw, planted = case
    normalized = normalize_event(raw, received_at=1.0, client_ip=None)
    out = orjson.dumps(privacy.scrub(normalized)).decode()
    survivors = [secret for secret in planted if secret in out]
    assert survivors == [], [out[max(0, out.find(x) - 120) : out.find(x) + 40] for x in survivors]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event(), st.booleans())
def test_the_json_scrubber_agrees_with_the_plain_walk(
    case: tuple[dict[str, Any], list[str]], anonymize: bool
) -> None:
    normalized = normalize_event(case[0], received_at=1.0, client_ip="203.0.113.7")
    rules = PrivacySettings(
        ip_mode=privacy.IpMode.ANONYMIZE if anonymize else privacy.IpMode.STORE,
        safe_fields=("session",),
        sensitive_fields=("x_note",),
    )
    fast = privacy.scrub(normalized, rules)
    slow = ReferenceScrubber(rules).scrub(normalized)
    fast.pop("_scrubbed", None)
    slow.pop("_scrubbed", None)
    assert fast == slow


@settings(max_examples=100, deadline=None)
@given(event())
def test_scrubbing_twice_changes_nothing_more(case: tuple[dict[str, Any], list[str]]) -> None:
    once = privacy.scrub(normalize_event(case[0], received_at=1.0, client_ip=None))
    twice = privacy.scrub(once)
    once.pop("_scrubbed", None)
    twice.pop("_scrubbed", None)
    assert once == twice


EVERY_OPTION = PrivacySettings(
    ip_mode=privacy.IpMode.ANONYMIZE,
    safe_fields=("session", "request"),
    sensitive_fields=("x_note", "user"),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event(), st.sampled_from([PrivacySettings(), EVERY_OPTION]))
def test_reloading_only_the_edited_fields_changes_nothing(
    case: tuple[dict[str, Any], list[str]], rules: PrivacySettings
) -> None:
    """``privacy.scrub`` parses back only the top-level fields it edited; the event and
    its remarks are exactly those of parsing the whole scrubbed JSON."""
    normalized = normalize_event(case[0], received_at=1.0, client_ip="203.0.113.7")
    fast = privacy.scrub(normalized, rules)
    assert orjson.dumps(fast) == orjson.dumps(whole_json_scrub(normalized, rules))


@st.composite
def event_learning_nothing(draw: st.DrawFn) -> dict[str, Any]:
    """Secrets in text and under sensitive names, none of which is learned (too short or
    with a space): the scrubber then reloads only the fields it edited."""
    planted: list[str] = []
    unlearned = st.sampled_from(["abc", "two words here", "short1", 12, 4.5, None])
    pairs = st.lists(st.tuples(SENSITIVE_NAMES | keys, unlearned), max_size=4)
    return {
        "message": draw(text_with_secret(planted)),
        "extra": dict(draw(pairs)),
        "request": {
            "url": f"https://x.example.com/p?{draw(SENSITIVE_NAMES)}=ab",
            "headers": [list(p) for p in draw(pairs) if isinstance(p[1], str)],
            "cookies": "theme=dark; session=a b",
        },
        "breadcrumbs": [{"message": draw(text_with_secret(planted))}],
        "tags": {"t": draw(text_with_secret(planted))[:200]},
        "user": {"id": "1", "ip_address": "203.0.113.9"},
        "modules": {draw(SENSITIVE_NAMES): "1.0"},
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_learning_nothing(), st.sampled_from([PrivacySettings(), EVERY_OPTION]))
def test_reloading_only_the_edited_fields_of_an_event_learning_nothing(
    raw: dict[str, Any], rules: PrivacySettings
) -> None:
    normalized = normalize_event(raw, received_at=1.0, client_ip="203.0.113.7")
    fast = privacy.scrub(normalized, rules)
    assert orjson.dumps(fast) == orjson.dumps(whole_json_scrub(normalized, rules))
