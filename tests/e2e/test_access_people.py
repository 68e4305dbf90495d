"""Who may use what (contract §9) in Chromium, with people signed in through the real OpenID provider
(tests/peers/oidc-provider.mjs), their groups from its claims: ada (webhost-admins, staff), bob (staff) and carol
(finance). Each sees only the servers, tools and models their groups allow, in the workbench, its search, the
chat's model choice and its tools picker; the admin view shows who may use each server, tool and model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.test_sign_in import sign_in
from tests.support.oidc import run_provider
from tests.support.process import Webhost, free_port, run_webhost, stdio_server

pytestmark = pytest.mark.e2e

CONNECT_MS = 30_000
# Never asked: the model choice and the picker are what is checked (port 9 is discard).
MODELS = [
    {"id": "big", "api": "openai", "model": "big-1", "baseUrl": "http://127.0.0.1:9/v1"},
    {"id": "free", "api": "openai", "model": "local", "baseUrl": "http://127.0.0.1:9/v1"},
]
ACCESS = {
    "default": "allow",
    "servers": {
        "payroll": {"groups": ["finance"], "tools": {"ledger_close": {"groups": ["finance-leads"]}}},
        "basic": {"tools": {"add": {"groups": ["staff"]}}},
    },
    "models": {"big": {"groups": ["staff"]}},
}


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    port = free_port()
    with run_provider([f"http://127.0.0.1:{port}"]) as provider:
        options = {**provider.options(), "chat": {"models": MODELS}, "access": ACCESS}
        servers = {"basic": stdio_server("basic"), "payroll": stdio_server("recording")}
        with run_webhost(tmp_path_factory.mktemp("access"), servers, webhost_options=options, port=port) as running:
            yield running


def connected(page: Page, *servers: str) -> None:
    """The person's server cards (in the page, hidden under the chat it lands on) say connected."""
    for name in servers:
        expect(page.locator(f'[data-server="{name}"]')).to_have_attribute(
            "data-status", "connected", timeout=CONNECT_MS
        )


def workbench(page: Page) -> None:
    page.locator('[data-action="open-workbench"]').click()
    expect(page.locator('[data-server="basic"]')).to_be_visible()


def models_of(page: Page) -> list[str]:
    chat = page.locator('[data-testid="chat"]')
    expect(chat.locator('select[name="model"]')).to_be_attached()
    return [str(v) for v in chat.locator('select[name="model"] option').evaluate_all("os => os.map(o => o.value)")]


def picker_tools(page: Page, server: str) -> list[str]:
    picker = page.locator('[data-testid="chat"] [data-testid="chat-tools"]')
    picker.locator("summary").click()
    expect(picker.locator(f'input[type="checkbox"][data-server="{server}"]')).to_have_count(1)
    boxes = picker.locator(f'[data-tool][data-tool-server="{server}"]')
    names = boxes.evaluate_all("bs => bs.map(b => b.dataset.tool)")
    picker.locator("summary").click()
    return sorted(str(n) for n in names)


def test_each_person_sees_only_what_their_groups_allow_and_the_admin_sees_who_may(
    browser: Browser, host: Webhost
) -> None:
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(3)]
    try:
        ada, bob, carol = (
            sign_in(c.new_page(), host, who) for c, who in zip(contexts, ("ada", "bob", "carol"), strict=True)
        )

        # carol (finance): payroll without its lead-only tool, basic without the staff-only `add`, the free model.
        connected(carol, "basic", "payroll")
        assert models_of(carol) == ["free"]
        assert "echo" in picker_tools(carol, "basic") and "add" not in picker_tools(carol, "basic")
        assert picker_tools(carol, "payroll") == ["ledger_balance"]
        workbench(carol)
        payroll = carol.locator('[data-server="payroll"]')
        expect(payroll.locator('[data-tool="ledger_balance"]')).to_have_count(1)
        expect(payroll.locator('[data-tool="ledger_close"]')).to_have_count(0)
        expect(carol.locator('[data-server="basic"] [data-tool="echo"]')).to_have_count(1)
        expect(carol.locator('[data-server="basic"] [data-tool="add"]')).to_have_count(0)
        carol.locator('[data-testid="search"]').fill("ledger")
        expect(payroll.locator('[data-tool="ledger_balance"]')).to_be_visible()
        expect(carol.locator('[data-tool="ledger_close"]')).to_have_count(0)

        # bob (staff): no payroll at all, basic with `add`, both models.
        connected(bob, "basic")
        assert models_of(bob) == ["big", "free"]
        assert "add" in picker_tools(bob, "basic")
        workbench(bob)
        expect(bob.locator('[data-server="basic"] [data-tool="add"]')).to_have_count(1)
        expect(bob.locator('[data-server="payroll"]')).to_have_count(0)
        bob.locator('[data-testid="search"]').fill("ledger")
        expect(bob.locator('[data-tool^="ledger"]')).to_have_count(0)

        # ada (admin; webhost-admins, staff): uses what her groups allow, no more (no payroll) ...
        connected(ada, "basic")
        assert models_of(ada) == ["big", "free"]
        workbench(ada)
        expect(ada.locator('[data-server="payroll"]')).to_have_count(0)
        # ... and the admin view shows everyone's groups and who may use each server, tool and model.
        ada.locator('[data-action="open-admin"]').click()
        view = ada.locator('[data-testid="admin"]')
        expect(view).to_have_attribute("aria-busy", "false")
        expect(view.locator('[data-person="carol@example.com"]')).to_have_attribute("data-groups", "finance")
        expect(view.locator('[data-person="bob@example.com"]')).to_have_attribute("data-groups", "staff")
        expect(view.locator('[data-access="server"][data-name="payroll"]')).to_contain_text("finance")
        expect(view.locator('[data-access="server"][data-name="basic"]')).to_contain_text("everyone")
        expect(view.locator('[data-access="tool"][data-name="payroll/ledger_close"]')).to_contain_text("finance-leads")
        expect(view.locator('[data-access="tool"][data-name="basic/add"]')).to_contain_text("staff")
        expect(view.locator('[data-access="model"][data-name="big"]')).to_contain_text("staff")
        expect(view.locator('[data-access="model"][data-name="free"]')).to_contain_text("everyone")
    finally:
        for context in contexts:
            context.close()
