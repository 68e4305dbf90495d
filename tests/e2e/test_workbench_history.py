"""The call history from the database in a real Chromium: the same in two tabs and after a reload, each
entry's stored result shown on request (a cut one says so), replay and edit from a reloaded page, Clear
in one tab clearing the other."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.support.process import Webhost, run_webhost, stdio_server
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    with run_webhost(tmp_path_factory.mktemp("history"), {"basic": stdio_server("basic")}) as running:
        yield running


def history(page: Page) -> Any:
    return page.locator('[data-testid="history"] [data-history-entry]')


def test_the_history_is_the_same_in_another_tab_and_after_a_reload(
    ui: WebhostPage, context: BrowserContext, host: Webhost
) -> None:
    page = ui.sign_in(host).page
    ui.wait_connected("basic")
    other = WebhostPage(context.new_page()).sign_in(host)
    other.wait_connected("basic")

    ui.open_tool("basic", "echo")
    ui.fill(text="kept")
    ui.call("ok")
    ui.open_tool("basic", "big")
    ui.fill(size_bytes=100_000)
    ui.call("ok")
    entries = history(page)
    expect(entries).to_have_count(2)
    expect(entries.nth(0)).to_have_attribute("data-history-id", re.compile(r"\d+"))
    # The other tab is told about calls made here, as they are stored.
    elsewhere = history(other.page)
    expect(elsewhere).to_have_count(2)
    expect(elsewhere.nth(1)).to_contain_text('{"text":"kept"}')
    expect(elsewhere.nth(1)).to_have_attribute("data-status", "ok")

    page.reload()
    ui.wait_connected("basic")
    expect(entries).to_have_count(2)
    big, echo = entries.nth(0), entries.nth(1)
    expect(echo).to_have_attribute("data-name", "echo")
    expect(echo).to_contain_text(" ms")
    echo.locator('[data-action="show-result"]').click()
    expect(echo.locator('[data-testid="history-result"]')).to_contain_text('"text": "kept"')
    big.locator('[data-action="show-result"]').click()
    expect(big.locator("[data-truncated]")).to_contain_text("Cut: ")
    # Edit and replay work from the stored entry, on a page that never made the call.
    echo.locator('[data-action="edit"]').click()
    expect(page.locator('[name="text"]')).to_have_value("kept")
    echo.locator('[data-action="replay"]').click()
    expect(entries).to_have_count(3)
    expect(page.locator('[data-testid="tool-result"]')).to_contain_text("kept")

    page.locator('[data-action="clear-history"]').click()
    expect(entries).to_have_count(0)
    expect(elsewhere).to_have_count(0)
    page.reload()
    ui.wait_connected("basic")
    expect(page.locator('[data-testid="history"] .empty')).to_be_visible()
    assert ui.console_errors == [] and other.console_errors == []
