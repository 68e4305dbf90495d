"""Two `webhost serve` replicas on one PostgreSQL behind Debian's nginx (the shipped deploy/webhost.conf.template),
in a real Chromium (tests/support/team.py): sign in, call a tool, open an MCP app, answer an input request,
all through nginx; then the replica holding the page's WebSocket is killed and the page carries on on
the other one, still signed in: in token mode, and signed in with OIDC (the session is in the database).
A 2026-07-28 server's input request asked on replica A, with a call running there, when A is killed: the
page shows the reconnect notice, reconnects through nginx to B, finds the question asked again there
(answering it gives the tool's result on B) and the running call reported interrupted.
And an app opened on replica A whose sandbox frame replica B serves.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.integration.test_survive_replica import shared_elicit_server
from tests.support.oidc import run_provider
from tests.support.postgres import Postgres
from tests.support.process import free_port, run_webhost, stdio_server
from tests.support.team import Team, run_team
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e

RECONNECT_MS = 30_000
# webhost/journal.py: LEASE_SECONDS (10 s) after a SIGKILL before B takes A's calls over, plus B's recheck.
RESUME_MS = 40_000


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
    ui.settled_result(expect="ok")  # the call goes on after the answer: its result comes later

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
def survive_team(tmp_path_factory: pytest.TempPathFactory, postgres: Postgres) -> Iterator[Team]:
    """A 2026-07-28 server both replicas reach over Streamable HTTP (as a remote one), and a local one."""
    path = tmp_path_factory.mktemp("survive-team")
    with shared_elicit_server(path) as url:
        servers = {"elicit": {"type": "http", "url": url}, "basic": stdio_server("basic")}
        with run_team(path, postgres, servers) as running:
            yield running


# Records every state the connection notice shows, so a notice up for less than a poll is still seen.
WATCH_BANNER = """() => {
  const banner = document.querySelector('[data-testid="connection-banner"]');
  window.__bannerSeen = [];
  const note = () => {
    if (!banner.hidden) window.__bannerSeen.push(banner.dataset.state + ": " + banner.textContent);
  };
  new MutationObserver(note).observe(banner, {attributes: true, childList: true, subtree: true, characterData: true});
}"""


def test_through_nginx_a_question_asked_on_a_killed_replica_is_asked_again_on_the_other(
    page: Page, ui: WebhostPage, survive_team: Team
) -> None:
    team = survive_team
    before = team.accepted_sockets()
    ui.sign_in(team.front)
    ui.wait_connected("elicit", "basic")
    ui.open_tool("basic", "hang")
    page.locator('[data-testid="call-tool"]').click()
    expect(page.locator('[data-testid="tool-result"]')).to_have_attribute("data-status", "pending")
    ui.open_tool("elicit", "form_defaults")
    page.locator('[data-testid="call-tool"]').click()
    asked = ui.elicitation("elicit", "form")
    expect(asked.locator).not_to_have_attribute("data-resumed", "true")

    opened = [now - then for now, then in zip(team.accepted_sockets(), before, strict=True)]
    assert sorted(opened) == [0, 1], f"the page's one socket went to one replica: {opened}"
    holder, other = team.replicas[opened.index(1)], team.replicas[opened.index(0)]
    # Both calls are in the shared database (the journal writes in the background) before A dies.
    deadline = time.monotonic() + 20
    while sorted(team.sql("SELECT name, sealed_round IS NOT NULL FROM live_calls")) != [
        ["form_defaults", "t"],
        ["hang", "f"],
    ]:
        assert time.monotonic() < deadline, team.sql("SELECT name, call_id, sealed_round IS NOT NULL FROM live_calls")
        time.sleep(0.05)
    signed_in_as = page.locator("[data-user]").inner_text()
    other_before = team.accepted_sockets()[team.replicas.index(other)]
    page.evaluate(WATCH_BANNER)
    holder.proc.kill()  # SIGKILL: no goodbye to the page, no release of its calls; their lease runs out
    holder.proc.wait(timeout=10)

    # The page reconnects by itself, through nginx, to the replica that is left, and says so meanwhile.
    deadline = time.monotonic() + RECONNECT_MS / 1000
    while team.accepted_sockets()[team.replicas.index(other)] == other_before:
        assert time.monotonic() < deadline, f"the page did not reconnect to the other replica:\n{other.log()[-3000:]}"
        page.wait_for_timeout(100)
    seen: list[str] = page.evaluate("() => window.__bannerSeen")
    assert any(s.startswith("closed: Disconnected from webhost") for s in seen), seen
    expect(page.locator("html")).to_have_attribute("data-connection", "open", timeout=RECONNECT_MS)
    expect(page.locator('[data-testid="connection-banner"]')).to_be_hidden()
    expect(page.locator("[data-user]")).to_have_text(signed_in_as)

    # Once A's lease has run out, B asks A's question again, marked resumed...
    again = ui.elicitation("elicit", "form", timeout=RESUME_MS)
    expect(again.locator).to_have_attribute("data-resumed", "true")
    expect(again.locator.locator("[data-resumed-note]")).to_be_visible()
    expect(again.locator).to_contain_text("form_defaults")
    # ... and reports the call that was running on A as interrupted, in its tool's result area.
    ui.open_tool("basic", "hang")
    hung = page.locator('[data-testid="tool-result"]')
    expect(hung).to_have_attribute("data-interrupted", "true", timeout=RESUME_MS)
    expect(hung).to_have_attribute("data-status", "error")
    expect(hung).to_contain_text("interrupted: the webhost process running this call stopped")

    # Answering retries the call on B (with the answer and A's requestState): the tool's result.
    ui.open_tool("elicit", "form_defaults")
    again.accept()
    done = page.locator('[data-testid="tool-result"]')
    expect(done).to_have_attribute("data-resumed", "true")
    expect(done).to_have_attribute("data-status", "ok")
    expect(done).to_contain_text("Ada Lovelace")
    assert holder.proc.poll() is not None  # what answered is B: A is gone
    deadline = time.monotonic() + 20
    while team.sql("SELECT count(*) FROM live_calls") != [["0"]]:  # B reported both and dropped their rows
        assert time.monotonic() < deadline, team.sql("SELECT name, replica_id FROM live_calls")
        time.sleep(0.1)
    log = page.locator('[data-testid="activity-log"]')
    expect(log).to_contain_text("resumed here after the webhost process running it stopped")
    expect(log).to_contain_text("hang: interrupted")


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
