"""Sentry's release file name rules (pure)."""

from __future__ import annotations

import pytest

from tracebox.symbolication.bundle import discover_debug_id, discover_sourcemap, normalize_debug_id
from tracebox.symbolication.urls import candidate_urls, resolve, source_filename


@pytest.mark.parametrize(
    ("abs_path", "names"),
    [
        (
            "https://shop.example/static/app.js",
            ["https://shop.example/static/app.js", "~/static/app.js"],
        ),
        (
            "https://shop.example/static/app.js?v=3#x",
            [
                "https://shop.example/static/app.js?v=3",
                "https://shop.example/static/app.js",
                "~/static/app.js?v=3",
                "~/static/app.js",
            ],
        ),
        ("app:///main.jsbundle", ["app:///main.jsbundle", "~/main.jsbundle"]),
        ("/static/app.js", ["/static/app.js", "~/static/app.js"]),
    ],
)
def test_candidate_names(abs_path: str, names: list[str]) -> None:
    assert list(candidate_urls(abs_path)) == names


def test_references_resolve_against_tilde_names_and_urls() -> None:
    assert resolve("~/static/app.min.js", "app.min.js.map") == "~/static/app.min.js.map"
    assert resolve("~/static/js/app.min.js", "../maps/app.map") == "~/static/maps/app.map"
    assert resolve("https://h/static/app.js", "../../src/a.js") == "https://h/src/a.js"
    assert resolve("~/a.js", "https://cdn/x.map") == "https://cdn/x.map"


@pytest.mark.parametrize(
    ("source", "filename"),
    [
        ("../../src/cart.js", "src/cart.js"),
        ("webpack://shop/./src/cart.js", "src/cart.js"),
        ("webpack:///./node_modules/x/index.js", "node_modules/x/index.js"),
        ("https://h/src/a%20b.js", "src/a b.js"),
    ],
)
def test_source_file_names(source: str, filename: str) -> None:
    assert source_filename(source) == filename


def test_debug_ids_and_map_references_in_files() -> None:
    assert (
        normalize_debug_id("4415A96AA91D5F13A2112B949DB18BF6")
        == "4415a96a-a91d-5f13-a211-2b949db18bf6"
    )
    assert normalize_debug_id("not a uuid") is None
    js = b"x();\n//# debugId=4415a96a-a91d-5f13-a211-2b949db18bf6\n//# sourceMappingURL=a.js.map\n"
    assert discover_debug_id("minified_source", js) == "4415a96a-a91d-5f13-a211-2b949db18bf6"
    assert discover_sourcemap(js) == "a.js.map"
    assert discover_debug_id("source_map", b'{"debug_id":"4415a96a-a91d-5f13-a211-2b949db18bf6"}')
    assert discover_debug_id("source_map", b"{broken") is None
