"""Source maps end to end: a real bundler, the real sentry-cli, a real browser SDK.

The app (tests/sourcemaps/app) is bundled and minified by esbuild; sentry-cli (npm
@sentry/cli 3.8.0) injects debug IDs and uploads against a live Tracebox; Chromium
runs the page with @sentry/browser 11.12.0 bundled in, the checkout button throws, and
the frames are checked through the REST API and on the error's details page:
- with debug IDs (two builds of the same code: one error); the first build is uploaded
  by running docs/sourcemaps.md's three CI commands exactly as written there,
- without debug IDs, by release and URL (``~/static/app.min.js``),
- without any upload: the frames say why they were not mapped, in the API and on the
  details page.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.browser.harness import sign_in
from tests.helpers import LiveServer, free_port, start_server, wait_for
from tests.sourcemaps.toolchain import (
    APP,
    COMMAND_TIMEOUT_SECONDS,
    ROOT,
    Toolchain,
    serve_site,
    toolchain_dir,
)
from tracebox.accounts import personal_tokens, users
from tracebox.config import Settings
from tracebox.models import AccessLevel
from tracebox.store import Database, client_keys, members, projects

pytestmark = pytest.mark.slow

ORG, SLUG = "acme", "web"
THROW_LINE = "throw new TypeError(`price must be a number, got ${typeof cents}`);"


def line_of(source: str, text: str) -> int:
    """The 1-based line of ``text`` in an app source file."""
    lines = (APP / "src" / source).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


@dataclass
class World:
    server: LiveServer
    db: Database
    tools: Toolchain
    project_id: int
    dsn: str
    token: str  # a Developer's personal access token, as CI would use
    root_password: str

    @property
    def cli_env(self) -> dict[str, str]:
        return {
            "SENTRY_URL": self.server.url,
            "SENTRY_ORG": ORG,
            "SENTRY_PROJECT": SLUG,
            "SENTRY_AUTH_TOKEN": self.token,
        }

    def api(self, path: str) -> Any:
        response = httpx.get(
            f"{self.server.url}/api/v4/projects/{self.project_id}/error_tracking{path}",
            headers={"PRIVATE-TOKEN": self.token},
            timeout=10,
        )
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tools = Toolchain(toolchain_dir(), tmp_path_factory.mktemp("app"))
    port = free_port()
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("tracebox") / "data",
        database_url="",
        external_url=f"http://127.0.0.1:{port}",
        spool_commit_interval_ms=0.5,
        digest_poll_interval_ms=5,
    )
    server = start_server(settings, port=port)
    db = Database(settings.resolved_database_url())
    try:
        with db.write() as conn:
            project = projects.create(conn, f"{ORG}/{SLUG}", "Web shop")
            projects.put_settings(conn, project.id, active=True, integrated=True)
            members.add(conn, project.id, 1, AccessLevel.OWNER)  # root
            key = client_keys.create(conn, project.id)
            dev = users.create_user(
                conn,
                username="ci",
                email="ci@example.com",
                name="CI",
                password="ci-password-123",
                is_admin=False,
            )
            members.add(conn, project.id, dev.id, AccessLevel.DEVELOPER)
            _, token = personal_tokens.issue(
                conn, dev.id, name="ci", scopes=["api"], expires_on=None
            )
        password = (settings.data_dir / "initial_root_password").read_text().strip()
        dsn = f"http://{key.public_key}@127.0.0.1:{port}/{project.id}"
        yield World(server, db, tools, project.id, dsn, token, password)
    finally:
        db.dispose()
        server.stop()


def throw_in_browser(browser: Browser, site: Path, world: World, release: str) -> str:
    """Load the page, press Checkout (it throws), return the id of the event sent."""
    config = {"dsn": world.dsn, "release": release}
    with serve_site(site, config) as url:
        page = browser.new_page()
        try:
            page.goto(url)
            expect(page.locator("body[data-ready=true]")).to_have_count(1)
            page.get_by_role("button", name="Checkout").click()
            expect(page.locator("body[data-event-id]")).to_have_count(1, timeout=20_000)
            event_id = page.locator("body").get_attribute("data-event-id")
        finally:
            page.close()
    assert event_id
    return event_id.replace("-", "")


def stored_event(world: World, event_id: str) -> tuple[int, dict[str, Any]]:
    """The error id and the event, once the digest stored it (through /api/v4)."""

    def find() -> tuple[int, dict[str, Any]] | None:
        for error in world.api("/errors?status=all&per_page=100"):
            for event in world.api(f"/errors/{error['id']}/events?per_page=100"):
                if event["event_id"] == event_id:
                    return int(error["id"]), event
        return None

    found: tuple[int, dict[str, Any]] = wait_for(find, timeout=30, interval=0.2)
    return found


def frame_of(event: dict[str, Any], function: str) -> dict[str, Any]:
    frames = event["exceptions"][-1]["stack_trace"]
    return next(f for f in frames if f["function"] == function)


def upload(world: World, site: Path, release: str, *, inject: bool) -> None:
    """The CI steps of docs/sourcemaps.md, with the real sentry-cli."""
    env = world.cli_env
    world.tools.sentry_cli(env, "releases", "new", release)
    if inject:
        world.tools.sentry_cli(env, "sourcemaps", "inject", str(site / "static"))
    world.tools.sentry_cli(
        env,
        "sourcemaps",
        "upload",
        "--release",
        release,
        "--url-prefix",
        "~/static",
        str(site / "static"),
    )
    world.tools.sentry_cli(env, "releases", "finalize", release)
    world.tools.sentry_cli(env, "deploys", "new", "--release", release, "-e", "production")


def documented_ci() -> tuple[set[str], list[str]]:
    """docs/sourcemaps.md's CI block: the variables it exports and its numbered commands."""
    text = (ROOT / "docs" / "sourcemaps.md").read_text()
    block = text.split("## In CI: three commands", 1)[1].split("```sh\n", 1)[1]
    block = block.split("```", 1)[0]
    variables = set(re.findall(r"^export (\w+)=", block, re.MULTILINE))
    commands = re.findall(r"^(npx sentry-cli .+?)\s+# \d\. ", block, re.MULTILINE)
    return variables, commands


def upload_as_documented(world: World, site: Path, release: str) -> None:
    """Run the documented CI commands word for word (``npx sentry-cli``: the npm package's
    launcher and binary) in the project checkout whose build is ``./dist``."""
    variables, commands = documented_ci()
    assert variables == set(world.cli_env)
    assert [c.split()[2:4] for c in commands] == [
        ["sourcemaps", "inject"],
        ["sourcemaps", "upload"],
        ["releases", "finalize"],
    ]
    assert site.name == "dist"
    env = {**os.environ, **world.cli_env, "VERSION": release, "npm_config_update_notifier": "false"}
    for command in commands:
        done = subprocess.run(
            ["bash", "-euc", command],
            cwd=site.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_SECONDS,
        )
        assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"


@contextmanager
def details_page(browser: Browser, world: World, error_id: int) -> Iterator[tuple[Page, Locator]]:
    """The error's details page, signed in: the page and its Stack trace section."""
    page = browser.new_page()
    try:
        sign_in(page, world.server.url, "root", world.root_password)
        page.goto(f"{world.server.url}/{ORG}/{SLUG}/-/error_tracking/{error_id}")
        yield page, page.locator("section", has=page.get_by_role("heading", name="Stack trace"))
    finally:
        page.close()


def assert_mapped(event: dict[str, Any]) -> None:
    """Original file names, lines, function names and source lines (REST /api/v4)."""
    thrower = frame_of(event, "formatPrice")
    throw_at = line_of("format.js", THROW_LINE)
    assert (thrower["filename"], thrower["lineno"]) == ("src/format.js", throw_at)
    assert thrower["symbolicated"] is True
    lines = dict(thrower["context"])
    assert lines[throw_at].strip() == THROW_LINE
    assert lines[throw_at - 1].strip() == 'if (typeof cents !== "number") {'
    total = frame_of(event, "Cart.total")
    total_at = line_of("cart.js", "return formatPrice(sum);")
    assert (total["filename"], total["lineno"]) == ("src/cart.js", total_at)
    assert dict(total["context"])[total_at].strip() == "return formatPrice(sum);"
    checkout = frame_of(event, "checkout")
    checkout_at = line_of("main.js", "textContent = cart.total()")
    assert (checkout["filename"], checkout["lineno"]) == ("src/main.js", checkout_at)
    raw = event["exceptions"][-1]["raw_stack_trace"]
    assert raw and all("app.min.js" in (f["filename"] or "") for f in raw[-3:])


def resolved_with(world: World, error_id: int) -> set[tuple[str, str]]:
    """How the latest event's mapped frames found their map (Sentry's /api/0 shape)."""
    response = httpx.get(
        f"{world.server.url}/api/0/issues/{error_id}/events/latest/",
        headers={"Authorization": f"Bearer {world.token}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    frames = response.json()["entries"][0]["data"]["values"][-1]["stacktrace"]["frames"]
    return {
        (f["data"]["resolvedWith"], f["data"]["sourcemap"])
        for f in frames
        if f["data"].get("symbolicated")
    }


def test_debug_ids_map_frames_and_two_builds_are_one_error(browser: Browser, world: World) -> None:
    first = world.tools.build("build-one")
    upload_as_documented(world, first, "shop@1.0.0")
    error_id, event = stored_event(world, throw_in_browser(browser, first, world, "shop@1.0.0"))
    assert_mapped(event)
    assert resolved_with(world, error_id) == {("debug_id", "~/static/app.min.js.map")}

    # The same code built again: other minified names and columns, other debug IDs.
    second = world.tools.build("build-two-with-a-longer-label-so-every-column-moves")
    assert (second / "static/app.min.js").read_bytes() != (first / "static/app.min.js").read_bytes()
    upload(world, second, "shop@2.0.0", inject=True)
    again_id, again = stored_event(world, throw_in_browser(browser, second, world, "shop@2.0.0"))
    assert_mapped(again)
    assert again_id == error_id, "one bug in two builds must be one error"
    minified = [f["colno"] for f in again["exceptions"][-1]["raw_stack_trace"][-1:]]
    first_minified = [f["colno"] for f in event["exceptions"][-1]["raw_stack_trace"][-1:]]
    assert minified != first_minified


def test_release_and_url_matching_without_debug_ids(browser: Browser, world: World) -> None:
    site = world.tools.build("build-three")
    upload(world, site, "shop@3.0.0", inject=False)
    assert b"//# debugId=" not in (site / "static/app.min.js").read_bytes()
    error_id, event = stored_event(world, throw_in_browser(browser, site, world, "shop@3.0.0"))
    assert_mapped(event)
    assert resolved_with(world, error_id) == {("release", "~/static/app.min.js.map")}
    with details_page(browser, world, error_id) as (_, stack):
        newest = stack.locator("li.frame").first
        expect(newest).to_contain_text("src/format.js")
        expect(newest).to_contain_text("formatPrice")
        expect(newest).to_contain_text("Mapped by source map from")
        expect(stack.locator(".frame-unmapped")).to_have_count(0)


def test_missing_artifacts_are_explained(browser: Browser, world: World) -> None:
    site = world.tools.build("build-four")
    error_id, event = stored_event(world, throw_in_browser(browser, site, world, "shop@4.0.0"))
    thrower = event["exceptions"][-1]["stack_trace"][-1]
    assert thrower["filename"].endswith("/static/app.min.js")
    assert thrower["symbolicated"] is False
    assert thrower["symbolication_error"] == "missing_artifact"
    assert "Nothing was uploaded for release shop@4.0.0" in thrower["symbolication_detail"]
    # What the user sees: each frame marked "not mapped", the reason said once.
    with details_page(browser, world, error_id) as (_, stack):
        newest = stack.locator("li.frame").first
        expect(newest).to_contain_text("app.min.js")
        expect(newest.locator(".badge", has_text="not mapped")).to_be_visible()
        expect(newest.locator(".badge", has_text="source map")).to_have_count(0)
        note = stack.get_by_role("note")
        expect(note).to_have_count(1)
        expect(note).to_contain_text(
            "No artifact for this release: Nothing was uploaded for release shop@4.0.0"
        )
        expect(note).to_contain_text("See docs/sourcemaps.md.")

    no_release_id, no_release = stored_event(world, throw_in_browser(browser, site, world, ""))
    frame = no_release["exceptions"][-1]["stack_trace"][-1]
    assert frame["symbolication_error"] == "no_debug_id"
    assert "has no debug ID and the event names no release" in frame["symbolication_detail"]
    with details_page(browser, world, no_release_id) as (_, stack):  # its newest event
        expect(stack.get_by_role("note").first).to_contain_text(
            "No debug ID: " + frame["symbolication_detail"]
        )


def test_details_page_artifacts_and_releases(browser: Browser, world: World) -> None:
    site = world.tools.build("build-five")
    upload(world, site, "shop@5.0.0", inject=True)
    error_id, _ = stored_event(world, throw_in_browser(browser, site, world, "shop@5.0.0"))
    with details_page(browser, world, error_id) as (page, stack):
        newest = stack.locator("li.frame").first
        expect(newest).to_contain_text("src/format.js")
        expect(newest).to_contain_text("formatPrice")
        expect(newest).to_contain_text(f"line {line_of('format.js', THROW_LINE)}")
        expect(newest.locator(".src-line.current")).to_contain_text(THROW_LINE)
        expect(newest).to_contain_text("Mapped by source map from")
        page.get_by_role("link", name="Show raw (minified) frames").click()
        expect(stack.locator("li.frame").first).to_contain_text("app.min.js")
        expect(page.get_by_role("link", name="Show original source")).to_be_visible()

        page.goto(f"{world.server.url}/{ORG}/{SLUG}/-/error_tracking/releases")
        row = page.locator("table.release-list tr", has_text="shop@5.0.0")
        expect(row).to_contain_text("production")
        expect(row).to_contain_text("2 files")
        row.get_by_role("link").click()
        expect(page.get_by_role("heading", name="Artifacts shop@5.0.0")).to_be_visible()
        expect(page.get_by_text("~/static/app.min.js.map")).to_be_visible()
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Delete ~/static/app.min.js.map").click()
        expect(page.get_by_text("~/static/app.min.js.map was deleted.")).to_be_visible()
