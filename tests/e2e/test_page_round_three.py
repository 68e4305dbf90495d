"""The page's third hardening round, in a real Chromium where the person sees it (issue 24, items 22–24).

- A request for the person has a place of its own (below or beside the workspace), never over the app or its
  buttons; its panel hides and docks ([data-action="toggle-inbox"], [data-action="dock-inbox"]).
- A tool call running when the page reloads is shown again in the reopened tool, pending, with its progress, a
  log entry and its result when it comes (`calls/running`, `calls/outcome` with `reattached`).
- Smaller: a phone's opened tool title below the sticky header; a server with nothing matching a search shrinks
  to its name; the Sessions view opened from its address; End asks first; ping and the log level only where
  they exist; picture-in-picture only for an app that declared it; a Cancel shown calm in the log; an input
  request takes focus (an app-rendered one too) and Escape cancels it; "Registration cancelled." in the demo.

Servers: the shipped demo (2026-07-28) and tests/servers/gated.py, whose `wait_at_gate` runs until the test
calls `open_gate`, so nothing here waits on a clock.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.e2e.conftest import bind_page, login
from tests.support.process import PYTHON, Webhost, run_webhost, stdio_server

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-results" / "screenshots"
CONNECT_MS = 30_000
APP_MS = 20_000


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    servers: dict[str, Any] = {
        "demo": {"command": PYTHON, "args": ["-m", "webhost.demo.server"]},
        "gated": stdio_server("gated"),
    }
    with run_webhost(tmp_path_factory.mktemp("round-three"), servers) as running:
        yield running


def connected(page: Page) -> None:
    for name in ("demo", "gated"):
        expect(page.locator(f'[data-server="{name}"][data-status="connected"]')).to_be_visible(timeout=CONNECT_MS)


@pytest.fixture
def ready(page: Page, host: Webhost) -> Page:
    page.context.route("https://example.com/**", lambda route: route.fulfill(status=200, body="example"))
    login(page, host)
    connected(page)
    bind_page(page)
    return page


# ---- helpers ---------------------------------------------------------------------------------------------------


def no_console_errors(page: Page) -> None:
    errors = list(page.console_errors)  # type: ignore[attr-defined]
    assert errors == [], errors


def open_tool(page: Page, server: str, tool: str) -> Locator:
    page.locator(f'[data-server="{server}"] [data-tool="{tool}"]').click()
    view = page.locator(f'[data-open-server="{server}"][data-open-tool="{tool}"]')
    expect(view).to_be_visible()
    return view


def call_dashboard(page: Page) -> Locator:
    open_tool(page, "demo", "show_dashboard")
    page.locator('[data-testid="call-tool"]').click()
    expect(page.locator('[data-testid="tool-result"]')).to_have_attribute("data-status", "ok")
    frame = page.locator("iframe[data-app-frame]")
    expect(frame).to_have_attribute("data-app-status", "ready", timeout=APP_MS)
    return frame


def ask_open_link(page: Page) -> Locator:
    """The dashboard App asks to open a link: an approval for the person."""
    inner = page.frame_locator("iframe[data-app-frame]").frame_locator("iframe")
    inner.locator("body").evaluate(
        """() => window.parent.postMessage(
        {jsonrpc: "2.0", id: 910001, method: "ui/open-link", params: {url: "https://example.com/"}}, "*")"""
    )
    card = page.locator("[data-approval]")
    expect(card).to_be_visible()
    return card


def rect(locator: Locator) -> dict[str, float]:
    box: dict[str, float] = locator.evaluate(
        "(el) => { const r = el.getBoundingClientRect(); return {x: r.x, y: r.y, right: r.right, bottom: r.bottom}; }"
    )
    return box


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["x"] < b["right"] and b["x"] < a["right"] and a["y"] < b["bottom"] and b["y"] < a["bottom"]


def receives_clicks(locator: Locator) -> bool:
    """Whether the element at the centre of `locator` is it (nothing lies over it)."""
    locator.scroll_into_view_if_needed()
    hit: bool = locator.evaluate("""(el) => { const r = el.getBoundingClientRect();
      const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
      return top === el || el.contains(top); }""")
    return hit


def call_gated(page: Page, gate: str) -> Locator:
    open_tool(page, "gated", "wait_at_gate").locator('[name="gate"]').fill(gate)
    page.locator('[data-testid="call-tool"]').click()
    result = page.locator('[data-testid="tool-result"]')
    expect(result).to_have_attribute("data-status", "pending")
    expect(result).to_contain_text(f"waiting at gate {gate}")  # its progress: the server is in the call
    return result


def open_gate(page: Page, gate: str) -> None:
    page.evaluate(
        """(gate) => window.__page.rpc.request("tools/call",
        {server: "gated", name: "open_gate", arguments: {gate}, callId: "c-open-" + gate})""",
        gate,
    )


def reload(page: Page) -> None:
    page.reload()
    connected(page)
    bind_page(page)


# ---- 22: a request never covers what it is about ---------------------------------------------------------------


def test_a_request_covers_neither_the_app_nor_its_buttons_and_its_panel_hides_and_docks(ready: Page) -> None:
    page = ready
    call_dashboard(page)
    card = ask_open_link(page)
    panel = page.locator("aside.inbox")
    workspace = page.locator("#workspace")
    fullscreen = page.locator('[data-app-action="fullscreen"]')
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "round-three-request-below.png"))
    assert receives_clicks(fullscreen), "the app's Fullscreen button is covered"
    assert not overlaps(rect(panel), rect(workspace)), (rect(panel), rect(workspace))
    expect(panel).to_have_attribute("data-dock", "bottom")

    # Docked at the side: a column of its own, still over nothing.
    page.locator('[data-action="dock-inbox"]').click()
    expect(panel).to_have_attribute("data-dock", "side")
    expect(card).to_be_visible()
    assert not overlaps(rect(panel), rect(workspace)), (rect(panel), rect(workspace))
    assert receives_clicks(fullscreen), "the app's Fullscreen button is covered"
    page.screenshot(path=str(SHOTS / "round-three-request-side.png"))

    # Hidden: the title bar and the count stay; Show brings the card back.
    toggle = page.locator('[data-action="toggle-inbox"]')
    toggle.click()
    expect(card).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(panel.locator(".count")).to_have_text("1")
    toggle.click()
    expect(card).to_be_visible()
    page.locator('[data-action="dock-inbox"]').click()
    expect(panel).to_have_attribute("data-dock", "bottom")

    card.locator('[data-action="deny"]').click()
    expect(card).to_have_count(0)
    expect(panel).to_be_hidden()
    no_console_errors(page)


# ---- 23: a call running when the page reloads ------------------------------------------------------------------


def test_a_call_running_when_the_page_reloads_shows_pending_then_its_result(ready: Page) -> None:
    page = ready
    call_gated(page, "reload")
    reload(page)

    # The reopened tool (from the address) shows the call still running, with its progress and a log entry.
    result = page.locator('[data-open-tool="wait_at_gate"] [data-testid="tool-result"]')
    expect(result).to_have_attribute("data-status", "pending")
    expect(result).to_have_attribute("data-reattached", "true")
    expect(result).to_contain_text("waiting at gate reload")
    log = page.locator('[data-testid="activity-log"]')
    expect(log.locator('[data-log-entry][data-log-server="gated"][data-method="tools/call"]').first).to_be_attached()
    expect(log).to_contain_text("still running")

    open_gate(page, "reload")
    expect(result).to_have_attribute("data-status", "ok")
    expect(result).to_contain_text("passed gate reload")
    history = page.locator('[data-testid="history"] [data-history-entry][data-name="wait_at_gate"]')
    expect(history.first).to_have_attribute("data-status", "ok")
    no_console_errors(page)


def test_a_call_left_by_a_reload_can_be_cancelled_from_the_new_page(ready: Page) -> None:
    page = ready
    call_gated(page, "cancel-after-reload")
    reload(page)
    result = page.locator('[data-open-tool="wait_at_gate"] [data-testid="tool-result"]')
    expect(result).to_have_attribute("data-status", "pending")
    result.locator('[data-action="cancel-call"]').click()
    expect(result).to_have_attribute("data-status", "error")
    expect(result).to_have_attribute("data-cancelled", "true")
    expect(result).to_contain_text("-32800")
    no_console_errors(page)


# ---- 24: smaller things, each seen in a screenshot -------------------------------------------------------------


def test_on_a_phone_an_opened_tool_title_is_below_the_sticky_header(browser: Browser, host: Webhost) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        login(page, host)
        connected(page)
        title = open_tool(page, "demo", "register_user").locator("h2").first
        header = page.get_by_role("banner")
        expect(title).to_be_in_viewport()
        below = rect(title)["y"] >= rect(header)["bottom"]
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "round-three-phone-tool-title.png"))
        assert below, f"the title {rect(title)} is under the header {rect(header)}"
    finally:
        context.close()


def test_a_server_with_nothing_matching_a_search_shrinks_to_its_name(ready: Page) -> None:
    page = ready
    gated = page.locator('[data-server="gated"]')
    search = page.locator('[data-testid="search"]')
    search.fill("count")
    expect(page.locator('[data-server="demo"] [data-tool="count_slowly"]')).to_be_visible()
    expect(gated.locator('[data-tool="wait_at_gate"]')).to_be_hidden()
    expect(gated.locator('[data-action="reconnect"]')).to_be_hidden()
    expect(gated.locator("[data-tab]").first).to_be_hidden()
    expect(gated).to_have_attribute("data-search-miss", "")
    expect(gated.locator(".server-name")).to_be_visible()  # still there: its name and status
    expect(gated).to_have_attribute("data-status", "connected")
    assert gated.bounding_box()["height"] < 3 * gated.locator(".server-name").bounding_box()["height"]  # type: ignore[index]
    search.fill("")
    expect(gated).not_to_have_attribute("data-search-miss", "")
    expect(gated.locator('[data-tool="wait_at_gate"]')).to_be_visible()


def test_the_sessions_view_opened_from_its_address_lists_the_sessions(ready: Page, host: Webhost) -> None:
    page = ready
    page.goto("about:blank")
    page.goto(f"{host.base_url}/#kind=sessions")  # a new load of the page, straight into the view
    view = page.locator('[data-testid="sessions-view"]')
    expect(view).to_have_attribute("aria-busy", "false")
    expect(view).not_to_contain_text("Not connected")
    expect(view.locator('[data-session-id][data-current="true"]')).to_be_visible()


def test_ending_a_session_asks_first(ready: Page) -> None:
    page = ready
    page.locator('[data-testid="open-sessions"]').click()
    mine = page.locator('[data-testid="sessions-view"] [data-session-id][data-current="true"]')
    mine.locator('[data-session-action="end"]').click()
    confirm = mine.locator('[data-session-action="confirm-end"]')
    expect(confirm).to_be_visible()
    expect(page.locator("html")).to_have_attribute("data-connection", "open")  # nothing ended on the first click
    mine.locator('[data-session-action="keep"]').click()
    expect(confirm).to_be_hidden()
    mine.locator('[data-session-action="end"]').click()
    confirm.click()
    expect(page.locator('[data-testid="connection-banner"]')).to_have_attribute("data-ended", "true")


def test_ping_and_the_log_level_are_not_offered_to_a_server_that_has_neither(ready: Page) -> None:
    page = ready
    page.locator('[data-server="gated"] .server-name').click()
    expect(page.locator('[data-testid="capabilities"]')).to_be_visible()
    expect(page.locator('[data-action="ping"]')).to_be_hidden()
    expect(page.locator('[data-action="set-log-level"]')).to_be_hidden()
    expect(page.locator('[data-testid="server-checks-note"]')).to_contain_text("2026-07-28")


def test_picture_in_picture_is_not_offered_to_an_app_that_did_not_declare_it(ready: Page) -> None:
    page = ready
    call_dashboard(page)  # its app declares availableDisplayModes ["inline", "fullscreen"]
    page.locator('[data-app-action="fullscreen"]').click()
    stage = page.locator(".wh-app-stage")
    expect(stage).to_have_attribute("data-display-mode", "fullscreen")
    expect(page.locator('[data-stage-action="inline"]')).to_be_visible()
    expect(page.locator('[data-stage-action="pip"]')).to_be_hidden()
    page.locator('[data-stage-action="inline"]').click()
    expect(stage).to_have_attribute("data-display-mode", "inline")


def test_a_deliberate_cancel_is_not_a_red_row_in_the_log(ready: Page) -> None:
    page = ready
    open_tool(page, "demo", "count_slowly").locator('[name="steps"]').fill("50")
    page.locator('[data-testid="call-tool"]').click()
    result = page.locator('[data-testid="tool-result"]')
    expect(result).to_have_attribute("data-status", "pending")
    result.locator('[data-action="cancel-call"]').click()
    expect(result).to_have_attribute("data-cancelled", "true")
    log = page.locator(
        '[data-testid="activity-log"] [data-log-entry][data-log-server="demo"][data-method="tools/call"]'
    )
    cancelled = log.and_(page.locator('[data-kind="cancelled"]'))
    expect(cancelled).to_have_count(1)
    expect(log.and_(page.locator('[data-kind="error"]'))).to_have_count(0)
    color = cancelled.locator(".log-kind").evaluate("(el) => getComputedStyle(el).color")
    red = page.evaluate("""() => { const p = document.createElement('p'); p.style.color = 'var(--color-text-danger)';
      document.body.append(p); const c = getComputedStyle(p).color; p.remove(); return c; }""")
    assert color != red, color


IN_REQUEST = "() => Boolean(document.activeElement?.closest('[data-elicitation]'))"


def test_escape_cancels_an_input_request(ready: Page) -> None:
    page = ready
    open_tool(page, "demo", "register_user")
    page.locator('[data-testid="call-tool"]').click()
    form = page.locator('form[data-elicitation][data-mode="form"]')
    expect(form).to_be_visible()
    page.wait_for_function(IN_REQUEST)
    page.keyboard.press("Escape")
    expect(form).to_have_count(0)
    result = page.locator('[data-testid="tool-result"]')
    expect(result).to_have_attribute("data-status", "ok")
    expect(result).to_contain_text("Registration cancelled.")
    no_console_errors(page)


def test_an_app_rendered_input_request_takes_focus_and_escape_cancels_it(ready: Page) -> None:
    page = ready
    open_tool(page, "demo", "pick_color")
    page.locator('[data-testid="call-tool"]').click()
    card = page.locator('[data-elicitation][data-mode="app"]')
    expect(card.locator("iframe[data-app-frame]")).to_have_attribute("data-app-status", "ready", timeout=APP_MS)
    # Its card holds focus (the app draws the fields; Tab goes into it).
    page.wait_for_function(IN_REQUEST)
    page.keyboard.press("Escape")
    expect(page.locator("[data-elicitation]")).to_have_count(0)
    result = page.locator('[data-testid="tool-result"]')
    expect(result).to_have_attribute("data-status", "ok")
    expect(result).to_contain_text("No colour picked (cancel).")
    no_console_errors(page)
