"""Two `webhost serve` replicas on one PostgreSQL behind Debian's nginx (the shipped deploy/webhost.conf.template),
in a real Chromium (tests/support/team.py): sign in, call a tool, open an MCP app, answer an input request,
all through nginx; then the replica holding the page's WebSocket is killed and the page carries on on
the other one, still signed in: in token mode, and signed in with OIDC (the session is in the database).
And an app opened on replica A whose sandbox frame replica B serves.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.oidc import run_provider
from tests.support.postgres import Postgres
from tests.support.process import free_port, run_webhost, stdio_server
from tests.support.team import Team, run_team
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e

RECONNECT_MS = 30_000


def servers() -> dict[str, Any]:
    return {"basic": stdio_server("basic"), "apps": stdio_server("apps"), "elicit": stdio_server("elicit")}


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory, postgres: Postgres) -> Iterator[Team]:
    with run_team(tmp_path_factory.mktemp("team"), postgres, servers()) as running:
        yield running


def echo(ui: WebhostPage, text: str) -> str:
    ui.open_tool("basic", "echo")
    ui.fill(text=text)
    return ui.call(expect="ok").text


def test_through_nginx_then_the_replica_holding_the_socket_dies_and_the_page_carries_on(
    page: Page, ui: WebhostPage, team: Team
) -> None:
    before = team.accepted_sockets()
    ui.sign_in(team.front)
    assert page.url == f"{team.base_url}/"
    ui.wait_connected("basic", "apps", "elicit")
    assert "hello through nginx" in echo(ui, "hello through nginx")

    ui.open_tool("apps", "echo_app")  # an MCP app: its sandbox frame comes through nginx's wildcard block
    ui.call(expect="ok")
    app = ui.app("apps")
    app.wait_ready()
    assert f"localhost:{team.nginx.port}" in (app.frame.get_attribute("src") or "")

    ui.open_tool("elicit", "form_defaults")  # an input request, answered in the page
    page.locator('[data-testid="call-tool"]').click()
    ui.elicitation("elicit", "form").accept()
    assert ui.result().status == "ok"

    kill_the_holder_and_carry_on(page, ui, team, before)


def kill_the_holder_and_carry_on(page: Page, ui: WebhostPage, team: Team, before: list[int]) -> None:
    """SIGKILL the replica holding the page's socket; the page must reconnect through nginx to the other one,
    still signed in, and call a tool there."""
    opened = [now - then for now, then in zip(team.accepted_sockets(), before, strict=True)]
    assert sorted(opened) == [0, 1], f"the page's one socket went to one replica: {opened}"
    holder = team.replicas[opened.index(1)]
    other = team.replicas[opened.index(0)]
    signed_in_as = page.locator("[data-user]").inner_text()
    other_before = team.accepted_sockets()[team.replicas.index(other)]
    holder.proc.kill()  # SIGKILL: a crash, no goodbye to the page
    holder.proc.wait(timeout=10)

    # The page reconnects by itself, through nginx, to the replica that is left; still signed in.
    deadline = time.monotonic() + RECONNECT_MS / 1000
    while team.accepted_sockets()[team.replicas.index(other)] == other_before:
        assert time.monotonic() < deadline, f"the page did not reconnect to the other replica:\n{other.log()[-3000:]}"
        page.wait_for_timeout(100)
    assert page.url.startswith(f"{team.base_url}/")
    expect(page.locator("[data-user]")).to_have_text(signed_in_as)
    # Until the new session's server list arrives, the page may still show the old replica's cards: retry
    # the call until the new replica's connection is up (each try is a real call through nginx).
    while True:
        try:
            ui.wait_connected("basic", timeout=RECONNECT_MS)
            assert "after the replica died" in echo(ui, "after the replica died")
            break
        except AssertionError:
            if time.monotonic() > deadline + RECONNECT_MS / 1000:
                raise
            page.wait_for_timeout(250)


@pytest.fixture(scope="module")
def oidc_team(tmp_path_factory: pytest.TempPathFactory, postgres: Postgres) -> Iterator[Team]:
    port = free_port()
    with run_provider([f"http://127.0.0.1:{port}"]) as provider:
        path = tmp_path_factory.mktemp("oidc-team")
        basic = {"basic": stdio_server("basic")}
        with run_team(path, postgres, basic, webhost_options=provider.options(), port=port) as running:
            yield running


def test_signed_in_with_oidc_through_nginx_the_session_outlives_the_replica(
    page: Page, ui: WebhostPage, oidc_team: Team
) -> None:
    """The session cookie is checked against the database, so the replica the page reconnects to knows it."""
    before = oidc_team.accepted_sockets()
    page.goto(oidc_team.base_url + "/")
    page.wait_for_url("http://localhost:*/interaction/*")
    page.fill('[name="login"]', "bob")
    page.fill('[name="password"]', "bob-pw")
    page.click('[data-action="provider-sign-in"]')
    page.wait_for_url(oidc_team.base_url + "/")
    expect(page.locator("[data-user]")).to_have_text("Bob Builder")
    ui.wait_connected("basic")
    kill_the_holder_and_carry_on(page, ui, oidc_team, before)


def test_an_app_opened_on_replica_a_is_served_by_replica_b_s_sandbox(
    tmp_path: Path, page: Page, ui: WebhostPage
) -> None:
    # Replicas share the secret and the public origin (here A's address, as nginx's is in a deployment).
    shared = {"WEBHOST_SECRET": "s" * 16 + "shared-between-replicas-0123456789"}
    a_port = free_port()
    origin = ["--public-origin", f"http://127.0.0.1:{a_port}"]
    with run_webhost(tmp_path, {"apps": stdio_server("apps")}, env=shared, extra_args=origin) as b:
        # A hands out sandbox URLs on B's sandbox port: B's proxy must accept what A signed.
        extra = ["--sandbox-public-port", str(b.sandbox_port)]
        with run_webhost(tmp_path, {"apps": stdio_server("apps")}, env=shared, extra_args=extra, port=a_port) as a:
            ui.sign_in(a)
            ui.open_tool("apps", "echo_app")
            ui.call(expect="ok")
            app = ui.app("apps")
            app.wait_ready()
            assert f"localhost:{b.sandbox_port}/" in (app.frame.get_attribute("src") or "")
            assert '"GET /proxy.js' in b.log() and '"GET /proxy.js' not in a.log()
