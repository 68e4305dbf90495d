"""Hostile MCP Apps against the whole stack, driven through the page's contract attributes.

Every attack from `tests/servers/apps.py` must fail at what it tries AND leave a trace: in the audit
log (`GET /api/audit`), in the page's activity log (`[data-testid=activity-log] [data-log-entry]`),
or both. Plus the sandbox acceptance items (mcp-apps §13.5), the CSP and permission policies as the
browser applies them, tool visibility in the page, and the `ask` approval policy.

What test_apps_bridge.py already proves (message ordering, the bridge's own problem list, display
modes, teardown) is not repeated here; these tests look at outcomes a person or an auditor sees.

Servers are shared HTTP processes (one per module), so every test's fresh browser session connects
in a moment: `apps` (the CSP probe pointed at two local HTTP servers started here), `basic` (the
target of cross-server calls), `second` (another apps.py: storage isolation, permissions granted in
the Info view), `perm` (camera granted by configuration) and `asker` (app tool calls need approval).

Known limit (reported, not testable as a report): a blocked top navigation, popup or cross-origin
read inside the app raises nothing the host page can observe (the browser only writes to the
frame's console), so for those attacks the trace is the audited `app.open` of the frame that ran
them, and the proof of failure is the app's own log plus the host page being unchanged.
"""

from __future__ import annotations

import contextlib
import http.server
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Dialog, FrameLocator, Locator, Page, Route
from playwright.sync_api import Error as PlaywrightError

from tests.e2e.conftest import bind_page, login
from tests.support.process import PYTHON, SERVERS, Webhost, http_process, run_webhost

pytestmark = pytest.mark.e2e

OUTER_SANDBOX = "allow-scripts allow-same-origin allow-forms"
HOST_COOKIE = "wh-host-secret=cookie-8f3a1c"
HOST_STORAGE = "storage-7d2e9b"


# ---- two tiny local HTTP servers for the CSP probe ------------------------------------------------------------


class ProbeServer:
    """A threaded http.server on 127.0.0.1 that counts requests and allows every origin (CORS *)."""

    def __init__(self) -> None:
        hits: list[str] = []
        self.hits = hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                body = b"probe ok"
                self.send_response(200)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def probes() -> Iterator[tuple[ProbeServer, ProbeServer]]:
    allowed, blocked = ProbeServer(), ProbeServer()
    yield allowed, blocked
    allowed.close()
    blocked.close()


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, probes: tuple[ProbeServer, ProbeServer]) -> Iterator[Webhost]:
    tmp = tmp_path_factory.mktemp("apps-security")
    allowed, blocked = probes
    apps_py = [PYTHON, str(SERVERS / "apps.py"), "--http", "{port}"]
    with contextlib.ExitStack() as stack:

        def serve(name: str, argv: list[str]) -> dict[str, Any]:
            url = stack.enter_context(http_process(argv, log_path=tmp / f"{name}.log"))
            return {"type": "http", "url": url}

        servers = {
            "apps": serve("apps", [*apps_py, "--allowed-origin", allowed.origin, "--blocked-origin", blocked.origin]),
            "basic": serve("basic", [PYTHON, str(SERVERS / "basic.py"), "--http", "{port}"]),
            "second": serve("second", [*apps_py, "--name", "second"]),
            "perm": serve("perm", [*apps_py, "--name", "perm"]),
            "asker": serve("asker", [*apps_py, "--name", "asker"]),
        }
        options = {"servers": {"perm": {"permissions": ["camera"]}, "asker": {"appToolCalls": "ask"}}}
        running = stack.enter_context(run_webhost(tmp, servers, webhost_options=options))
        yield running


@pytest.fixture
def app_page(page: Page, host: Webhost) -> Page:
    page.context.route("https://example.com/**", lambda route: route.fulfill(status=200, body="example"))
    login(page, host)
    for name in ("apps", "basic", "second", "perm", "asker"):
        page.wait_for_selector(f'[data-server="{name}"][data-status="connected"]', timeout=30_000)
    bind_page(page)
    return page


# ---- helpers ---------------------------------------------------------------------------------------------------


def wait_until(
    predicate: Callable[[], Any], timeout: float = 15.0, message: str = "condition", *, page: Page | None = None
) -> Any:
    """Poll `predicate`. Pass `page` when it reads lists filled by Playwright events: the sync API
    dispatches events only inside its own calls, so the wait must be one (page.wait_for_timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if page is not None:
            page.wait_for_timeout(50)
        else:
            time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {message}")


def frame_ids(page: Page) -> list[str]:
    ids: list[str] = page.locator("iframe[data-app-frame]").evaluate_all("fs => fs.map((f) => f.dataset.frameId)")
    return ids


def open_tool(page: Page, server: str, tool: str) -> None:
    page.click(f'[data-server="{server}"] [data-tool="{tool}"]')
    page.locator(f'[data-open-server="{server}"][data-open-tool="{tool}"]').wait_for()


def call_tool(page: Page, server: str, tool: str, args: dict[str, Any] | None = None) -> str:
    """Call a tool through the page (select it, fill the form, Call); return the new app frame's id."""
    before = set(frame_ids(page))
    open_tool(page, server, tool)
    view = page.locator(f'[data-open-server="{server}"][data-open-tool="{tool}"]')
    for name, value in (args or {}).items():
        field = view.locator(f'[name="{name}"]')
        if isinstance(value, bool):
            field.set_checked(value)
        else:
            field.fill(str(value))
    view.locator('[data-testid="call-tool"]').click()
    new: list[str] = wait_until(
        lambda: [f for f in frame_ids(page) if f not in before], message=f"the app frame of {server}/{tool}"
    )
    frame_id = new[0]
    frame = outer(page, frame_id)
    assert frame.get_attribute("data-server") == server
    return frame_id


def outer(page: Page, frame_id: str) -> Locator:
    return page.locator(f'iframe[data-app-frame][data-frame-id="{frame_id}"]')


def inner(page: Page, frame_id: str) -> FrameLocator:
    return page.frame_locator(f'iframe[data-app-frame][data-frame-id="{frame_id}"]').frame_locator("iframe")


def inner_iframe(page: Page, frame_id: str) -> Locator:
    """The inner (App) iframe element, inside the proxy document."""
    return page.frame_locator(f'iframe[data-app-frame][data-frame-id="{frame_id}"]').locator("iframe")


def panel(page: Page, frame_id: str) -> Locator:
    return page.locator(f'[data-app-panel][data-frame-id="{frame_id}"]')


def app_log(page: Page, frame_id: str, timeout: float = 30.0) -> str:
    """The text of a fixture app's <pre id=log> once it says it is done."""
    done = inner(page, frame_id).locator('#log[data-done="true"]')
    done.wait_for(timeout=timeout * 1000)
    return done.text_content() or ""


def log_line(log: str, start: str) -> str:
    return next(line for line in log.splitlines() if line.startswith(start))


def audit(host: Webhost, **match: Any) -> list[dict[str, Any]]:
    """Audit entries (newest first) from GET /api/audit with the Bearer token, filtered by equal fields."""
    with host.http() as client:
        response = client.get("/api/audit")
    response.raise_for_status()
    entries: list[dict[str, Any]] = response.json()["entries"]
    return [e for e in entries if all(e.get(k) == v for k, v in match.items())]


def activity(page: Page, server: str | None = None, method: str | None = None) -> list[str]:
    """Summary texts of the page's activity-log entries (optionally one server / method)."""
    selector = '[data-testid="activity-log"] [data-log-entry]'
    if server:
        selector += f'[data-log-server="{server}"]'
    if method:
        selector += f'[data-method="{method}"]'
    texts: list[str] = page.locator(selector).evaluate_all(
        "es => es.map((e) => e.querySelector('summary').textContent)"
    )
    return texts


def approval(page: Page, kind: str) -> Locator:
    card = page.locator(f'[data-approval][data-kind="{kind}"]')
    card.first.wait_for()
    return card.first


def click_in_panel(button: Locator) -> None:
    button.evaluate("b => b.scrollIntoView({block: 'center'})")  # clear of the docked activity log
    button.click()


# ---- the sandbox (mcp-apps §13.5) ------------------------------------------------------------------------------


def test_outer_sandbox_and_the_proxy_alone_renders_nothing(
    app_page: Page, browser: Browser, host: Webhost, probes: tuple[ProbeServer, ProbeServer]
) -> None:
    page = app_page
    frame_id = call_tool(page, "apps", "permissions_probe")
    frame = outer(page, frame_id)
    frame.and_(page.locator('[data-app-status="ready"]')).wait_for()
    sandbox = (frame.get_attribute("sandbox") or "").split()
    assert "allow-scripts" in sandbox
    for forbidden in (
        "allow-top-navigation",
        "allow-top-navigation-by-user-activation",
        "allow-popups",
        "allow-popups-to-escape-sandbox",
        "allow-downloads",
        "allow-modals",
    ):
        assert forbidden not in sandbox
    assert frame.evaluate("f => f.contentDocument === null")  # a cross-origin boundary
    # The inner frame gets no more than the outer one.
    inner_sandbox = (inner_iframe(page, frame_id).get_attribute("sandbox") or "").split()
    assert set(inner_sandbox) <= set(OUTER_SANDBOX.split())
    proxy_url = frame.get_attribute("src") or ""
    # /warm when the App opened in a warm proxy frame (test_apps_warm_frames.py), /proxy when cold.
    assert urlsplit(proxy_url).path in ("/proxy", "/warm")

    # The proxy URL opened at top level: served, but the script refuses to run unframed.
    fresh = browser.new_context()
    try:
        top = fresh.new_page()
        refusals: list[str] = []
        top.on("console", lambda m: refusals.append(m.text) if "refused" in m.text else None)
        response = top.goto(proxy_url)
        assert response is not None and response.status == 200
        wait_until(lambda: refusals, message="the proxy's refusal", page=top)
        assert "not framed" in refusals[0]
        assert top.evaluate("() => document.querySelectorAll('iframe').length") == 0
        assert top.evaluate("() => document.body.innerText.trim()") == ""

        # Framed by an origin that is not the host's: frame-ancestors stops it, nothing loads.
        allowed, _ = probes
        blocked_by_csp: list[str] = []
        top.on("console", lambda m: blocked_by_csp.append(m.text) if "frame-ancestors" in m.text else None)
        top.goto(f"{allowed.origin}/foreign-embedder")
        top.evaluate(
            "(src) => { const f = document.createElement('iframe'); f.src = src; document.body.append(f); }", proxy_url
        )
        wait_until(lambda: blocked_by_csp, message="a frame-ancestors refusal", page=top)
        assert "violates" in blocked_by_csp[0] and "has been blocked" in blocked_by_csp[0]
        wait_until(
            lambda: [f.url for f in top.frames[1:]] == ["chrome-error://chromewebdata/"],  # a blank error page
            message="the refused frame",
            page=top,
        )
    finally:
        fresh.close()


# ---- one test per attack ---------------------------------------------------------------------------------------


def test_navigating_the_top_page_fails(app_page: Page, host: Webhost) -> None:
    page = app_page
    requested: list[str] = []

    def record(route: Route) -> None:
        requested.append(route.request.url)
        route.fulfill(status=200, body="example")

    page.context.route("https://example.com/**", record)
    pages: list[Page] = []
    page.context.on("page", lambda p: pages.append(p))
    page.evaluate("() => { window.__notNavigated = true; }")  # gone if the top page navigated
    url_before = page.url.split("#")[0]  # the page keeps the open item in its own fragment
    frame_id = call_tool(page, "apps", "hostile_navigate_top")
    log = app_log(page, frame_id)
    assert "window.open returned null" in log or "window.open threw" in log
    assert "still here at" in log
    # The bound: a page of our own opened after the attempts is the first new page the context reports (the
    # browser reports pages in the order they open).
    with page.context.expect_page() as probe:
        page.evaluate("() => { window.open('about:blank#probe'); }")
    assert pages == [probe.value]
    probe.value.close()
    assert page.url.split("#")[0] == url_before
    assert page.evaluate("() => window.__notNavigated === true")
    assert not [u for u in requested if "pwned" in u]
    assert page.evaluate("() => document.querySelector('[data-testid=activity-log]') !== null")
    # The frame that tried it is on record with its policy.
    opened = audit(host, kind="app.open", frame=frame_id)
    assert opened and opened[0]["detail"]["resourceUri"] == "ui://apps/hostile-navigate.html"
    # The page still hosts it, and its proxy frame was not navigated away either.
    assert outer(page, frame_id).get_attribute("data-app-status") == "ready"
    proxy = outer(page, frame_id).element_handle().content_frame()
    assert proxy is not None and proxy.url == outer(page, frame_id).get_attribute("src")


def test_reading_the_host_dom_and_cookies_fails(app_page: Page, host: Webhost) -> None:
    page = app_page
    page.evaluate(
        f"() => {{ document.cookie = '{HOST_COOKIE}; path=/'; localStorage.setItem('wh-secret', '{HOST_STORAGE}'); }}"
    )
    host_cookies = [c["value"] for c in page.context.cookies()]  # the HttpOnly session cookie among them
    frame_id = call_tool(page, "apps", "hostile_read_parent")
    log = app_log(page, frame_id)
    for attempt in ("window.top.document.cookie", "window.top.location.href", "window.top.localStorage"):
        line = log_line(log, attempt + ":")
        assert "blocked (SecurityError)" in line, line
    for secret in (HOST_COOKIE, HOST_STORAGE, host.token, *host_cookies):
        assert secret not in log
    # What the app can read is its own sandbox origin (its proxy): never the host's.
    own = log_line(log, "own origin:")
    assert ".localhost:" in own and f"127.0.0.1:{host.port}" not in own
    assert audit(host, kind="app.open", frame=frame_id)


def test_forged_sandbox_messages_are_dropped_and_reported(app_page: Page, host: Webhost) -> None:
    page = app_page
    frame_id = call_tool(page, "apps", "hostile_forge_sandbox")
    log = app_log(page, frame_id)
    assert "pwned element present: false" in log
    assert "own document intact: true" in log
    assert "still answered: ok {}" in log
    # Never reached the host as a message of the frame (the proxy drops reserved methods) ...
    trace = page.evaluate("(f) => window.__page.apps.debug.trace(f)", frame_id)
    came_in = [t["msg"].get("method") for t in trace if t["dir"] == "in"]
    # The proxy's own ready, once: to the bridge (cold), or to the warm frame pool before the click (warm).
    # A prepared App's proxy said ready, and got its HTML, from the warm frame pool before the click.
    local = [t["msg"].get("method") for t in trace if t["dir"] == "local"]
    warm = [m for m in local if m in ("webhost/warm-frame", "webhost/prepared-frame")]
    assert came_in.count("ui/notifications/sandbox-proxy-ready") + len(warm) == 1
    assert "ui/notifications/sandbox-resource-ready" not in came_in
    sent = [t for t in trace if t["msg"].get("method") == "ui/notifications/sandbox-resource-ready"]
    assert len(sent) == (0 if "webhost/prepared-frame" in local else 1)
    # ... and what went around the proxy, or answered nothing, is reported: audit and activity log.
    violations = wait_until(lambda: audit(host, kind="app.violation", frame=frame_id), message="audited violations")
    summaries = " | ".join(v["summary"] for v in violations)
    assert "bypassed its sandbox proxy" in summaries
    assert "never sent" in summaries  # the forged responses
    assert all(v["decision"] == "blocked" and v["server"] == "apps" for v in violations)
    wait_until(lambda: activity(page, "apps", "app/violation"), message="the violation in the activity log")


def test_calling_another_servers_tools_never_reaches_it(app_page: Page, host: Webhost) -> None:
    page = app_page
    frame_id = call_tool(
        page, "apps", "hostile_cross_server", {"target": "echo", "server": "basic", "uri": "basic://text"}
    )
    log = app_log(page, frame_id, timeout=45)
    for label in ("plain name", "server/name", "server__name", "params.server", "_meta.server"):
        line = log_line(log, f"tools/call {label}:")
        assert ": error " in line and "cross-server" not in line.split(": error ", 1)[1], line
    read = log_line(log, "resources/read basic://text:")
    assert ": error " in read and "basic://text" in read
    # basic never saw a call (checked below, once the person's own call on basic is in its activity).
    refused = audit(host, kind="app.tools/call", frame=frame_id)
    assert len(refused) == 5 and all(e["decision"] == "refused" and e["server"] == "apps" for e in refused)
    assert {e["detail"]["tool"] for e in refused} == {"echo", "basic/echo", "basic__echo"}
    # Control, and the bound: a call the person makes on basic (another tool) does show up there, after anything
    # the app got through to basic would have (the log keeps the order things happened in).
    open_tool(page, "basic", "add")
    page.fill('[data-open-tool="add"] [name="a"]', "2")
    page.fill('[data-open-tool="add"] [name="b"]', "3")
    page.click('[data-open-tool="add"] [data-testid="call-tool"]')
    page.locator('[data-open-tool="add"] [data-testid="tool-result"][data-status="ok"]').wait_for()
    calls = wait_until(lambda: activity(page, "basic", "tools/call"), message="basic's own tools/call")
    assert calls and all("add" in c and "echo" not in c for c in calls), calls
    assert activity(page, "basic", "resources/read") == []


def test_model_only_tool_is_refused_and_audited(app_page: Page, host: Webhost) -> None:
    page = app_page
    frame_id = call_tool(page, "apps", "hostile_model_only")
    log = app_log(page, frame_id)
    assert ": error " in log_line(log, "tools/call model_only_ping:")
    assert "-32003" in log_line(log, "tools/call model_only_ping:")
    assert ": error " in log_line(log, "tools/call no_such_tool:")
    assert "app_only_ping: pong" in log_line(log, "tools/call app_only_ping:")
    calls = audit(host, kind="app.tools/call", frame=frame_id)
    by_tool = {(e["detail"] or {}).get("tool") or e["summary"]: e["decision"] for e in calls}
    assert by_tool["model_only_ping"] == "refused"
    assert by_tool["no_such_tool"] == "refused"
    assert any(e["decision"] == "allowed" and e["summary"] == "app_only_ping" for e in calls)
    # The server never saw the refused calls; it did see the allowed one.
    sent = activity(page, "apps", "tools/call")
    assert not [s for s in sent if "model_only_ping" in s or "no_such_tool" in s]
    wait_until(
        lambda: [s for s in activity(page, "apps", "tools/call") if "app_only_ping" in s],
        message="app_only_ping reached the server",
    )


def test_javascript_links_are_refused_never_executed(app_page: Page, host: Webhost) -> None:
    page = app_page
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    pages: list[Page] = []
    page.context.on("page", lambda p: pages.append(p))
    frame_id = call_tool(page, "apps", "hostile_links")
    log = app_log(page, frame_id)
    for line in [line for line in log.splitlines() if line.startswith("ui/open-link ")]:
        assert ": error " in line, line
    assert len([line for line in log.splitlines() if line.startswith("ui/open-link ")]) == 7
    # The bound: a dialog and a page of our own, after every link was answered, are the first the browser reports.
    page.evaluate("() => alert('probe')")  # dismissed by on_dialog
    with page.context.expect_page() as probe:
        page.evaluate("() => { window.open('about:blank#probe'); }")
    assert dialogs == ["probe"] and pages == [probe.value]
    probe.value.close()
    assert page.locator("[data-approval]").count() == 0  # refused before anyone is asked
    links = audit(host, kind="app.open-link", frame=frame_id)
    assert len(links) == 7 and all(e["decision"] == "refused" for e in links)
    schemes = [e["detail"]["scheme"] for e in links]
    assert schemes.count("javascript") == 2
    assert {"data", "vbscript", "file", "blob"} <= set(schemes)
    assert any("credentials" in e["summary"] for e in links)


def test_requests_before_initialize_are_logged_and_refused(app_page: Page, host: Webhost) -> None:
    page = app_page
    pages: list[Page] = []
    page.context.on("page", lambda p: pages.append(p))
    frame_id = call_tool(page, "apps", "hostile_early")
    log = app_log(page, frame_id)
    assert "before initialize tools/call: error" in log
    assert "before initialize resources/read: error" in log
    assert "before initialize ui/open-link: error" in log
    assert "before initialize ui/message: error" in log
    assert "after initialize ping: ok {}" in log
    assert pages == []
    assert page.locator('[data-approval][data-kind="open-link"]').count() == 0
    # Nothing host-initiated reached the app before it was initialized (only answers to its requests).
    trace = page.evaluate("(f) => window.__page.apps.debug.trace(f)", frame_id)
    initialized = next(i for i, t in enumerate(trace) if t["msg"].get("method") == "ui/notifications/initialized")
    early_out = [t["msg"] for t in trace[:initialized] if t["dir"] == "out" and "method" in t["msg"]]
    # (A warm proxy frame is told where the App's document is first: test_apps_warm_frames.py. A prepared
    # App got its HTML before the open, from the page's warm frames, not from this bridge:
    # test_apps_prepared.py.)
    prepared = any(t["dir"] == "local" and t["msg"].get("method") == "webhost/prepared-frame" for t in trace)
    assert [m["method"] for m in early_out if m["method"] != "ui/notifications/sandbox-webhost-app-document"] == (
        [] if prepared else ["ui/notifications/sandbox-resource-ready"]
    )
    # Logged: each early method once in the activity log; nothing reached the backend's policy.
    lifecycle = wait_until(
        lambda: [s for s in activity(page, "apps", "app/lifecycle") if "before ui/initialize" in s],
        message="early requests in the activity log",
    )
    for method in ("tools/call", "ui/open-link", "ui/message", "resources/read"):
        refused = f"request before ui/initialize refused: {method}"
        assert len([s for s in lifecycle if s.endswith(refused)]) == 1, lifecycle
    assert audit(host, kind="app.tools/call", frame=frame_id) == []
    assert audit(host, kind="app.open-link", frame=frame_id) == []
    assert audit(host, kind="app.message", frame=frame_id) == []


def test_server_content_never_runs_on_the_host_origin(app_page: Page) -> None:
    page = app_page
    open_tool(page, "apps", "hostile_content")
    view = page.locator('[data-open-server="apps"][data-open-tool="hostile_content"]')
    view.locator('[data-testid="call-tool"]').click()
    result = view.locator('[data-testid="tool-result"][data-status="ok"]')
    result.wait_for()
    assert "<script>" in (result.text_content() or "")  # the HTML text is shown as text
    found = result.evaluate("""(r) => [
      ...[...r.querySelectorAll("a[href], img[src], audio[src], video[src], source[src]")].map((el) => ({
        tag: el.tagName, url: el.href || el.src, download: el.hasAttribute("download")})),
      ...[...r.querySelectorAll("iframe, object, embed")].map((e) => ({tag: e.tagName, url: "", download: false})),
    ]""")
    assert [f for f in found if f["tag"] in ("IFRAME", "OBJECT", "EMBED")] == []
    images = [f for f in found if f["tag"] == "IMG"]
    assert len(images) == 2 and all(f["url"].startswith("data:image/") for f in images), images
    blobs = [f for f in found if f["url"].startswith("blob:")]
    assert len(blobs) == 2 and all(f["tag"] == "A" and f["download"] for f in blobs), found
    # Open every URL the page made, by its address, on its own: a blob: URL only downloads (it is
    # application/octet-stream), and no script may run on the host origin.
    for f in found:
        opened = page.context.new_page()
        if f["url"].startswith("blob:"):
            with opened.expect_download(timeout=5000):
                with contextlib.suppress(PlaywrightError):  # the download aborts the navigation
                    opened.goto(f["url"], timeout=5000)
        else:
            with contextlib.suppress(PlaywrightError):
                opened.goto(f["url"], timeout=5000)
            # The script would set the title as it runs, before the load `goto` waits for: no wait after it.
            assert opened.title() != "PWNED"
        opened.close()
    assert page.evaluate("() => [localStorage.getItem('pwned'), localStorage.getItem('pwned-api')]") == [None, None]


# Page-side probe for the flood test: calls basic's echo in a loop and measures the page's event-loop lag.
FLOOD_PROBE = """() => {
  const probe = {calls: [], lag: 0, stop: false};
  window.floodProbe = probe;
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    probe.lag = Math.max(probe.lag, now - last - 50);
    last = now;
  }, 50);
  (async () => {
    for (let i = 0; !probe.stop; i++) {
      const text = "during the flood " + i;
      const started = performance.now();
      try {
        const result = await window.__page.rpc.request("tools/call",
          {server: "basic", name: "echo", arguments: {text}, callId: "flood-probe-" + i});
        probe.calls.push({ok: result.content[0].text === text, ms: performance.now() - started});
      } catch (error) {
        probe.calls.push({ok: false, ms: performance.now() - started, error: String(error)});
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    clearInterval(tick);
  })();
}"""


def test_flood_keeps_the_page_responsive_and_is_reported(app_page: Page, host: Webhost) -> None:
    page = app_page
    # Calls on another server run the whole time, from before the flood until the app is done.
    page.evaluate(FLOOD_PROBE)
    frame_id = call_tool(page, "apps", "hostile_flood", {"count": 10000})
    inner(page, frame_id).locator("#log").get_by_text("sent 10000").wait_for(timeout=30_000)
    calls_at_burst = page.evaluate("() => window.floodProbe.calls.length")
    # Right after the app's burst (its dropped requests are answered at once), another server's tool works.
    started = time.monotonic()
    result = page.evaluate(
        "() => window.__page.rpc.request('tools/call', {server: 'basic', name: 'echo', "
        "arguments: {text: 'right after the burst'}, callId: 'flood-probe'})"
    )
    elapsed = time.monotonic() - started
    assert result["content"][0]["text"] == "right after the burst"
    assert elapsed < 8.0, elapsed
    log = app_log(page, frame_id, timeout=45)
    replies = re.search(r"ping replies (\d+), errors or timeouts (\d+)", log)
    assert replies and int(replies.group(2)) > 0  # the excess was dropped
    assert "still responsive: ok {}" in log
    probe = page.evaluate("() => { window.floodProbe.stop = true; return window.floodProbe; }")
    assert len(probe["calls"]) > calls_at_burst >= 1, probe["calls"]
    assert all(c["ok"] for c in probe["calls"]), [c for c in probe["calls"] if not c["ok"]]
    assert max(c["ms"] for c in probe["calls"]) < 8000, probe["calls"]
    assert probe["lag"] < 3000, probe["lag"]  # the page's event loop never froze
    violations = wait_until(lambda: audit(host, kind="app.violation", frame=frame_id), message="flood audited")
    assert any("messages per second" in v["summary"] for v in violations)
    assert len(violations) < 30  # counted and summarised, not one row per message
    wait_until(
        lambda: [s for s in activity(page, "apps", "app/violation") if "messages per second" in s],
        message="the flood in the activity log",
    )


def test_storage_is_per_server(app_page: Page, host: Webhost) -> None:
    page = app_page
    first = call_tool(page, "apps", "hostile_storage")
    first_log = app_log(page, first)
    first_origin = urlsplit(outer(page, first).get_attribute("src") or "").netloc
    second = call_tool(page, "second", "hostile_storage")
    second_log = app_log(page, second)
    second_origin = urlsplit(outer(page, second).get_attribute("src") or "").netloc
    assert first_origin != second_origin
    assert "planted-by-apps" in log_line(first_log, "localStorage keys after:")
    assert "planted-by-second" in log_line(second_log, "localStorage keys after:")
    for log, foreign in ((first_log, "planted-by-second"), (second_log, "planted-by-apps")):
        assert log_line(log, "foreign keys:") == "foreign keys: []"
        assert foreign not in log
    # The first app again: its own key survived (storage works), and still nothing of the other's.
    again = call_tool(page, "apps", "hostile_storage")
    again_log = app_log(page, again)
    assert "planted-by-apps" in log_line(again_log, "localStorage keys before:")
    assert log_line(again_log, "foreign keys:") == "foreign keys: []"
    assert "planted-by-second" not in again_log
    opened = {e["frame"]: e["detail"]["origin"] for e in audit(host, kind="app.open") if e["frame"] in (first, second)}
    assert opened[first] != opened[second]


# ---- CSP, permissions, visibility, approvals -------------------------------------------------------------------


def directives(header: str) -> dict[str, list[str]]:
    parsed = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            parsed[words[0]] = words[1:]
    return parsed


def test_csp_declared_origin_reached_undeclared_blocked(
    app_page: Page, host: Webhost, probes: tuple[ProbeServer, ProbeServer]
) -> None:
    page = app_page
    allowed, blocked = probes
    blocked_before = len(blocked.hits)
    frame_id = call_tool(page, "apps", "csp_probe")
    log = app_log(page, frame_id)
    assert f"fetch allowed {allowed.origin}/: reached" in log
    assert f"fetch blocked {blocked.origin}/: failed" in log
    assert f"violation connect-src {blocked.origin}" in log
    assert allowed.hits and len(blocked.hits) == blocked_before  # the blocked server never saw a request
    # The host heard of the violation (through the proxy) and audited it.
    csp_violations = wait_until(lambda: audit(host, kind="app.csp-violation", frame=frame_id), message="audited")
    assert any(blocked.origin in e["summary"] for e in csp_violations)

    # The Info view shows the effective CSP, which is what the sandbox serves and what was audited.
    app_panel = panel(page, frame_id)
    click_in_panel(app_panel.locator('[data-app-action="info"]'))
    shown = app_panel.locator('[data-app-view="info"] [data-info="csp-header"]').text_content() or ""
    connect = directives(shown)["connect-src"]
    assert allowed.origin in connect and blocked.origin not in shown
    opened = audit(host, kind="app.open", frame=frame_id)[0]
    assert opened["detail"]["csp"] == shown
    # The App's document: the proxy's when cold (the App inherits its policy), /app's when warm.
    src = inner_iframe(page, frame_id).get_attribute("src") or outer(page, frame_id).get_attribute("src") or ""
    parts = urlsplit(src)
    served = httpx.get(
        f"http://127.0.0.1:{host.sandbox_port}{parts.path}?{parts.query}", headers={"Host": parts.netloc}
    ).headers["content-security-policy"]
    assert {k: v for k, v in directives(served).items() if k != "frame-ancestors"} == {
        k: v for k, v in directives(shown).items() if k != "frame-ancestors"
    }
    assert host.base_url in directives(served)["frame-ancestors"]


def test_permissions_need_an_administrator_or_a_person(app_page: Page, host: Webhost) -> None:
    page = app_page

    def allow_of(frame_id: str) -> tuple[str, str]:
        return (
            outer(page, frame_id).get_attribute("allow") or "",
            inner_iframe(page, frame_id).get_attribute("allow") or "",
        )

    # Requested but granted by nobody: neither frame gets it.
    plain = call_tool(page, "apps", "permissions_probe")
    log = app_log(page, plain)
    assert allow_of(plain) == ("", "")
    assert "feature camera: false" in log and "feature clipboard-write: false" in log

    # Granted by configuration (webhost.servers.perm.permissions = ["camera"]): both frames, only camera.
    configured = call_tool(page, "perm", "permissions_probe")
    log = app_log(page, configured)
    assert allow_of(configured) == ("camera", "camera")
    assert "feature camera: true" in log and "feature clipboard-write: false" in log

    # Allowed by the person in the Info view: the app reopens with it, on both frames.
    frame_id = call_tool(page, "second", "permissions_probe")
    app_log(page, frame_id)
    app_panel = panel(page, frame_id)
    click_in_panel(app_panel.locator('[data-app-action="info"]'))
    row = app_panel.locator('[data-app-view="info"] tr[data-permission="clipboardWrite"]')
    assert row.get_attribute("data-requested") == "true" and row.get_attribute("data-granted") == "false"
    try:
        click_in_panel(row.locator('[data-app-action="allow-permission"]'))
        reopened = wait_until(lambda: [f for f in frame_ids(page) if f != frame_id], message="the reopened frame")[0]
        log = app_log(page, reopened)
        assert allow_of(reopened) == ("clipboard-write", "clipboard-write")
        assert "feature clipboard-write: true" in log and "feature camera: false" in log
        granted = audit(host, kind="app.permission", server="second")
        assert granted[0]["decision"] == "granted" and granted[0]["summary"] == "clipboardWrite"
        # Revoked in the Info view: gone again on the next frame.
        new_panel = panel(page, reopened)
        if new_panel.locator('[data-app-view="info"]').is_hidden():
            click_in_panel(new_panel.locator('[data-app-action="info"]'))
        click_in_panel(new_panel.locator('tr[data-permission="clipboardWrite"] [data-app-action="revoke-permission"]'))
        third = wait_until(lambda: [f for f in frame_ids(page) if f not in (frame_id, reopened)], message="reopen")[0]
        app_log(page, third)
        assert allow_of(third) == ("", "")
        assert audit(host, kind="app.permission", server="second")[0]["decision"] == "revoked"
    finally:
        page.evaluate(
            "() => window.__page.rpc.request('apps/permission', "
            "{server: 'second', permission: 'clipboardWrite', granted: false})"
        )


def test_visibility_in_the_page(app_page: Page) -> None:
    page = app_page
    app_only = page.locator('[data-server="apps"] [data-tool="app_only_ping"]')
    assert "app-only" in (app_only.text_content() or "")
    assert "app-only" not in (page.locator('[data-server="apps"] [data-tool="model_only_ping"]').text_content() or "")
    open_tool(page, "apps", "app_only_ping")
    view = page.locator('[data-open-server="apps"][data-open-tool="app_only_ping"]')
    assert view.locator('[data-testid="call-tool"]').count() == 0
    assert "app-only" in (view.text_content() or "")
    # A model-only tool is an ordinary tool for the person (the refusal to apps is tested above).
    open_tool(page, "apps", "model_only_ping")
    page.click('[data-testid="call-tool"]')
    result = page.locator('[data-testid="tool-result"][data-status="ok"]')
    result.wait_for()
    assert "model_only_ping: pong" in (result.text_content() or "")


def run_probe_step(page: Page, frame_id: str, step: str) -> Locator:
    """Click one bridge-probe button; return the locator of the result item it will add."""
    app = inner(page, frame_id)
    count = app.locator(f'#results li[data-probe="{step}"]').count()
    app.locator(f'button[data-run="{step}"]').click()
    return app.locator(f'#results li[data-probe="{step}"]').nth(count)


def open_manual_probe(page: Page, server: str) -> str:
    frame_id = call_tool(page, server, "bridge_probe", {"autorun": False})
    inner(page, frame_id).locator("#log").get_by_text("autorun off").wait_for(timeout=30_000)
    return frame_id


def test_ask_policy_deny_then_allow(app_page: Page, host: Webhost) -> None:
    page = app_page
    frame_id = open_manual_probe(page, "asker")
    item = run_probe_step(page, frame_id, "tools/call echo_app")
    card = approval(page, "tool-call")
    assert card.get_attribute("data-approval-server") == "asker"
    assert "echo_app" in (card.text_content() or "")
    card.locator('[data-action="deny"]').click()
    item.wait_for()
    assert item.get_attribute("data-status") == "error"
    assert "denied" in (item.text_content() or "")
    page.locator('[data-approval][data-kind="tool-call"]').wait_for(state="detached")

    item = run_probe_step(page, frame_id, "tools/call echo_app")
    approval(page, "tool-call").locator('[data-action="allow"]').click()
    item.wait_for()
    assert item.get_attribute("data-status") == "ok"
    assert "echo_app: from the probe" in (item.text_content() or "")
    decisions = [e["decision"] for e in audit(host, kind="approval", frame=frame_id)]
    assert decisions == ["allow", "deny"]
    calls = [e["decision"] for e in audit(host, kind="app.tools/call", frame=frame_id)]
    assert calls == ["allowed", "denied"]
    # The person's own call of the same tool is not an app call: no approval asked.
    result = page.evaluate(
        "() => window.__page.rpc.request('tools/call', {server: 'asker', name: 'echo_app', "
        "arguments: {text: 'from the person'}, callId: 'person-call'})"
    )
    assert result["content"][0]["text"] == "echo_app: from the person"
    assert page.locator("[data-approval]").count() == 0


def test_open_link_needs_consent_and_opens_with_noopener(app_page: Page, host: Webhost) -> None:
    page = app_page
    pages: list[Page] = []
    page.context.on("page", lambda p: pages.append(p))
    frame_id = open_manual_probe(page, "apps")

    item = run_probe_step(page, frame_id, "ui/open-link")
    card = approval(page, "open-link")
    assert "https://example.com/" in (card.text_content() or "")
    card.locator('[data-action="deny"]').click()
    item.wait_for()
    assert item.get_attribute("data-status") == "error"

    item = run_probe_step(page, frame_id, "ui/open-link")
    with page.context.expect_page() as new_page:
        approval(page, "open-link").locator('[data-action="allow"]').click()
    popup = new_page.value
    assert pages == [popup]  # the first page opened: none while the person decided, none on the denial
    # The tab opens blank and then follows the link (open-tab.js): its first load is about:blank's.
    popup.wait_for_url("https://example.com/", wait_until="commit")
    assert popup.evaluate("() => window.opener === null")
    item.wait_for()
    assert item.get_attribute("data-status") == "ok"
    assert page.url.split("#")[0] == f"{host.base_url}/"  # the page keeps the open item in its own fragment
    assert [e["decision"] for e in audit(host, kind="app.open-link", frame=frame_id)] == ["allow", "deny"]
    popup.close()
