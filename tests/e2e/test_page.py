"""The host page as a new user meets it, in a real Chromium against a live `webhost serve`.

Everything is driven through the contract's data attributes (shared/contract.md §4: `[data-server]`,
`[data-tool]`, `[name=ARG]`, `[data-testid="call-tool"]`, `[data-testid="tool-result"]`,
`[data-testid="activity-log"] [data-log-entry]`) and, where the contract is silent, through the page's
own stable `data-*` attributes (`data-action`, `data-tab`, `data-resource`, `data-template`,
`data-prompt`, `data-field-error`, `data-content-type`, `data-testid=...`).

Two webhosts serve the module: `host` (tests/servers basic.py, a missing command, a server that exits at
start and one that crashes on a call) and `demo` (the embedded demo configuration, `servers=None`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.conftest import login
from tests.support.process import Webhost, run_webhost, stdio_server
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e

CONNECT_MS = 30_000
CALL_MS = 15_000


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    servers: dict[str, Any] = {
        "basic": stdio_server("basic"),
        "missing": {"command": "/nonexistent"},
        "exits": stdio_server("faulty", "exit_at_start"),
        "crashy": stdio_server("faulty", "crash_on_call"),
    }
    with run_webhost(tmp_path_factory.mktemp("page"), servers) as running:
        yield running


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    with run_webhost(tmp_path_factory.mktemp("page-demo"), None) as running:
        yield running


def server(page: Page, name: str) -> Locator:
    return page.locator(f'[data-server="{name}"]')


def no_console_errors(page: Page) -> None:
    errors = list(page.console_errors)  # type: ignore[attr-defined]
    assert errors == [], errors


def log_entries(page: Page, server_name: str, method: str, kind: str) -> Locator:
    return page.locator(
        f'[data-testid="activity-log"] [data-log-entry][data-log-server="{server_name}"]'
        f'[data-method="{method}"][data-kind="{kind}"]'
    )


# ---- getting in, server status, reconnect -----------------------------------------------------------------


def test_login_drops_token_and_every_server_shows_its_status(page: Page, ui: WebhostPage, host: Webhost) -> None:
    page.goto(f"{host.base_url}/?token={host.token}")
    page.wait_for_url(f"{host.base_url}/")
    assert "token" not in page.url
    assert host.token not in page.url

    ui.wait_connected("basic", "crashy")
    expect(server(page, "missing")).to_have_attribute("data-status", "error", timeout=CONNECT_MS)
    expect(server(page, "exits")).to_have_attribute("data-status", "error", timeout=CONNECT_MS)
    # The reason is visible on the card: what failed, in words.
    missing_reason = server(page, "missing").locator('[data-testid="server-error"]')
    expect(missing_reason).to_be_visible()
    expect(missing_reason).to_contain_text("/nonexistent")
    exits_reason = server(page, "exits").locator('[data-testid="server-error"]')
    expect(exits_reason).to_be_visible()
    expect(exits_reason).to_contain_text("exit_at_start")  # the server's stderr, quoted
    # A healthy server shows no error and lists its tools.
    expect(server(page, "basic").locator('[data-testid="server-error"]')).to_be_hidden()
    expect(server(page, "basic").locator('[data-tool="echo"]')).to_be_visible()
    # A broken server offers Reconnect.
    expect(server(page, "missing").locator('[data-action="reconnect"]')).to_be_visible()
    no_console_errors(page)


def test_reconnect_after_a_server_crashed(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("crashy")
    ui.open_tool("crashy", "echo")
    ui.fill(text="boom")
    result = ui.call("error").locator
    expect(result).to_contain_text("Connection closed")
    card = server(page, "crashy")
    expect(card).to_have_attribute("data-status", "error")
    expect(card.locator('[data-testid="server-error"]')).to_contain_text("crash_on_call")
    expect(card.locator('[data-tool="echo"]')).to_have_count(0)

    card.locator('[data-action="reconnect"]').click()
    expect(card).to_have_attribute("data-status", "connected", timeout=CONNECT_MS)
    expect(card.locator('[data-testid="server-error"]')).to_be_hidden()
    expect(card.locator('[data-tool="echo"]')).to_be_visible()


# ---- the tool form ---------------------------------------------------------------------------------------


def test_plan_trip_form_every_argument_kind(page: Page, ui: WebhostPage, demo: Webhost) -> None:
    ui.sign_in(demo)
    ui.wait_connected("demo")
    ui.open_tool("demo", "plan_trip")

    # Required arguments are marked, optional ones are not.
    for name in ("destination", "nights", "budget_eur", "traveller.name", "traveller.age"):
        expect(page.locator(f'[name="{name}"]')).to_have_attribute("required", "")
    for name in ("transport", "flexible_dates", "activities"):
        expect(page.locator(f'[name="{name}"]')).not_to_have_attribute("required", "")
    # Defaults are filled: transport "train", flexible_dates false.
    transport = page.locator('[name="transport"]')
    assert transport.evaluate("s => s.selectedOptions[0].textContent") == "train"
    expect(page.locator('[name="flexible_dates"]')).not_to_be_checked()
    # The kinds: integer, number, a nested fieldset for the object.
    expect(page.locator('[name="nights"]')).to_have_attribute("type", "number")
    expect(page.locator('[name="nights"]')).to_have_attribute("step", "1")
    expect(page.locator('[name="budget_eur"]')).to_have_attribute("step", "any")
    expect(page.locator('fieldset[name="traveller"][data-kind="object"]')).to_be_visible()
    expect(page.locator('[name="traveller.age"]')).to_have_attribute("type", "number")

    # Validation before submit: nothing is sent while the form is wrong.
    page.locator('[data-testid="call-tool"]').click()
    for name in ("destination", "nights", "budget_eur", "traveller.name", "traveller.age"):
        expect(page.locator(f'[data-field-error="{name}"]')).to_be_visible()
        expect(page.locator(f'[name="{name}"]')).to_have_attribute("aria-invalid", "true")
    expect(page.locator('[data-field-error="destination"]')).to_contain_text("Required")
    ui.fill(destination="Lisbon")
    ui.fill(nights="40")  # above the maximum of 30
    ui.fill(budget_eur="1234.5")
    ui.fill(traveller={"name": "Ada", "age": 200})  # above the maximum of 120
    page.locator('[data-testid="call-tool"]').click()
    expect(page.locator('[data-field-error="nights"]')).to_contain_text("at most 30")
    expect(page.locator('[data-field-error="traveller.age"]')).to_contain_text("at most 120")
    expect(page.locator('[data-field-error="traveller"]')).to_contain_text("Check the fields inside")
    expect(page.locator('[data-field-error="destination"]')).to_be_hidden()
    expect(page.locator('[data-testid="tool-result"]')).to_have_count(0)
    expect(log_entries(page, "demo", "tools/call", "request")).to_have_count(0)

    # Fixed, every kind filled: the result proves each value arrived with its type.
    ui.fill(nights="3")
    ui.fill(traveller={"age": 36})
    transport.select_option(label="plane")
    page.locator('[name="flexible_dates"]').check()
    ui.fill(activities=["surf", "museum"])
    result = ui.call("ok").locator
    expect(result).to_contain_text("Trip to Lisbon for Ada (36), 3 night(s) by plane.")
    expect(result).to_contain_text("Budget €1,234.50 — about €411.50 per night.")
    expect(result).to_contain_text("Dates are flexible.")
    expect(result).to_contain_text("Plan: day 1: surf; day 2: museum")

    # The wire shows the typed arguments (numbers as numbers, the object as an object, the list as a list).
    request = log_entries(page, "demo", "tools/call", "request").last
    request.locator("summary").click()
    for fragment in (
        '"nights": 3',
        '"budget_eur": 1234.5',
        '"flexible_dates": true',
        '"transport": "plane"',
        '"age": 36',
        '"surf"',
    ):
        expect(request).to_contain_text(fragment)
    no_console_errors(page)


def test_demo_image_tool_draws_a_decodable_image(page: Page, ui: WebhostPage, demo: Webhost) -> None:
    ui.sign_in(demo)
    ui.wait_connected("demo")
    ui.open_tool("demo", "generate_image")
    result = ui.call("ok").locator
    image = result.locator('[data-content-type="image"] img')
    expect(image).to_be_visible()
    expect(image).to_have_js_property("complete", True)
    assert image.evaluate("img => img.naturalWidth") > 0
    no_console_errors(page)


# ---- results -------------------------------------------------------------------------------------------


def test_results_ok_tool_error_rpc_error_and_structured(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("basic")

    ui.open_tool("basic", "echo")
    ui.fill(text="hello from the page")
    result = ui.call("ok").locator
    expect(result.locator('[data-content-type="text"]')).to_have_text("hello from the page")

    # isError: true is a result with data-status="error", the tool's text shown (the SDK hides the
    # exception's own message from clients: only ToolError messages go out).
    ui.open_tool("basic", "fail")
    ui.fill(message="it broke on purpose")
    result = ui.call("error").locator
    expect(result.locator('[data-content-type="text"]')).to_contain_text("Error executing tool fail")

    # A JSON-RPC error: data-status="error" with the server's message.
    ui.open_tool("basic", "rpc_error")
    ui.fill(message="the server says no")
    result = ui.call("error").locator
    expect(result).to_contain_text("the server says no")
    expect(result).to_contain_text("-32000")

    # Structured content is shown beside the text.
    ui.open_tool("basic", "add")
    ui.fill(a="2")
    ui.fill(b="40")
    result = ui.call("ok").locator
    expect(result.locator('[data-content-type="text"]')).to_contain_text("42")
    structured = result.locator('[data-testid="structured-content"]')
    expect(structured).to_be_visible()
    expect(structured).to_contain_text('"result": 42')

    # A tool view keeps its last result when the user comes back to it.
    ui.open_tool("basic", "echo")
    expect(page.locator('[data-testid="tool-result"]')).to_contain_text("hello from the page")
    no_console_errors(page)


def test_binary_result_draws_image_and_audio(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("basic")
    ui.open_tool("basic", "binary")
    ui.fill(image_bytes="512")
    result = ui.call("ok").locator
    image = result.locator('[data-content-type="image"] img')
    expect(image).to_be_visible()
    assert (image.get_attribute("src") or "").startswith("data:image/png;base64,")
    audio = result.locator('[data-content-type="audio"] audio')
    expect(audio).to_be_visible()
    # The WAV really decodes: its metadata loads and says 0.25 s.
    duration = audio.evaluate("""a => new Promise((resolve) => {
        if (a.readyState > 0) return resolve(a.duration);
        a.addEventListener("loadedmetadata", () => resolve(a.duration));
        a.addEventListener("error", () => resolve(-1));
        a.load();
    })""")
    assert duration == pytest.approx(0.25, abs=0.01)
    expect(result.locator('[data-content-type="resource"]')).to_contain_text("basic://embedded-blob")
    expect(result.locator('[data-content-type="text"]')).to_contain_text("512 image bytes, 256 blob bytes")


def test_progress_bar_and_cancel(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("basic")

    ui.open_tool("basic", "slow")
    ui.fill(steps="4")
    ui.fill(delay="0.4")
    page.locator('[data-testid="call-tool"]').click()
    result = page.locator('[data-testid="tool-result"]')
    expect(result).to_have_attribute("data-status", "pending")
    bar = result.locator('[data-testid="call-progress"]')
    expect(bar).to_have_js_property("max", 4)
    # Checked in one go: the bar and its message leave the view as soon as the call ends.
    page.wait_for_function(
        """() => {
        const result = document.querySelector('[data-testid="tool-result"]');
        const bar = result && result.querySelector('[data-testid="call-progress"]');
        return Boolean(bar && bar.value >= 2 && /step \\d of 4/.test(result.textContent));
    }""",
        timeout=CALL_MS,
    )
    expect(result).to_have_attribute("data-status", "ok", timeout=CALL_MS)
    expect(result).to_contain_text("done after 4 steps")
    expect(result.locator('[data-testid="call-progress"]')).to_have_count(0)

    # A call that never returns: Cancel ends it as a cancelled error.
    ui.open_tool("basic", "hang")
    page.locator('[data-testid="call-tool"]').click()
    result = page.locator('[data-testid="tool-result"]')
    expect(result).to_have_attribute("data-status", "pending")
    expect(page.locator('[data-testid="call-tool"]')).to_be_disabled()
    result.locator('[data-action="cancel-call"]').click()
    expect(result).to_have_attribute("data-status", "error", timeout=CALL_MS)
    expect(result).to_contain_text("-32800")
    expect(page.locator('[data-testid="call-tool"]')).to_be_enabled()
    # The server is still fine afterwards.
    expect(server(page, "basic")).to_have_attribute("data-status", "connected")
    no_console_errors(page)


# ---- resources and prompts --------------------------------------------------------------------------------


def test_resources_browser_reads_resources_and_fills_a_template(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("basic")
    card = server(page, "basic")
    card.locator('[data-tab="resources"]').click()

    card.locator('[data-resource="basic://text"]').click()
    out = page.locator('[data-testid="resource-result"]')
    expect(out).to_have_attribute("data-status", "ok")
    expect(out).to_contain_text("Hello from the basic test server.")

    card.locator('[data-resource="basic://png"]').click()
    out = page.locator('[data-testid="resource-result"]')
    expect(out).to_have_attribute("data-status", "ok")
    image = out.locator("img")
    expect(image).to_be_visible()
    page.wait_for_function("""() => {
        const img = document.querySelector('[data-testid="resource-result"] img');
        return img && img.complete && img.naturalWidth === 2;
    }""")

    card.locator('[data-template="basic://items/{item_id}"]').click()
    ui.fill(item_id="42")
    page.locator('[data-testid="read-resource"]').click()
    out = page.locator('[data-testid="resource-result"]')
    expect(out).to_have_attribute("data-status", "ok")
    expect(out).to_contain_text("basic://items/42")
    expect(out).to_contain_text('"name": "Item 42"')
    no_console_errors(page)


def test_prompt_with_arguments(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("basic")
    card = server(page, "basic")
    card.locator('[data-tab="prompts"]').click()
    card.locator('[data-prompt="summarize"]').click()
    expect(page.locator('[name="text"]')).to_have_attribute("required", "")
    page.locator('[data-testid="get-prompt"]').click()
    expect(page.locator('[data-field-error="text"]')).to_be_visible()
    ui.fill(text="The quick brown fox.")
    ui.fill(style="haiku")
    page.locator('[data-testid="get-prompt"]').click()
    out = page.locator('[data-testid="prompt-result"]')
    expect(out).to_have_attribute("data-status", "ok")
    expect(out).to_contain_text("The quick brown fox.")
    expect(out).to_contain_text("haiku")
    no_console_errors(page)


# ---- activity log, theme, big results ------------------------------------------------------------------


def test_activity_log_has_requests_and_responses_with_durations(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("basic")
    log = page.locator('[data-testid="activity-log"]')
    expect(log.locator("[data-log-entry]").first).to_be_visible()
    # Connecting already logged the lists and the status change.
    expect(log_entries(page, "basic", "tools/list", "response").first).to_be_attached()

    ui.open_tool("basic", "echo")
    ui.fill(text="logged")
    ui.call("ok")
    request = log_entries(page, "basic", "tools/call", "request")
    response = log_entries(page, "basic", "tools/call", "response")
    expect(request).to_have_count(1)
    expect(response).to_have_count(1)
    expect(request).to_have_attribute("data-direction", "out")
    expect(response).to_have_attribute("data-direction", "in")
    expect(response.locator("summary")).to_contain_text(re.compile(r"\d+(\.\d)? ms"))
    # Expanding an entry shows what went over the wire.
    request.locator("summary").click()
    expect(request).to_contain_text('"text": "logged"')

    # A failing call is logged as an error entry.
    ui.open_tool("basic", "rpc_error")
    ui.call("error")
    expect(log_entries(page, "basic", "tools/call", "error")).to_have_count(1)

    # Filters are per server and per kind.
    log.get_by_label("Filter by kind").select_option("error")
    expect(log_entries(page, "basic", "tools/call", "request").first).to_be_hidden()
    expect(log_entries(page, "basic", "tools/call", "request").last).to_be_hidden()
    expect(log_entries(page, "basic", "tools/call", "error")).to_be_visible()
    no_console_errors(page)


def test_theme_toggle_switches_and_persists(page: Page, host: Webhost) -> None:
    page.emulate_media(reduced_motion="reduce")  # colours change at once, no transition to wait out
    login(page, host)
    root = page.locator("html")
    before = root.get_attribute("data-theme")
    assert before in ("light", "dark")
    background = "() => getComputedStyle(document.body).backgroundColor"
    bg_before = page.evaluate(background)
    page.locator('[data-testid="theme-toggle"]').click()
    after = "dark" if before == "light" else "light"
    expect(root).to_have_attribute("data-theme", after)
    page.wait_for_function(f"b => ({background})() !== b", arg=bg_before)  # no transition left
    body_bg = page.evaluate(background)
    assert body_bg != bg_before
    # The choice survives a reload (no flash of the other theme: theme-init.js applies it first).
    page.reload()
    expect(root).to_have_attribute("data-theme", after)
    assert page.evaluate(background) == body_bg
    page.locator('[data-testid="theme-toggle"]').click()
    expect(root).to_have_attribute("data-theme", before)
    page.wait_for_function(f"b => ({background})() === b", arg=bg_before)
    no_console_errors(page)


def test_ten_megabyte_result_does_not_freeze_the_page(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("basic")
    ui.open_tool("basic", "big")
    ui.fill(size_bytes="10000000")
    # Record long tasks on the main thread while the result arrives and is drawn.
    page.evaluate("""() => {
        window.__longest = 0;
        new PerformanceObserver((list) => {
            for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
        }).observe({ type: "longtask", buffered: false });
    }""")
    result = ui.call("ok", timeout=30_000).locator
    text = result.locator('[data-content-type="text"]')
    expect(text).to_contain_text("Showing the first")  # truncated preview, with "Show all" and "Download"
    shown = text.locator("pre").evaluate("pre => pre.textContent.length")
    assert shown < 1_000_000
    # The page still answers at once: open another tool and call it.
    ui.open_tool("basic", "echo")
    ui.fill(text="still alive")
    expect(ui.call("ok").locator).to_contain_text("still alive")
    longest = page.evaluate("() => window.__longest")
    assert longest < 2000, f"a {longest:.0f} ms main-thread task"
    no_console_errors(page)
