"""Picture-in-picture in a real Chromium: an app that declares `pip` and asks for it (tests/servers/apps.py
`pip_counter`) floats above the page, is told its displayMode, and keeps running, visible and usable when
the person opens another tool: the same instance (its click counter keeps its value), never reloaded.
And an app's Info and Conversation views open in the window, above the app, at 1280 and at 390 px wide."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_polish import axe_problems
from tests.support.process import Webhost, run_webhost, stdio_server
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    with run_webhost(tmp_path_factory.mktemp("pip"), {"apps": stdio_server("apps")}) as running:
        yield running


def test_a_pip_app_stays_floating_and_running_when_another_tool_opens(
    page: Page, ui: WebhostPage, host: Webhost
) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    ui.sign_in(host)
    ui.wait_connected("apps")
    ui.open_tool("apps", "pip_counter")
    ui.call("ok")
    app = ui.app("apps", "ui://apps/pip.html")
    app.wait_ready()
    inner = app.content
    expect(inner.locator("#log[data-done]")).to_contain_text('request-display-mode pip ok {"mode":"pip"}')
    expect(inner.locator("#mode")).to_have_text("pip")
    stage = page.locator('.wh-app-stage[data-display-mode="pip"]')
    expect(stage).to_be_visible()
    for _ in range(3):
        inner.locator("#inc").click()
    expect(inner.locator("#count")).to_have_text("3")

    # Another tool: its form is shown, and the pip app is still there, ready, visible, usable, the same one.
    ui.open_tool("apps", "echo_app")
    expect(page.locator('.tool-view:not([data-parked]) [name="text"]')).to_be_visible()
    expect(app.frame).to_have_attribute("data-app-status", "ready")
    expect(app.frame).to_be_visible()
    box = stage.bounding_box()
    assert box is not None and box["width"] <= 400
    assert box["x"] + box["width"] <= 1280 and box["y"] + box["height"] <= 800  # in the viewport
    inner.locator("#inc").click()
    expect(inner.locator("#count")).to_have_text("4")
    # The new tool's form stays usable beside it.
    ui.fill(text="beside the pip")
    expect(page.locator('.tool-view:not([data-parked]) [name="text"]')).to_have_value("beside the pip")

    # Back to the page: the app returns inline into its own (now parked) tool view; opening that tool
    # again shows the same instance, told it is inline.
    stage.locator('[data-stage-action="inline"]').click()
    expect(app.frame).to_have_count(0)  # inline in a parked view: out of sight and out of the selectors
    ui.open_tool("apps", "pip_counter")
    expect(app.frame).to_be_visible()
    expect(inner.locator("#count")).to_have_text("4")
    expect(inner.locator("#mode")).to_have_text("inline")
    assert ui.console_errors == []


@pytest.mark.parametrize("width", [1280, 390])
def test_an_apps_info_and_conversation_open_in_view(page: Page, ui: WebhostPage, host: Webhost, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    ui.sign_in(host)
    ui.wait_connected("apps")
    ui.open_tool("apps", "bridge_probe")
    ui.fill(autorun=False)
    ui.call("ok")
    app = ui.app("apps", "ui://apps/bridge-probe.html")
    app.wait_ready()
    panel = page.locator(".tool-view:not([data-parked]) [data-app-panel]")
    for view in ("info", "conversation"):
        button = panel.locator(f'[data-app-action="{view}"]')
        button.click()
        shown = panel.locator(f'[data-app-view="{view}"]')
        expect(shown).to_be_visible()
        box, frame = shown.bounding_box(), app.frame.bounding_box()
        assert box is not None and frame is not None
        # Wholly in the window, beside or over the app (not below it), and the button still in reach.
        # (1 px of slack: the page scrolls by whole pixels, the layout is fractional.)
        assert box["y"] >= -1 and box["y"] + box["height"] <= 801, box
        assert box["x"] >= -1 and box["x"] + box["width"] <= width + 1, box
        assert box["y"] <= frame["y"], (box, frame)
        expect(button).to_be_in_viewport()
    assert ui.console_errors == []
    assert axe_problems(page) == []
