"""The sandbox proxy in a real Chromium: a tiny host page on 127.0.0.1 frames the proxy on a per-server
`<label>.localhost` origin, hands it an App, and the App reports what it could and could not do."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from sandbox_proxy.app import create_sandbox_app
from tests.support.browser import chromium_launch_kwargs
from webhost.apps.csp import build_policy
from webhost.apps.origins import sandbox_label, sandbox_origin
from webhost.apps.proxy_token import issue_proxy_token, proxy_url

pytestmark = pytest.mark.e2e

SECRET = b"browser-test-secret-0123456789abcdef"

# The App: handshake, then try storage, eval, a declared and an undeclared fetch, its frame's sandbox,
# the top window, and smuggling a reserved sandbox message; report everything as notifications/message.
APP_HTML = """<!doctype html><html><head><title>probe</title></head><body><p id="t">app</p><script>
const post = (m) => window.parent.postMessage(m, "*");
async function probe() {
  const out = {origin: location.origin};
  try { localStorage.setItem("k", "v"); out.storage = localStorage.getItem("k"); }
  catch (e) { out.storage = "error:" + e.name; }
  try { eval("1"); out.eval = "allowed"; } catch (e) { out.eval = "blocked"; }
  try { await fetch("UNDECLARED"); out.undeclared = "allowed"; } catch (e) { out.undeclared = "blocked"; }
  try { out.declared = (await (await fetch("DECLARED")).json()).ok ? "allowed" : "odd"; }
  catch (e) { out.declared = "blocked"; }
  out.frameSandbox = window.frameElement ? window.frameElement.getAttribute("sandbox") : null;
  try { void window.top.location.href; out.top = "accessible"; } catch (e) { out.top = "blocked"; }
  post({jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: {html: "x"}});
  post("not json-rpc"); post({jsonrpc: "1.0", method: "old"}); post({jsonrpc: "2.0"});
  post({jsonrpc: "2.0", method: "notifications/message", params: {level: "info", data: out}});
}
window.addEventListener("message", (e) => {
  if (e.source !== window.parent) return;
  if (e.data && e.data.id === 1 && e.data.result) {
    post({jsonrpc: "2.0", method: "ui/notifications/initialized"});
  } else if (e.data && e.data.method === "ui/notifications/tool-input") {
    probe();
  }
});
post({jsonrpc: "2.0", id: 1, method: "ui/initialize",
      params: {appInfo: {name: "probe", version: "0"}, appCapabilities: {}, protocolVersion: "2026-01-26"}});
</script></body></html>"""

# The host page: the §13.3 host-side checks, the handshake, and a log the test reads.
HOST_JS = """
const frame = document.createElement("iframe");
window.hostLog = []; window.dropped = [];
frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
frame.setAttribute("data-app-frame", "");
frame.dataset.appStatus = "loading";
window.addEventListener("message", (e) => {
  if (e.source !== frame.contentWindow || e.origin !== CFG.sandboxOrigin) { window.dropped.push(e.data); return; }
  const m = e.data; window.hostLog.push(m);
  const send = (msg) => frame.contentWindow.postMessage(msg, CFG.sandboxOrigin);
  if (m.method === "ui/notifications/sandbox-proxy-ready") {
    send({jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready",
          params: {html: CFG.appHtml, sandbox: CFG.sandbox, permissions: {}}});
  } else if (m.method === "ui/initialize") {
    send({jsonrpc: "2.0", id: m.id, result: {protocolVersion: "2026-01-26",
          hostInfo: {name: "test-host", version: "0"}, hostCapabilities: {}, hostContext: {}}});
  } else if (m.method === "ui/notifications/initialized") {
    frame.dataset.appStatus = "ready";
    send({jsonrpc: "2.0", method: "ui/notifications/tool-input", params: {arguments: {}}});
  } else if (m.method === "notifications/message") {
    window.appReport = m.params.data;
  }
});
// The frame's load comes after its scripts ran (proxy.js, a module, posts its ready as it runs): a test waits for it
// to bound "no ready came".
frame.addEventListener("load", () => { frame.dataset.loaded = "true"; });
frame.src = CFG.proxyUrl;
document.body.appendChild(frame);
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class _Server:
    """uvicorn in a background thread, stopped on close."""

    def __init__(self, app: Any, port: int) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off", ws="none")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:  # until it listens, or its thread ended (no time limit of its own)
            if not self.thread.is_alive():
                raise RuntimeError("server did not start")
            time.sleep(0.02)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@dataclass
class Env:
    host_port: int
    sandbox_port: int
    host_origin: str
    pages: dict[str, str]

    def page_url(self, name: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.host_port}/page/{name}"

    def add_page(self, name: str, *, server: str, csp_meta: object, sandbox: str, label: str | None = None) -> str:
        """A host page framing `server`'s proxy (or, with `label`, a token presented on another origin)."""
        own = sandbox_label(SECRET, server)
        policy = build_policy(csp_meta, frame_ancestors=[self.host_origin])
        token = issue_proxy_token(SECRET, label=own, csp=policy.header, host_origins=[self.host_origin])
        origin = sandbox_origin(label or own, "localhost", self.sandbox_port)
        app_html = APP_HTML.replace("UNDECLARED", f"{self.host_origin}/cors").replace(
            "DECLARED", f"http://localhost:{self.host_port}/cors"
        )
        cfg = {"sandboxOrigin": origin, "proxyUrl": proxy_url(origin, token), "appHtml": app_html, "sandbox": sandbox}
        data = json.dumps(cfg).replace("</", "<\\/")
        self.pages[name] = f"<!doctype html><html><body><script>const CFG = {data};{HOST_JS}</script></body></html>"
        return proxy_url(origin, token)


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    host_port, sandbox_port = _free_port(), _free_port()
    host_origin = f"http://127.0.0.1:{host_port}"
    pages: dict[str, str] = {}

    async def page(request: Request) -> Response:
        return HTMLResponse(pages[request.path_params["name"]])

    async def cors(request: Request) -> Response:
        return JSONResponse({"ok": True}, headers={"Access-Control-Allow-Origin": "*"})

    host_app = Starlette(routes=[Route("/page/{name}", page), Route("/cors", cors)])
    sandbox_app = create_sandbox_app(secret=SECRET, domain="localhost", host_origins=[host_origin])
    servers = [_Server(host_app, host_port), _Server(sandbox_app, sandbox_port)]
    try:
        yield Env(host_port, sandbox_port, host_origin, pages)
    finally:
        for server in servers:
            server.close()


@pytest.fixture(scope="module")
def chromium_browser(env: Env) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(headless=True, **chromium_launch_kwargs(p))
        try:
            yield chromium
        finally:
            chromium.close()


OPAQUE = "allow-scripts allow-forms"
WIDE = "allow-scripts allow-same-origin allow-forms allow-popups allow-top-navigation allow-modals"


@pytest.mark.parametrize("inner", ["same-origin", "opaque"])
def test_app_runs_under_the_declared_policy(env: Env, chromium_browser: Any, inner: str) -> None:
    # The host asks for more than the proxy allows; the proxy strips it to its allow-list.
    env.add_page(
        inner,
        server="weather",
        csp_meta={"connectDomains": [f"http://localhost:{env.host_port}"]},
        sandbox=WIDE if inner == "same-origin" else OPAQUE,
    )
    page = chromium_browser.new_page()
    page.goto(env.page_url(inner))
    page.wait_for_selector('iframe[data-app-frame][data-loaded="true"]', state="attached")
    # What the negative tests below rely on: by its frame's load, the proxy's ready has reached the host.
    assert page.evaluate("window.hostLog[0] && window.hostLog[0].method") == "ui/notifications/sandbox-proxy-ready"
    page.wait_for_selector('iframe[data-app-frame][data-app-status="ready"]', timeout=15000)
    page.wait_for_function("window.appReport !== undefined", timeout=15000)
    report = page.evaluate("window.appReport")
    label = sandbox_label(SECRET, "weather")
    common = {"eval": "blocked", "undeclared": "blocked", "declared": "allowed", "top": "blocked"}
    if inner == "same-origin":
        # document.write: the App runs on the server's origin, with storage, under the header CSP.
        assert report == {
            **common,
            "origin": f"http://{label}.localhost:{env.sandbox_port}",
            "storage": "v",
            "frameSandbox": "allow-scripts allow-same-origin allow-forms",
        }
    else:
        # srcdoc: an opaque origin without storage, still under the inherited header CSP.
        assert report == {**common, "origin": "null", "storage": "error:SecurityError", "frameSandbox": None}
    log = page.evaluate("window.hostLog")
    methods = [m.get("method") for m in log]
    assert methods[:3] == ["ui/notifications/sandbox-proxy-ready", "ui/initialize", "ui/notifications/initialized"]
    # The App's smuggled reserved message and its non-JSON-RPC posts never reached the host.
    assert "ui/notifications/sandbox-resource-ready" not in methods
    assert all(isinstance(m, dict) and m.get("jsonrpc") == "2.0" and m.get("method") != "old" for m in log)
    assert page.evaluate("window.dropped") == []
    assert page.evaluate("document.querySelector('iframe').contentDocument") is None
    if inner == "same-origin":  # the proxy can watch the App's document only when it shares its origin
        page.wait_for_function(
            "window.hostLog.some(m => m.method === 'ui/notifications/sandbox-csp-violation')", timeout=5000
        )
        violations = [m["params"] for m in page.evaluate("window.hostLog") if m.get("method", "").endswith("violation")]
        assert any(v["effectiveDirective"] == "connect-src" for v in violations)
    page.close()


def test_proxy_at_top_level_renders_nothing(env: Env, chromium_browser: Any) -> None:
    url = env.add_page("top", server="weather", csp_meta=None, sandbox="allow-scripts allow-same-origin")
    page = chromium_browser.new_page()
    response = page.goto(url)
    assert response is not None and response.status == 200
    page.wait_for_load_state("load")
    assert page.evaluate("document.querySelectorAll('iframe').length") == 0
    assert page.evaluate("document.body.innerText.trim()") == ""
    page.close()


def test_foreign_embedder_gets_nothing(env: Env, chromium_browser: Any) -> None:
    # The same page served from http://localhost:<port>, which is not a configured host origin:
    # frame-ancestors blocks the proxy, so no sandbox-proxy-ready ever arrives.
    env.add_page("foreign", server="weather", csp_meta=None, sandbox="allow-scripts allow-same-origin")
    page = chromium_browser.new_page()
    page.goto(env.page_url("foreign", host="localhost"))
    page.wait_for_selector('iframe[data-app-frame][data-loaded="true"]', state="attached")  # blocked, but loaded
    assert page.evaluate("document.querySelectorAll('iframe[data-app-frame]').length") == 1
    assert page.evaluate("window.hostLog") == []
    page.close()


def test_token_for_another_server_is_refused(env: Env, chromium_browser: Any) -> None:
    env.add_page("swap", server="weather", csp_meta=None, sandbox="allow-scripts", label=sandbox_label(SECRET, "files"))
    page = chromium_browser.new_page()
    page.goto(env.page_url("swap"))
    page.wait_for_selector('iframe[data-app-frame][data-loaded="true"]', state="attached")  # refused, but loaded
    assert page.evaluate("document.querySelectorAll('iframe[data-app-frame]').length") == 1
    assert page.evaluate("window.hostLog") == []
    page.close()
