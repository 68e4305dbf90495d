"""The page's Audit and Apps views, and how long MCP App frames live, in a real Chromium against the demo.

Selectors: the header buttons `[data-testid="open-audit"]` / `[data-testid="open-apps"]`; the audit view
`[data-testid="audit-log"]` with one `[data-audit-entry]` per row (`data-kind`, `data-decision`,
`data-server`); the apps view `[data-testid="apps-view"]` with `[data-apps-tool][data-apps-server]` rows and
`[data-apps-frame]` rows (`data-frame-status`, buttons `[data-apps-action=open|focus|close]`). The demo's
`show_dashboard` App calls the app-only `dashboard_refresh`, which writes `app.tools/call` audit entries.

Lifetimes: a tool view you switch away from keeps its App running (parked: invisible, inert, its contract
attributes renamed so `iframe[data-app-frame]`, `[data-testid=...]` and `[name=ARG]` match only the open
tool); a re-run, closing the view and an answered app-rendered input request tear the App down with
`ui/resource-teardown` while its frame is still in the page.
"""

from __future__ import annotations

import csv
import io
import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import FrameLocator, Locator, Page, expect

from tests.e2e.conftest import bind_page, login
from tests.support.process import Webhost, run_webhost

pytestmark = pytest.mark.e2e

CONNECT_MS = 30_000
APP_MS = 20_000


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    with run_webhost(tmp_path_factory.mktemp("page-views"), None) as running:
        yield running


@pytest.fixture
def demo_page(page: Page, demo: Webhost) -> Page:
    login(page, demo)
    expect(page.locator('[data-server="demo"][data-status="connected"]')).to_be_visible(timeout=CONNECT_MS)
    bind_page(page)
    return page


# ---- helpers ---------------------------------------------------------------------------------------------------


def no_console_errors(page: Page) -> None:
    errors = list(page.console_errors)  # type: ignore[attr-defined]
    assert errors == [], errors


def wait_until(page: Page, predicate: Callable[[], Any], timeout: float = 15.0, message: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        page.wait_for_timeout(50)
    raise AssertionError(f"timed out waiting for {message}")


def open_tool(page: Page, tool: str) -> Locator:
    page.locator(f'[data-server="demo"] [data-tool="{tool}"]').click()
    view = page.locator(f'[data-open-server="demo"][data-open-tool="{tool}"]')
    expect(view).to_be_visible()
    return view


def app_frame(page: Page) -> Locator:
    """The one visible tool app frame (strict: fails if a parked frame still matched)."""
    return page.locator("iframe[data-app-frame]")


def app_inner(page: Page) -> FrameLocator:
    return page.frame_locator("iframe[data-app-frame]").frame_locator("iframe")


def call_dashboard(page: Page) -> str:
    """Call show_dashboard through its form; returns the frame id of its ready App."""
    previous = {a["frameId"] for a in apps_list(page)}
    open_tool(page, "show_dashboard")
    page.locator('[data-testid="call-tool"]').click()
    expect(page.locator('[data-testid="tool-result"]')).to_have_attribute("data-status", "ok")
    frame = app_frame(page)
    expect(frame).to_have_attribute("data-app-status", "ready", timeout=APP_MS)
    frame_id = frame.get_attribute("data-frame-id") or ""
    assert frame_id and frame_id not in previous
    return frame_id


def refresh_in_app(page: Page) -> None:
    """The dashboard App's Refresh button: an app-initiated tools/call of dashboard_refresh."""
    before = trace_methods(page, app_frame(page).get_attribute("data-frame-id") or "", "in", "tools/call")
    app_inner(page).locator("#refresh").click()
    frame_id = app_frame(page).get_attribute("data-frame-id") or ""
    wait_until(
        page, lambda: len(trace_methods(page, frame_id, "in", "tools/call")) > len(before), message="the app's call"
    )
    expect(app_inner(page).locator("#refresh")).to_be_enabled()


def apps_list(page: Page) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = page.evaluate(
        "() => window.__page.apps.list().map((a) => ({frameId: a.frameId, server: a.server, status: a.status,"
        " tool: a.tool, purpose: a.purpose, resourceUri: a.resourceUri}))"
    )
    return result


def trace(page: Page, frame_id: str) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = page.evaluate("(f) => window.__page.apps.debug.trace(f)", frame_id)
    return result


def trace_methods(page: Page, frame_id: str, direction: str, method: str) -> list[dict[str, Any]]:
    return [t["msg"] for t in trace(page, frame_id) if t["dir"] == direction and t["msg"].get("method") == method]


def teardown_answered(page: Page, frame_id: str) -> bool:
    """The host sent ui/resource-teardown to the frame and the App answered it (so it was still in the page)."""
    t = trace(page, frame_id)
    sent = [x["msg"]["id"] for x in t if x["dir"] == "out" and x["msg"].get("method") == "ui/resource-teardown"]
    return bool(sent) and any(x["dir"] == "in" and x["msg"].get("id") in sent and "result" in x["msg"] for x in t)


def audit_rows(page: Page) -> Locator:
    return page.locator('[data-testid="audit-log"] [data-audit-entry]')


# ---- the audit view --------------------------------------------------------------------------------------------


def test_audit_view_lists_app_activity_newest_first(demo_page: Page, demo: Webhost) -> None:
    page = demo_page
    frame_id = call_dashboard(page)
    refresh_in_app(page)

    page.locator('[data-testid="open-audit"]').click()
    view = page.locator('[data-testid="audit-log"]')
    expect(view).to_be_visible()
    expect(page.locator('[data-testid="open-audit"]')).to_have_attribute("aria-current", "page")
    rows = audit_rows(page)
    allowed_call = '[data-kind="app.tools/call"][data-decision="allowed"][data-server="demo"]'
    call_row = rows.and_(page.locator(allowed_call)).first
    expect(call_row).to_be_visible()
    expect(call_row).to_contain_text("dashboard_refresh")
    expect(rows.and_(page.locator('[data-kind="app.open"]')).first).to_be_visible()

    # Newest first, like audit/list.
    ids = [int(i) for i in rows.evaluate_all("els => els.map((e) => e.dataset.auditEntry)")]
    assert ids == sorted(ids, reverse=True) and len(ids) >= 2
    kinds = rows.evaluate_all("els => els.map((e) => e.dataset.kind)")
    assert kinds.index("app.tools/call") < kinds.index("app.open")

    # The detail JSON on demand.
    call_row.locator("summary").click()
    detail = call_row.locator(".audit-detail")
    expect(detail).to_contain_text('"region": "global"')
    expect(detail).to_contain_text(frame_id)

    # Refresh picks up new entries (one outcome row per call; the intent row written before it is its own kind).
    outcomes = rows.and_(page.locator(':not([data-kind$=".intent"])'))
    count = outcomes.count()
    page.locator('[data-server="demo"] [data-tool="show_dashboard"]').click()
    refresh_in_app(page)  # the App is still running (its view was parked, not removed)
    page.locator('[data-testid="open-audit"]').click()
    expect(outcomes).to_have_count(count + 1)
    page.locator('[data-audit-action="refresh"]').click()
    expect(outcomes).to_have_count(count + 1)
    no_console_errors(page)


def test_audit_view_filter_and_exports(demo_page: Page, demo: Webhost) -> None:
    page = demo_page
    call_dashboard(page)
    refresh_in_app(page)
    page.locator('[data-testid="open-audit"]').click()
    rows = audit_rows(page)
    expect(rows.first).to_be_visible()

    flt = page.locator('[data-testid="audit-log"] select[data-audit-filter="server"]')
    flt.select_option("demo")
    expect(page.locator('[data-testid="audit-log"]')).to_have_attribute("aria-busy", "false")
    servers = set(rows.evaluate_all("els => els.map((e) => e.dataset.server)"))
    assert servers == {"demo"}

    json_link = page.locator('[data-audit-export="json"]')
    csv_link = page.locator('[data-audit-export="csv"]')
    expect(json_link).to_have_attribute("href", "/api/audit?server=demo")
    expect(csv_link).to_have_attribute("href", "/api/audit?format=csv&server=demo")
    flt.select_option("")
    expect(json_link).to_have_attribute("href", "/api/audit")
    expect(csv_link).to_have_attribute("href", "/api/audit?format=csv")

    # A plain link works: the session cookie authenticates it (page.request shares the context's cookies).
    shown = rows.count()
    as_json = page.request.get(f"{demo.base_url}/api/audit")
    assert as_json.ok
    entries = as_json.json()["entries"]
    assert any(e["kind"] == "app.tools/call" and e["decision"] == "allowed" for e in entries)
    assert len(entries) >= shown
    as_csv = page.request.get(f"{demo.base_url}/api/audit?format=csv")
    assert as_csv.ok and "text/csv" in as_csv.headers["content-type"]
    table = list(csv.reader(io.StringIO(as_csv.text())))
    assert table[0][:6] == ["id", "ts", "session", "server", "frame", "kind"]
    assert any(row[5] == "app.tools/call" for row in table[1:])

    # The download links really download.
    with page.expect_download() as download:
        csv_link.click()
    assert download.value.suggested_filename.endswith(".csv")
    no_console_errors(page)


def test_audit_view_shows_app_text_as_text(demo_page: Page) -> None:
    """Entries carry what apps sent: it is shown escaped, never parsed as markup."""
    page = demo_page
    frame_id = call_dashboard(page)
    hostile = '<img src=x onerror="window.__pwned=1"><b>bold</b>'
    page.evaluate(
        "([f, s]) => window.__page.rpc.request('apps/event', {frameId: f, kind: 'violation',"
        " detail: {summary: s, html: s}})",
        [frame_id, hostile],
    )
    page.locator('[data-testid="open-audit"]').click()
    row = audit_rows(page).and_(page.locator('[data-kind="app.violation"]')).first
    expect(row).to_have_attribute("data-decision", "blocked")
    expect(row.locator(".audit-summary")).to_have_text(hostile)
    row.locator("summary").click()
    expect(row.locator(".audit-detail")).to_contain_text(json.dumps(hostile))
    assert row.locator("img, b").count() == 0
    assert page.evaluate("() => window.__pwned") is None
    no_console_errors(page)


# ---- the apps view ---------------------------------------------------------------------------------------------


def test_apps_view_lists_app_tools_and_open_frames(demo_page: Page) -> None:
    page = demo_page
    page.locator('[data-testid="open-apps"]').click()
    view = page.locator('[data-testid="apps-view"]')
    expect(view).to_be_visible()
    dashboard = view.locator('[data-apps-tool="show_dashboard"][data-apps-server="demo"]')
    refresh = view.locator('[data-apps-tool="dashboard_refresh"][data-apps-server="demo"]')
    expect(dashboard).to_contain_text("ui://demo/dashboard.html")
    expect(dashboard.locator(".badge.app-only")).to_have_count(0)
    expect(refresh.locator(".badge.app-only")).to_be_visible()
    # Only app tools are listed.
    names = view.locator("[data-apps-tool]").evaluate_all("els => els.map((e) => e.dataset.appsTool)")
    assert "get_weather" not in names and "divide" not in names
    expect(view.locator("[data-apps-frame]")).to_have_count(0)

    # Open selects the tool as clicking it in its server does.
    dashboard.locator('[data-apps-action="open"]').click()
    expect(page.locator('[data-open-server="demo"][data-open-tool="show_dashboard"]')).to_be_visible()
    expect(page.locator('[data-server="demo"] [data-tool="show_dashboard"]')).to_have_attribute("aria-current", "true")
    page.locator('[data-testid="call-tool"]').click()
    expect(app_frame(page)).to_have_attribute("data-app-status", "ready", timeout=APP_MS)
    frame_id = app_frame(page).get_attribute("data-frame-id") or ""

    # The open frame is listed, and stays listed (running) while another tool is shown.
    open_tool(page, "divide")
    page.locator('[data-testid="open-apps"]').click()
    row = view.locator(f'[data-apps-frame="{frame_id}"]')
    expect(row).to_have_attribute("data-frame-status", "ready")
    expect(row).to_have_attribute("data-apps-server", "demo")
    expect(row).to_contain_text("show_dashboard")
    expect(row).to_contain_text("ui://demo/dashboard.html")

    # Focus brings the app's tool view back, with the same (still running) frame.
    row.locator('[data-apps-action="focus"]').click()
    expect(page.locator('[data-open-server="demo"][data-open-tool="show_dashboard"]')).to_be_visible()
    expect(app_frame(page)).to_have_attribute("data-frame-id", frame_id)
    expect(app_frame(page)).to_be_in_viewport()

    # Close from the Apps view tears the App down properly.
    page.locator('[data-testid="open-apps"]').click()
    row.locator('[data-apps-action="close"]').click()
    expect(row).to_have_count(0)
    wait_until(page, lambda: teardown_answered(page, frame_id), message="the teardown answer")
    expect(view.locator("[data-apps-frame]")).to_have_count(0)
    no_console_errors(page)


# ---- app lifetimes ---------------------------------------------------------------------------------------------


def test_switching_tools_keeps_the_app_running(demo_page: Page) -> None:
    page = demo_page
    frame_id = call_dashboard(page)
    ready_messages = len(trace_methods(page, frame_id, "in", "ui/notifications/sandbox-proxy-ready"))

    # Another tool: its form and result are the only ones the contract selectors see.
    open_tool(page, "divide")
    expect(page.locator("iframe[data-app-frame]")).to_have_count(0)
    expect(page.locator('[data-testid="tool-result"]')).to_have_count(0)
    expect(page.locator('[data-testid="call-tool"]')).to_have_count(1)
    page.locator('[name="a"]').fill("7")
    page.locator('[name="b"]').fill("2")
    page.locator('[data-testid="call-tool"]').click()
    result = page.locator('[data-testid="tool-result"]')
    expect(result).to_have_attribute("data-status", "ok")
    expect(result).to_contain_text("3.5")
    # The dashboard App is parked, not closed.
    assert [a["status"] for a in apps_list(page) if a["frameId"] == frame_id] == ["ready"]
    assert not trace_methods(page, frame_id, "out", "ui/resource-teardown")

    # Back: the same frame (not reloaded), and its form and result are the contract's again.
    open_tool(page, "show_dashboard")
    expect(app_frame(page)).to_have_attribute("data-frame-id", frame_id)
    expect(app_frame(page)).to_have_attribute("data-app-status", "ready")
    expect(app_frame(page)).to_be_visible()
    expect(page.locator('[data-testid="tool-result"]')).to_have_attribute("data-status", "ok")
    expect(page.locator('[name="region"]')).to_be_visible()
    assert len(trace_methods(page, frame_id, "in", "ui/notifications/sandbox-proxy-ready")) == ready_messages
    expect(page.locator("[data-app-closed]")).to_have_count(0)
    refresh_in_app(page)  # it still answers

    # Back to divide: its result survived too.
    open_tool(page, "divide")
    expect(page.locator('[data-testid="tool-result"]')).to_contain_text("3.5")
    no_console_errors(page)


def test_what_arrives_in_a_parked_view_stays_out_of_the_contract_selectors(demo_page: Page) -> None:
    page = demo_page
    open_tool(page, "count_slowly")
    page.locator('[name="steps"]').fill("2")
    page.locator('[name="delay"]').fill("2")
    page.locator('[data-testid="call-tool"]').click()
    expect(page.locator('[data-testid="tool-result"]')).to_have_attribute("data-status", "pending")
    open_tool(page, "show_dashboard")
    page.locator('[data-testid="call-tool"]').click()
    open_tool(page, "divide")  # both views parked: the count still running, the dashboard's app on its way

    parked = page.locator(".tool-view[data-parked]")
    expect(parked.locator('[data-hidden-testid="tool-result"][data-status="ok"]')).to_have_count(2, timeout=APP_MS)
    expect(parked.locator('iframe[data-hidden-app-frame][data-app-status="ready"]')).to_have_count(1, timeout=APP_MS)
    contract = "[data-testid], [name], [data-app-frame], [data-server], [data-field], [data-content-type]"
    expect(parked.locator(contract)).to_have_count(0)
    expect(page.locator("iframe[data-app-frame]")).to_have_count(0)
    expect(page.locator('[data-testid="tool-result"]')).to_have_count(0)

    # Shown again, they are the contract's.
    open_tool(page, "count_slowly")
    expect(page.locator('[data-testid="tool-result"] [data-content-type="text"]')).to_contain_text("Counted to 2.")
    open_tool(page, "show_dashboard")
    expect(app_frame(page)).to_have_attribute("data-app-status", "ready")
    no_console_errors(page)


def test_rerun_tears_the_previous_app_down_before_removing_it(demo_page: Page) -> None:
    page = demo_page
    first = call_dashboard(page)
    page.locator('[data-testid="call-tool"]').click()
    # The contract selectors never see the previous result: exactly one of each, at every step.
    expect(page.locator('[data-testid="tool-result"]')).to_have_count(1)
    second = wait_until(
        page,
        lambda: next(
            (a["frameId"] for a in apps_list(page) if a["frameId"] not in (first, None) and a["status"] == "ready"),
            None,
        ),
        timeout=APP_MS / 1000,
        message="the second app",
    )
    expect(app_frame(page)).to_have_attribute("data-frame-id", second)
    # The first App got ui/resource-teardown while its frame was still in the page, and answered it.
    wait_until(page, lambda: teardown_answered(page, first), message="the first app's teardown answer")
    expect(page.locator(f'[data-frame-id="{first}"]')).to_have_count(0)  # then its result was removed
    expect(page.locator(".result-slot > [data-parked]")).to_have_count(0)
    assert first not in {a["frameId"] for a in apps_list(page)}
    no_console_errors(page)


def test_closing_a_tool_view_tears_its_app_down(demo_page: Page) -> None:
    page = demo_page
    frame_id = call_dashboard(page)
    view = page.locator('[data-open-server="demo"][data-open-tool="show_dashboard"]')
    view.locator('[data-view-action="close"]').click()
    expect(page.locator(".welcome")).to_be_visible()
    wait_until(page, lambda: teardown_answered(page, frame_id), message="the teardown answer")
    expect(view).to_have_count(0)
    assert frame_id not in {a["frameId"] for a in apps_list(page)}
    # Opening the tool again starts afresh.
    open_tool(page, "show_dashboard")
    expect(page.locator('[data-testid="tool-result"]')).to_have_count(0)
    no_console_errors(page)


def test_answered_app_input_request_is_torn_down_before_its_card_goes(demo_page: Page) -> None:
    page = demo_page
    open_tool(page, "pick_color")
    page.locator('[data-testid="call-tool"]').click()
    card = page.locator('[data-elicitation][data-mode="app"][data-server="demo"]')
    frame = card.locator("iframe[data-app-frame]")
    expect(frame).to_have_attribute("data-app-status", "ready", timeout=APP_MS)
    frame_id = frame.get_attribute("data-frame-id") or ""
    card.locator('[data-action="decline"]').click()
    expect(page.locator('[data-testid="tool-result"]')).to_have_attribute("data-status", re.compile("^(ok|error)$"))
    expect(page.locator("[data-elicitation]")).to_have_count(0)
    expect(page.locator("iframe[data-app-frame]")).to_have_count(0)
    wait_until(page, lambda: teardown_answered(page, frame_id), message="the picker's teardown answer")
    expect(page.locator(f'[data-frame-id="{frame_id}"]')).to_have_count(0)
    expect(page.locator(".inbox")).to_be_hidden()
    no_console_errors(page)


# ---- the sessions view (admins) and the person column ------------------------------------------------------------


def test_an_admin_sees_the_person_column_and_the_live_sessions_and_an_ended_tab_says_why(
    demo_page: Page, demo: Webhost
) -> None:
    page = demo_page
    call_dashboard(page)
    page.locator('[data-testid="open-audit"]').click()
    rows = audit_rows(page)
    expect(rows.first).to_be_visible()
    expect(page.locator('[data-testid="audit-log"] .audit-list.with-user')).to_be_visible()  # token mode: an admin
    expect(rows.and_(page.locator('[data-audit-user="token"]')).first.locator(".audit-user")).to_have_text("webhost")

    sessions = page.locator('[data-testid="open-sessions"]')
    expect(sessions).to_be_visible()
    sessions.click()
    view = page.locator('[data-testid="sessions-view"]')
    expect(view).to_have_attribute("aria-busy", "false")
    session_id = page.evaluate("document.documentElement.dataset.sessionId")
    mine = view.locator(f'[data-session-id="{session_id}"]')
    expect(mine).to_have_attribute("data-current", "true")
    expect(mine).to_have_attribute("data-role", "admin")
    expect(mine.locator(".session-servers")).to_contain_text("demo")

    page.clock.install()  # the page's timers from here on run when the test says: a retry would be one of them
    mine.locator('[data-session-action="end"]').click()
    mine.locator('[data-session-action="confirm-end"]').click()  # End asks first
    banner = page.locator('[data-testid="connection-banner"]')
    expect(banner).to_have_attribute("data-ended", "true")
    expect(banner).to_contain_text("This session was ended: ended from the Sessions view (by webhost)")
    page.clock.run_for(60_000)  # a minute of the page's time, past every retry delay: no automatic reconnect
    expect(page.locator("html")).to_have_attribute("data-connection", "closed")
    banner.get_by_role("button", name="Reconnect").click()
    expect(page.locator("html")).to_have_attribute("data-connection", "open")
    expect(banner).to_be_hidden()
    no_console_errors(page)
