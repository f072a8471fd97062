"""SDK fingerprints: the grouping an application asks for (reference section 8,
"Fingerprint override"; docs.sentry.io "Fingerprint Rules")."""

from __future__ import annotations

import re
from collections.abc import Callable

from tracebox.grouping._fields import Fields, child, main_exception, tag, text
from tracebox.grouping.frames import crash_frame, file_basename, frame_function, location

# An entry is a variable only when the whole entry matches, as in Sentry.
_VARIABLE = re.compile(r"\{\{\s*(\S+)\s*\}\}")
_DEFAULT = "default"

Resolver = Callable[[Fields], str | None]


def fingerprint_entries(event: Fields) -> list[str] | None:
    """The SDK's fingerprint, or None when it is missing, not a list, or has no string."""
    raw = event.get("fingerprint")
    if not isinstance(raw, list):
        return None
    entries = [entry for entry in raw if isinstance(entry, str)]
    return entries or None


def fingerprint_components(
    entries: list[str], event: Fields, default: Callable[[Fields], list[str]]
) -> list[str]:
    """``["fingerprint", ...]`` with each variable replaced by its value.

    ``{{ default }}`` expands to the default components (``default(event)``), which makes
    a hybrid of default and custom grouping; a fingerprint of only ``{{ default }}`` is
    the default grouping itself, so its hash is the plain default hash.
    """
    names = [_variable(entry) for entry in entries]
    if all(name is not None and name.lower() == _DEFAULT for name in names):
        return default(event)
    components = ["fingerprint"]
    for entry, name in zip(entries, names, strict=True):
        if name is None:
            components.append(entry)
        elif name.lower() == _DEFAULT:
            components.extend(default(event))
        else:
            components.append(_resolve(name, entry, event))
    return components


def _variable(entry: str) -> str | None:
    match = _VARIABLE.fullmatch(entry)
    return match.group(1) if match else None


def _resolve(name: str, entry: str, event: Fields) -> str:
    """The variable's value; ``<no-...>`` when the event lacks it. An unknown variable
    stays the literal entry, as in Sentry."""
    key = name.lower()
    if key.startswith("tags."):
        tag_name = name[len("tags.") :]
        return tag(event, tag_name) or f"<no-value-for-tag-{tag_name}>"
    known = _RESOLVERS.get(key)
    if known is None:
        return entry
    resolver, missing = known
    return resolver(event) or missing


def _exception_field(key: str) -> Resolver:
    def resolve(event: Fields) -> str | None:
        exception = main_exception(event)
        return text(exception, key) if exception is not None else None

    return resolve


def _event_field(key: str) -> Resolver:
    return lambda event: text(event, key)


def _crash_frame_field(read: Callable[[Fields, str], str | None]) -> Resolver:
    """A field of the crash frame, normalized as for grouping so that a build or deploy
    does not change it (a raw Rust or Java name carries build hashes and counters)."""

    def resolve(event: Fields) -> str | None:
        frame = crash_frame(event)
        return None if frame is None else read(frame, text(event, "platform") or "other")

    return resolve


def _module(frame: Fields, _platform: str) -> str | None:
    return location(frame) if text(frame, "module") is not None else None


def _package(frame: Fields, _platform: str) -> str | None:
    # A native package is the binary's full path, which holds the install directory.
    package = text(frame, "package")
    return None if package is None else file_basename(package) or package


def _message(event: Fields) -> str | None:
    logentry = child(event, "logentry")
    return text(logentry, "formatted") or text(logentry, "message") or _main_value(event)


_main_value = _exception_field("value")
_type = _exception_field("type")
_function = _crash_frame_field(frame_function)
_module_name = _crash_frame_field(_module)
_package_name = _crash_frame_field(_package)
_abs_path = _crash_frame_field(lambda frame, _: text(frame, "abs_path"))
_filename = _crash_frame_field(lambda frame, _: text(frame, "filename"))

_RESOLVERS: dict[str, tuple[Resolver, str]] = {
    "transaction": (_event_field("transaction"), "<no-transaction>"),
    "type": (_type, "<no-type>"),
    "error.type": (_type, "<no-type>"),
    "value": (_main_value, "<no-value>"),
    "error.value": (_main_value, "<no-value>"),
    "function": (_function, "<no-function>"),
    "stack.function": (_function, "<no-function>"),
    "module": (_module_name, "<no-module>"),
    "stack.module": (_module_name, "<no-module>"),
    "package": (_package_name, "<no-package>"),
    "stack.package": (_package_name, "<no-package>"),
    "path": (_abs_path, "<no-path>"),
    "stack.abs_path": (_abs_path, "<no-path>"),
    "stack.filename": (_filename, "<no-filename>"),
    "level": (_event_field("level"), "<no-level>"),
    "logger": (_event_field("logger"), "<no-logger>"),
    "message": (_message, "<no-message>"),
}
