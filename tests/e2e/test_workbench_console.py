"""The open item kept in the address and restored on a reload with its form values; the activity log's source
switches (protocol messages, server logs, stderr) and its resizable dock, remembered across a reload. Real
Chromium against tests/servers basic.py and workbench.py (legacy era, for logging/setLevel)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_polish import axe_problems
from tests.support.process import Webhost, run_webhost, stdio_server
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e

LOG = '[data-testid="activity-log"]'


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    servers: dict[str, Any] = {"basic": stdio_server("basic"), "workbench": stdio_server("workbench", "--legacy")}
    with run_webhost(tmp_path_factory.mktemp("console"), servers) as running:
        yield running


def reload(page: Page, ui: WebhostPage) -> None:
    page.reload()
    ui.wait_connected("basic", "workbench")


def rows(page: Page, selector: str) -> Any:
    """The log rows (`<li>`) holding the entries that match."""
    return page.locator(f"{LOG} li.log-row:has({selector})")


def test_the_open_item_and_its_form_values_come_back_after_a_reload(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("basic", "workbench")
    ui.open_tool("basic", "echo")
    ui.fill(text="typed before the reload")
    assert "kind=tool" in page.url and "key=echo" in page.url
    reload(page, ui)
    expect(page.locator('.tool-view:not([data-parked])[data-open-tool="echo"]')).to_be_visible()
    expect(page.locator('[name="text"]')).to_have_value("typed before the reload")

    card = ui.server("basic")
    card.locator('[data-tab="prompts"]').click()
    card.locator('[data-prompt="greet"]').click()
    page.locator('[name="name"]').fill("Ada")
    reload(page, ui)
    expect(page.locator('[data-testid="get-prompt"]')).to_be_visible()
    expect(page.locator('[name="name"]')).to_have_value("Ada")

    page.locator("#open-audit").click()
    reload(page, ui)
    expect(page.locator("#open-audit")).to_have_attribute("aria-current", "page")
    ui.server("workbench").locator(".server-name").click()
    reload(page, ui)
    expect(page.locator('[data-testid="capabilities"]')).to_be_visible()
    assert ui.console_errors == []


def test_log_sources_can_be_switched_off_and_the_dock_keeps_its_size_and_visibility(
    page: Page, ui: WebhostPage, host: Webhost
) -> None:
    ui.sign_in(host)
    ui.wait_connected("basic", "workbench")
    ui.open_tool("basic", "stderr")
    ui.fill(text="a line on stderr")
    ui.call("ok")
    ui.open_tool("workbench", "log_each")
    ui.call("ok")
    stderr = rows(page, '[data-source="stderr"]')
    logs = rows(page, '[data-source="logs"]')
    protocol = rows(page, '[data-source="protocol"][data-method="tools/call"]')
    expect(stderr.filter(has_text="a line on stderr")).to_have_count(1)
    expect(logs.first).to_be_visible()
    expect(protocol.first).to_be_visible()

    page.locator('[data-log-filter="stderr"]').uncheck()
    expect(stderr.first).to_be_hidden()
    expect(protocol.first).to_be_visible()
    page.locator('[data-log-filter="logs"]').uncheck()
    expect(logs.first).to_be_hidden()
    page.locator('[data-log-filter="protocol"]').uncheck()
    expect(protocol.first).to_be_hidden()
    page.locator('[data-log-filter="protocol"]').check()
    expect(protocol.first).to_be_visible()

    dock = page.locator(LOG)
    before = dock.bounding_box()
    assert before is not None
    handle = page.locator('[data-action="resize-log"]')
    handle.focus()
    for _ in range(3):
        handle.press("ArrowUp")
    expect(dock).to_have_attribute("data-height", str(round(before["height"]) + 72))
    # Dragging the top edge works too.
    box = handle.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 200, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + 200, box["y"] + box["height"] / 2 - 40, steps=4)
    page.mouse.up()
    dragged = int(dock.get_attribute("data-height") or 0)
    assert abs(dragged - (round(before["height"]) + 72 + 40)) <= 2, dragged
    assert axe_problems(page) == []

    reload(page, ui)
    expect(page.locator('[data-log-filter="stderr"]')).not_to_be_checked()
    expect(page.locator('[data-log-filter="logs"]')).not_to_be_checked()
    expect(page.locator('[data-log-filter="protocol"]')).to_be_checked()
    after = dock.bounding_box()
    assert after is not None and abs(after["height"] - dragged) <= 1, (after, dragged)
    page.locator('[data-action="toggle-log"]').click()
    expect(page.locator(f"{LOG} .log-list")).to_be_hidden()
    reload(page, ui)
    expect(page.locator(f"{LOG} .log-list")).to_be_hidden()
    expect(page.locator('[data-action="toggle-log"]')).to_have_text("Show")
    page.locator('[data-action="toggle-log"]').click()
    expect(page.locator(f"{LOG} .log-list")).to_be_visible()
