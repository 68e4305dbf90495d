"""How long an MCP App takes to be ready in webhost, against the same HTML in a bare iframe.

webhost path (headless Chromium, the real page): from the click on the tool form's Call button
(`[data-testid=call-tool]`) of an app tool to `iframe[data-app-frame][data-app-status="ready"]`, that is
`apps/open` over the WebSocket (webhost reads the `ui://` resource from the server, builds the CSP and the
signed proxy token) in parallel with the tool call, the sandbox proxy page loaded from its per-server
origin, the HTML posted to the proxy and written into the inner frame, the App booting, `ui/initialize`
answered by the page and `ui/notifications/initialized` received.

Baseline (same browser, same run, interleaved ABBA): a plain page that already holds the same HTML puts it
into an iframe with `srcdoc`, answers `ui/initialize` minimally and waits for
`ui/notifications/initialized`: the App's own parse-and-boot cost, the floor any host pays.

The App is `@modelcontextprotocol/server-basic-react` (a ~414 KB React App, tool `get-time`, over stdio).
Without the npm peers (tests/peers) a generated ~400 KB App on a small Python server stands in.
Both sides measure in the page (performance.now()); the webhost side also splits its time into phases
from the bridge's trace. Nothing is asserted: figures are printed.

    .venv/bin/python bench/app_ready.py [--quick] [--iterations N] [--warmup N] [--profile-webhost FILE]
                                        [--generated-app]   (the stand-in App even with the peers installed)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import (
    PYTHON,
    ROOT,
    SERVERS,
    Summary,
    environment,
    iterations_for,
    load_average,
    median,
    parse_args,
    print_profile,
    run_webhost,
)
from playwright.sync_api import Browser, Page, sync_playwright

PEERS = ROOT / "tests" / "peers"
REACT_BIN = PEERS / "node_modules" / ".bin" / "mcp-server-basic-react"
REACT_HTML = PEERS / "node_modules" / "@modelcontextprotocol" / "server-basic-react" / "dist" / "mcp-app.html"
TOOL = "get-time"

# Stand-in App server when the npm peers are missing: one tool `get-time` whose App is ~400 KB of
# parsed JavaScript with a minimal bridge (ui/initialize, then initialized, then draws the result).
GENERATED_SERVER = r'''
import datetime, json, sys
sys.path.insert(0, %(servers)r)
from _support import add_common_args, advertise_extensions_on_initialize, serve
import argparse
from mcp.server import MCPServer
from mcp.server.apps import Apps

URI = "ui://bench/padded.html"
rows = [{"i": i, "s": "row %%05d of the padding that makes this app weigh about 400 KB" %% i} for i in range(4720)]
HTML = """<!doctype html><html><head><meta charset="utf-8"><title>padded</title></head><body>
<p>Server Time: <code id="t">…</code></p><script>
const DATA = """ + json.dumps(rows) + """;
let id = 0;
function post(m) { window.parent.postMessage(m, "*"); }
window.addEventListener("message", (e) => {
  const m = e.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.id === 1 && m.result) { post({jsonrpc: "2.0", method: "ui/notifications/initialized"}); return; }
  if (m.method === "ui/notifications/tool-result") document.getElementById("t").textContent = m.params.content[0].text;
  if (m.method && m.id !== undefined) post({jsonrpc: "2.0", id: m.id, result: {}});
});
post({jsonrpc: "2.0", id: ++id, method: "ui/initialize", params: {appInfo: {name: "padded", version: "1"},
  appCapabilities: {}, protocolVersion: "2026-01-26"}});
window.rows = DATA.length;
</script></body></html>"""
apps = Apps()

@apps.tool(resource_uri=URI, name="get-time", title="Get Time", description="The server time (ISO 8601).")
def get_time() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat()

apps.add_html_resource(URI, HTML)
parser = argparse.ArgumentParser()
add_common_args(parser)
mcp = MCPServer("bench-padded-app", version="1.0.0", extensions=[apps],
                middleware=[advertise_extensions_on_initialize({"io.modelcontextprotocol/ui": {}})])
serve(mcp, parser.parse_args())
'''

# One webhost iteration, in the page: click Call, resolve when the frame is ready; phases from the trace.
WEBHOST_ONCE = """async () => {
  if (document.querySelector("iframe[data-app-frame]")) throw new Error("a frame from the last run is still open");
  const button = document.querySelector('[data-open-tool="get-time"] [data-testid="call-tool"]');
  window.__benchOpenDone = null;
  const wall0 = Date.now();
  const t0 = performance.now();
  const ready = new Promise((resolve, reject) => {
    const observer = new MutationObserver(() => {
      const frame = document.querySelector("iframe[data-app-frame]");
      const status = frame ? frame.dataset.appStatus : "";
      if (status === "ready") {
        observer.disconnect();
        resolve([performance.now() - t0, frame.dataset.frameId]);
      } else if (status === "error") {
        observer.disconnect();
        reject(new Error("app error"));
      }
    });
    observer.observe(document.body,
      {subtree: true, childList: true, attributes: true, attributeFilter: ["data-app-status"]});
  });
  button.click();
  const [ms, frameId] = await ready;
  const trace = window.__page.apps.debug.trace(frameId);
  const at = (dir, method) => {
    const t = trace.find((x) => x.dir === dir && x.msg.method === method);
    return t ? t.ts : NaN;
  };
  // A warm open (apps/warm-frames.js) takes a proxy that said ready before the click: the trace has
  // a local "webhost/warm-frame" entry instead of the proxy's ready.
  const preparedAt = at("local", "webhost/prepared-frame");
  if (!Number.isNaN(preparedAt)) {
    const initialized = at("in", "ui/notifications/initialized");
    return {ms, frameId, warm: true, prepared: true, phases: {
      "apps/open answered": window.__benchOpenDone - wall0,
      "prepared frame adopted, held ui/initialize answered": preparedAt - window.__benchOpenDone,
      "ui/initialize answered to initialized": initialized - preparedAt,
    }};
  }
  const warmAt = at("local", "webhost/warm-frame");
  const warm = !Number.isNaN(warmAt);
  const proxyReady = warm ? warmAt : at("in", "ui/notifications/sandbox-proxy-ready");
  const htmlSent = at("out", "ui/notifications/sandbox-resource-ready");
  const initialize = at("in", "ui/initialize");
  const initialized = at("in", "ui/notifications/initialized");
  return {ms, frameId, warm, phases: {
    "apps/open answered": window.__benchOpenDone - wall0,
    "proxy page loaded (0 when warm)": proxyReady - window.__benchOpenDone,
    "HTML posted to the proxy": htmlSent - proxyReady,
    "app document, HTML written, boot to ui/initialize": initialize - htmlSent,
    "ui/initialize to initialized": initialized - initialize,
  }};
}"""

# Record when apps/open resolves (the page's RPC client, patched once; no other effect).
PATCH_RPC = """() => {
  const rpc = window.__page.rpc;
  const request = Object.getPrototypeOf(rpc).request;
  rpc.request = function (method, params) {
    const p = request.call(this, method, params);
    if (method === "apps/open") p.then(() => { window.__benchOpenDone = Date.now(); }, () => {});
    return p;
  };
}"""

# One baseline iteration: the same HTML into a bare iframe; answer ui/initialize; wait for initialized.
BASELINE_ONCE = """async () => {
  const frame = document.createElement("iframe");
  frame.style.cssText = "width: 100%; height: 600px; border: 0";
  const t0 = performance.now();
  const done = new Promise((resolve) => {
    const onMessage = (event) => {
      if (event.source !== frame.contentWindow) return;
      const m = event.data;
      if (!m || m.jsonrpc !== "2.0" || typeof m.method !== "string") return;
      const reply = (result) => frame.contentWindow.postMessage({jsonrpc: "2.0", id: m.id, result}, "*");
      if (m.method === "ui/initialize") {
        reply({protocolVersion: "2026-01-26", hostInfo: {name: "baseline", version: "1.0.0"},
               hostCapabilities: {}, hostContext: {}});
      } else if (m.method === "ui/notifications/initialized") {
        window.removeEventListener("message", onMessage);
        resolve(performance.now() - t0);
      } else if (m.id !== undefined) {
        reply({});
      }
    };
    window.addEventListener("message", onMessage);
  });
  frame.srcdoc = window.appHtml;
  document.body.append(frame);
  const ms = await done;
  frame.remove();
  return ms;
}"""


def launch(playwright: Any) -> Browser:
    """Headless Chromium the way the e2e tests choose it (tests/e2e/conftest.py)."""
    import pytest

    from tests.support.browser import chromium_launch_kwargs

    try:
        kwargs = chromium_launch_kwargs(playwright)
    except pytest.skip.Exception as exc:
        raise SystemExit(f"app_ready: {exc}") from None
    browser: Browser = playwright.chromium.launch(headless=True, **kwargs)
    return browser


def webhost_page(browser: Browser, base_url: str, token: str, server: str) -> Page:
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{base_url}/?token={token}")
    page.wait_for_url(f"{base_url}/")
    page.wait_for_selector(f'[data-server="{server}"][data-status="connected"]', timeout=60_000)
    page.evaluate(
        'async () => { const main = document.querySelector(\'script[type="module"][src*="/js/main.js"]\'); '
        "window.__page = (await import(main.src)).page; }"
    )
    page.wait_for_function("() => window.__page.rpc.state === 'open'")
    page.evaluate(PATCH_RPC)
    page.click(f'[data-server="{server}"] [data-tool="{TOOL}"]')
    page.locator('[data-open-tool="get-time"] [data-testid="call-tool"]').wait_for()
    return page


# A cold open: drop the page's warm proxy frames first (a frame no longer in the page is never taken).
DROP_WARM = """() => {
  for (const f of document.querySelectorAll("iframe[data-warm-frame]:not([data-app-frame])")) f.remove();
}"""
# A warm open: wait (untimed) until the frame the last open asked for is ready, as it is for a person who
# takes a moment between two runs.
WAIT_WARM = "() => window.__page.apps.debug.warmOrigins().length > 0"
# A prepared open: the App was written into the warm frame ahead and booted to its ui/initialize (held).
WAIT_PREPARED = "() => window.__page.apps.debug.preparedApps().some((a) => a.booted)"
# A warm open without a prepared App: preparing off (the prepared App dropped), then a plain warm frame.
UNPREPARE = f"() => {{ window.__page.apps.debug.setPreparing(false); window.__page.apps.warm('app', '{TOOL}'); }}"
PREPARE = f"() => {{ window.__page.apps.debug.setPreparing(true); window.__page.apps.warm('app', '{TOOL}'); }}"


def webhost_once(page: Page, *, mode: str = "prepared") -> dict[str, Any]:
    """One timed open: `prepared` (the App booted ahead), `warm` (a proxy frame loaded ahead) or `cold`."""
    # A fresh activity log each time (untimed): a long one slows the page down (see bench/README.md).
    page.evaluate("() => document.querySelector('[data-testid=activity-log] [data-action=clear-log]').click()")
    if mode == "cold":
        page.evaluate(DROP_WARM)
    elif mode == "warm":
        page.evaluate(UNPREPARE)
        page.wait_for_function(WAIT_WARM, timeout=10_000)
    else:
        if not page.evaluate(WAIT_PREPARED):
            page.evaluate(PREPARE)
        page.wait_for_function(WAIT_PREPARED, timeout=20_000)
    outcome: dict[str, Any] = page.evaluate(WEBHOST_ONCE)
    # Let the call finish (the form is busy until then), then close the App and wait for its frame to go.
    page.locator('[data-testid="tool-result"][data-status="ok"]').wait_for()
    page.evaluate("(f) => window.__page.apps.close(f, 'benchmark')", outcome["frameId"])
    page.locator("iframe[data-app-frame]").wait_for(state="detached")
    return outcome


def baseline_page(browser: Browser, html: str) -> Page:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    body = "<!doctype html><html><head><title>baseline</title></head><body></body></html>"
    context.route(
        "http://baseline.localhost/", lambda route: route.fulfill(status=200, content_type="text/html", body=body)
    )
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto("http://baseline.localhost/")
    page.evaluate("(html) => { window.appHtml = html; }", html)
    return page


def main() -> int:
    # --generated-app (ours, not _common's): use the stand-in App even when the npm peers are installed.
    generated = "--generated-app" in sys.argv
    args = parse_args(
        __doc__.splitlines()[0] if __doc__ else "app_ready", [a for a in sys.argv[1:] if a != "--generated-app"]
    )
    warmup = args.warmup if "--warmup" in sys.argv else (1 if args.quick else 5)
    n = iterations_for(args, 40, 2)
    print(f"app_ready: {environment()}")
    with tempfile.TemporaryDirectory(prefix="webhost-bench-app-") as tmp:
        if REACT_BIN.exists() and REACT_HTML.exists() and not generated:
            entry: dict[str, Any] = {"command": str(REACT_BIN), "args": ["--stdio"], "cwd": str(PEERS)}
            html = REACT_HTML.read_text(encoding="utf-8")
            label = f"@modelcontextprotocol/server-basic-react App ({len(html.encode()):,} bytes), stdio"
        else:
            script = Path(tmp) / "padded_app.py"
            script.write_text(GENERATED_SERVER % {"servers": str(SERVERS)}, encoding="utf-8")
            entry = {"command": PYTHON, "args": [str(script)]}
            html = ""  # read through webhost below
            label = "generated App (npm peers not installed)"
        with run_webhost({"app": entry}, profile=args.profile_webhost) as host, sync_playwright() as playwright:
            browser = launch(playwright)
            try:
                page = webhost_page(browser, host.base_url, host.token, "app")
                if not html:
                    html = page.evaluate(
                        "() => window.__page.rpc.request('apps/open', {server: 'app', tool: 'get-time'}).then((d) => "
                        "{ window.__page.rpc.request('apps/close', {frameId: d.frameId}); return d.html; })"
                    )
                    label = f"generated stand-in App ({len(html.encode()):,} bytes), stdio"
                base = baseline_page(browser, html)
                # A warm open loads the App's own document (/app?p=<the open's token>, its policy in the header)
                # into the proxy before writing the HTML; a cold one writes into the proxy's document, no request.
                timing_side = {"side": ""}
                app_documents: list[float] = []

                def app_document(request: Any) -> None:
                    if timing_side["side"] == "warm" and urlsplit(request.url).path == "/app":
                        app_documents.append(float(request.timing["responseEnd"]))

                page.on("requestfinished", app_document)
                print(f"app: {label}; {warmup} warm-up and {n} timed iterations per side, ABBA")
                for _ in range(warmup):
                    for mode in ("prepared", "warm", "cold"):
                        webhost_once(page, mode=mode)
                    base.evaluate(BASELINE_ONCE)
                sides = ("prepared", "warm", "cold", "baseline")
                samples: dict[str, list[float]] = {side: [] for side in sides}
                phases: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
                as_asked = dict.fromkeys(sides, 0)  # opens that went the way their side asked
                for index in range(n):
                    for side in sides[index % 4 :] + sides[: index % 4]:  # rotated: none always goes first
                        if side == "baseline":
                            base.bring_to_front()
                            samples[side].append(base.evaluate(BASELINE_ONCE))
                            continue
                        page.bring_to_front()
                        timing_side["side"] = side
                        outcome = webhost_once(page, mode=side)
                        timing_side["side"] = ""
                        samples[side].append(outcome["ms"])
                        went = "prepared" if outcome.get("prepared") else "warm" if outcome["warm"] else "cold"
                        as_asked[side] += went == side
                        for phase, value in outcome["phases"].items():
                            phases[side].setdefault(phase, []).append(value)
            finally:
                browser.close()
    titles = {
        "prepared": "webhost, prepared App",
        "warm": "webhost, warm proxy frame",
        "cold": "webhost, cold (no warm frame)",
    }
    for side, title in titles.items():
        report(label, samples[side], samples["baseline"], phases[side], title=title)
        print(f"{title}: {as_asked[side]} of {len(samples[side])} timed opens went that way")
    if app_documents:
        print(
            f"warm opens: the App's document (/app) request, start to response end: median "
            f"{median(app_documents):.1f} ms, max {max(app_documents):.1f} ms (n={len(app_documents)}); part of the "
            "warm side's 'app document, HTML written, boot to ui/initialize', which a cold open does not pay"
        )
    if args.profile_webhost:
        print_profile(args.profile_webhost)
    return 0


def report(
    label: str,
    webhost_ms: list[float],
    baseline_ms: list[float],
    phases: dict[str, list[float]],
    *,
    title: str = "webhost (whole chain)",
) -> None:
    web = Summary.of([ms / 1000 for ms in webhost_ms])
    bare = Summary.of([ms / 1000 for ms in baseline_ms])
    print()
    print(f"App ready: click → data-app-status=ready (webhost) vs srcdoc → initialized (bare iframe); {label}")
    print(f"{'side':<34}{'n':>5}{'median':>12}{'p99':>12}")
    print(f"{'bare iframe (baseline)':<34}{bare.n:>5}{bare.median_ms:>9.1f} ms{bare.p99_ms:>9.1f} ms")
    print(f"{title:<34}{web.n:>5}{web.median_ms:>9.1f} ms{web.p99_ms:>9.1f} ms")
    print(
        f"ratio (median) {web.median_ms / bare.median_ms:.2f}x, p99 {web.p99_ms / bare.p99_ms:.2f}x; "
        f"overhead (median) {web.median_ms - bare.median_ms:+.1f} ms"
    )
    print("webhost phases (medians, ms; Date.now() resolution):")
    for phase, values in phases.items():
        clean = [v for v in values if v == v]  # drop NaN
        if clean:
            print(f"  {phase:<52}{median(clean):>8.1f}")
    print(f"{load_average()} at the end of the run")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
