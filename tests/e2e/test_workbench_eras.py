"""What issue 25 added to the workbench, in a real Chromium against SDK servers over stdio, in both eras: the era
choice shown on the server (item 6), the request `_meta` editor (item 3), the log level per request and ping
where the era has it (item 2), roots edited in the page (item 5), caching hints and dropped tools (item 9,
tests/servers/cached.py), tasks (item 1, tests/servers/tasks.py in both eras). tests/servers/workbench.py, once
negotiated ("auto", 2026-07-28) and once with `protocol: "legacy"`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_polish import axe_problems
from tests.support.process import Webhost, run_webhost, stdio_server
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    servers: dict[str, Any] = {
        "modern": stdio_server("workbench"),
        "pinned": stdio_server("workbench"),
        "cached": stdio_server("cached"),
        "jobs": stdio_server("tasks"),
        "oldjobs": stdio_server("tasks", "--legacy"),
    }
    options = {"servers": {"pinned": {"protocol": "legacy"}}}
    with run_webhost(tmp_path_factory.mktemp("eras"), servers, webhost_options=options) as running:
        yield running


def test_the_server_card_and_view_say_which_era_the_entry_chose(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("modern", "pinned")
    pinned = ui.server("pinned")
    expect(pinned).to_have_attribute("data-protocol-choice", "legacy")
    expect(pinned.locator(".server-meta")).to_contain_text("protocol: legacy")
    expect(ui.server("modern")).to_have_attribute("data-protocol-choice", "auto")
    expect(ui.server("modern").locator(".server-meta")).to_contain_text("2026-07-28")
    pinned.locator(".server-name").click()
    expect(page.locator('[data-fact="Era choice"]')).to_have_text("legacy only (initialize)")
    expect(page.locator('[data-fact="Protocol"]')).to_contain_text("legacy")
    assert ui.console_errors == []
    assert axe_problems(page) == []


TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.mark.parametrize("server", ["modern", "pinned"])
def test_the_request_meta_editor_sends_its_object_and_refuses_reserved_keys(
    page: Page, ui: WebhostPage, host: Webhost, server: str
) -> None:
    ui.sign_in(host)
    view = ui.open_tool(server, "request_meta")
    editor = view.locator('[data-testid="request-meta"]')
    editor.locator("summary").click()
    editor.locator('textarea[name="_meta"]').fill('{"io.modelcontextprotocol/logLevel": "error"}')
    view.locator('[data-testid="call-tool"]').click()
    expect(editor.locator('[data-testid="request-meta-error"]')).to_contain_text(
        "Reserved in _meta: io.modelcontextprotocol/logLevel"
    )
    expect(page.locator('[data-testid="tool-result"]')).to_have_count(0)  # nothing was sent
    editor.locator('textarea[name="_meta"]').fill(f'{{"traceparent": "{TRACEPARENT}"}}')
    result = ui.call("ok")
    expect(result.locator).to_contain_text(TRACEPARENT)
    # The prompt and the resource template take one too.
    ui.server(server).locator('[data-tab="prompts"]').click()
    ui.server(server).locator('[data-prompt="request_meta"]').click()
    prompt = page.locator(".prompt-view")
    prompt.locator('[data-testid="request-meta"] summary').click()
    prompt.locator('textarea[name="_meta"]').fill('{"com.example/run": 7}')
    prompt.locator('[data-testid="get-prompt"]').click()
    expect(prompt.locator('[data-testid="prompt-result"]')).to_contain_text('"com.example/run": 7')
    assert ui.console_errors == []
    assert axe_problems(page) == []


def test_the_log_level_goes_with_each_request_on_2026_and_by_set_level_before(
    page: Page, ui: WebhostPage, host: Webhost
) -> None:
    ui.sign_in(host)
    ui.wait_connected("modern", "pinned")
    ui.server("modern").locator(".server-name").click()
    view = page.locator(".server-view")
    expect(view.locator('[data-action="ping"]')).to_be_hidden()  # 2026-07-28 has no ping
    expect(view.locator('[data-testid="no-ping"]')).to_be_visible()
    expect(view.locator('[data-testid="log-level-via"]')).to_have_attribute("data-via", "request")
    expect(view.locator('[data-cap="logging"] [data-side="server"]')).to_have_attribute("data-log-via", "request")
    view.locator('[data-action="set-log-level"]').select_option("error")
    expect(view.locator('[data-testid="log-level-result"]')).to_have_attribute("data-level", "error")
    ui.open_tool("modern", "request_meta")
    expect(ui.call("ok").locator).to_contain_text('"io.modelcontextprotocol/logLevel": "error"')
    # Kept for this person and server: the view shows it after a reload.
    page.reload()
    ui.wait_connected("modern")
    ui.server("modern").locator(".server-name").click()
    expect(page.locator('.server-view [data-action="set-log-level"]')).to_have_value("error")

    ui.server("pinned").locator(".server-name").click()
    view = page.locator(".server-view")
    expect(view.locator('[data-action="ping"]')).to_be_visible()
    expect(view.locator('[data-testid="log-level-via"]')).to_have_attribute("data-via", "setLevel")
    view.locator('[data-action="set-log-level"]').select_option("warning")
    expect(view.locator('[data-testid="log-level-result"]')).to_have_attribute("data-level", "warning")
    assert ui.console_errors == []
    assert axe_problems(page) == []


def test_roots_edited_in_the_page_reach_the_servers_of_both_eras(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("modern", "pinned")
    page.locator('[data-testid="open-roots"]').click()
    view = page.locator('[data-testid="roots-view"]')
    # Still given to the servers that ask, and labelled as MCP 2026-07-28 labels it (issue 31 item 11).
    expect(view.locator("[data-roots-deprecated]")).to_contain_text("Deprecated: MCP 2026-07-28 deprecates roots")
    expect(view.locator('[data-roots="effective"]')).to_contain_text("No roots")
    mine = view.locator('form[data-scope="mine"]')
    mine.locator('[data-roots-action="add"]').click()
    mine.locator('[data-root-row] input[name="uri"]').fill("file:///home/ada/project")
    mine.locator('[data-root-row] input[name="name"]').fill("project")
    mine.locator('[data-roots-action="save"]').click()
    expect(view.locator('[data-testid="roots-status"]')).to_contain_text("Saved")
    expect(view.locator('[data-roots="effective"] [data-root-uri="file:///home/ada/project"]')).to_be_visible()
    # The token's person is an admin: everyone's roots are editable too.
    shared = view.locator('form[data-scope="shared"]')
    shared.locator('[data-roots-action="add"]').click()
    shared.locator('[data-root-row] input[name="uri"]').fill("not a file uri")
    shared.locator('[data-roots-action="save"]').click()
    expect(view.locator('[data-testid="roots-status"]')).to_contain_text("must be a file:// URI")
    for server in ("modern", "pinned"):
        ui.open_tool(server, "roots")
        expect(ui.call("ok").locator).to_contain_text("file:///home/ada/project")
    # Kept: after a reload the view shows them again.
    page.reload()
    page.locator('[data-testid="open-roots"]').click()
    expect(page.locator('[data-roots="mine"] [data-root-row] input[name="uri"]')).to_have_value(
        "file:///home/ada/project"
    )
    assert ui.console_errors == []
    assert axe_problems(page) == []


def test_caching_hints_are_shown_and_a_dropped_tool_says_why(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("cached")
    card = ui.server("cached")
    dropped = card.locator('[data-tool="bad_header"]')
    expect(dropped).to_have_attribute("data-dropped", "x-mcp-header")
    expect(dropped).to_have_attribute("aria-disabled", "true")
    expect(dropped.locator("[data-item-error]")).to_contain_text("Dropped tool: invalid x-mcp-header annotation")
    expect(card.locator('[data-tool="region"]:not([data-invalid])')).to_be_visible()
    card.locator(".server-name").click()
    hints = page.locator('[data-testid="cache-hints"]')
    expect(hints.locator('[data-cache-method="server/discover"]')).to_contain_text("1 h")
    expect(hints.locator('[data-cache-method="tools/list"]')).to_contain_text("60 s")
    expect(hints.locator('[data-cache-method="tools/list"]')).to_contain_text("public")
    card.locator('[data-tab="resources"]').click()
    card.locator('[data-resource="cached://note"]').click()
    hint = page.locator('[data-testid="cache-hint"]')
    expect(hint).to_have_attribute("data-ttl-ms", "5000")
    expect(hint).to_contain_text("fresh for 5 s, private")
    assert ui.console_errors == []
    assert axe_problems(page) == []


def test_tasks_run_from_the_workbench_are_followed_cancelled_and_kept_over_a_reload(
    page: Page, ui: WebhostPage, host: Webhost
) -> None:
    ui.sign_in(host)
    ui.wait_connected("jobs", "oldjobs")
    for server in ("jobs", "oldjobs"):
        view = ui.open_tool(server, "long_job")
        if server == "oldjobs":  # 2025-11-25: the tool says it needs a task
            expect(view.locator('[data-testid="task-note"]')).to_be_visible()
        expect(ui.call("ok").locator).to_contain_text("done after 3 steps")
    # A task that waits: its call stays open; the tasks view shows it running, and cancels it.
    ui.open_tool("oldjobs", "wait_job")
    ui.fill(label="e2e")
    page.locator('[data-testid="call-tool"]').click()
    page.locator('[data-testid="open-tasks"]').click()
    tasks = page.locator('[data-testid="tasks-view"]')
    waiting = tasks.locator('[data-tool="wait_job"]')
    expect(waiting).to_have_attribute("data-status", "working")
    for server in ("jobs", "oldjobs"):
        done = tasks.locator(f'[data-tool="long_job"][data-server="{server}"]')
        expect(done).to_have_attribute("data-status", "completed")
    # Before 2026-07-28 the server's progress notes for the task are shown with it.
    progress = tasks.locator('[data-tool="long_job"][data-server="oldjobs"] [data-testid="task-progress"]')
    expect(progress).to_contain_text("3 of 3")
    waiting.locator('[data-task-action="cancel"]').click()
    expect(waiting).to_have_attribute("data-status", "cancelled")
    # Kept over a reload, with their results.
    page.reload()
    page.locator('[data-testid="open-tasks"]').click()
    done = page.locator('[data-testid="tasks-view"] [data-tool="long_job"][data-server="jobs"]')
    expect(done).to_have_attribute("data-status", "completed")
    done.locator('[data-task-action="result"]').click()
    expect(done.locator('[data-testid="task-result"]')).to_contain_text("done after 3 steps")
    expect(page.locator('[data-testid="tasks-view"] [data-tool="wait_job"]')).to_have_attribute(
        "data-status", "cancelled"
    )
    assert ui.console_errors == []
    assert axe_problems(page) == []
