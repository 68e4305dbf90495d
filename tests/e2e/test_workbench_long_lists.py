"""Long lists in a real Chromium: the activity log and the call history keep only their newest rows in
the DOM (so the page stays fast with thousands of entries), and "Show older" brings back every older
one, none lost."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.process import Webhost, run_webhost, stdio_server
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e

LINES = 450  # stderr lines: more than the log's 200 rows, and more than two of its "Show older" steps


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    with run_webhost(tmp_path_factory.mktemp("long-lists"), {"basic": stdio_server("basic")}) as running:
        yield running


def older_count(button: Any) -> int:
    match = re.search(r"\((\d+)\)", button.text_content() or "")
    return int(match.group(1)) if match else 0


def test_the_activity_log_shows_its_newest_rows_and_every_older_one_on_request(ui: WebhostPage, host: Webhost) -> None:
    page = ui.sign_in(host).page
    ui.wait_connected("basic")
    ui.open_tool("basic", "stderr")
    ui.fill(text="line", lines=str(LINES))
    ui.call("ok")
    log = page.locator('[data-testid="activity-log"]')
    stderr = log.locator('[data-log-entry][data-kind="stderr"]')
    expect(log.locator(f'[data-log-entry][data-kind="stderr"]:has-text("[{LINES}/{LINES}]")')).to_be_attached()
    rows = log.locator("[data-log-entry]")
    expect(rows).to_have_count(200)
    total = int(log.locator(".log-count").text_content() or "0")
    assert total > LINES
    older = log.locator('[data-action="show-older-log"]')
    expect(older).to_be_visible()
    assert older_count(older) == total - 200
    expect(stderr.filter(has_text=f"[1/{LINES}]")).to_have_count(0)
    # Each click puts up to 200 older entries on top, in order, until none is left.
    while older.is_visible():
        before = rows.count()
        older.click()
        expect(rows).not_to_have_count(before)
    expect(rows).to_have_count(total)
    expect(stderr).to_have_count(LINES)
    texts = stderr.locator(".log-summary").all_text_contents()
    assert texts == [f"line [{i}/{LINES}]" for i in range(1, LINES + 1)]
    # Filters apply to the rows brought back too; Clear empties it all.
    log.locator('[data-log-filter="stderr"]').uncheck()
    expect(stderr.first).to_be_hidden()
    log.locator('[data-log-filter="stderr"]').check()
    log.locator('[data-action="clear-log"]').click()
    expect(rows).to_have_count(0)
    expect(older).to_be_hidden()
    assert ui.console_errors == []


def test_the_history_shows_its_newest_rows_and_the_older_ones_on_request(ui: WebhostPage, host: Webhost) -> None:
    page = ui.sign_in(host).page
    ui.wait_connected("basic")
    page.locator('[data-action="clear-history"]').click()  # the other test's call, same person
    expect(page.locator('[data-testid="history"] [data-history-entry]')).to_have_count(0)
    page.evaluate(
        """async () => {
          const main = document.querySelector('script[type="module"][src*="/js/main.js"]');
          const { page } = await import(main.src);
          for (let i = 1; i <= 70; i++) {
            await page.rpc.request("tools/call", { server: "basic", name: "echo", arguments: { text: `call ${i}` } });
          }
        }"""
    )
    entries = page.locator('[data-testid="history"] [data-history-entry]')
    expect(entries).to_have_count(50)
    expect(page.locator('[data-testid="history"] .count')).to_have_text("70")
    expect(entries.first).to_contain_text('{"text":"call 70"}')
    older = page.locator('[data-action="show-older-history"]')
    expect(older).to_have_text("Show older (20)")
    older.click()
    expect(entries).to_have_count(70)
    expect(older).to_be_hidden()
    expect(entries.last).to_contain_text('{"text":"call 1"}')
    # After a reload the stored history comes back the same way.
    page.reload()
    ui.wait_connected("basic")
    expect(page.locator('[data-testid="history"] .count')).to_have_text("70")
    expect(entries).to_have_count(50)
    expect(entries.first).to_have_attribute("data-name", "echo")
    expect(entries.first).to_contain_text('{"text":"call 70"}')
    older.click()
    expect(entries).to_have_count(70)
    expect(entries.last).to_contain_text('{"text":"call 1"}')
    assert ui.console_errors == []
