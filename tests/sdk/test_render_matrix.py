"""docs/sdk-compatibility.md ends with the item types table (tests/sdk/item_types.md) as
``make sdk-matrix`` renders it, so the page and the table cannot drift apart."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sdk.render_matrix import ITEM_TYPES, PROGRAMS, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "sdk-compatibility.md"


def test_the_page_ends_with_the_item_types_table() -> None:
    table = ITEM_TYPES.read_text()
    assert table.startswith("## Item types\n")
    programs = json.loads(PROGRAMS.read_text())["programs"]
    rendered = render({}, programs)
    assert rendered.endswith("\n\n" + table)
    assert DOC.read_text().endswith("\n\n" + table)
    for item_type in ("event", "attachment", "feedback", "client_report", "log", "transaction"):
        assert f"`{item_type}`" in table
