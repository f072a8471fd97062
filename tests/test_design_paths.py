"""docs/design.md's "Two paths to follow first" names real code: every dotted name that
starts with a Tracebox module (``store.cursors.load``, ``digest.prepare.Preparer.prepare``)
must import, so a rename that leaves the walkthrough behind fails here."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
NAME = re.compile(r"`([a-z_][\w]*(?:\.[A-Za-z_]\w*)+)(?:\([^`]*\))?`")


def section() -> str:
    text = DESIGN.read_text()
    return text.split("## Two paths to follow first", 1)[1].split("\n## ", 1)[0]


def module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"tracebox.{name}")
    except ModuleNotFoundError:
        return None


def resolves(dotted: str) -> bool:
    if dotted.endswith(".py"):  # a file: ``asgi.py``
        return (ROOT / "src" / "tracebox" / dotted).is_file()
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        found = module(".".join(parts[:split]))
        if found is not None:
            obj: object = found
            for attribute in parts[split:]:
                if not hasattr(obj, attribute):
                    return False
                obj = getattr(obj, attribute)
            return True
    return True  # not a module path (``errors.status``, a column): not checked here


def test_every_named_function_exists() -> None:
    names = set(NAME.findall(section()))
    checked = {n for n in names if module(n.split(".")[0]) is not None}
    assert len(checked) > 30, sorted(names)  # the walkthrough is still there
    assert [n for n in sorted(checked) if not resolves(n)] == []


def test_a_stale_name_is_caught() -> None:
    assert not resolves("store.digest.load_cursors")
    assert resolves("store.cursors.load")
