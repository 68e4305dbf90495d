"""What a new user meets first, in a real Chromium against the embedded demo: accessibility (axe-core over
every main view, light and dark), approvals that neither move the app nor pile up, a deliberate Cancel, where
focus goes for an input request, the 401 page, and a phone-sized screen.

axe-core comes from tools/js (pinned, installed by scripts/install-test-deps). Screenshots of the main views in
both themes are saved into test-results/screenshots/ for a person to look at.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.e2e.conftest import bind_page, login
from tests.support.process import Webhost, run_webhost
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "tools" / "js" / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = ROOT / "test-results" / "screenshots"
CONNECT_MS = 30_000
APP_MS = 20_000
LINK = "https://example.com/"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    with run_webhost(tmp_path_factory.mktemp("polish"), None) as running:
        yield running


@pytest.fixture
def demo_page(page: Page, demo: Webhost) -> Page:
    page.context.route("https://example.com/**", lambda route: route.fulfill(status=200, body="example"))
    login(page, demo)
    expect(page.locator('[data-server="demo"][data-status="connected"]')).to_be_visible(timeout=CONNECT_MS)
    bind_page(page)
    return page


# ---- helpers ---------------------------------------------------------------------------------------------------


def set_theme(page: Page, theme: str) -> None:
    toggle = page.locator('[data-testid="theme-toggle"]')
    if page.evaluate("() => document.documentElement.dataset.theme") != theme:
        toggle.click()
    expect(page.locator("html")).to_have_attribute("data-theme", theme)


def axe_problems(page: Page) -> list[str]:
    """The serious and critical axe-core violations on the page as it is now, one line per element."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        # The page's CSP allows only its own origin's scripts (no inline one, as path= would add): axe.min.js
        # is served on that origin by the test, and the CSP stays what a person gets.
        origin = page.evaluate("() => location.origin")
        page.route(
            f"{origin}/__test__/axe.min.js", lambda route: route.fulfill(path=str(AXE), content_type="text/javascript")
        )
        page.add_script_tag(url=f"{origin}/__test__/axe.min.js")
    # Animations settle first: axe measures contrast on what is drawn.
    page.evaluate("() => Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null)))")
    found: list[dict[str, Any]] = page.evaluate("""async () => {
      const r = await window.axe.run(document, {resultTypes: ["violations"]});
      return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary.replace(/\\s+/g, " ")}`)}));
    }""")
    return [f"{v['impact']} {v['id']} ({v['help']}): {node}" for v in found for node in v["nodes"]]


def check_view(page: Page, name: str, theme: str, problems: list[str]) -> None:
    problems.extend(f"[{name}, {theme}] {p}" for p in axe_problems(page))
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}-{theme}.png"))


def open_tool(page: Page, tool: str) -> Locator:
    page.locator(f'[data-server="demo"] [data-tool="{tool}"]').click()
    view = page.locator(f'[data-open-server="demo"][data-open-tool="{tool}"]')
    expect(view).to_be_visible()
    return view


def call_dashboard(page: Page) -> Locator:
    open_tool(page, "show_dashboard")
    page.locator('[data-testid="call-tool"]').click()
    expect(page.locator('[data-testid="tool-result"]')).to_have_attribute("data-status", "ok")
    frame = page.locator("iframe[data-app-frame]")
    expect(frame).to_have_attribute("data-app-status", "ready", timeout=APP_MS)
    return frame


def place(frame: Locator) -> dict[str, float]:
    """Where the app frame is and how wide (its height is the app's own: it may resize itself)."""
    box = frame.bounding_box()
    assert box is not None
    return {k: round(box[k], 1) for k in ("x", "y", "width")}


def ask_open_link(page: Page, times: int) -> None:
    """The dashboard App asks to open the same link `times` times (identical approvals from one frame)."""
    inner = page.frame_locator("iframe[data-app-frame]").frame_locator("iframe")
    inner.locator("body").evaluate(
        """(b, n) => { for (let i = 0; i < n; i++) window.parent.postMessage(
        {jsonrpc: "2.0", id: 900000 + i, method: "ui/open-link", params: {url: "https://example.com/"}}, "*"); }""",
        times,
    )


# ---- accessibility ---------------------------------------------------------------------------------------------


def test_axe_finds_nothing_serious_on_the_main_views_in_both_themes(demo_page: Page) -> None:
    page = demo_page
    problems: list[str] = []
    for theme in ("light", "dark"):
        page.reload()
        expect(page.locator('[data-server="demo"][data-status="connected"]')).to_be_visible(timeout=CONNECT_MS)
        set_theme(page, theme)
        # Servers and tools, with an open tool and its result (an App).
        call_dashboard(page)
        check_view(page, "tool-with-app", theme, problems)
        open_tool(page, "get_weather").locator('[name="city"]').fill("Berlin")
        page.locator('[data-testid="call-tool"]').click()
        expect(page.locator('[data-testid="tool-result"]')).to_have_attribute("data-status", "ok")
        check_view(page, "tool-with-result", theme, problems)
        # The activity log, with entries (one opened).
        entry = page.locator('[data-testid="activity-log"] [data-log-entry]').first
        entry.locator("summary").first.click()
        check_view(page, "activity-log", theme, problems)
        # An approval waiting (the App asks to open a link).
        open_tool(page, "show_dashboard")
        ask_open_link(page, 1)
        approval = page.locator("[data-approval]")
        expect(approval).to_have_count(1)
        check_view(page, "approval", theme, problems)
        approval.locator('[data-action="deny"]').click()
        expect(approval).to_have_count(0)
        # An input request.
        open_tool(page, "register_user")
        page.locator('[data-testid="call-tool"]').click()
        request = page.locator('form[data-elicitation][data-mode="form"]')
        expect(request).to_be_visible()
        check_view(page, "input-request", theme, problems)
        request.locator('[data-action="cancel"]').click()
        expect(request).to_have_count(0)
        # The audit and apps views.
        page.locator('[data-testid="open-audit"]').click()
        expect(page.locator('[data-testid="audit-log"]')).to_be_visible()
        check_view(page, "audit", theme, problems)
        page.locator('[data-testid="open-apps"]').click()
        expect(page.locator('[data-testid="apps-view"]')).to_be_visible()
        check_view(page, "apps", theme, problems)
    assert problems == [], "\n".join(problems)


# ---- approvals -------------------------------------------------------------------------------------------------


def test_an_approval_does_not_move_the_app_and_identical_ones_share_one_card(demo_page: Page, ui: WebhostPage) -> None:
    page = demo_page
    frame = call_dashboard(page)
    before = place(frame)
    card = page.locator("[data-approval]")
    # One request, appearing and going (denied: the app panel adds no note of its own).
    ask_open_link(page, 1)
    expect(card).to_have_count(1)
    assert place(frame) == before, f"the app moved when the approval appeared: {place(frame)} != {before}"
    expect(card.locator('[data-action="allow-all"]')).to_be_hidden()
    card.locator('[data-action="deny"]').click()
    expect(card).to_have_count(0)
    assert place(frame) == before, f"the app moved when the approval went: {place(frame)} != {before}"

    # Three identical requests from the same frame: one card, a count and "allow all 3".
    ask_open_link(page, 3)
    expect(card).to_have_count(1)
    expect(card).to_have_attribute("data-kind", "open-link")
    expect(card).to_have_attribute("data-count", "3")
    assert place(frame) == before, f"the app moved when the approvals appeared: {place(frame)} != {before}"
    all_of_them = card.locator('[data-action="allow-all"]')
    expect(all_of_them).to_be_visible()
    expect(all_of_them).to_have_text("Allow all 3")
    # Deny decides one (the oldest); the card stays for the other two (the page object waits on that too).
    ui.approvals("open-link").deny()
    expect(card).to_have_attribute("data-count", "2")
    expect(all_of_them).to_have_text("Allow all 2")
    expect(card.locator('[data-action="allow"]')).to_be_enabled()
    assert place(frame) == before, f"{place(frame)} != {before}"
    # "Allow all 2" decides the rest, and the card goes.
    ui.approvals("open-link").allow_all()
    expect(card).to_have_count(0)
    # Every request was decided on its own: two denied, two allowed (the audit has one row each).
    rows = """(f) => window.__page.rpc.request('audit/list', {}).then((r) =>
        r.entries.filter((e) => e.kind === 'app.open-link' && e.frame === f).map((e) => e.decision))"""
    frame_id = frame.get_attribute("data-frame-id")
    page.wait_for_function(f"(f) => ({rows})(f).then((d) => d.length >= 4)", arg=frame_id)
    decisions = page.evaluate(rows, frame_id)
    assert sorted(decisions) == ["allow", "allow", "deny", "deny"], decisions


# ---- small things a new user hits ------------------------------------------------------------------------------


def focused(page: Page) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate("""() => { const a = document.activeElement;
      return {testid: a?.dataset?.testid ?? null, inRequest: Boolean(a?.closest("[data-elicitation]")),
              name: a?.getAttribute("name") ?? null}; }""")
    return result


def test_focus_goes_to_a_new_input_request_and_back_after_it_is_answered(demo_page: Page) -> None:
    page = demo_page
    open_tool(page, "register_user")
    call = page.locator('[data-testid="call-tool"]')
    call.focus()
    page.keyboard.press("Enter")
    request = page.locator('form[data-elicitation][data-mode="form"]')
    expect(request).to_be_visible()
    page.wait_for_function("() => Boolean(document.activeElement?.closest('[data-elicitation]'))")
    assert focused(page)["inRequest"], focused(page)
    request.locator('[data-action="decline"]').click()
    expect(request).to_have_count(0)
    expect(page.locator('[data-testid="tool-result"]')).not_to_have_attribute("data-status", "pending")
    page.wait_for_function("() => document.activeElement?.dataset?.testid === 'call-tool'")


def test_a_deliberate_cancel_is_shown_as_cancelled_not_as_a_failure(demo_page: Page) -> None:
    page = demo_page
    view = open_tool(page, "count_slowly")
    view.locator('[name="steps"]').fill("50")
    page.locator('[data-testid="call-tool"]').click()
    result = page.locator('[data-testid="tool-result"]')
    expect(result).to_have_attribute("data-status", "pending")
    result.locator('[data-action="cancel-call"]').click()
    expect(result).to_have_attribute("data-status", "error")  # the contract's value, unchanged
    expect(result).to_have_attribute("data-cancelled", "true")
    expect(result.locator(".status-pill")).to_have_text("Cancelled")
    expect(result.locator(".result-body")).not_to_have_class(re.compile(r"\bis-error\b"))
    danger = page.evaluate("() => getComputedStyle(document.querySelector('.tool-result .error-message')).color")
    border = page.evaluate("() => getComputedStyle(document.querySelector('.tool-result')).borderTopColor")
    red = page.evaluate("""() => { const p = document.createElement('p'); p.style.color = 'var(--color-text-danger)';
      document.body.append(p); const c = getComputedStyle(p).color; p.remove(); return c; }""")
    assert danger != red and border != red, (danger, border, red)


def test_the_401_page_says_how_to_get_in_and_takes_the_token(page: Page, demo: Webhost) -> None:
    response = page.goto(f"{demo.base_url}/")
    assert response is not None and response.status == 401
    expect(page.locator('[data-testid="sign-in-help"]')).to_contain_text("?token=")
    form = page.locator('form[data-testid="token-form"]')
    assert form.get_attribute("method") == "get" and form.get_attribute("action") == "/"
    assert axe_problems(page) == []
    form.locator('[name="token"]').fill(demo.token)
    form.locator('[data-action="sign-in-token"]').click()
    page.wait_for_url(f"{demo.base_url}/")
    expect(page.locator('[data-server="demo"][data-status="connected"]')).to_be_visible(timeout=CONNECT_MS)


def test_on_a_phone_the_tool_title_the_theme_toggle_and_a_pending_request_are_reachable(
    browser: Browser, demo: Webhost
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        login(page, demo)
        expect(page.locator('[data-server="demo"][data-status="connected"]')).to_be_visible(timeout=CONNECT_MS)
        width = page.evaluate("() => document.documentElement.clientWidth")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width, "the page scrolls sideways"

        def reachable(locator: Locator, what: str) -> None:
            locator.scroll_into_view_if_needed()
            expect(locator).to_be_in_viewport()
            box = locator.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, f"{what} is cut off: {box}"

        toggle = page.locator('[data-testid="theme-toggle"]')
        reachable(toggle, "the theme toggle")
        toggle.click()
        view = open_tool(page, "register_user")
        reachable(view.locator("h2").first, "the tool title")
        page.locator('[data-testid="call-tool"]').click()
        request = page.locator('form[data-elicitation][data-mode="form"]')
        expect(request).to_be_attached()
        reachable(request, "the input request")
        for action in ("accept", "decline", "cancel"):
            reachable(request.locator(f'[data-action="{action}"]'), f"the request's {action} button")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "phone-input-request.png"))
        request.locator('[data-action="cancel"]').click()
        expect(request).to_have_count(0)
        reachable(toggle, "the theme toggle")
    finally:
        context.close()
