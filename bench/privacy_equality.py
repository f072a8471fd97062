"""Check that a change to ``tracebox.privacy`` scrubs every event exactly as before.

Three steps, the middle one run once per implementation (``PYTHONPATH`` chooses it):

    PYTHONPATH=src:. .venv/bin/python bench/privacy_equality.py inputs /tmp/in.pkl
    PYTHONPATH=/path/to/main/src .venv/bin/python bench/privacy_equality.py run /tmp/in.pkl /tmp/a
    PYTHONPATH=src .venv/bin/python bench/privacy_equality.py run /tmp/in.pkl /tmp/b
    .venv/bin/python bench/privacy_equality.py compare /tmp/a /tmp/b

``sent`` compares, in one tree, scrubbing each input as a payload an SDK sent
(``privacy.scrub_sent``) with scrubbing it once normalized:

    PYTHONPATH=src .venv/bin/python bench/privacy_equality.py sent /tmp/in.pkl

The inputs are the benchmark corpus, the privacy tests' sample event and random events
(``tests/privacy``'s strategies), and mutants of the corpus with secrets, sensitive keys
and odd strings planted in them; each is scrubbed under every settings variant below. The
output of a scrub is ``orjson.dumps`` of the scrubbed event (or the exception raised), and
``repr`` of it (which also tells a tuple from a list). Not a test: run it by hand.
"""

from __future__ import annotations

import argparse
import pickle
import random
import sys
import time
from typing import Any

import orjson

from tracebox import privacy
from tracebox.privacy import IpMode, PrivacySettings

VARIANTS = {
    "default": PrivacySettings(),
    "off": PrivacySettings(scrub_data=False),
    "off-anonymize": PrivacySettings(scrub_data=False, ip_mode=IpMode.ANONYMIZE),
    "bench-all": PrivacySettings(
        sensitive_fields=("customer", "internal_ref"),
        safe_fields=("theme", "trace_id"),
        ip_mode=IpMode.ANONYMIZE,
    ),
    "tests-every": PrivacySettings(
        ip_mode=IpMode.ANONYMIZE,
        safe_fields=("session", "request"),
        sensitive_fields=("x_note", "user"),
    ),
    "safe-sensitive": PrivacySettings(safe_fields=("password", "cookie", "headers", "Cookie")),
    "safe-exception": PrivacySettings(safe_fields=("exception", "values", "frames")),
    "extra-fields": PrivacySettings(sensitive_fields=("email", "filename", "my-Sekret", "id")),
    "drop": PrivacySettings(ip_mode=IpMode.DROP),
    "drop-user-ip": PrivacySettings(drop_user_ip=True),
}

SECRET_TEXTS = [
    "card 4111 1111 1111 1111 declined",
    "charged 4012888888881881",
    "amex 3782-822463-10005",
    "sent Bearer zq9bearerTOKENvalue7",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\nunterminated body",
    "key AKIAZQ7EXAMPLEKEY9QZ rejected",
    "slack xoxb-123456789012-zqSLACKsecret42",
    "hook https://hooks.slack.com/services/T0ZQ/B0ZQ/zqHOOKsecret42",
    "token ghp_zqGITHUBsecret0123456789abcdefghijkl",
    "token glpat-zqGITLABsecret012345",
    "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ6cUpXVCJ9.zqJWTsignature42",
    "PRIVATE-TOKEN tbpat-zqTRACEBOXsecret0123456789abcdefghijkl",
    "dsn https://0123456789abcdef:zqdsnsecret0123456789@errors.example.com/42",
    "connect postgres://app:zqURLpassw0rd@db.internal:5432/shop",
    "https:\\/\\/u:p4ssw0rd99@h.example.com\\/x",
    "password=zqHunter2password&next=/",
    "a=1&api_key=zqApiKeyValue42&b=2",
    "sessionid=zqSessionIdValue42; csrftoken=zqCsrfTokenValue42",
    '{"password": "zqInJson99secret", "user": "bob"}',
    "{'token': 'zqReprToken123', 'n': 1}",
    'config \\"secret\\": \\"zqEscaped77\\"',
    "Authorization: Basic dXNlcjpwYXNzd29yZA==\nnext line",
    "password: must be long",
    "passwort=nein otp=123456 pin=1234 cvv=123",
    "mot de passe: café 中文 🙂 token=zqUnicodé42",
    "x" * 300 + " secret=zqLongText0001 " + "y" * 300,
    "4111111111111111",
    "1234567890123456",
    "  4111-1111-1111-1111  ",
    "session",
    "SESSION_ID",
    "author=bob authority=x",
    "token = await fetch()",
    '\\u0000 nul \\\\" quote',
]
SENSITIVE_KEYS = [
    "password",
    "Password",
    "db_password",
    "client-secret",
    "X-Auth-Token",
    "apiKey",
    "authorization",
    "Cookie",
    "session",
    "csrf_token",
    "private_key",
    "otp",
    "2fa",
    "author",
    "customer",
    "x_note",
    "my_sekret",
    "theme",
    "trace_id",
    "sid",
    "Set-Cookie",
]
ODD_VALUES: list[Any] = [
    "zqLearnedSecret1234",
    "short",
    "two words here",
    12345678901234,
    4111111111111111,
    -4111111111111111,
    3.5e20,
    None,
    True,
    "",
    [],
    {},
    {"nested": {"password": "zqDeepSecret88", "ok": [1, 2, {"token": ["a", "b"]}]}},
    ["Cookie", "session=zqPairCookie42"],
    [["password", "zqPairListPw1"], ["x", "y"]],
    "é\u00e9\u2028\u2029\t\n\r\\\"'",
    "zqLearnedSecret1234 again zqLearnedSecret1234",
]


def corpus_events(count: int, seed: int) -> list[dict[str, Any]]:
    sys.path.insert(0, "bench")
    import privacy_bench

    return privacy_bench.events(count, seed)


def strategy_events(count: int) -> list[dict[str, Any]]:
    from tests.privacy import secrets
    from tests.privacy.test_properties import event, event_learning_nothing

    from tracebox.protocol.event import normalize_event

    raws = [secrets.raw_event()]
    for i in range(count):
        raws.append(event().example()[0] if i % 3 else event_learning_nothing().example())
    return [normalize_event(r, received_at=1.0, client_ip="203.0.113.7") for r in raws]


def mutant(event: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """``event`` (copied) with secrets, sensitive keys and odd values planted at random."""
    event = orjson.loads(orjson.dumps(event))
    holders: list[Any] = []

    def collect(value: Any) -> None:
        if isinstance(value, dict | list):
            holders.append(value)
            for child in value.values() if isinstance(value, dict) else value:
                collect(child)

    collect(event)
    for _ in range(rng.randint(1, 8)):
        holder = rng.choice(holders)
        planted = rng.choice([rng.choice(SECRET_TEXTS), rng.choice(ODD_VALUES)])
        if isinstance(holder, dict):
            key = rng.choice([*holder, *SENSITIVE_KEYS] if holder else SENSITIVE_KEYS)
            if rng.random() < 0.3 and key in holder:  # rename a key, keep its value
                holder[rng.choice(SENSITIVE_KEYS)] = holder.pop(key)
            else:
                holder[key] = planted
        elif holder:
            holder[rng.randrange(len(holder))] = planted
        else:
            holder.append(planted)
    if rng.random() < 0.2:
        event[rng.choice(SENSITIVE_KEYS)] = rng.choice(SECRET_TEXTS)  # a top-level key
    if rng.random() < 0.2:
        event["modules"] = {"authlib": "1.0", "password": "zqModulesPw99"}
    if rng.random() < 0.2:
        event["_scrubbed"] = {"keys": {}}
    if rng.random() < 0.3:
        event["user"] = {"ip_address": rng.choice(["203.0.113.9", "2001:db8::1", "nope"])}
        event["request"] = {
            "env": {"REMOTE_ADDR": "198.51.100.7", "HTTP_X_FORWARDED_FOR": "10.0.0.1"},
            "headers": [["X-Forwarded-For", "203.0.113.7, 10.0.0.1"], ["Cookie", "a=b"]],
        }
    if rng.random() < 0.2:
        event["logentry"] = {
            "message": "login %s with %s",
            "formatted": "login bob with zqLoggedPw12345",
            "params": rng.choice([["bob", "zqLoggedPw12345"], {"password": "zqLoggedPw12345"}]),
        }
    return event


def make_inputs(path: str) -> None:
    corpus = corpus_events(2000, 7)
    rng = random.Random(11)
    mutants = [mutant(rng.choice(corpus), rng) for _ in range(1500)]
    samples = strategy_events(400)
    inputs = {"corpus": corpus, "mutants": mutants, "samples": samples}
    with open(path, "wb") as f:
        pickle.dump(inputs, f)
    print({name: len(events) for name, events in inputs.items()})


def scrub_all(inputs_path: str, out_path: str) -> None:
    with open(inputs_path, "rb") as f:
        inputs: dict[str, list[dict[str, Any]]] = pickle.load(f)
    results: list[tuple[str, str, int, bytes, str]] = []
    start = time.perf_counter()
    for variant, settings in VARIANTS.items():
        for name, events in inputs.items():
            for i, event in enumerate(events):
                before = repr(event)
                try:
                    out = privacy.scrub(event, settings)
                    dumped, shown = orjson.dumps(out), repr(out)
                except Exception as e:
                    # The type only: where a parse of invalid JSON fails depends on
                    # how much of the event is parsed.
                    dumped, shown = b"!" + type(e).__name__.encode(), ""
                if repr(event) != before:
                    shown += " (input changed)"
                results.append((variant, name, i, dumped, shown))
    with open(out_path, "wb") as f:
        pickle.dump(results, f)
    print(f"{len(results)} scrubs by {privacy.__file__} in {time.perf_counter() - start:.1f} s")


def compare(a_path: str, b_path: str) -> int:
    with open(a_path, "rb") as f:
        a = pickle.load(f)
    with open(b_path, "rb") as f:
        b = pickle.load(f)
    assert len(a) == len(b), (len(a), len(b))
    differ = [(x[:3], x[3] == y[3]) for x, y in zip(a, b, strict=True) if x[3:] != y[3:]]
    changed = sum(1 for x in a if x[3] != b"" and b'"_scrubbed"' in x[3])
    print(f"{len(a)} scrubs compared, {changed} with remarks; {len(differ)} differ")
    for where, same_json in differ[:10]:
        print("  ", where, "same JSON, different repr" if same_json else "different JSON")
    return 1 if differ else 0


def sent_against_normalized(inputs_path: str) -> int:
    """Each input as a payload an SDK sent: scrubbed as sent (``privacy.scrub_sent``, then
    parsed and normalized) against normalized, then scrubbed (what the digest does when
    the payload is refused). Counts the refusals; prints the inputs that differ."""
    from tracebox.protocol.event import normalize_event

    with open(inputs_path, "rb") as f:
        inputs: dict[str, list[dict[str, Any]]] = pickle.load(f)

    def normalized(raw: dict[str, Any]) -> dict[str, Any]:
        return normalize_event(raw, received_at=1.0, client_ip="203.0.113.7", event_id="a" * 32)

    def canonical(event: dict[str, Any]) -> bytes:
        remarks = event.get("_scrubbed", {})
        text = {k: sorted(v) for k, v in remarks.get("text", {}).items()}
        return orjson.dumps(
            {**event, "_scrubbed": {**remarks, "text": text}}, option=orjson.OPT_SORT_KEYS
        )

    total = refused = unfit = more_remarks = more_filtered = 0
    differ: list[tuple[str, str, int]] = []
    less: list[tuple[str, str, int]] = []  # where scrubbing as sent filtered less: a leak
    for variant, settings in VARIANTS.items():
        for name, events in inputs.items():
            for i, event in enumerate(events):
                total += 1
                sent = privacy.scrub_sent(orjson.dumps(event), settings)
                if sent is None:
                    refused += 1
                    continue
                raw = orjson.loads(sent.payload)
                if not sent.fits(raw):
                    unfit += 1
                    continue
                fast = sent.finish(normalized(raw))
                slow = privacy.scrub(normalized(event), settings)
                if canonical(fast) == canonical(slow):
                    continue
                fast_remarks, slow_remarks = fast.pop("_scrubbed", {}), slow.pop("_scrubbed", {})
                if fast == slow and _within(slow_remarks, fast_remarks):
                    more_remarks += 1  # what normalization drops had secrets too
                elif _more_filtered(slow, fast):
                    more_filtered += 1  # ... and a secret learned there is filtered here
                else:
                    differ.append((variant, name, i))
                    if _filtered_less(slow, fast):
                        less.append((variant, name, i))
    print(
        f"{total} payloads: {refused} refused, {unfit} not fitting, {len(differ)} differ; "
        f"equal but with more remarks {more_remarks}, more filtered {more_filtered} "
        "(secrets in what normalization drops or rewrites)"
    )
    print(f"of which {len(less)} filtered less than scrubbing once normalized (must be 0)")
    for where in (less or differ)[:10]:
        print("  ", where)
    return 1 if less else 0


def _more_filtered(slow: Any, fast: Any) -> bool:
    """Whether ``fast`` is ``slow`` with more values filtered, and nothing else changed."""
    if fast == slow:
        return True
    if isinstance(fast, str) and privacy.FILTERED in fast:
        return True
    if isinstance(fast, dict) and isinstance(slow, dict) and fast.keys() == slow.keys():
        return all(_more_filtered(slow[k], fast[k]) for k in fast)
    if isinstance(fast, list) and isinstance(slow, list) and len(fast) == len(slow):
        return all(_more_filtered(a, b) for a, b in zip(slow, fast, strict=True))
    return False


def _filtered_less(slow: Any, fast: Any) -> bool:
    """Whether a string that ``slow`` filters is in ``fast``, at the same place, unfiltered
    (but for null, true and false, which normalization turns into strings where it wants
    one, a header's value: as sent, they are kept, saying only that something was set)."""
    if isinstance(slow, str):
        kept = fast in ("null", "true", "false")
        return (
            privacy.FILTERED in slow
            and isinstance(fast, str)
            and privacy.FILTERED not in fast
            and not kept
        )
    if isinstance(slow, dict) and isinstance(fast, dict):
        return any(_filtered_less(v, fast[k]) for k, v in slow.items() if k in fast)
    if isinstance(slow, list) and isinstance(fast, list):
        return any(_filtered_less(a, b) for a, b in zip(slow, fast, strict=False))
    return False


def _within(less: dict[str, Any], more: dict[str, Any]) -> bool:
    """Whether every remark of ``less`` is in ``more``."""
    keys = less.get("keys", {}).items() <= more.get("keys", {}).items()
    text = all(
        set(v) <= set(more.get("text", {}).get(k, ())) for k, v in less.get("text", {}).items()
    )
    return keys and text and less.get("fields") == more.get("fields")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("step", choices=("inputs", "run", "compare", "sent"))
    p.add_argument("paths", nargs="+")
    p.add_argument(
        "--hyperscan",
        action="store_true",
        help="find the candidates of payloads as sent with Hyperscan, as the digest's "
        "prepare process does (privacy/scan.py); default: the automaton",
    )
    args = p.parse_args()
    if args.hyperscan:
        privacy.use_hyperscan()
    if args.step == "inputs":
        make_inputs(args.paths[0])
    elif args.step == "run":
        scrub_all(args.paths[0], args.paths[1])
    elif args.step == "sent":
        sys.exit(sent_against_normalized(args.paths[0]))
    else:
        sys.exit(compare(args.paths[0], args.paths[1]))


if __name__ == "__main__":
    main()
