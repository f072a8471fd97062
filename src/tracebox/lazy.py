"""Package names imported on first use (PEP 562), for packages whose heavy parts one
process needs and another does not (the background process and httpx, for one)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``package.<where[name]>`` when ``name`` is
    first read, and keeps it in the package's namespace for the next read."""
    namespace = vars(importlib.import_module(package))

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        namespace[name] = value
        return value

    return __getattr__
