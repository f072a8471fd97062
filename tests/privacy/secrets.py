"""One made-up secret of every kind the default rules know, for the tests of every layer.

Each value is unique and long enough to be searched for byte for byte in a database file,
a dump, a response or a log.
"""

from __future__ import annotations

# Value patterns: found wherever they are, whatever the key.
CARD = "4111 1111 1111 1111"  # Visa test number (Luhn-valid)
CARD_DIGITS = "4012888888881881"  # another Visa test number, digits only
AMEX = "3782-822463-10005"
BEARER = "Bearer zq9bearerTOKENvalue7"
BEARER_SECRET = "zq9bearerTOKENvalue7"
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7pemBODY"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
AWS = "AKIAZQ7EXAMPLEKEY9QZ"
SLACK = "xoxb-123456789012-zqSLACKsecret42"
SLACK_HOOK = "https://hooks.slack.com/services/T0ZQ/B0ZQ/zqHOOKsecret42"
SLACK_HOOK_SECRET = "T0ZQ/B0ZQ/zqHOOKsecret42"
GITHUB = "ghp_zqGITHUBsecret0123456789abcdefghijkl"
GITLAB = "glpat-zqGITLABsecret012345"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ6cUpXVCJ9.zqJWTsignature42"
TBPAT = "tbpat-zqTRACEBOXsecret0123456789abcdefghijkl"
DSN_SECRET = "zqdsnsecret0123456789abcdef012345"
DSN = f"https://0123456789abcdef0123456789abcdef:{DSN_SECRET}@errors.example.com/42"
URL_PASSWORD = "zqURLpassw0rd"
URL = f"postgres://app:{URL_PASSWORD}@db.internal:5432/shop"

# Values found because of their key (or name=value in text).
PASSWORD = "zqHunter2password"
API_KEY = "zqApiKeyValue42"
SESSION = "zqSessionIdValue42"
CSRF = "zqCsrfTokenValue42"
COOKIE = f"sessionid={SESSION}; csrftoken={CSRF}"
PRIVATE_KEY = "zqPrivateKeyValue42"
CREDENTIALS = "zqCredentialsValue42"

VALUE_SECRETS = {
    "credit-card": CARD,
    "credit-card-digits": CARD_DIGITS,
    "amex": AMEX,
    "bearer-token": BEARER_SECRET,
    "private-key": PEM_BODY,
    "aws-access-key": AWS,
    "slack-token": SLACK,
    "slack-hook": SLACK_HOOK_SECRET,
    "github-token": GITHUB,
    "gitlab-token": GITLAB,
    "jwt": JWT,
    "tracebox-token": TBPAT,
    "dsn-secret": DSN_SECRET,
    "url-password": URL_PASSWORD,
}
TEXTS = {  # how each value secret is written where it appears in text
    "credit-card": f"card {CARD} declined",
    "credit-card-digits": f"charged {CARD_DIGITS}",
    "amex": f"amex {AMEX}",
    "bearer-token": f"sent {BEARER}",
    "private-key": PEM,
    "aws-access-key": f"key {AWS} rejected",
    "slack-token": f"slack {SLACK}",
    "slack-hook": f"hook {SLACK_HOOK}",
    "github-token": f"token {GITHUB}",
    "gitlab-token": f"token {GITLAB}",
    "jwt": f"jwt {JWT}",
    "tracebox-token": f"PRIVATE-TOKEN {TBPAT}",
    "dsn-secret": f"dsn {DSN}",
    "url-password": f"connect {URL}",
}
KEYED_SECRETS = {
    "password": PASSWORD,
    "api_key": API_KEY,
    "X-Api-Key": API_KEY,
    "sessionid": SESSION,
    "csrf_token": CSRF,
    "private_key": PRIVATE_KEY,
    "credentials": CREDENTIALS,
}
ALL = sorted({*VALUE_SECRETS.values(), *KEYED_SECRETS.values()})


def raw_event(event_id: str = "a" * 32) -> dict[str, object]:
    """An SDK-shaped event with a secret of every kind in every field the issue names:
    request data, headers, cookies, query strings (alone and in URLs), form bodies, frame
    local variables, extra, contexts, breadcrumbs' data and messages, tags, the user, the
    message and the exception. Value secrets are written in text; keyed secrets under
    sensitive names."""
    texts = " | ".join(TEXTS.values())
    frame_vars = {**KEYED_SECRETS, "note": texts, "safe_looking": f"see {JWT}"}
    return {
        "event_id": event_id,
        "platform": "python",
        "level": "error",
        "message": {"message": "login failed password=%s", "params": [PASSWORD]},
        "exception": {
            "values": [
                {
                    "type": "PaymentError",
                    "value": f"card {CARD} declined for {BEARER}",
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": "shop/pay.py",
                                "function": "charge",
                                "module": "shop.pay",
                                "lineno": 3,
                                "in_app": True,
                                "context_line": f'    api_key = "{API_KEY}"',
                                "pre_context": [f"    # {GITHUB}"],
                                "vars": frame_vars,
                            }
                        ]
                    },
                }
            ]
        },
        "request": {
            "url": f"https://shop.example.com/pay?token={TBPAT}&page=2",
            "method": "POST",
            "query_string": f"api_key={API_KEY}&dsn={DSN}",
            "data": {"card": CARD, "password": PASSWORD, "nested": {"credentials": CREDENTIALS}},
            "cookies": COOKIE,
            "headers": {
                "Authorization": BEARER,
                "Cookie": COOKIE,
                "X-Api-Key": API_KEY,
                "X-Custom": f"{AWS} {SLACK}",
                "Referer": f"https://x.example.com/?session={SESSION}",
            },
            "env": {"REMOTE_ADDR": "203.0.113.9", "SERVER_NAME": "web-1"},
        },
        "breadcrumbs": {
            "values": [
                {"category": "http", "message": f"POST {URL}", "data": {"token": GITLAB}},
                {"category": "auth", "message": f"Authorization: {BEARER}"},
                {"category": "log", "message": f"form user=bob&password={PASSWORD}"},
                {"category": "log", "message": texts},
            ]
        },
        "tags": {"session_id": SESSION, "card": CARD_DIGITS, "feature": "checkout"},
        "user": {"id": "42", "ip_address": "203.0.113.9", "data": {"api_key": API_KEY}},
        "contexts": {
            "payment": {"private_key": PRIVATE_KEY, "provider": f"uses {JWT}", "pem": PEM},
            "trace": {"trace_id": "0af7651916cd43dd8448eb211c80319c"},
        },
        "extra": {
            "order": {"id": 7, "card_number": CARD_DIGITS, "notes": texts},
            "password": PASSWORD,
            "slack": SLACK_HOOK,
            "aws": AWS,
            "pem": PEM,
            "cc_int": int(CARD_DIGITS),
        },
    }
