"""The pass over an event's payload as sent that finds where a rule could apply, with
Hyperscan (``TextScrubber.sent_matches``), in the process that turns it on.

The automaton (``text.py``) finds every sensitive word, and ~2 in 3 of them turn out to
be words in code and file names ("session" in ``requests/sessions.py``): each costs a
Python step to rule out (``blob._NAME_TAIL``). Here each sensitive name's pattern also
says what must follow it, so Hyperscan reports those words no more, and it needs no case
fold of the payload first: a fifth less CPU for the scrubbing (docs/performance.md,
"Hyperscan finds the candidates").

What it reports is the automaton's candidates that can pass ``_NAME_TAIL``, or more:
every candidate is still decided in Python, by the same code, so the scrubbed payload is
the same either way (tests/privacy/test_scan.py).

Hyperscan costs a process memory: ~3.5 MB for its library and a database, once the
patterns are compiled in a short-lived process of their own (``_compiled_apart``; in
the process itself, the compiler held 6 MB more). So only the digest's prepare process,
which does most of the preparing, turns it on (``use_hyperscan``); the others keep the
automaton, as does a platform without Hyperscan's wheel, or a project whose patterns
Hyperscan does not compile.
"""

from __future__ import annotations

import importlib
import logging
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, cast

log = logging.getLogger(__name__)
COMPILE_TIMEOUT_S = 60  # the default rules compile in ~0.1 s, their process starts in ~0.3

Match = tuple[int, int, int]  # pattern index, start, end (as ahocorasick_rs gives them)
SentPass = Callable[[bytes], list[Match]]

# ``blob._NAME_TAIL`` as Hyperscan matches it (no look-around, no possessive runs):
# "name=value" is "=" right after the name, and a '",' must be followed by anything but
# a key ('"requests/sessions.py","abs_path":'), the data's end included. Keep the two in
# step (tests/privacy/test_scan.py checks that this one matches wherever that one does).
_STRING_REST = rb'(?:[^"\\]|\\[\x00-\xff])*'  # a JSON string's characters, escapes whole
NAME_FOLLOWS = (
    rb"[A-Za-z0-9_\-.\[\]]*"
    rb"(?:=[>=]?[^ \t]|[ \t]*(?:"
    rb'"[ \t\r\n]*(?::|,[ \t\r\n]*(?:[^"\x20\t\r\n]|\z|"'
    + _STRING_REST
    + rb'(?:\\?\z|"[ \t\r\n]*(?:[^:\x20\t\r\n]|\z))))'
    rb"|\\[\x00-\xff][ \t]*[=:]|'[ \t]*[=:]|=[>=]?[ \t]*[\\']|:))"
)


_LETTERS = frozenset(b"abcdefghijklmnopqrstuvwxyz")  # as they are; other bytes escaped
_hyperscan: ModuleType | None = None  # loaded by use_hyperscan


def use_hyperscan() -> bool:
    """Find candidates with Hyperscan in this process from now on (a scrubber whose
    pass was built before, on its first use, keeps it); False when it is not installed."""
    global _hyperscan
    try:
        _hyperscan = importlib.import_module("hyperscan")
    except ImportError:  # a platform without its wheel (pyproject.toml's marker)
        log.info("scrubbing: no Hyperscan on this platform; the automaton finds candidates")
    return _hyperscan is not None


def hyperscan_pass(
    patterns: Sequence[bytes], follows: Sequence[bytes | None], marks: Sequence[bytes]
) -> SentPass | None:
    """What ``TextScrubber.sent_matches`` returns for ``patterns`` (folded: lowercase, a
    digit as "0"), each followed by what its ``follows`` regex matches (if any), and then
    ``marks``, found in the payload as it is; None unless ``use_hyperscan`` was called."""
    hyperscan = _hyperscan
    if hyperscan is None:
        return None
    expressions = [_expression(p, after) for p, after in zip(patterns, follows, strict=True)]
    expressions += [_expression(m, None) for m in marks]
    compiled = _compiled_apart(expressions)
    if compiled is None:
        return None
    return _Pass(hyperscan, hyperscan.loadb(compiled, hyperscan.HS_MODE_BLOCK))


def _compiled_apart(expressions: list[bytes]) -> bytes | None:
    """The database of ``expressions``, compiled in a short-lived process of its own and
    serialized: Hyperscan's compiler then costs this process none of its memory (the
    prepare process held 9.4 MB more after compiling, 3.6 MB more after loading)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", f"from {__name__} import _compile_main; _compile_main()"],
            input=pickle.dumps(expressions),
            capture_output=True,
            timeout=COMPILE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        log.error("scrubbing: cannot compile with Hyperscan (%s); the automaton finds them", e)
        return None
    if done.returncode != 0:
        why = (done.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
        log.error("scrubbing: Hyperscan refused the patterns (%s); the automaton finds them", why)
        return None
    return done.stdout


def _compile_main() -> None:
    """``_compiled_apart``'s process: the expressions in (pickled, on stdin), the
    serialized database out."""
    sys.stdout.buffer.write(_compile(pickle.loads(sys.stdin.buffer.read())))


def _compile(expressions: list[bytes]) -> bytes:
    """``_compiled_apart``'s other end: ``expressions`` compiled and serialized."""
    hyperscan = importlib.import_module("hyperscan")
    database = hyperscan.Database()
    database.compile(
        expressions=expressions,
        ids=list(range(len(expressions))),
        flags=[hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_SOM_LEFTMOST] * len(expressions),
    )
    return cast(bytes, hyperscan.dumpb(database))


def _expression(pattern: bytes, follows: bytes | None) -> bytes:
    """``pattern`` as a regex that matches where its folded form is (case is the flag's),
    then ``follows``."""
    literal = b"".join(
        b"[0-9]" if c == 0x30 else bytes((c,)) if c in _LETTERS else b"\\x%02x" % c for c in pattern
    )
    return literal + (follows or b"")


class _Pass:
    """A compiled database, scanned with one scratch space per thread."""

    def __init__(self, hyperscan: ModuleType, database: Any) -> None:
        self._hyperscan = hyperscan
        self._database = database
        self._local = threading.local()

    def __call__(self, data: bytes) -> list[Match]:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._hyperscan.Scratch(self._database)
        found: list[Match] = []
        self._database.scan(data, match_event_handler=_found, context=found, scratch=scratch)
        found.sort(key=_start)  # reported in the order they end; decided in the order they start
        return found


def _found(index: int, start: int, end: int, flags: int, found: object) -> None:
    cast(list[Match], found).append((index, start, end))


def _start(match: Match) -> tuple[int, int]:
    return match[1], match[0]
