"""Function and module names as grouping sees them: stable across builds and deploys.

Each rule removes a part of a name that a compiler, runtime or framework generates
afresh (a counter, an address, a hash) so that the same code keeps the same name. The
rules follow Sentry's frame normalisation (reference section 8; Sentry
``grouping/strategies/newstyle.py``) where it has one. Rules keyed on a marker no other
language produces run for every platform; the rest only for their platform.

Both functions are memoised: a project's frames repeat across thousands of events. The
caches are bounded in entries and hold only short names, so a client sending huge
names cannot make them hold much memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

_Result = TypeVar("_Result")

# Bounds of the memo caches: entries, and the length of a name worth caching.
CACHE_ENTRIES = 8192
CACHED_LENGTH = 256

_JS_PLATFORMS = frozenset({"javascript", "node"})
_GO_PLATFORMS = frozenset({"go"})
_NATIVE_PLATFORMS = frozenset({"native", "rust", "c", "cocoa", "objc", "swift"})

# Placeholders symbolicators and SDKs use when a name is unknown (Sentry ignores `<unknown>`).
_NO_NAME = frozenset({"?", "<unknown>", "<redacted>"})

# Rails compiles each template into a method named after its path plus the template's
# hash and an object id, e.g. `_app_views_orders_show_html_erb__1234_5678`; a negative
# hash gives three underscores. Sentry strips this suffix.
_TEMPLATE_SUFFIX = re.compile(r"_{2,3}\d+_\d+$")
# PHP 8.4 names closures after their declaring function and line: `{closure:Foo::bar():12}`.
_PHP_CLOSURE = re.compile(r"\{closure:[^}]*\}")
# PHP anonymous classes embed the declaring file, line and a counter:
# `class@anonymous/var/www/src/Foo.php:12$0`.
_PHP_ANONYMOUS_CLASS = re.compile(r"class@anonymous.*?(?:\$[0-9a-f]+|(?=::)|$)", re.DOTALL)
# javac numbers lambda bodies per class (`lambda$placeOrder$0`) and synthetic accessors
# (`access$000`); Kotlin numbers its lambdas (`handle$lambda$0`, `handle$lambda-1`).
_JAVA_LAMBDA = re.compile(r"^(lambda\$.*)\$\d+$")
_JAVA_ACCESSOR = re.compile(r"^access\$\d+$")
_KOTLIN_LAMBDA = re.compile(r"\$lambda[-$]\d+")
# rustc appends a hash of the crate build to every symbol: `shop::db::get::h0123456789abcdef`.
_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")
# Go numbers closures in order of appearance: `Create.func1`, `Create.func1.2`, and since
# Go 1.21 `gowrap1` / `deferwrap1` for go and defer statements.
_GO_CLOSURE = re.compile(r"\.(func|gowrap|deferwrap)\d+(?:\.\d+)*")
_JS_PREFIXES = ("async ", "new ", "Object.", "Module.")

# JVM code generation puts counters, addresses and hashes into class names; Sentry cleans
# `$$Lambda$` and `GeneratedMethodAccessor123` the same way.
_JAVA_CODEGEN: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\$\$Lambda(?:\$\d+)?(?:/(?:0x)?[0-9a-fA-F]+)?"), "$$Lambda"),
    (re.compile(r"\$\$([A-Za-z]+)\$\$\w+"), r"$$\1"),  # $$EnhancerBySpringCGLIB$$5e4a3f2b
    (re.compile(r"_\$\$_(jvst|javassist)\w*"), r"_$$_\1"),
    (re.compile(r"\$(HibernateProxy|ByteBuddy|MockitoMock)\$\w+"), r"$\1"),
    (re.compile(r"\$Proxy\d+"), "$Proxy"),
    (re.compile(r"\bjdk\.proxy\d+"), "jdk.proxy"),
    (re.compile(r"(Generated(?:Serialization)?(?:Constructor|Method)Accessor)\d+"), r"\1"),
)


def memoized(function: Callable[[str], _Result]) -> Callable[[str], _Result]:
    """``function`` with a bounded cache for arguments up to ``CACHED_LENGTH`` long."""
    cached = lru_cache(maxsize=CACHE_ENTRIES)(function)

    def call(argument: str) -> _Result:
        return cached(argument) if len(argument) <= CACHED_LENGTH else function(argument)

    call.__doc__ = function.__doc__
    return call


def normalize_function(function: str, platform: str) -> str | None:
    """The grouping form of a frame's function name, or None when it names nothing.

    ``platform`` is the frame's (else the event's) platform; it enables the rules that
    could misfire on another language's names.
    """
    if len(function) > CACHED_LENGTH:
        return _normalize_function(function, platform)
    return _cached_normalize_function(function, platform)


def _normalize_function(function: str, platform: str) -> str | None:
    name = function.strip()
    if not name or name in _NO_NAME:
        return None
    name = _normalize_marked(name)
    if platform in _JS_PLATFORMS:
        name = _normalize_javascript(name)
    elif platform in _GO_PLATFORMS and ("func" in name or "wrap" in name):
        name = _GO_CLOSURE.sub(r".\1", name)
    elif platform in _NATIVE_PLATFORMS and "<" in name and "operator" not in name:
        name = _strip_generics(name)
    return name or None


_cached_normalize_function = lru_cache(maxsize=CACHE_ENTRIES)(_normalize_function)


@memoized
def normalize_module(module: str) -> str:
    """A frame's module with JVM code-generation counters and hashes removed."""
    if "$" in module or "Accessor" in module or "jdk.proxy" in module:
        for pattern, replacement in _JAVA_CODEGEN:
            module = pattern.sub(replacement, module)
    return module


def _normalize_marked(name: str) -> str:
    """Rules whose marker appears only in the language they are for."""
    if name.startswith("block "):
        name = _ruby_block(name)
    if "__" in name and name[-1].isdigit():
        name = _TEMPLATE_SUFFIX.sub("", name)
    if "$" in name:
        name = _JAVA_LAMBDA.sub(r"\1", name)
        name = _JAVA_ACCESSOR.sub("access$", name)
        name = _KOTLIN_LAMBDA.sub("$lambda", name)
    if "{closure:" in name:
        name = _PHP_CLOSURE.sub("{closure}", name)
    if "@anonymous" in name:
        name = _PHP_ANONYMOUS_CLASS.sub("class@anonymous", name)
    if "::h" in name:
        name = _RUST_HASH.sub("", name)
    return name


def _ruby_block(name: str) -> str:
    """``block (2 levels) in foo`` -> ``block in foo``: the nesting depth changes whenever
    a block is wrapped in another, the enclosing method does not. (Sentry keeps only
    ``block``; keeping the method tells blocks of different methods apart.)"""
    _, found, method = name.partition(" in ")
    return f"block in {method}" if found and method else name


def _normalize_javascript(name: str) -> str:
    """V8 decorates names with the receiver and call style: ``Object.getUser``,
    ``new OrderService``, ``async load``, ``Layer.handle [as handle_request]``. Sentry
    drops ``Object.`` and ``Module.``; the others vary with the call site the same way."""
    if name.endswith("]") and " [as " in name:
        name = name.partition(" [as ")[0]
    for prefix in _JS_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
    return name


def _strip_generics(name: str) -> str:
    """Drop generic parameter lists: ``Pool<T>::get`` -> ``Pool::get``. A ``<`` that opens
    the name or follows a space is Rust's qualified self (``<Vec<T> as Drop>::drop``) and
    is kept, without its own generics; ``->`` inside a parameter list is not a bracket."""
    kept: list[str] = []
    depth = 0
    previous = ""
    for char in name:
        if char == "<" and (depth or previous not in ("", " ", "(", ",")):
            depth += 1
        elif char == ">" and depth and previous != "-":
            depth -= 1
        elif not depth:
            kept.append(char)
        previous = char
    return "".join(kept).replace("::::", "::").removesuffix("::")
