"""Signing in to a protected remote server from the page (contract §4 and §6), in a real Chromium, against a
real authorization server (tests/peers/oauth-as.mjs, npm `oidc-provider`) and an MCP server protected by
the SDK's server-side auth (tests/servers/protected.py).

Two people (proxy mode, the header names the person): Ada signs in from the page in a new window, calls a
tool, reloads (still signed in), her short-lived token is refreshed once while three tabs call at once, and
she signs out of the server; Bob is asked to sign in separately all along. In token mode, the authorization
server's cross-site redirect back (which carries no SameSite=Strict cookie) still finishes the sign-in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.e2e.conftest import login
from tests.support.oauth_as import AuthServer, run_auth_server, run_protected_server
from tests.support.process import Webhost, run_webhost

pytestmark = pytest.mark.e2e

HEADER = "X-Forwarded-Email"
ADA, BOB = "ada@example.com", "bob@example.com"
CONNECT_MS = 30_000
TTL_S = 8  # the access token's life: webhost refreshes it after half of it


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthServer]:
    with run_auth_server("--ttl", str(TTL_S)) as running:
        yield running


@pytest.fixture(scope="module")
def protected(auth_server: AuthServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_protected_server(auth_server.issuer, tmp_path_factory.mktemp("protected")) as url:
        yield url


def person_page(context: BrowserContext, host: Webhost) -> Page:
    page = context.new_page()
    page.goto(f"{host.base_url}/")
    return page


def sign_in_from(page: Page, login: str) -> None:
    """Sign in: the click opens the authorization server in a new window; the person signs in there."""
    server = page.locator('[data-server="secure"][data-status="auth-required"]')
    expect(server).to_be_visible(timeout=CONNECT_MS)
    with page.context.expect_page() as opened:
        server.locator('[data-action="sign-in"]').click()
    popup = opened.value
    popup.locator('[name="login"]').fill(login)
    popup.locator('[name="password"]').fill(f"{login}-pw")
    popup.locator('[data-action="provider-sign-in"]').click()
    expect(popup.locator('[data-testid="sign-in-message"]')).to_contain_text("Signed in to secure", timeout=CONNECT_MS)
    popup.close()
    expect(page.locator('[data-server="secure"]')).to_have_attribute("data-status", "connected", timeout=CONNECT_MS)


def call(page: Page, tool: str, **arguments: object) -> None:
    page.locator(f'[data-server="secure"] [data-tool="{tool}"]').click()
    for name, value in arguments.items():
        page.locator(f'[name="{name}"]').fill(str(value))
    page.locator('[data-testid="call-tool"]').click()


def result_of(page: Page) -> str:
    result = page.locator('[data-testid="tool-result"]')
    expect(result).to_have_attribute("data-status", "ok", timeout=CONNECT_MS)
    return str(result.text_content())


def test_two_people_sign_in_to_a_protected_server_from_the_page(
    browser: Browser, tmp_path: Path, auth_server: AuthServer, protected: str
) -> None:
    options = {"auth": {"mode": "proxy", "userHeader": HEADER, "trustedProxies": ["127.0.0.1/32"]}}
    with run_webhost(tmp_path, {"secure": {"type": "http", "url": protected}}, webhost_options=options) as host:
        ada_context = browser.new_context(extra_http_headers={HEADER: ADA})
        bob_context = browser.new_context(extra_http_headers={HEADER: BOB})
        try:
            ada = person_page(ada_context, host)
            bob = person_page(bob_context, host)
            expect(bob.locator('[data-server="secure"]')).to_have_attribute("data-status", "auth-required")
            expect(bob.locator('[data-testid="sign-in-reason"]')).to_have_text("secure asks you to sign in")
            codes = auth_server.stats()["grants"]["authorization_code"]

            sign_in_from(ada, "ada")
            call(ada, "whoami")
            assert re.search(r'"subject":\s*"ada"', result_of(ada))
            expect(ada.locator('[data-server="secure"] [data-action="sign-out-server"]')).to_be_visible()
            # Bob was not signed in by Ada's sign-in.
            expect(bob.locator('[data-server="secure"]')).to_have_attribute("data-status", "auth-required")

            ada.reload()  # still signed in: no new sign-in
            expect(ada.locator('[data-server="secure"]')).to_have_attribute(
                "data-status", "connected", timeout=CONNECT_MS
            )
            expect(ada.locator('[data-server="secure"] [data-action="sign-in"]')).to_have_count(0)
            assert auth_server.stats()["grants"]["authorization_code"] == codes + 1

            # Three tabs call at once once the token is due: one refresh at the authorization server.
            tabs = [ada, person_page(ada_context, host), person_page(ada_context, host)]
            for tab in tabs:
                expect(tab.locator('[data-server="secure"] [data-tool="slow"]')).to_be_visible(timeout=CONNECT_MS)
                tab.locator('[data-server="secure"] [data-tool="slow"]').click()
                tab.locator('[name="seconds"]').fill("1")
            refreshes = auth_server.refreshes()  # the tabs are loaded; nothing reaches the server while we wait
            ada.wait_for_timeout(TTL_S / 2 * 1000 + 500)  # the token is now due for its refresh
            for tab in tabs:
                tab.locator('[data-testid="call-tool"]').click()
            for tab in tabs:
                assert "slept 1 s" in result_of(tab)
            assert auth_server.refreshes() == refreshes + 1
            for tab in tabs[1:]:
                tab.close()

            ada.locator('[data-server="secure"] [data-action="sign-out-server"]').click()
            expect(ada.locator('[data-server="secure"]')).to_have_attribute("data-status", "auth-required")
            expect(ada.locator('[data-server="secure"] [data-action="sign-in"]')).to_be_visible()

            sign_in_from(bob, "bob")
            call(bob, "whoami")
            assert re.search(r'"subject":\s*"bob"', result_of(bob))
        finally:
            ada_context.close()
            bob_context.close()
        log = host.log_path.read_text(errors="replace")
        assert "access_token" not in log and "refresh_token" not in log
        assert "GET /oauth/callback?code=***&state=***" in log  # the one-time code stays out of the access log


def test_in_token_mode_the_cross_site_return_finishes_the_sign_in(page: Page, tmp_path: Path, protected: str) -> None:
    with run_webhost(tmp_path, {"secure": {"type": "http", "url": protected}}) as host:
        login(page, host)
        sign_in_from(page, "carol")
        call(page, "whoami")
        assert re.search(r'"subject":\s*"carol"', result_of(page))


def test_the_sign_in_window_says_signed_in_only_once_the_code_was_traded(
    page: Page, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Issue 24 item 5: the authorization server's token endpoint refuses the code, and the window says so
    (before, it said "Signed in to secure" and the server then asked again)."""
    with (
        run_auth_server() as broken,
        run_protected_server(broken.issuer, tmp_path_factory.mktemp("broken")) as url,
        run_webhost(tmp_path, {"secure": {"type": "http", "url": url}}) as host,
    ):
        broken.break_token()
        login(page, host)
        server = page.locator('[data-server="secure"][data-status="auth-required"]')
        expect(server).to_be_visible(timeout=CONNECT_MS)
        with page.context.expect_page() as opened:
            server.locator('[data-action="sign-in"]').click()
        popup = opened.value
        popup.locator('[name="login"]').fill("carol")
        popup.locator('[name="password"]').fill("carol-pw")
        popup.locator('[data-action="provider-sign-in"]').click()
        message = popup.locator('[data-testid="sign-in-message"]')
        expect(message).to_contain_text("Sign-in to secure did not complete", timeout=CONNECT_MS)
        expect(message).to_contain_text("token endpoint refused")
        expect(message).not_to_contain_text("Signed in")
        popup.close()
        expect(page.locator('[data-server="secure"]')).to_have_attribute("data-status", "auth-required")
