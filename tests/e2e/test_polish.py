"""What a new user meets first, in a real Chromium against the embedded demo: accessibility (axe-core over
every main view, light and dark), approvals that neither move the app nor pile up, a deliberate Cancel, where
focus goes for an input request, the 401 page, and a phone-sized screen.

axe-core comes from tools/js (pinned, installed by scripts/install-test-deps). Screenshots of the main views in
both themes are saved into test-results/screenshots/ for a person to look at.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.conftest import bind_page, login
from tests.helpers import Webhost, run_webhost

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
        page.route(f"{origin}/__test__/axe.min.js", lambda route: route.fulfill(
            path=str(AXE), content_type="text/javascript"))
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


def ask_open_link(page: Page, times: int) -> None:
    """The dashboard App asks to open the same link `times` times (identical approvals from one frame)."""
    inner = page.frame_locator("iframe[data-app-frame]").frame_locator("iframe")
    inner.locator("body").evaluate("""(b, n) => { for (let i = 0; i < n; i++) window.parent.postMessage(
        {jsonrpc: "2.0", id: 900000 + i, method: "ui/open-link", params: {url: "https://example.com/"}}, "*"); }""",
                                   times)


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
