"""The tags an event is counted under (``error_tags``): the SDK's own tags, plus keys
derived from the event's fields as Sentry tags every event (``level``, ``environment``,
``release``, ``user.id``, ``user.email``, ``user.username``, ``browser``, ``os``,
``url``, and ``handled`` / ``mechanism`` from the exceptions' mechanism). Pure; the
input is a normalized event, whose nested objects are still untrusted, so every value is
type-checked.
"""

from __future__ import annotations

from typing import Any

from tracebox.protocol.attributes import MAX_TAG_VALUE_CHARS

DERIVED_KEYS = (
    "level",
    "environment",
    "release",
    "user.id",
    "user.email",
    "user.username",
    "browser",
    "os",
    "url",
    "handled",  # "no" when an exception reached no handler, "yes" when all say handled
    "mechanism",  # the main exception's mechanism type (excepthook, onunhandledrejection...)
)


def event_tags(event: dict[str, Any]) -> list[tuple[str, str]]:
    """``(key, value)`` pairs, one per key: the SDK's tags first (a tag the SDK set wins
    over a derived key of the same name), then the derived keys that have a value.
    Values are at most ``MAX_TAG_VALUE_CHARS`` long, as the SDK's tags are."""
    tags = [(pair[0], pair[1]) for pair in event.get("tags") or () if _is_pair(pair)]
    seen = {pair[0] for pair in tags}
    for key, value in _derived(event):
        if isinstance(value, str) and key not in seen and value.strip():
            tags.append((key, value[:MAX_TAG_VALUE_CHARS]))
    return tags


def _derived(event: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    # One tuple rather than a generator: this runs for every event.
    user = _object(event.get("user"))
    contexts = _object(event.get("contexts"))
    mechanisms = [
        _object(_object(x).get("mechanism"))
        for x in _object(event.get("exception")).get("values") or ()
    ]
    handled = [m.get("handled") for m in mechanisms if isinstance(m.get("handled"), bool)]
    return (
        ("level", event.get("level")),
        ("environment", event.get("environment")),
        ("release", event.get("release")),
        ("user.id", user.get("id")),
        ("user.email", user.get("email")),
        ("user.username", user.get("username")),
        ("browser", _name_and_version(contexts.get("browser"))),
        ("os", _name_and_version(contexts.get("os") or contexts.get("client_os"))),
        ("url", _without_query(_object(event.get("request")).get("url"))),
        ("handled", ("no" if False in handled else "yes") if handled else None),
        ("mechanism", mechanisms[-1].get("type") if mechanisms else None),
    )


def _is_pair(pair: Any) -> bool:
    if type(pair) is list and len(pair) == 2:  # as normalized: the common case
        key, value = pair
        if type(key) is str and type(value) is str:
            return True
    return (
        isinstance(pair, list | tuple) and len(pair) == 2 and all(isinstance(x, str) for x in pair)
    )


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _name_and_version(context: Any) -> str | None:
    """``"Chrome 120.0"`` from a browser or os context, as Sentry's ``browser`` tag."""
    name = _object(context).get("name")
    if not isinstance(name, str):
        return None
    version = context.get("version")
    return f"{name} {version}" if isinstance(version, str) and version else name


def _without_query(url: Any) -> str | None:
    # The query string would make every URL its own value (Sentry's tag leaves it out too).
    if not isinstance(url, str):
        return None
    return url.split("#", 1)[0].split("?", 1)[0]
