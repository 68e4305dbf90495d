"""The workbench in a real Chromium: search, the call history (replay, edit, copy), forms that send what they
show, completions, ping, log level, resource subscriptions, and the activity log that follows like a console.

One webhost serves the module: tests/servers basic.py and workbench.py (legacy era: ping, logging/setLevel and
resources/subscribe are not in the 2026-07-28 vocabulary).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.process import Webhost, run_webhost, stdio_server
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e

CAPTURE_CLIPBOARD = """() => {
  window.__copied = [];
  Object.defineProperty(navigator, "clipboard", { configurable: true,
    value: { writeText: async (t) => { window.__copied.push(t); } } });
}"""


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    servers: dict[str, Any] = {"basic": stdio_server("basic"), "workbench": stdio_server("workbench", "--legacy")}
    with run_webhost(tmp_path_factory.mktemp("workbench"), servers) as running:
        yield running


@pytest.fixture
def ready(page: Page, ui: WebhostPage, host: Webhost) -> Page:
    ui.sign_in(host)
    ui.wait_connected("basic", "workbench")
    expect(page.locator('[data-server="basic"] [data-tool="echo"]')).to_be_attached()
    expect(page.locator('[data-server="workbench"] [data-tool="bump"]')).to_be_attached()
    return page


def no_console_errors(page: Page) -> None:
    errors = list(page.console_errors)  # type: ignore[attr-defined]
    assert errors == [], errors


def history(page: Page) -> Any:
    return page.locator('[data-testid="history"] [data-history-entry]')


def test_search_filters_every_list_across_servers_and_opens_with_the_keyboard(ready: Page) -> None:
    page = ready
    search = page.locator('[data-testid="search"]')
    page.locator("body").press("/")
    expect(search).to_be_focused()

    search.fill("echo")
    expect(page.locator('[data-server="basic"] [data-tool="echo"]')).to_be_visible()
    expect(page.locator('[data-server="basic"] [data-tool="add"]')).to_be_hidden()
    expect(page.locator('[data-server="workbench"] [data-tool="bump"]')).to_be_hidden()
    # By title and description, in every list (the prompts and resources tabs were not selected).
    search.fill("greet someone")
    expect(page.locator('[data-server="basic"] [data-prompt="greet"]')).to_be_visible()
    expect(page.locator('[data-server="basic"] [data-prompt="summarize"]')).to_be_hidden()
    search.fill("plain text")
    expect(page.locator('[data-server="basic"] [data-resource="basic://text"]')).to_be_visible()
    expect(page.locator('[data-server="basic"] [data-resource="basic://png"]')).to_be_hidden()
    search.fill("a colour")
    expect(page.locator('[data-server="workbench"] [data-template="wb://colors/{color}"]')).to_be_visible()
    expect(page.locator('[data-server="basic"] [data-tool="echo"]')).to_be_hidden()

    # Arrow keys move through the matches across servers; Enter opens the highlighted one.
    search.fill("paint")
    search.press("ArrowDown")
    paint = page.locator('[data-server="workbench"] [data-prompt="paint"]')
    expect(paint).to_have_attribute("data-search-active", "true")
    search.press("Enter")
    expect(page.locator('[data-testid="get-prompt"]')).to_be_visible()
    search.fill("add")
    search.press("ArrowDown")
    search.press("Enter")
    expect(page.locator(".tool-view:not([data-parked])[data-open-tool]").first).to_be_attached()
    # Escape clears the search: the tabs are back, with every item.
    search.focus()
    search.press("Escape")
    expect(search).to_have_value("")
    expect(page.locator('[data-server="basic"] [data-tool="echo"]')).to_be_visible()
    expect(page.locator('[data-server="basic"] [data-prompt="greet"]')).to_be_hidden()
    no_console_errors(page)


def test_history_records_calls_reads_and_prompts_and_replays_and_edits_them(ready: Page, ui: WebhostPage) -> None:
    page = ready
    page.evaluate(CAPTURE_CLIPBOARD)
    ui.open_tool("basic", "echo")
    for text in ("one", "two"):
        ui.fill(text=text)
        result = ui.call("ok").locator
        expect(result).to_contain_text(text)
    entries = history(page)
    expect(entries).to_have_count(2)
    newest, older = entries.nth(0), entries.nth(1)
    expect(newest).to_have_attribute("data-status", "ok")
    expect(newest).to_have_attribute("data-name", "echo")
    expect(newest).to_have_attribute("data-history-server", "basic")
    expect(newest).to_contain_text('{"text":"two"}')
    expect(newest).to_contain_text(" ms")
    expect(older).to_contain_text('{"text":"one"}')

    older.locator('[data-action="edit"]').click()
    expect(page.locator('[name="text"]')).to_have_value("one")
    expect(entries).to_have_count(2)  # editing sends nothing
    older.locator('[data-action="replay"]').click()
    expect(entries).to_have_count(3)
    expect(entries.nth(0)).to_contain_text('{"text":"one"}')
    expect(page.locator('[data-testid="tool-result"]')).to_have_attribute("data-status", "ok")
    expect(page.locator('[data-testid="tool-result"]')).to_contain_text("one")

    # Copy: the result's text, its JSON, the request.
    result = page.locator('[data-testid="tool-result"]')
    result.locator('[data-action="copy-text"]').click()
    result.locator('[data-action="copy-json"]').click()
    result.locator('[data-action="copy-request"]').click()
    entries.nth(0).locator('[data-action="copy-request"]').click()
    page.wait_for_function("() => window.__copied.length === 4")
    copied = page.evaluate("() => window.__copied")
    assert copied[0] == "one"
    assert json.loads(copied[1])["content"][0]["text"] == "one"
    assert json.loads(copied[2]) == {
        "method": "tools/call",
        "params": {"server": "basic", "name": "echo", "arguments": {"text": "one"}},
    }
    assert json.loads(copied[3]) == json.loads(copied[2])

    # A tool error, a resource read and a prompt are recorded too; a failed call says so.
    ui.open_tool("basic", "fail")
    ui.call("error")
    expect(entries.nth(0)).to_have_attribute("data-status", "error")
    card = page.locator('[data-server="basic"]')
    card.locator('[data-tab="resources"]').click()
    card.locator('[data-resource="basic://text"]').click()
    expect(page.locator('[data-testid="resource-result"]')).to_have_attribute("data-status", "ok")
    expect(entries.nth(0)).to_have_attribute("data-kind", "resource")
    expect(entries.nth(0)).to_have_attribute("data-name", "basic://text")
    card.locator('[data-tab="prompts"]').click()
    card.locator('[data-prompt="greet"]').click()
    page.locator('[name="name"]').fill("Ada")
    page.locator('[data-testid="get-prompt"]').click()
    expect(page.locator('[data-testid="prompt-result"]')).to_have_attribute("data-status", "ok")
    expect(entries.nth(0)).to_have_attribute("data-kind", "prompt")
    count = entries.count()
    card.locator('[data-tab="tools"]').click()
    card.locator('[data-tool="echo"]').click()  # somewhere else
    entries.nth(0).locator('[data-action="edit"]').click()
    expect(page.locator('[name="name"]')).to_have_value("Ada")
    entries.nth(0).locator('[data-action="replay"]').click()
    expect(entries).to_have_count(count + 1)
    expect(page.locator('[data-testid="prompt-result"]')).to_contain_text("Ada")
    no_console_errors(page)


def test_forms_send_the_defaults_they_show_cleared_fields_and_newlines(ready: Page, ui: WebhostPage) -> None:
    page = ready
    ui.open_tool("basic", "fail")
    ui.call("error")
    expect(history(page).nth(0)).to_contain_text('{"message":"this tool always fails"}')
    page.locator('[name="message"]').fill("")
    ui.call("error")
    expect(history(page).nth(0)).to_contain_text('{"message":""}')

    ui.open_tool("workbench", "lines")
    for name in ("text", "note", "body"):
        expect(page.locator(f'textarea[name="{name}"]')).to_be_attached()
    expect(page.locator('[name="text"]')).to_have_value("first line\nsecond line")
    page.locator('[name="body"]').fill("a\nb\nc")
    result = ui.call("ok").locator
    expect(result.locator("[data-json-formatted]")).to_be_attached()  # JSON text is shown formatted
    answer = json.loads(result.locator("pre").first.inner_text())
    assert answer == {"text": ["first line", "second line"], "note": [""], "body": ["a", "b", "c"]}
    # ... and coloured: keys and strings in spans of their own, the text unchanged.
    formatted = result.locator("[data-json-formatted]")
    expect(formatted.locator(".j-key")).to_have_text(['"text"', '"note"', '"body"'])
    expect(formatted.locator(".j-str").first).to_have_text('"first line"')
    no_console_errors(page)


def test_completions_ping_log_level_and_a_live_subscription(ready: Page, ui: WebhostPage) -> None:
    page = ready
    card = page.locator('[data-server="workbench"]')
    card.locator('[data-tab="prompts"]').click()
    card.locator('[data-prompt="paint"]').click()
    page.locator('[name="color"]').press_sequentially("b")
    options = page.locator('datalist[data-completions="color"] option')
    expect(options).to_have_count(3)
    assert [o.get_attribute("value") for o in options.all()] == ["blue", "black", "brown"]

    card.locator('[data-tab="resources"]').click()
    card.locator('[data-template="wb://colors/{color}"]').click()
    page.locator('[name="color"]').press_sequentially("gr")
    expect(page.locator('datalist[data-completions="color"] option')).to_have_count(1)
    expect(page.locator('datalist[data-completions="color"] option')).to_have_attribute("value", "green")

    card.locator(".server-name").click()
    page.locator('[data-action="ping"]').click()
    expect(page.locator('[data-testid="ping-result"]')).to_have_attribute("data-ms", re.compile(r"^\d"))
    expect(page.locator('[data-testid="ping-result"]')).to_contain_text(" ms")
    page.locator('[data-action="set-log-level"]').select_option("error")
    expect(page.locator('[data-testid="log-level-result"]')).to_have_attribute("data-level", "error")
    card.locator('[data-tab="tools"]').click()
    ui.open_tool("workbench", "level")
    expect(ui.call("ok").locator).to_contain_text("error")

    card.locator('[data-tab="resources"]').click()
    card.locator('[data-resource="wb://counter"]').click()
    out = page.locator('[data-testid="resource-result"]')
    expect(out).to_have_attribute("data-status", "ok")
    before = int(out.locator("pre").first.inner_text().split()[-1])
    page.locator('[data-action="subscribe"]').click()
    expect(page.locator('[data-action="subscribe"]')).to_have_attribute("data-subscribed", "true")
    page.evaluate("""async () => {
      const main = document.querySelector('script[type="module"][src*="/js/main.js"]');
      const { page } = await import(main.src);
      await page.rpc.request("tools/call", {server: "workbench", name: "bump", arguments: {}, callId: "c-bump"});
    }""")
    expect(page.locator('[data-testid="resource-updated"]')).to_have_attribute("data-updates", "1")
    expect(out).to_contain_text(f"count {before + 1}")
    no_console_errors(page)


def test_activity_log_follows_new_entries_until_the_person_scrolls_up(ready: Page, ui: WebhostPage) -> None:
    page = ready
    log = page.locator('[data-testid="activity-log"]')
    expect(log.locator("ol > li > [data-log-entry]").first).to_be_attached()
    assert log.locator("ol > details").count() == 0
    distance = (
        "() => { const l = document.querySelector('.log-list'); return l.scrollHeight - l.scrollTop - l.clientHeight; }"
    )
    ui.open_tool("basic", "stderr")
    ui.fill(lines="60")
    ui.call("ok")
    stderr_lines = "document.querySelectorAll('[data-log-entry][data-kind=\"stderr\"]').length"
    page.wait_for_function(f"() => ({distance})() < 80 && {stderr_lines} >= 60")
    # The log counts its entries as it adds a batch, and scrolls to the end in that same step: once the count moved,
    # the new entries are in and the list was (or was not) scrolled after them.
    count = "() => document.querySelector('.log-count').textContent"
    for _ in range(3):  # it keeps following, entry after entry
        before = page.evaluate(count)
        ui.call("ok")
        page.wait_for_function(f"(before) => ({count})() !== before", arg=before)
        assert page.evaluate(distance) < 80
    # The person scrolls up: it stays where they are while entries arrive, and offers to follow again.
    page.locator(".log-list").hover()
    page.mouse.wheel(0, -600)
    page.wait_for_function(f"() => ({distance})() > 200")
    expect(log.locator('[data-action="follow-log"]')).to_be_visible()
    top = page.evaluate("() => document.querySelector('.log-list').scrollTop")
    before = page.evaluate(count)
    ui.call("ok")
    page.wait_for_function(f"(before) => ({count})() !== before", arg=before)
    assert page.evaluate("() => document.querySelector('.log-list').scrollTop") == top
    log.locator('[data-action="follow-log"]').click()
    expect(log.locator('[data-action="follow-log"]')).to_be_hidden()
    page.wait_for_function(f"() => ({distance})() < 80")
    no_console_errors(page)
