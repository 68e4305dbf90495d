"""Two people on one webhost at the same time, in two browsers (proxy mode: the header names the person).

Each sees only their own input requests, approvals and audit rows; the admin sees everyone's rows; the
sign-in header is believed only from the trusted proxy address.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.e2e.test_page_views import app_frame, app_inner, open_tool
from tests.support.process import Webhost, run_webhost

pytestmark = pytest.mark.e2e

HEADER = "X-Forwarded-Email"
ADA, BOB = "ada@example.com", "bob@example.com"
CONNECT_MS = 30_000


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    demo = {"command": sys.executable, "args": ["-m", "webhost.demo.server"]}
    options = {
        "auth": {"mode": "proxy", "userHeader": HEADER, "trustedProxies": ["127.0.0.1/32"], "admins": [ADA]},
        "servers": {"demo": {"appToolCalls": "ask"}},
    }
    with run_webhost(tmp_path_factory.mktemp("two-people"), {"demo": demo}, webhost_options=options) as running:
        yield running


def person_page(browser: Browser, host: Webhost, email: str) -> tuple[BrowserContext, Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, extra_http_headers={HEADER: email})
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto(f"{host.base_url}/")
    expect(page.locator('[data-server="demo"][data-status="connected"]')).to_be_visible(timeout=CONNECT_MS)
    return context, page


def test_two_people_see_only_their_own_requests_approvals_and_audit(browser: Browser, host: Webhost) -> None:
    ada_context, ada = person_page(browser, host, ADA)
    bob_context, bob = person_page(browser, host, BOB)
    try:
        expect(ada.locator("[data-user]")).to_have_attribute("data-role", "admin")
        expect(bob.locator("[data-user]")).to_have_attribute("data-role", "member")

        # Bob's input request is shown to Bob only.
        open_tool(bob, "register_user")
        bob.locator('[data-testid="call-tool"]').click()
        expect(bob.locator('form[data-elicitation][data-mode="form"]')).to_be_visible()
        expect(ada.locator("[data-elicitation]")).to_have_count(0)
        bob.locator('form[data-elicitation] [data-action="decline"]').click()
        expect(bob.locator('[data-testid="tool-result"]')).not_to_have_attribute("data-status", "pending")

        # Ada's app asks to call a tool (appToolCalls: ask): the approval is Ada's alone.
        open_tool(ada, "show_dashboard")
        ada.locator('[data-testid="call-tool"]').click()
        expect(app_frame(ada)).to_have_attribute("data-app-status", "ready", timeout=CONNECT_MS)
        app_inner(ada).locator("#refresh").click()
        approval = ada.locator('[data-approval][data-kind="tool-call"]')
        expect(approval).to_be_visible()
        expect(bob.locator("[data-approval]")).to_have_count(0)
        approval.locator('[data-action="allow"]').click()
        expect(approval).to_have_count(0)

        # Bob opens the same app: his own audit rows; Ada, the admin, reads both people's.
        open_tool(bob, "show_dashboard")
        bob.locator('[data-testid="call-tool"]').click()
        expect(app_frame(bob)).to_have_attribute("data-app-status", "ready", timeout=CONNECT_MS)
        for page in (ada, bob):
            page.locator('[data-testid="open-audit"]').click()
            expect(page.locator('[data-testid="audit-log"] [data-audit-entry]').first).to_be_visible()
        bob_rows = bob.locator('[data-testid="audit-log"] [data-audit-entry]')
        assert set(bob_rows.evaluate_all("els => els.map((e) => e.dataset.auditUser || '')")) == {BOB}
        ada_users = ada.locator('[data-testid="audit-log"] [data-audit-entry]').evaluate_all(
            "els => els.map((e) => e.dataset.auditUser || '')"
        )
        assert {ADA, BOB} <= set(ada_users)
    finally:
        ada_context.close()
        bob_context.close()


def test_the_sign_in_header_counts_only_from_the_trusted_proxy(host: Webhost, tmp_path: Path) -> None:
    with httpx.Client(base_url=host.base_url, timeout=10) as client:  # 127.0.0.1 is the trusted proxy here
        assert client.get("/api/servers", headers={HEADER: BOB}).status_code == 200
        assert client.get("/api/servers").status_code == 401
    # A webhost whose proxy is elsewhere: the same header from this machine is refused, and a forged
    # X-Forwarded-For naming the proxy changes nothing (the TCP peer is what is checked).
    options = {"auth": {"mode": "proxy", "userHeader": HEADER, "trustedProxies": ["192.0.2.1/32"]}}
    with (
        run_webhost(tmp_path, {}, webhost_options=options) as other,
        httpx.Client(base_url=other.base_url, timeout=10) as client,
    ):
        assert client.get("/api/servers", headers={HEADER: BOB}).status_code == 403
        forged = client.get("/api/servers", headers={HEADER: BOB, "X-Forwarded-For": "192.0.2.1"})
        assert forged.status_code == 403 and "trusted" in forged.text
        assert client.get("/api/servers").status_code == 401
