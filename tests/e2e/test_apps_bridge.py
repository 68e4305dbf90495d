"""The host side of MCP App frames (webhost/static/js/apps/) in a real Chromium against a live webhost.

Three kinds of app drive these tests:

- the real `@modelcontextprotocol/server-basic-vanillajs` App (tool `get-time`), through the page UI;
- the fixture apps of `tests/servers/apps.py` (bridge probe, hostile apps, permissions), opened
  through `window.__page.apps.openToolApp` like the tool view does;
- a scriptable probe App: a real frame descriptor from `apps/open` (real proxy, token, CSP, origin)
  whose HTML is swapped in the page for `PROBE_APP`, so a test can play the App's side of the
  protocol message by message and see exactly what the host sends.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, FrameLocator, Locator, Page, Playwright, Route

from tests.e2e.conftest import bind_page, login
from tests.support.browser import chromium_launch_kwargs
from tests.support.process import PEER_BIN, WAIT, Webhost, peer_server, run_webhost, stdio_server

pytestmark = pytest.mark.e2e

VANILLA = PEER_BIN / "mcp-server-basic-vanillajs"
EXT_APPS_SCHEMA = PEER_BIN.parent / "@modelcontextprotocol" / "ext-apps" / "dist" / "src" / "generated" / "schema.json"
OUTER_SANDBOX = "allow-scripts allow-same-origin allow-forms"

# A scriptable App: records every message from the host in window.received and exposes rpc/notify/init.
PROBE_APP = """<!doctype html><html><head><meta charset="utf-8"><title>probe</title></head>
<body><p id="probe">probe app</p><script>
window.received = [];
window.answerTeardown = true;
window.elicitAnswer = { action: "accept", content: { name: "Ada" } };
const post = (m) => window.parent.postMessage(m, "*");
let nextId = 1;
const pending = new Map();
window.rpc = (method, params) => new Promise((resolve, reject) => {
  const id = nextId++;
  pending.set(id, { resolve, reject });
  post({ jsonrpc: "2.0", id, method, params });
});
window.notify = (method, params) =>
  post(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
window.init = async (caps) => {
  const result = await window.rpc("ui/initialize", {
    appInfo: { name: "probe", version: "1.0.0" }, appCapabilities: caps || {}, protocolVersion: "2026-01-26" });
  window.notify("ui/notifications/initialized");
  return result;
};
// Run code in the proxy's realm (same origin): how a hostile App speaks as its proxy.
window.asProxy = (code) => {
  const s = window.parent.document.createElement("script");
  s.textContent = code;
  window.parent.document.body.appendChild(s);
};
window.addEventListener("message", (e) => {
  if (e.source !== window.parent) return;
  const m = e.data;
  if (!m || m.jsonrpc !== "2.0") return;
  window.received.push(m);
  if (!("method" in m)) {
    const p = pending.get(m.id);
    if (p) { pending.delete(m.id); if ("error" in m) p.reject(m.error); else p.resolve(m.result); }
    return;
  }
  if (m.id === undefined) return;
  if (m.method === "ui/resource-teardown") {
    if (window.answerTeardown) post({ jsonrpc: "2.0", id: m.id, result: {} });
    return;
  }
  if (m.method === "elicitation/create") { post({ jsonrpc: "2.0", id: m.id, result: window.elicitAnswer }); return; }
  if (m.method === "ping") { post({ jsonrpc: "2.0", id: m.id, result: {} }); return; }
  post({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "not handled" } });
});
document.getElementById("probe").dataset.loaded = "true";
</script></body></html>"""

# Open a tool's app the way the tool view does; optionally swap the app HTML or fail the tool call.
OPEN_JS = """async ({server, tool, args, html, fail}) => {
  const rpc = window.__page.rpc;
  const tools = (await rpc.request("tools/list", {server})).tools;
  const t = tools.find((x) => x.name === tool);
  if (!t) throw new Error("no tool " + tool);
  const container = document.createElement("div");
  container.dataset.testContainer = tool;
  document.getElementById("workspace").append(container);
  const resultPromise = fail
    ? Promise.reject(Object.assign(new Error(fail), {code: -32000}))
    : rpc.request("tools/call", {server, name: tool, arguments: args || {},
                                 callId: "t-" + Math.random().toString(36).slice(2)});
  resultPromise.catch(() => {});
  if (html) {
    rpc.request = function (method, params) {
      const p = Object.getPrototypeOf(this).request.call(this, method, params);
      return method === "apps/open" ? p.then((d) => ({...d, html})) : p;
    };
  }
  try {
    const handle = await window.__page.apps.openToolApp({server, tool: t, args: args || {}, resultPromise, container});
    return handle.frameId;
  } finally {
    delete rpc.request;
  }
}"""


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    servers: dict[str, Any] = {
        "apps": stdio_server("apps"),
        "second": stdio_server("apps", "--name", "second"),
    }
    if VANILLA.exists():
        servers["vanilla"] = peer_server("mcp-server-basic-vanillajs", "--stdio")
    with run_webhost(tmp_path_factory.mktemp("apps-bridge"), servers) as running:
        yield running


@pytest.fixture
def app_page(page: Page, host: Webhost) -> Page:
    page.context.route("https://example.com/**", lambda route: route.fulfill(status=200, body="example"))
    login(page, host)
    for name in ("apps", "second"):
        page.wait_for_selector(f'[data-server="{name}"][data-status="connected"]', timeout=30_000)
    bind_page(page)
    return page


def open_app(
    page: Page,
    server: str,
    tool: str,
    *,
    args: dict[str, Any] | None = None,
    html: str | None = None,
    fail: str | None = None,
) -> str:
    frame_id: str = page.evaluate(
        OPEN_JS, {"server": server, "tool": tool, "args": args or {}, "html": html, "fail": fail}
    )
    assert frame_id, "openToolApp returned no frame"
    return frame_id


def outer(page: Page, frame_id: str) -> Locator:
    return page.locator(f'iframe[data-app-frame][data-frame-id="{frame_id}"]')


def inner(page: Page, frame_id: str) -> FrameLocator:
    return page.frame_locator(f'iframe[data-app-frame][data-frame-id="{frame_id}"]').frame_locator("iframe")


def open_probe(page: Page, tool: str = "echo_app", **kwargs: Any) -> tuple[str, Locator]:
    """Open the scriptable probe App; returns its frame id and a locator to evaluate in it."""
    frame_id = open_app(page, "apps", tool, html=PROBE_APP, **kwargs)
    body = inner(page, frame_id).locator('#probe[data-loaded="true"]')
    body.wait_for()
    return frame_id, body


def trace(page: Page, frame_id: str) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = page.evaluate("(f) => window.__page.apps.debug.trace(f)", frame_id)
    return result


def sent(page: Page, frame_id: str, method: str | None = None) -> list[dict[str, Any]]:
    """Messages the host posted to the frame (optionally one method)."""
    return [
        t["msg"]
        for t in trace(page, frame_id)
        if t["dir"] == "out" and (method is None or t["msg"].get("method") == method)
    ]


def received(app: Locator, method: str | None = None) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = app.evaluate("() => window.received")
    return [m for m in messages if method is None or m.get("method") == method]


def wait_until(predicate: Callable[[], Any], timeout: float = WAIT, message: str = "condition") -> Any:
    """`predicate()` once it holds; the bound is the suites' shared one, for a loaded machine, not a speed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {message}")


def answered_ping(app: Locator) -> None:
    """The App pings and gets the answer: the bridge handled every message the App sent before it, and posted to the
    App, before that answer, whatever it was going to post (one channel, in order). The bound of a negative check."""
    assert app.evaluate("() => window.rpc('ping', {})") == {}


def logged(page: Page, server: str, method: str, direction: str, text: str = "") -> Locator:
    """The activity log's entries of one server, method and direction (`in`: an answer), containing `text`."""
    entries = page.locator(
        f'[data-testid="activity-log"] [data-log-entry][data-log-server="{server}"][data-method="{method}"]'
        f'[data-direction="{direction}"]'
    )
    return entries.filter(has_text=text) if text else entries


def problems(page: Page, frame_id: str) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = page.evaluate("(f) => window.__page.apps.debug.bridge(f).problems", frame_id)
    return result


def approve_while(page: Page, done: Callable[[], bool], timeout: float = WAIT) -> None:
    """Allow every approval card that shows up until `done()`."""
    deadline = time.monotonic() + timeout
    allow = page.locator('[data-approval] [data-action="allow"]')
    while time.monotonic() < deadline:
        if allow.count():
            allow.first.click()
        if done():
            return
        time.sleep(0.1)
    raise AssertionError("timed out")


def fixture_log(page: Page, frame_id: str, timeout: float = WAIT, approve: bool = False) -> str:
    """The text of a fixture app's <pre id=log> once it is done."""
    done = inner(page, frame_id).locator('#log[data-done="true"]')
    if approve:
        approve_while(page, lambda: done.count() > 0, timeout)
    else:
        done.wait_for(timeout=timeout * 1000)
    return done.text_content() or ""


# ---- the real vanillajs App through the page -------------------------------------------------------------------


@pytest.mark.skipif(not VANILLA.exists(), reason="npm peers not installed (tests/peers)")
def test_get_time_app_through_the_page(app_page: Page, tmp_path: Path) -> None:
    page = app_page
    page.wait_for_selector('[data-server="vanilla"][data-status="connected"]', timeout=30_000)
    page.click('[data-server="vanilla"] [data-tool="get-time"]')
    page.click('[data-testid="call-tool"]')
    frame = page.locator('iframe[data-app-frame][data-server="vanilla"]')
    frame.and_(page.locator('[data-app-status="ready"]')).wait_for(timeout=30_000)
    frame_id = frame.get_attribute("data-frame-id") or ""

    # The outer frame's attributes.
    assert frame.get_attribute("sandbox") == OUTER_SANDBOX
    assert frame.get_attribute("data-resource-uri") == "ui://get-time/mcp-app.html"
    assert frame.get_attribute("referrerpolicy") == "strict-origin"
    assert frame.get_attribute("allow") is None
    assert frame.evaluate("f => f.contentDocument === null && f.style.overflow === 'hidden'")

    # The App rendered the tool result it was given.
    app = inner(page, frame_id)
    app.get_by_text("Server Time:").wait_for()
    page.locator('[data-testid="tool-result"][data-status="ok"]').wait_for()
    result_text = page.locator('[data-testid="tool-result"]').text_content() or ""
    shown = app.locator("#server-time").text_content() or ""
    assert shown and shown in result_text

    # Handshake order: resource first; nothing but answers before initialized; input once, then result.
    t = trace(page, frame_id)
    # (A warm proxy frame is first told where the App's document is: test_apps_warm_frames.py.)
    out = [
        x["msg"]
        for x in t
        if x["dir"] == "out" and x["msg"].get("method") != "ui/notifications/sandbox-webhost-app-document"
    ]
    # (An answer may come first: from a warm frame the App can load and ask ui/initialize while its resource is
    # still on its way to the proxy; no notification may.)
    # (A prepared frame got its resource before this frame's trace began: then the trace starts later.)
    sent_methods = [m["method"] for m in out if "method" in m]
    if "ui/notifications/sandbox-resource-ready" in sent_methods:
        assert sent_methods[0] == "ui/notifications/sandbox-resource-ready"
    initialized_at = next(i for i, x in enumerate(t) if x["msg"].get("method") == "ui/notifications/initialized")
    assert all(
        "method" not in x["msg"] or x["msg"]["method"].startswith("ui/notifications/sandbox-")
        for x in t[:initialized_at]
        if x["dir"] == "out"
    )
    methods = [m.get("method") for m in out if "method" in m]
    assert methods.count("ui/notifications/tool-input") == 1
    assert methods.index("ui/notifications/tool-input") < methods.index("ui/notifications/tool-result")
    init = next(m["result"] for m in out if "result" in m and "hostContext" in m.get("result", {}))
    assert init["protocolVersion"] == "2026-01-26"
    ctx = init["hostContext"]
    assert len(ctx["styles"]["variables"]) == 76
    assert ctx["platform"] == "web" and ctx["userAgent"].startswith("webhost/")
    assert ctx["displayMode"] == "inline" and "fullscreen" in ctx["availableDisplayModes"]
    assert ctx["containerDimensions"]["maxHeight"] > 0 and ctx["containerDimensions"]["width"] > 0

    # A theme change reaches the App, and it applies it.
    before = ctx["theme"]
    page.click("#theme-toggle")
    after = "dark" if before == "light" else "light"
    wait_until(
        lambda: app.locator("html").evaluate("e => getComputedStyle(e).colorScheme") == after, message="app theme"
    )
    changed = sent(page, frame_id, "ui/notifications/host-context-changed")[-1]["params"]
    assert changed["theme"] == after and len(changed["styles"]["variables"]) == 76
    page.screenshot(path=str(tmp_path / "get-time.png"))

    # The App's own tools/call goes through apps/request.
    app.locator("#get-time-btn").click()
    wait_until(lambda: (app.locator("#server-time").text_content() or "") != shown, message="a new time")

    # Close: ui/resource-teardown is sent and answered, then the frame is gone.
    page.locator(f'[data-app-panel][data-frame-id="{frame_id}"] [data-app-action="close"]').click()
    page.locator(f'[data-app-panel][data-frame-id="{frame_id}"][data-app-status="closed"]').wait_for()
    assert frame.count() == 0
    t = trace(page, frame_id)
    teardown = next(x["msg"] for x in t if x["dir"] == "out" and x["msg"].get("method") == "ui/resource-teardown")
    assert teardown["params"] == {}
    assert any(x["dir"] == "in" and x["msg"].get("id") == teardown["id"] and "result" in x["msg"] for x in t)
    assert page.console_errors == []  # type: ignore[attr-defined]


# ---- the protocol, played from the App's side ------------------------------------------------------------------


def test_nothing_reaches_the_app_before_initialized(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page, args={"text": "hello"})
    # The tool's result is in the page (its answer in the activity log), then the App pings: had the bridge sent the
    # App anything before ui/notifications/initialized, it would have come before the ping's answer.
    logged(page, "apps", "tools/call", "in").first.wait_for()
    answered_ping(app)
    assert [m for m in received(app) if "method" in m] == [] and len(received(app)) == 1  # only the ping's answer
    assert outer(page, frame_id).get_attribute("data-app-status") == "loading"

    # A repeated ui/initialize is answered again (StrictMode double mounts); the last one counts.
    first = app.evaluate(
        "() => window.rpc('ui/initialize', {appInfo: {name: 'probe', version: '1'}, appCapabilities: {}})"
    )
    result = app.evaluate(
        "() => window.rpc('ui/initialize', {appInfo: {name: 'probe', version: '2'}, "
        "appCapabilities: {elicitation: {}, future: {x: 1}}, protocolVersion: '2025-11-21'})"
    )
    for answer in (first, result):
        assert answer["protocolVersion"] == "2026-01-26"
        assert set(answer) == {"protocolVersion", "hostInfo", "hostCapabilities", "hostContext"}
    assert "elicitation" not in result["hostCapabilities"]  # only on elicitation frames
    page.click("#theme-toggle")  # a context change while not initialized: held back
    # Progress of an app-initiated tools/call (as `apps/progress` delivers it): queued as well.
    page.evaluate(
        "(f) => window.__page.apps.debug.bridge(f).progress({frameId: f, progressToken: 'tok-1', "
        "progress: 2, total: 5, message: 'two of five'})",
        frame_id,
    )
    answered_ping(app)
    assert [m for m in received(app) if "method" in m] == []

    app.evaluate("() => window.notify('ui/notifications/initialized')")
    outer(page, frame_id).and_(page.locator('[data-app-status="ready"]')).wait_for()
    wait_until(lambda: received(app, "ui/notifications/tool-result"), message="tool-result")
    methods = [m["method"] for m in received(app) if "method" in m]
    assert methods[0] == "ui/notifications/tool-input"
    assert methods.count("ui/notifications/tool-input") == 1
    assert received(app, "ui/notifications/tool-input")[0]["params"] == {"arguments": {"text": "hello"}}
    result_params = received(app, "ui/notifications/tool-result")[0]["params"]
    assert result_params["content"][0]["text"] == "echo_app: hello"
    wait_until(lambda: received(app, "ui/notifications/host-context-changed"), message="context diff")
    diff = received(app, "ui/notifications/host-context-changed")[0]["params"]
    assert set(diff) >= {"theme", "styles"} and "locale" not in diff
    assert received(app, "notifications/progress")[0]["params"] == {
        "progressToken": "tok-1",
        "progress": 2,
        "total": 5,
        "message": "two of five",
    }

    # Pings, unknown methods, the raw capabilities kept.
    assert app.evaluate("() => window.rpc('ping', {})") == {}
    error = app.evaluate("() => window.rpc('no/such-method', {}).then(() => null, (e) => e)")
    assert error["code"] == -32601
    bridge_caps = page.evaluate("(f) => window.__page.apps.debug.bridge(f).appCapabilities", frame_id)
    assert bridge_caps == {"elicitation": {}, "future": {"x": 1}}  # raw, unknown keys kept


def test_tool_failure_sends_tool_cancelled(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page, fail="boom from the test")
    app.evaluate("() => window.init({})")
    wait_until(lambda: received(app, "ui/notifications/tool-cancelled"), message="tool-cancelled")
    methods = [m["method"] for m in received(app) if "method" in m]
    assert methods.index("ui/notifications/tool-input") < methods.index("ui/notifications/tool-cancelled")
    assert "tool-result" not in " ".join(methods)
    reason = received(app, "ui/notifications/tool-cancelled")[0]["params"]["reason"]
    assert isinstance(reason, str) and "boom from the test" in reason


def test_size_changes_with_hysteresis_and_clamp(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init({})")
    frame = outer(page, frame_id)

    def height() -> str:
        return str(frame.evaluate("f => f.style.height"))

    def report(method: str, h: float) -> None:
        app.evaluate(f"() => window.notify({json.dumps(method)}, {{width: 300, height: {h}}})")

    report("ui/notifications/size-changed", 300)
    wait_until(lambda: height() == "300px", message="300px")
    report("ui/notifications/size-changed", 298)  # a 2 px shrink: ignored
    answered_ping(app)  # the bridge handled the report (a frame's height is set as it is handled)
    assert height() == "300px"
    report("ui/size-change", 250)  # old name, real shrink
    wait_until(lambda: height() == "250px", message="250px")
    report("ui/notifications/size-change", 260.4)
    wait_until(lambda: height() == "261px", message="261px")
    report("ui/notifications/size-changed", 100000)
    wait_until(lambda: height() == "6000px", message="clamped to 6000px")


def test_display_modes(app_page: Page, tmp_path: Path) -> None:
    page = app_page
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init({availableDisplayModes: ['inline', 'fullscreen']})")
    panel = page.locator(f'[data-app-panel][data-frame-id="{frame_id}"]')

    # pip is not among the App's declared modes: refused, current mode returned.
    assert app.evaluate("() => window.rpc('ui/request-display-mode', {mode: 'pip'})") == {"mode": "inline"}
    assert app.evaluate("() => window.rpc('ui/request-display-mode', {mode: 'fullscreen'})") == {"mode": "fullscreen"}
    wait_until(
        lambda: any(
            m["params"].get("displayMode") == "fullscreen"
            for m in received(app, "ui/notifications/host-context-changed")
        ),
        message="context",
    )
    change = [
        m["params"]
        for m in received(app, "ui/notifications/host-context-changed")
        if m["params"].get("displayMode") == "fullscreen"
    ][0]
    assert set(change["containerDimensions"]) == {"width", "height"}
    assert change["containerDimensions"]["width"] == page.viewport_size["width"]  # type: ignore[index]
    exit_button = page.locator('.wh-app-stage.is-fullscreen [data-stage-action="inline"]')
    assert exit_button.is_visible()
    box = page.locator(".wh-app-stage.is-fullscreen").bounding_box()
    assert box is not None and box["x"] == 0 and box["y"] == 0
    page.screenshot(path=str(tmp_path / "fullscreen.png"))
    assert panel.get_attribute("data-display-mode") == "fullscreen"
    exit_button.click()
    wait_until(lambda: panel.get_attribute("data-display-mode") == "inline", message="inline again")
    wait_until(
        lambda: received(app, "ui/notifications/host-context-changed")[-1]["params"].get("displayMode") == "inline",
        message="inline context",
    )
    # The App survived both switches (a moved iframe would have reloaded and lost its state).
    assert received(app, "ui/notifications/tool-input")
    # One proxy ready in all: to the bridge (cold), or to the warm frame pool before the click (warm, prepared).
    readies = [
        m
        for m in trace(page, frame_id)
        if m["msg"].get("method")
        in ("ui/notifications/sandbox-proxy-ready", "webhost/warm-frame", "webhost/prepared-frame")
    ]
    assert len(readies) == 1

    # An App that declares nothing may use pip (the window is wide enough).
    frame2, app2 = open_probe(page, tool="bridge_probe")
    app2.evaluate("() => window.init({})")
    assert app2.evaluate("() => window.rpc('ui/request-display-mode', {mode: 'pip'})") == {"mode": "pip"}
    stage = page.locator(".wh-app-stage.is-pip")
    box = stage.bounding_box()
    assert box is not None and box["width"] <= 400
    page.screenshot(path=str(tmp_path / "pip.png"))
    assert app2.evaluate("() => window.rpc('ui/request-display-mode', {mode: 'inline'})") == {"mode": "inline"}


def test_app_requested_teardown_and_bounded_wait(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init({})")
    app.evaluate("() => window.notify('ui/notifications/request-teardown')")
    page.locator(f'[data-app-panel][data-frame-id="{frame_id}"][data-app-status="closed"]').wait_for()
    assert outer(page, frame_id).count() == 0
    t = trace(page, frame_id)
    request = next(x["msg"] for x in t if x["dir"] == "out" and x["msg"].get("method") == "ui/resource-teardown")
    assert any(x["dir"] == "in" and x["msg"].get("id") == request["id"] for x in t)

    # An App that never answers the teardown is removed after the bounded wait.
    frame2, app2 = open_probe(page)
    app2.evaluate("() => { window.answerTeardown = false; return window.init({}); }")
    started = time.monotonic()
    page.locator(f'[data-app-panel][data-frame-id="{frame2}"] [data-app-action="close"]').click()
    outer(page, frame2).wait_for(state="detached", timeout=5000)
    elapsed = time.monotonic() - started
    assert 0.7 < elapsed < 3.0, elapsed
    audit = page.evaluate("() => window.__page.rpc.request('audit/list', {server: 'apps', limit: 50})")["entries"]
    assert any(e["frame"] == frame2 and e["kind"] == "app.close" for e in audit)


def test_hostile_messages_are_dropped_and_reported(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init({})")
    # Speaking as its proxy (same origin): a second sandbox-proxy-ready, a malformed frame, junk.
    app.evaluate("""() => window.asProxy(`
      window.parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {}}, "*");
      window.parent.postMessage({jsonrpc: "2.0", method: 42}, "*");
      window.parent.postMessage({hello: "not json-rpc"}, "*");
      window.parent.postMessage("a string", "*");
    `)""")
    # Posting to the top window directly, bypassing the proxy.
    app.evaluate("() => window.top.postMessage({jsonrpc: '2.0', method: 'ui/notifications/initialized'}, '*')")
    wait_until(
        lambda: {p["kind"] for p in problems(page, frame_id)} >= {"sandbox-message", "malformed", "bypassed-proxy"},
        message="three kinds of violation",
    )
    kinds = [p["kind"] for p in problems(page, frame_id)]
    assert len(kinds) == 3  # junk and strings are ignored silently
    # The resource was sent exactly once, and the App still works.
    assert len(sent(page, frame_id, "ui/notifications/sandbox-resource-ready")) == 1
    assert app.evaluate("() => window.rpc('ping', {})") == {}
    audit = page.evaluate("() => window.__page.rpc.request('audit/list', {server: 'apps', limit: 100})")["entries"]
    assert any(e["frame"] == frame_id and e["kind"] == "app.violation" for e in audit)


def test_forged_sandbox_messages_and_responses(app_page: Page) -> None:
    page = app_page
    frame_id = open_app(page, "apps", "hostile_forge_sandbox")
    log = fixture_log(page, frame_id)
    assert "pwned element present: false" in log
    assert "still answered: ok {}" in log
    assert {p["kind"] for p in problems(page, frame_id)} >= {"unexpected-response"}
    assert len(sent(page, frame_id, "ui/notifications/sandbox-resource-ready")) == 1


def test_flood_is_capped_and_the_page_stays_responsive(app_page: Page) -> None:
    page = app_page
    frame_id = open_app(page, "apps", "hostile_flood", args={"count": 6000})
    inner(page, frame_id).locator("#log").get_by_text("sent 6000").wait_for(timeout=30_000)
    started = time.monotonic()
    assert page.evaluate("() => window.__page.apps.list().length") >= 1
    assert time.monotonic() - started < 1.0
    log = fixture_log(page, frame_id)
    assert "still responsive: ok {}" in log
    kinds = {p["kind"] for p in problems(page, frame_id)}
    assert "flood" in kinds
    assert len(problems(page, frame_id)) < 10  # repeats are counted, not listed


def test_requests_before_initialized_are_refused_not_run(app_page: Page) -> None:
    page = app_page
    frame_id = open_app(page, "apps", "hostile_early")
    log = fixture_log(page, frame_id)
    for method in ("tools/call", "ui/open-link", "ui/message", "resources/read"):
        line = next(line for line in log.splitlines() if line.startswith(f"before initialize {method}:"))
        assert ": error " in line and "-32600" in line and "before ui/initialize" in line, line
    assert "after initialize ping: ok {}" in log
    assert page.locator("[data-approval]").count() == 0  # the early link was never put to the person


def test_requests_after_initialize_and_before_initialized_are_served_and_logged(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page, args={"text": "hello"})
    refused = app.evaluate("() => window.rpc('resources/list', {}).then(() => null, (e) => e)")
    assert refused["code"] == -32600 and "before ui/initialize" in refused["message"]
    # ui/initialize answered, ui/notifications/initialized not sent yet: what an App SDK allows (with a warning).
    app.evaluate("() => window.rpc('ui/initialize', {appInfo: {name: 'probe', version: '1'}, appCapabilities: {}})")
    for _ in range(2):
        answer = app.evaluate("() => window.rpc('tools/call', {name: 'echo_app', arguments: {text: 'early'}})")
        assert answer["content"][0]["text"] == "echo_app: early"
    assert app.evaluate("() => window.rpc('resources/list', {})")["resources"]
    assert outer(page, frame_id).get_attribute("data-app-status") == "loading"
    assert [m for m in received(app) if "method" in m] == []  # still nothing host-initiated before initialized
    # Logged once per method and outcome (the console and the activity log), the refusal as one.
    lifecycle = page.locator(
        '[data-testid="activity-log"] [data-log-entry][data-log-server="apps"][data-method="app/lifecycle"]'
    )
    expected = [
        "request before ui/initialize refused: resources/list",
        "request before ui/notifications/initialized served: tools/call",
        "request before ui/notifications/initialized served: resources/list",
    ]
    wait_until(
        lambda: all(lifecycle.filter(has_text=text).count() for text in expected), message="the early requests logged"
    )
    assert [lifecycle.filter(has_text=text).count() for text in expected] == [1, 1, 1]
    app.evaluate("() => window.notify('ui/notifications/initialized')")
    wait_until(lambda: received(app, "ui/notifications/tool-result"), message="tool-result after initialized")


def test_dropped_and_malformed_requests_are_answered_at_once(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init()")
    outer(page, frame_id).and_(page.locator('[data-app-status="ready"]')).wait_for()
    time.sleep(1.1)  # a fresh rate window
    answers = app.evaluate("""async () => {
      const all = [];
      for (let i = 0; i < 400; i++) {
        all.push(window.rpc("ping", {}).then(() => "ok", (e) => e.code + " " + e.message));
      }
      return await Promise.race([Promise.all(all), new Promise((r) => setTimeout(() => r(null), 5000))]);
    }""")
    assert answers is not None, "dropped requests were never answered"
    refused = [a for a in answers if a != "ok"]
    assert answers.count("ok") >= 100 and refused
    assert all(a.startswith("-32000 Rate limit") for a in refused), refused[:3]
    time.sleep(1.1)  # a fresh rate window again: the malformed requests below are answered, not rate limited
    app.evaluate("""() => {
      window.parent.postMessage({jsonrpc: "2.0", id: "m-1", result: {}, error: {code: 1, message: "both"}}, "*");
      window.parent.postMessage({jsonrpc: "2.0", id: "m-2", method: "ping", params: [1]}, "*");
    }""")
    errors = wait_until(
        lambda: (
            {m["id"]: m["error"] for m in received(app) if m.get("id") in ("m-1", "m-2") and "error" in m}
            if len([m for m in received(app) if m.get("id") in ("m-1", "m-2")]) == 2
            else None
        ),
        message="answers to malformed requests",
    )
    assert errors["m-1"]["code"] == errors["m-2"]["code"] == -32600


def test_every_request_with_an_id_is_answered_whatever_its_size_depth_or_shape(app_page: Page) -> None:
    page = app_page
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init()")
    outer(page, frame_id).and_(page.locator('[data-app-status="ready"]')).wait_for()
    logged(page, "apps", "tools/call", "in").first.wait_for(state="attached")  # the page's own call of the tool
    calls = logged(page, "apps", "tools/call", "out").count()
    # Past the proxy's 16 M characters; past the page's 15 MiB for one relayed request; nested 1,500 deep (more
    # than the backend's JSON parsers take); a method that is not a string; a cyclic value (not JSON at all).
    app.evaluate("""() => {
      const post = (m) => window.parent.postMessage(m, "*");
      const call = (id, args) =>
        post({jsonrpc: "2.0", id, method: "tools/call", params: {name: "echo_app", arguments: args}});
      call("huge", {text: "x".repeat(17 * 1024 * 1024)});
      call("large", {text: "y".repeat(15 * 1024 * 1024 + 1000)});
      let deep = {};
      for (let i = 0; i < 1500; i++) deep = {a: deep};
      call("deep", deep);
      post({jsonrpc: "2.0", id: "five", method: 5, params: {}});
      const cyclic = {name: "echo_app"};
      cyclic.self = cyclic;
      post({jsonrpc: "2.0", id: "cyclic", method: "tools/call", params: cyclic});
    }""")
    ids = ["huge", "large", "deep", "five", "cyclic"]

    def answers() -> dict[str, list[dict[str, Any]]]:
        got: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
        for m in received(app):
            if m.get("id") in got and "method" not in m:
                got[m["id"]].append(m)
        return got

    wait_until(lambda: all(answers().values()), message="an answer to every request")
    answered_ping(app)  # after every answer the bridge was going to send: none is sent twice
    for request_id, replies in answers().items():
        assert len(replies) == 1, (request_id, replies)
        assert replies[0]["error"]["code"] == -32600, (request_id, replies[0])
    by_id = {i: r[0]["error"]["message"] for i, r in answers().items()}
    assert "larger than 16777216 characters" in by_id["huge"]
    assert "larger than 15728640 bytes" in by_id["large"]
    assert "deeper than 100 levels" in by_id["deep"]
    assert "method is not a string" in by_id["five"] and "not JSON" in by_id["cyclic"]
    # Nothing reached the backend, and the page and its socket are fine.
    assert logged(page, "apps", "tools/call", "out").count() == calls
    wait_until(lambda: {p["kind"] for p in problems(page, frame_id)} >= {"malformed", "oversized"}, message="problems")
    assert page.evaluate("() => window.__page.rpc.request('servers/list')")["servers"]
    assert errors == []


def test_an_apps_conversation_keeps_a_bounded_number_of_bytes(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init()")
    sent = app.evaluate("""async () => {
      const chunk = "x".repeat(300 * 1024);
      for (let n = 0; n < 5; n++) {
        await window.rpc("ui/message", {role: "user", content: [{type: "text", text: `message ${n} ${chunk}`}]});
      }
      return await window.rpc("ui/message", {role: "user", content: [{type: "text", text: "y".repeat(1024 * 1024)}]})
        .then(() => "kept", (e) => e.code + " " + e.message);
    }""")
    assert sent.startswith("-32003 ui/message: the message is") and "kept up to 1048576" in sent
    # The person's Conversation view shows the newest messages that fit in 1 MiB (as the backend keeps them).
    panel = page.locator(f'[data-app-panel][data-frame-id="{frame_id}"]')
    button = panel.locator('[data-app-action="conversation"]')
    wait_until(lambda: button.text_content() == "Conversation (3)", message="three messages kept")
    button.click()
    view = panel.locator('[data-app-view="conversation"]')
    view.get_by_text("message 4", exact=False).first.wait_for()
    assert view.get_by_text("message 1 ", exact=False).count() == 0


def test_list_changed_reaches_apps_that_were_told_list_changed(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page)
    init = app.evaluate("() => window.init()")
    assert init["hostCapabilities"]["serverTools"] == {"listChanged": True}
    page.evaluate(
        "() => window.__page.rpc.request('tools/call', {server: 'apps', name: 'add_tool', arguments: {}, "
        "callId: 'lc-' + Math.random()})"
    )
    changed = wait_until(lambda: received(app, "notifications/tools/list_changed"), message="tools/list_changed")
    assert changed[0]["params"] == {}
    assert not received(app, "notifications/resources/list_changed")


def test_an_app_cancelling_its_request_cancels_the_call(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init()")
    app.evaluate("""() => window.parent.postMessage({jsonrpc: "2.0", id: "slow-1", method: "tools/call",
      params: {name: "wait_app", arguments: {seconds: 30}}}, "*")""")
    logged(page, "apps", "tools/call", "out", "wait_app").wait_for()  # the call runs on the server
    app.evaluate("() => window.notify('notifications/cancelled', {requestId: 'slow-1', reason: 'test'})")
    answer = wait_until(
        lambda: next((m for m in received(app) if m.get("id") == "slow-1"), None), timeout=10, message="the answer"
    )
    assert answer["error"]["code"] == -32800, answer


def test_an_app_whose_server_disconnects_shows_it(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init()")
    panel = page.locator(f'[data-app-panel][data-frame-id="{frame_id}"]')
    status = panel.locator(".wh-app-status")
    wait_until(lambda: status.text_content() == "Running", message="Running")
    page.evaluate("() => window.__page.rpc.request('servers/disconnect', {server: 'apps'})")
    panel.and_(page.locator('[data-server-status="disconnected"]')).wait_for()
    assert status.text_content() == "Server disconnected"
    assert "disconnected" in (panel.locator("[data-app-server-down]").text_content() or "")
    error = app.evaluate("() => window.rpc('tools/call', {name: 'echo_app', arguments: {}}).then(() => null, (e) => e)")
    assert error["code"] == -32002 and "apps is disconnected" in error["message"]
    page.evaluate("() => window.__page.rpc.request('servers/reconnect', {server: 'apps'})")
    wait_until(lambda: status.text_content() == "Running", message="Running again")
    assert panel.get_attribute("data-server-status") is None


def test_download_file_needs_consent_and_saves_through_the_page(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init()")
    downloads: list[Any] = []
    page.on("download", lambda d: downloads.append(d))
    request = """() => { window.dl = null; window.rpc('ui/download-file', {contents: [{type: 'resource',
      resource: {uri: 'file:///notes/report.html', mimeType: 'text/html', text: '<b>saved</b>'}}]})
      .then((r) => { window.dl = r; }, (e) => { window.dl = e; }); }"""
    app.evaluate(request)
    card = page.locator('[data-approval][data-kind="download"]')
    card.locator('[data-action="deny"]').click()

    def answer() -> Any:
        text = wait_until(lambda: app.evaluate("() => window.dl && JSON.stringify(window.dl)"), message="the answer")
        return json.loads(text)

    assert answer() == {"isError": True}

    with page.expect_download() as info:
        app.evaluate(request)
        card.locator('[data-action="allow"]').click()
    download = info.value
    assert downloads == [download]  # the first download the page saw: the denied one saved nothing before it
    assert download.suggested_filename == "report.html"
    assert Path(download.path()).read_text() == "<b>saved</b>"
    assert download.url.startswith("blob:")
    assert answer() == {}


def test_links_only_http_and_never_with_credentials(app_page: Page) -> None:
    page = app_page
    popups: list[str] = []
    page.context.on("page", lambda p: popups.append(p.url))
    frame_id = open_app(page, "apps", "hostile_links")
    log = fixture_log(page, frame_id, approve=True)
    for scheme in ("javascript:", "data:", "vbscript:", "file:", "blob:"):
        line = next(line for line in log.splitlines() if f'"{scheme}' in line.lower() or f'"  {scheme}' in line.lower())
        assert ": error " in line, line
    credentials = next(line for line in log.splitlines() if "user:secret" in line)
    assert ": error " in credentials
    # Every link was answered (an error) before the log was done, and the page opens one only on success, before it
    # answers: a round trip through the page after that, and no popup has come.
    page.evaluate("() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)))")
    assert popups == []


@pytest.fixture(scope="module")
def blocking_browser(playwright: Playwright) -> Iterator[Browser]:
    """Chromium with its popup blocker on, as a person's browser has it (Playwright turns it off by default)."""
    browser = playwright.chromium.launch(
        headless=True, ignore_default_args=["--disable-popup-blocking"], **chromium_launch_kwargs(playwright)
    )
    yield browser
    browser.close()


LINK = "https://example.com/opened-by-the-app"
# The probe asks to open LINK again once the server's tools change (a request no click of the person's started)
# and logs the answer: the test hears it as a console event, without evaluating anything in the page, which
# would give the page a user activation (Playwright evaluates with one) and so let the browser open the tab.
ASK_AGAIN_ON_LIST_CHANGED = """(_el, url) => {
  window.addEventListener("message", (e) => {
    if (e.source !== window.parent || !e.data || e.data.method !== "notifications/tools/list_changed") return;
    if (window.second) return;
    window.second = "asked";
    window.rpc("ui/open-link", {url}).then(
      (r) => console.log("second answer " + JSON.stringify(r)),
      (e) => console.log("second answer error " + JSON.stringify(e)));
  });
}"""


def test_a_link_opens_in_the_persons_click_and_the_app_hears_when_the_browser_blocked_it(
    blocking_browser: Browser, host: Webhost
) -> None:
    context = blocking_browser.new_context(viewport={"width": 1400, "height": 1000})
    referers: list[str | None] = []

    def example(route: Route) -> None:
        referers.append(route.request.headers.get("referer"))
        route.fulfill(status=200, body="example")

    context.route("https://example.com/**", example)
    page = context.new_page()
    login(page, host)
    page.wait_for_selector('[data-server="apps"][data-status="connected"]', timeout=30_000)
    bind_page(page)
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init()")
    app.evaluate(ASK_AGAIN_ON_LIST_CHANGED, LINK)
    app.evaluate("(_el, url) => { window.rpc('ui/open-link', {url}).then((r) => { window.first = r; }); }", LINK)
    card = page.locator('[data-approval][data-kind="open-link"]')
    card.locator('input[name="remember"]').check()
    # The tab opens within the click on Allow, the one moment the browser surely lets the page open one.
    with context.expect_page() as opened:
        card.locator('[data-action="allow"]').click()
    tab = opened.value
    tab.wait_for_url(LINK)
    assert tab.evaluate("() => window.opener") is None
    assert referers == [None]  # severed as "noopener,noreferrer" would: no handle on the page, nor its address
    panel = page.locator(f'[data-app-panel][data-frame-id="{frame_id}"]')
    panel.locator(f'[data-app-link-opened="{LINK}"]').wait_for()  # the person is told where it went
    assert wait_until(lambda: app.evaluate("() => window.first && JSON.stringify(window.first)")) == "{}"
    audit = page.evaluate("() => window.__page.rpc.request('audit/list', {server: 'apps', limit: 50})")["entries"]
    allowed = [e for e in audit if e["frame"] == frame_id and e["kind"] == "app.open-link"]
    assert [(e["decision"], e["detail"]) for e in allowed] == [("allow", {"opened": True})]  # in the click
    tab.close()

    # The same link again, allowed without a card (the person said to remember), asked when nobody clicked: the
    # browser blocks the tab, and the app is told so. The page's activation is over first (awaited in the
    # page); from then on nothing is evaluated in it until the app has its answer.
    page.wait_for_function("() => !navigator.userActivation.isActive", timeout=30_000)
    other = context.new_page()
    login(other, host)
    bind_page(other)
    with page.expect_console_message(lambda m: m.text.startswith("second answer")) as answer:
        other.evaluate(
            "() => window.__page.rpc.request('tools/call', {server: 'apps', name: 'add_tool', arguments: {}, "
            "callId: 'blocked-' + Math.random()})"
        )
    assert answer.value.text == 'second answer {"isError":true}'
    notice = panel.locator(f'[data-app-link-blocked="{LINK}"]')
    notice.wait_for()  # shown before the app was answered
    assert [p.url for p in context.pages] == [page.url, other.url]  # no new tab
    assert len(referers) == 1
    # The notice's link is the person's own click: that opens it.
    with context.expect_page() as opened:
        notice.locator("a").click()
    opened.value.wait_for_url(LINK)
    notice.wait_for(state="detached")
    context.close()


# ---- fixture apps through the whole stack ------------------------------------------------------------------


def test_bridge_probe_every_app_request(app_page: Page) -> None:
    page = app_page
    popups: list[Page] = []  # a link opens as a blank tab that then follows it: its address is read later
    page.context.on("page", lambda p: popups.append(p))
    frame_id = open_app(page, "apps", "bridge_probe")
    fixture_log(page, frame_id, approve=True)
    results = inner(page, frame_id).locator("#results li")
    status = {li.get_attribute("data-probe"): li.get_attribute("data-status") for li in results.all()}
    expected_ok = [
        "ui/initialize",
        "tool-input",
        "tool-result",
        "ping",
        "tools/call echo_app",
        "tools/call app_only_ping",
        "resources/read",
        "resources/list",
        "ui/message",
        "ui/update-model-context",
        "ui/open-link",
        "ui/request-display-mode fullscreen",
        "ui/request-display-mode inline",
    ]
    for name in expected_ok:
        assert status.get(name) == "ok", (name, status)
    assert status["tools/call model_only_ping"] == "error"
    assert status["ui/download-file"] == "ok"  # consented (approve=True) and saved through the page
    wait_until(lambda: "https://example.com/" in [p.url for p in popups], message="the link opened in a new tab")

    # The Conversation view shows what a model would be given.
    panel = page.locator(f'[data-app-panel][data-frame-id="{frame_id}"]')
    panel.locator('[data-app-action="conversation"]').click()
    view = panel.locator('[data-app-view="conversation"]')
    view.get_by_text("hello from the bridge probe").wait_for()
    view.get_by_text("bridge probe context").wait_for()
    assert "webhost has no model" in (view.text_content() or "")


def test_open_failure_is_shown_in_the_panel(app_page: Page) -> None:
    page = app_page
    page.evaluate(OPEN_JS, {"server": "apps", "tool": "missing_resource_app", "args": {}, "html": None, "fail": None})
    panel = page.locator('[data-app-panel][data-app-status="error"]').last
    panel.wait_for()
    assert "could not be opened" in (panel.locator("[data-app-error]").text_content() or "")
    assert panel.locator("iframe[data-app-frame]").count() == 0


def test_info_view_and_allowing_a_permission(app_page: Page) -> None:
    page = app_page
    frame_id = open_app(page, "apps", "permissions_probe")
    log = fixture_log(page, frame_id)
    assert "feature camera: false" in log
    panel = page.locator(f'[data-app-panel][data-frame-id="{frame_id}"]')
    panel.locator('[data-app-action="info"]').click()
    info = panel.locator('[data-app-view="info"]')
    assert "default-src" in (info.locator('[data-info="csp-header"]').text_content() or "")
    camera = info.locator('tr[data-permission="camera"]')
    assert camera.get_attribute("data-requested") == "true" and camera.get_attribute("data-granted") == "false"
    allow = camera.locator('[data-app-action="allow-permission"]')
    allow.evaluate("b => b.scrollIntoView({block: 'center'})")  # clear of the page's docked activity log
    allow.click()
    # Reopened with the grant: a new frame whose allow attribute carries it.
    new_frame = page.locator(
        'iframe[data-app-frame][data-resource-uri="ui://apps/permissions.html"][data-app-status="ready"]'
    )
    wait_until(
        lambda: new_frame.count() == 1 and new_frame.get_attribute("data-frame-id") != frame_id, message="reopen"
    )
    assert "camera" in (new_frame.get_attribute("allow") or "")
    new_id = new_frame.get_attribute("data-frame-id") or ""
    assert "feature camera: true" in fixture_log(page, new_id)
    page.evaluate(
        "() => window.__page.rpc.request('apps/permission', {server: 'apps', permission: 'camera', granted: false})"
    )


def test_apps_of_two_servers_side_by_side(app_page: Page) -> None:
    page = app_page
    first = open_app(page, "apps", "bridge_probe", args={"autorun": False})
    second = open_app(page, "second", "bridge_probe", args={"autorun": False})
    for frame_id in (first, second):
        outer(page, frame_id).and_(page.locator('[data-app-status="ready"]')).wait_for()
    origins = page.evaluate(
        "(ids) => ids.map((f) => window.__page.apps.debug.bridge(f).descriptor.origin)", [first, second]
    )
    assert origins[0] != origins[1]
    listed = page.evaluate("() => window.__page.apps.list().map((a) => [a.frameId, a.server, a.status])")
    assert [first, "apps", "ready"] in listed and [second, "second", "ready"] in listed


def test_app_rendered_elicitation_generic(app_page: Page) -> None:
    page = app_page
    mount = """async ({caps, html}) => {
      const rpc = window.__page.rpc;
      const d = await rpc.request("apps/open", {server: "apps", tool: "echo_app"});
      const descriptor = {...d, html, purpose: "elicitation",
                          hostCapabilities: {...d.hostCapabilities, elicitation: {}}};
      const container = document.createElement("div");
      container.dataset.elicitationTest = "";
      document.getElementById("workspace").append(container);
      window.elicitResults = []; window.fellBack = [];
      const request = {id: "e-test", server: "apps", mode: "app", message: "Who?",
        requestedSchema: {type: "object", properties: {name: {type: "string"}}, required: ["name"]},
        request: {method: "elicitation/create", params: {mode: "form", message: "Who?",
          requestedSchema: {type: "object", properties: {name: {type: "string"}}, required: ["name"]},
          _meta: {ui: {resourceUri: d.resourceUri}}}}};
      const handle = await window.__page.apps.mountElicitation(container, request, {
        descriptor,
        onResult: async (r) => { window.elicitResults.push(r); },
        fallbackToForm: (req) => window.fellBack.push(req.id),
      });
      return handle.frameId;
    }"""
    frame_id = page.evaluate(mount, {"caps": {}, "html": PROBE_APP})
    app = inner(page, frame_id).locator('#probe[data-loaded="true"]')
    init = app.evaluate("() => window.init({elicitation: {}})")
    assert init["hostCapabilities"].get("elicitation") == {}
    wait_until(lambda: page.evaluate("() => window.elicitResults.length"), message="an ElicitResult")
    assert page.evaluate("() => window.elicitResults") == [{"action": "accept", "content": {"name": "Ada"}}]
    create = received(app, "elicitation/create")[0]
    assert create["params"]["message"] == "Who?" and create["params"]["mode"] == "form"
    assert not received(app, "ui/notifications/tool-input")  # elicitation frames get no tool traffic
    outer(page, frame_id).wait_for(state="detached")
    assert page.evaluate("() => window.fellBack") == []

    # An App without appCapabilities.elicitation: torn down, and the native form takes over.
    frame2 = page.evaluate(mount, {"caps": {}, "html": PROBE_APP})
    app2 = inner(page, frame2).locator('#probe[data-loaded="true"]')
    app2.evaluate("() => window.init({})")
    wait_until(lambda: page.evaluate("() => window.fellBack.length"), message="fallback")
    assert page.evaluate("() => window.elicitResults") == []
    outer(page, frame2).wait_for(state="detached")


@pytest.mark.skipif(not EXT_APPS_SCHEMA.exists(), reason="npm peers not installed (ext-apps schema.json)")
def test_outbound_messages_match_the_ext_apps_schema(app_page: Page) -> None:
    import jsonschema

    defs = json.loads(EXT_APPS_SCHEMA.read_text(encoding="utf-8"))["$defs"]

    def dimensions_ok(dims: Any) -> bool:
        # The generated schema makes containerDimensions an allOf of closed objects, which no object with
        # both a width and a height key can satisfy; check the documented shape here instead.
        heights = {"height", "maxHeight"} & set(dims)
        widths = {"width", "maxWidth"} & set(dims)
        return (
            len(heights) <= 1
            and len(widths) <= 1
            and set(dims) == heights | widths
            and all(isinstance(v, (int, float)) for v in dims.values())
        )

    def check(name: str, value: Any) -> None:
        value = json.loads(json.dumps(value))
        for holder in (value.get("params"), value.get("hostContext")):
            if isinstance(holder, dict) and "containerDimensions" in holder:
                assert dimensions_ok(holder.pop("containerDimensions"))
        jsonschema.validate(value, defs[name])  # each definition is its own root (it carries its own $defs)

    page = app_page
    frame_id, app = open_probe(page, args={"text": "schema"})
    app.evaluate("() => window.init({availableDisplayModes: ['inline', 'fullscreen']})")
    page.click("#theme-toggle")
    app.evaluate("() => window.rpc('ui/request-display-mode', {mode: 'fullscreen'})")
    page.locator('.wh-app-stage.is-fullscreen [data-stage-action="inline"]').click()
    wait_until(lambda: received(app, "ui/notifications/tool-result"), message="result")
    page.locator(f'[data-app-panel][data-frame-id="{frame_id}"] [data-app-action="close"]').click()
    outer(page, frame_id).wait_for(state="detached")
    by_method = {
        "ui/notifications/sandbox-resource-ready": "McpUiSandboxResourceReadyNotification",
        "ui/notifications/tool-input": "McpUiToolInputNotification",
        "ui/notifications/tool-result": "McpUiToolResultNotification",
        "ui/notifications/host-context-changed": "McpUiHostContextChangedNotification",
        "ui/resource-teardown": "McpUiResourceTeardownRequest",
    }
    seen = set()
    for msg in sent(page, frame_id):
        method = msg.get("method")
        if method in by_method:
            check(by_method[method], {k: v for k, v in msg.items() if k not in ("jsonrpc", "id")})
            seen.add(method)
        elif "result" in msg and isinstance(msg["result"], dict) and "hostContext" in msg["result"]:
            check("McpUiInitializeResult", msg["result"])
            seen.add("initialize")
        elif "result" in msg and isinstance(msg["result"], dict) and "mode" in msg["result"]:
            check("McpUiRequestDisplayModeResult", msg["result"])
    assert seen == set(by_method) | {"initialize"}


def test_pagehide_tears_every_app_down(app_page: Page) -> None:
    page = app_page
    frame_id, app = open_probe(page)
    app.evaluate("() => window.init({})")
    page.evaluate("() => window.dispatchEvent(new PageTransitionEvent('pagehide', {persisted: false}))")
    outer(page, frame_id).wait_for(state="detached")
    assert sent(page, frame_id, "ui/resource-teardown")
    assert page.evaluate("() => window.__page.apps.list().length") == 0


# ---- app-rendered elicitation through the whole stack (the embedded demo's pick_color) ----------------------


@pytest.fixture(scope="module")
def demo_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    with run_webhost(tmp_path_factory.mktemp("apps-demo"), None) as running:
        yield running


def start_pick_color(page: Page, demo_host: Webhost) -> tuple[Locator, str]:
    login(page, demo_host)
    page.wait_for_selector('[data-server="demo"][data-status="connected"]', timeout=30_000)
    bind_page(page)
    page.click('[data-server="demo"] [data-tool="pick_color"]')
    page.click('[data-testid="call-tool"]')
    card = page.locator('[data-elicitation][data-mode="app"]')
    frame = card.locator('iframe[data-app-frame][data-app-status="ready"]')
    frame.wait_for(timeout=20_000)
    return card, frame.get_attribute("data-frame-id") or ""


def test_app_rendered_elicitation_answered_in_the_app(page: Page, demo_host: Webhost) -> None:
    card, frame_id = start_pick_color(page, demo_host)
    assert card.get_attribute("data-server") == "demo"
    picker = card.frame_locator("iframe[data-app-frame]").frame_locator("iframe")
    picker.locator(".swatch").nth(1).click()
    picker.locator("#accept").click()
    result = page.locator('[data-testid="tool-result"][data-status="ok"]')
    result.wait_for(timeout=20_000)
    assert "You picked" in (result.text_content() or "")
    out = sent(page, frame_id)
    create = next(m for m in out if m.get("method") == "elicitation/create")
    assert create["params"]["requestedSchema"]["properties"]
    assert not any(m.get("method") == "ui/notifications/tool-input" for m in out)
    page.locator(f'iframe[data-frame-id="{frame_id}"]').wait_for(state="detached")
    assert any(m.get("method") == "ui/resource-teardown" for m in sent(page, frame_id))


def test_app_rendered_elicitation_falls_back_to_the_form(page: Page, demo_host: Webhost) -> None:
    card, frame_id = start_pick_color(page, demo_host)
    card.locator('[data-app-action="close"]').click()  # "Use the form instead"
    form = page.locator('form[data-elicitation][data-mode="form"]')
    form.wait_for(timeout=10_000)
    # The App got its teardown request, and answered it, before the form replaced it.
    t = trace(page, frame_id)
    teardown = next(x["msg"] for x in t if x["dir"] == "out" and x["msg"].get("method") == "ui/resource-teardown")
    assert any(x["dir"] == "in" and x["msg"].get("id") == teardown["id"] for x in t)
    form.locator('[name="color"]').first.select_option(index=1)
    form.locator('[data-action="accept"]').click()
    result = page.locator('[data-testid="tool-result"][data-status="ok"]')
    result.wait_for(timeout=20_000)
    assert "You picked" in (result.text_content() or "")
