"""The scrubbing rules: their ids (stored with every scrubbed value), what each matches,
and which setting a user changes to keep a value it filtered.

Key names are compared "normalized": lowercase, with ``- _ . [ ]`` and spaces removed, so
``API_KEY``, ``api-key``, ``apiKey`` and ``Api Key`` are one name (issue 11: case- and
separator-insensitive). Sources: Sentry's server-side scrubbing defaults (docs.sentry.io
"Server-Side Data Scrubbing") and Relay's ``PASSWORD_KEY_REGEX`` and sensitive cookie
names (``relay-pii``), written out again here as lists of words.
"""

from __future__ import annotations

from dataclasses import dataclass

FILTERED = "[Filtered]"  # Sentry's replacement text, so users recognise it

# A key containing one of these (normalized) is sensitive.
SENSITIVE_WORDS: tuple[str, ...] = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "auth",  # authorization, authentication, oauth, x-auth-token ...
    "credential",
    "cookie",
    "session",
    "sessid",  # PHPSESSID, JSESSIONID-like names
    "csrf",
    "xsrf",
    "privatekey",
    "signature",  # signed URLs: X-Amz-Signature, sig tokens
    "bearer",
    "creditcard",
    "cardnumber",
)
# A key equal to one of these is sensitive (as a substring they would match too much:
# "otp" is in "footprint", "pin" in "spinner", "sid" in "inside").
SENSITIVE_EXACT: frozenset[str] = frozenset(
    {"otp", "totp", "twofactor", "2fa", "mfa", "pin", "cvv", "cvv2", "cvc", "sid", "connectsid"}
)
# Keys that contain a sensitive word but name no secret.
NOT_SENSITIVE: frozenset[str] = frozenset(
    {"author", "authors", "authored", "authority", "authorized", "authenticated"}
)
# Header-style keys whose value runs to the end of the line in text
# ("Authorization: Basic dXNlcjpwYXNz"), not to the first space.
LINE_KEYS: frozenset[str] = frozenset(
    {"authorization", "proxyauthorization", "cookie", "setcookie", "xapikey", "xauthtoken"}
)


def normalize_key(key: str) -> str:
    """``X-Api-Key`` -> ``xapikey``: how key names are compared."""
    return key.lower().translate(_SEPARATORS)


_SEPARATORS = str.maketrans("", "", "-_.[] \t")


@dataclass(frozen=True)
class Rule:
    id: str  # stored in the payload's remarks; stable
    title: str
    description: str
    setting: str  # what to change to keep such a value


SENSITIVE_KEY = "sensitive-key"
ADDITIONAL_FIELD = "additional-field"
CREDIT_CARD = "credit-card"
BEARER_TOKEN = "bearer-token"
PRIVATE_KEY = "private-key"
AWS_ACCESS_KEY = "aws-access-key"
SLACK_TOKEN = "slack-token"
GITHUB_TOKEN = "github-token"
GITLAB_TOKEN = "gitlab-token"
JWT = "jwt"
TRACEBOX_TOKEN = "tracebox-token"
URL_PASSWORD = "url-password"
IP_ANONYMIZED = "ip-anonymized"
IP_REMOVED = "ip-removed"

_SCRUBBING = "Turn data scrubbing off for the project (Settings > Privacy)"
_SAFE = "Add the field's name to Safe fields (Settings > Privacy)"

RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule(
            SENSITIVE_KEY,
            "Sensitive field name",
            "The field's name contains password, secret, token, auth, cookie, session, "
            "csrf, api_key, private_key, credential or a similar word; the value is "
            "filtered wherever the name appears (objects, headers, query strings, "
            "forms, name=value text).",
            _SAFE,
        ),
        Rule(
            ADDITIONAL_FIELD,
            "Additional sensitive field",
            "The field's name contains one of this project's additional sensitive fields.",
            "Remove the name from Additional sensitive fields (Settings > Privacy)",
        ),
        Rule(
            CREDIT_CARD,
            "Credit card number",
            "13 to 19 digits with a card network's prefix that pass the Luhn check.",
            _SCRUBBING,
        ),
        Rule(BEARER_TOKEN, "Bearer token", "The credentials after 'Bearer'.", _SCRUBBING),
        Rule(PRIVATE_KEY, "Private key", "The body of a PEM private key block.", _SCRUBBING),
        Rule(AWS_ACCESS_KEY, "AWS access key", "An AWS access key id (AKIA...).", _SCRUBBING),
        Rule(SLACK_TOKEN, "Slack token", "A Slack token (xox...) or webhook.", _SCRUBBING),
        Rule(GITHUB_TOKEN, "GitHub token", "A GitHub token (ghp_, github_pat_...).", _SCRUBBING),
        Rule(GITLAB_TOKEN, "GitLab token", "A GitLab token (glpat-...).", _SCRUBBING),
        Rule(JWT, "JSON Web Token", "A JWT (eyJ....eyJ....).", _SCRUBBING),
        Rule(TRACEBOX_TOKEN, "Tracebox token", "A Tracebox personal access token.", _SCRUBBING),
        Rule(
            URL_PASSWORD,
            "Password in a URL",
            "The password of user:password@host in a URL, such as a DSN's secret key.",
            _SCRUBBING,
        ),
        Rule(
            IP_ANONYMIZED,
            "IP address anonymised",
            "The last octet of an IPv4 address, the last 80 bits of an IPv6 address, "
            "were set to zero.",
            "Set IP addresses to Store (Settings > Privacy)",
        ),
        Rule(
            IP_REMOVED,
            "IP address removed",
            "The IP address was not stored.",
            "Set IP addresses to Store, and allow the user's IP (Settings > Privacy)",
        ),
    )
}
