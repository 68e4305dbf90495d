"""A person's open page follows their groups (contract §9, docs/admin.md): in proxy mode the groups header of their
next request changes their access, and the page they have open, without a reload, loses the server and the model
their group gave (the model choice moves to one still allowed and says so), then gets both back with the group."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support.process import Webhost, run_webhost, stdio_server

pytestmark = pytest.mark.e2e

CONNECT_MS = 30_000
EMAIL, GROUPS = "X-Forwarded-Email", "X-Forwarded-Groups"
# Never asked: the model choice is what is checked (port 9 is discard).
MODELS = [
    {"id": "big", "api": "openai", "model": "big-1", "baseUrl": "http://127.0.0.1:9/v1"},
    {"id": "free", "api": "openai", "model": "local", "baseUrl": "http://127.0.0.1:9/v1"},
]
OPTIONS = {
    "auth": {"mode": "proxy", "userHeader": EMAIL, "groupsHeader": GROUPS, "trustedProxies": ["127.0.0.1/32"]},
    "chat": {"models": MODELS},
    "access": {"servers": {"payroll": {"groups": ["finance"]}}, "models": {"big": {"groups": ["finance"]}}},
}


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    servers = {"basic": stdio_server("basic"), "payroll": stdio_server("basic")}
    with run_webhost(tmp_path_factory.mktemp("follow-page"), servers, webhost_options=OPTIONS) as running:
        yield running


def next_request_with(context: BrowserContext, page: Page, groups: str) -> None:
    """The sign-in proxy now sends these groups: the page's next request (an API read) carries them."""
    context.set_extra_http_headers({EMAIL: "fay@example.com", GROUPS: groups})
    assert page.evaluate("fetch('/api/servers').then(r => r.status)") == 200


def test_the_open_page_loses_and_regains_the_server_and_model_of_a_group(browser: Browser, host: Webhost) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        context.set_extra_http_headers({EMAIL: "fay@example.com", GROUPS: "staff,finance"})
        page = context.new_page()
        page.goto(f"{host.base_url}/")
        payroll = page.locator('section.server-card[data-server="payroll"]')
        expect(payroll).to_have_attribute("data-status", "connected", timeout=CONNECT_MS)
        chat = page.locator('[data-testid="chat"]')
        model = chat.locator('select[name="model"]')
        expect(model.locator("option")).to_have_count(2)
        model.select_option("big")
        page.evaluate("window.samePage = true")  # gone if the page were loaded again

        next_request_with(context, page, "staff")  # the directory admin took fay out of finance
        expect(payroll).to_have_count(0)
        expect(model.locator('option[value="big"]')).to_have_count(0)
        expect(model).to_have_value("free")  # the choice that went is not kept ...
        expect(chat.locator(".chat-notice")).to_contain_text("no longer available")  # ... and that is said
        expect(page.locator('section.server-card[data-server="basic"]')).to_have_attribute("data-status", "connected")

        next_request_with(context, page, "staff,finance")  # and back
        expect(payroll).to_have_attribute("data-status", "connected", timeout=CONNECT_MS)
        expect(model.locator("option")).to_have_count(2)
        expect(model.locator('option[value="big"]')).to_have_count(1)
        assert page.evaluate("window.samePage") is True
    finally:
        context.close()
