"""Signing in with an OpenID provider in a real browser (contract §4, §5): the provider's own pages
(tests/peers/oidc-provider.mjs), the header's `[data-user]` and role, two people at once, sign-out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support.oidc import Provider, run_provider
from tests.support.process import Webhost, free_port, run_webhost, stdio_server

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def oidc_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Webhost, Provider]]:
    port = free_port()
    with run_provider([f"http://127.0.0.1:{port}"]) as provider:
        with run_webhost(
            tmp_path_factory.mktemp("oidc"),
            {"basic": stdio_server("basic")},
            webhost_options=provider.options(),
            port=port,
        ) as host:
            yield host, provider


def sign_in(page: Page, host: Webhost, login: str) -> Page:
    page.goto(host.base_url + "/")
    page.wait_for_url("http://localhost:*/interaction/*")
    page.fill('[name="login"]', login)
    page.fill('[name="password"]', f"{login}-pw")
    page.click('[data-action="provider-sign-in"]')
    page.wait_for_url(host.base_url + "/")
    return page


def test_signing_in_shows_the_person_and_their_role(page: Page, oidc_host: tuple[Webhost, Provider]) -> None:
    host, _ = oidc_host
    sign_in(page, host, "ada")
    expect(page.locator("[data-user]")).to_have_text("Ada Lovelace")
    expect(page.locator("[data-user]")).to_have_attribute("data-role", "admin")
    expect(page.locator('[data-server="basic"]')).to_have_attribute("data-status", "connected")
    expect(page.locator('[data-action="sign-out"]')).to_be_visible()


def test_two_people_at_once_each_see_their_own_name(browser: Browser, oidc_host: tuple[Webhost, Provider]) -> None:
    host, _ = oidc_host
    contexts: list[BrowserContext] = [browser.new_context(), browser.new_context()]
    try:
        bob, carol = (sign_in(c.new_page(), host, who) for c, who in zip(contexts, ("bob", "carol"), strict=True))
        expect(bob.locator("[data-user]")).to_have_text("Bob Builder")
        expect(carol.locator("[data-user]")).to_have_text("Carol Danvers")
        expect(bob.locator("[data-user]")).to_have_attribute("data-role", "member")
        bob.reload()
        expect(bob.locator("[data-user]")).to_have_text("Bob Builder")
    finally:
        for context in contexts:
            context.close()


def test_sign_out_revokes_the_session(
    page: Page, context: BrowserContext, oidc_host: tuple[Webhost, Provider], tmp_path: Path
) -> None:
    host, provider = oidc_host
    sign_in(page, host, "bob")
    expect(page.locator("[data-user]")).to_have_text("Bob Builder")
    cookie = next(c for c in context.cookies(host.base_url) if c["name"] == "webhost_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    page.click('[data-action="sign-out"]')
    page.wait_for_url(provider.issuer + "/session/end**")
    page.locator('[data-action="provider-sign-out"]').click()
    page.wait_for_url(host.base_url + "/auth/signed-out")
    assert not [c for c in context.cookies(host.base_url) if c["name"] == "webhost_session"]
    old = httpx.get(host.base_url + "/api/servers", cookies={"webhost_session": cookie["value"]})
    assert old.status_code == 401
