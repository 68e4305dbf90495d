"""The protocol's rough edges in a real Chromium: a malformed tool, resource or prompt is shown as an error on
that item while the rest of its list works; a result that breaks its outputSchema is shown with the validation
error beside it; the server view's capabilities grid (the server's and webhost's own). tests/servers/faulty.py
`bad_items` and workbench.py (legacy era)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_polish import axe_problems, set_theme
from tests.support.process import Webhost, run_webhost, stdio_server
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    servers: dict[str, Any] = {
        "bad": stdio_server("faulty", "bad_items"),
        "workbench": stdio_server("workbench", "--legacy"),
    }
    with run_webhost(tmp_path_factory.mktemp("protocol"), servers) as running:
        yield running


def test_a_malformed_item_is_an_error_on_it_and_a_broken_output_schema_is_shown_beside_the_result(
    page: Page, ui: WebhostPage, host: Webhost
) -> None:
    ui.sign_in(host)
    ui.wait_connected("bad", "workbench")
    card = ui.server("bad")
    broken = card.locator('[data-tool="broken"]')
    expect(broken).to_have_attribute("data-invalid", "true")
    expect(broken.locator("[data-item-error]")).to_contain_text("Malformed tool: inputSchema")
    expect(card.locator('[data-tool="(item 3)"] [data-item-error]')).to_contain_text("name")
    expect(broken).to_have_attribute("aria-disabled", "true")  # nothing to open
    card.locator('[data-tab="resources"]').click()
    expect(card.locator('[data-resource="(item 2)"][data-invalid]')).to_be_visible()
    expect(card.locator('[data-resource="faulty://good"]:not([data-invalid])')).to_be_visible()
    card.locator('[data-tab="prompts"]').click()
    expect(card.locator('[data-prompt="bad-args"][data-invalid]')).to_be_visible()
    card.locator('[data-tab="tools"]').click()

    # The good tools of the same list work.
    ui.open_tool("bad", "echo")
    ui.fill(text="still here")
    expect(ui.call("ok").locator).to_contain_text("still here")
    ui.open_tool("bad", "typed")
    result = ui.call("ok").locator
    expect(result).to_have_attribute("data-output-schema-error", "true")
    expect(result.locator('[data-testid="output-schema-error"]')).to_contain_text("'seven' is not of type 'integer'")
    expect(result.locator('[data-testid="structured-content"]')).to_contain_text("seven")
    assert ui.console_errors == []
    assert axe_problems(page) == []


def test_the_server_view_shows_a_capabilities_grid_for_both_sides(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("workbench")
    ui.server("workbench").locator(".server-name").click()
    grid = page.locator('[data-testid="capabilities"]')
    expect(grid).to_be_visible()
    server_side = '[data-side="server"]'
    client_side = '[data-side="client"]'
    expect(grid.locator(f'[data-cap="resources"] {server_side}')).to_contain_text("subscribe")
    expect(grid.locator(f'[data-cap="completions"] {server_side}')).to_have_attribute("data-supported", "true")
    expect(grid.locator(f'[data-cap="logging"] {server_side}')).to_have_attribute("data-supported", "true")
    expect(grid.locator(f'[data-cap="elicitation"] {client_side}')).to_contain_text("form")
    expect(grid.locator(f'[data-cap="elicitation"] {client_side}')).to_contain_text("url")
    expect(grid.locator(f'[data-cap="sampling"] {client_side}')).to_have_attribute("data-supported", "true")
    expect(grid.locator(f'[data-cap="extensions"] {client_side}')).to_contain_text("io.modelcontextprotocol/ui")
    expect(grid.locator(f'[data-cap="sampling"] {server_side}')).to_have_text("n/a")
    assert ui.console_errors == []
    assert axe_problems(page) == []


def test_icons_are_drawn_from_data_urls_only(page: Page, ui: WebhostPage, host: Webhost) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    ui.sign_in(host)
    ui.wait_connected("workbench")
    card = ui.server("workbench")
    expect(card.locator('[data-server-icon="drawn"] img.item-icon')).to_have_attribute(
        "src", re.compile(r"^data:image/png")
    )
    level = card.locator('[data-tool="level"]')
    expect(level).to_have_attribute("data-icon", "drawn")
    expect(level.locator("img.item-icon")).to_have_attribute("alt", "")
    # An https icon is never fetched by the page: it is left out and the item says so.
    bump = card.locator('[data-tool="bump"]')
    expect(bump).to_have_attribute("data-icon", "skipped")
    expect(bump.locator("img")).to_have_count(0)
    assert not [url for url in requested if "icons.example" in url]
    # The prompt's icon follows the theme.
    card.locator('[data-tab="prompts"]').click()
    light = card.locator('[data-prompt="paint"] img.item-icon').get_attribute("src")
    set_theme(page, "dark" if page.evaluate("document.documentElement.dataset.theme") != "dark" else "light")
    page.reload()
    ui.wait_connected("workbench")
    card.locator('[data-tab="prompts"]').click()
    expect(card.locator('[data-prompt="paint"] img.item-icon')).not_to_have_attribute("src", light or "")
    assert ui.console_errors == []


def test_a_markdown_resource_is_rendered_without_its_raw_html(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("workbench")
    card = ui.server("workbench")
    card.locator('[data-tab="resources"]').click()
    card.locator('[data-resource="wb://readme"]').click()
    rendered = page.locator('[data-testid="resource-result"] [data-markdown]')
    expect(rendered.locator("h3")).to_have_text("Workbench notes")
    expect(rendered.locator("ul > li")).to_have_count(3)
    expect(rendered.locator("em")).to_have_text("emphasis")
    expect(rendered.locator("strong")).to_have_text("strong")
    expect(rendered.locator('a[href="https://example.com/docs"]')).to_have_attribute("rel", "noopener noreferrer")
    expect(rendered.locator("a")).to_have_count(1)  # the javascript: link stays text
    expect(rendered).to_contain_text("[bad link](javascript:alert(1))")
    expect(rendered).to_contain_text("<b>raw html stays text</b>")
    expect(rendered.locator("script, b")).to_have_count(0)
    expect(rendered.locator("pre code")).to_have_text("code block")
    assert page.evaluate("() => window.__markdownRan === undefined")
    assert ui.console_errors == []
    assert axe_problems(page) == []
