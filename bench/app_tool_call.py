"""An MCP App's `tools/call` round trip through the whole chain, against the same call made by the page.

App path (headless Chromium, the real page): a script injected into a running App (the bridge probe of
`tests/servers/apps.py`, opened through the tool form with `autorun` off) posts `tools/call echo_app` to its
parent and times the answer: App → sandbox proxy (postMessage) → page bridge (source/origin checks, rate
limit) → `apps/request` over the WebSocket → webhost (frame binding, visibility, policy, audit row) → stdio
server → back the same way.

Direct path (same page, same run, interleaved ABBA): `window.__page.rpc.request("tools/call", ...)` for the
same tool: page → WebSocket → webhost → server → back, as the tool form does.

Both sides time in the browser with performance.now(). The page's activity log is cleared (untimed) before
every pair of calls: each call adds entries, and a long log slows every round trip the page makes (see
bench/README.md; `--keep-log` leaves it to grow and shows the effect). Two floors follow: an App `ping` (answered by the
page's bridge: the postMessage hops alone) and the page's `session/info` (the WebSocket hop alone). The App
side paces its requests to at most one per 8 ms, below the page's 200 messages/s per-frame budget (the wait
is not timed). Nothing is asserted: figures are printed.

    .venv/bin/python bench/app_tool_call.py [--quick] [--iterations N] [--warmup N] [--profile-webhost FILE]
                                            [--keep-log]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Summary,
    drift,
    environment,
    iterations_for,
    load_average,
    parse_args,
    print_profile,
    run_webhost,
    stdio_entry,
)
from app_ready import launch
from playwright.sync_api import Frame, Page, sync_playwright

SERVER = "apps"
TOOL = "echo_app"

# Injected into the App's own frame: one request to the host, timed from post to answer.
APP_HELPERS = """() => {
  window.benchId = 0;
  window.benchLast = 0;
  window.benchRequest = async (method, params) => {
    const wait = window.benchLast + 8 - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const id = "bench-" + (++window.benchId);
    const t0 = performance.now();
    window.benchLast = t0;
    return await new Promise((resolve, reject) => {
      const onMessage = (event) => {
        if (event.source !== window.parent) return;
        const m = event.data;
        if (!m || m.jsonrpc !== "2.0" || m.id !== id) return;
        const ms = performance.now() - t0;
        window.removeEventListener("message", onMessage);
        if (m.error) reject(new Error(JSON.stringify(m.error))); else resolve({ms, result: m.result});
      };
      window.addEventListener("message", onMessage);
      window.parent.postMessage({jsonrpc: "2.0", id, method, params}, "*");
    });
  };
}"""

PAGE_HELPERS = """() => {
  window.benchCalls = 0;
  window.benchDirect = async (method, params) => {
    const t0 = performance.now();
    const result = await window.__page.rpc.request(method, params);
    return {ms: performance.now() - t0, result};
  };
}"""

CLEAR_LOG = "() => document.querySelector('[data-testid=activity-log] [data-action=clear-log]').click()"
APP_CALL = "(text) => window.benchRequest('tools/call', {name: 'echo_app', arguments: {text}})"
DIRECT_CALL = """(text) => window.benchDirect('tools/call',
  {server: 'apps', name: 'echo_app', arguments: {text}, callId: 'bench-' + (++window.benchCalls)})"""


def open_probe(page: Page, base_url: str, token: str) -> Frame:
    """Log in, open the bridge probe from the tool form (autorun off) and return its App's frame."""
    page.goto(f"{base_url}/?token={token}")
    page.wait_for_url(f"{base_url}/")
    page.wait_for_selector(f'[data-server="{SERVER}"][data-status="connected"]', timeout=60_000)
    page.evaluate(
        'async () => { const main = document.querySelector(\'script[type="module"][src*="/js/main.js"]\'); '
        "window.__page = (await import(main.src)).page; }"
    )
    page.wait_for_function("() => window.__page.rpc.state === 'open'")
    page.click(f'[data-server="{SERVER}"] [data-tool="bridge_probe"]')
    view = page.locator('[data-open-tool="bridge_probe"]')
    view.locator('[name="autorun"]').set_checked(False)
    view.locator('[data-testid="call-tool"]').click()
    outer = page.locator('iframe[data-app-frame][data-app-status="ready"]')
    outer.wait_for(timeout=60_000)
    page.frame_locator("iframe[data-app-frame]").frame_locator("iframe").locator("#log").get_by_text(
        "autorun off"
    ).wait_for(timeout=60_000)
    handle = outer.element_handle()
    proxy = handle.content_frame() if handle else None
    inner_handle = proxy.locator("iframe").element_handle() if proxy else None
    app = inner_handle.content_frame() if inner_handle else None
    if app is None:
        raise RuntimeError("could not reach the App's frame")
    return app


def check(outcome: dict[str, Any], text: str, side: str) -> float:
    content = outcome["result"].get("content") or [{}]
    if content[0].get("text") != f"echo_app: {text}":
        raise RuntimeError(f"{side}: unexpected result {outcome['result']}")
    ms: float = outcome["ms"]
    return ms


def main() -> int:
    keep_log = "--keep-log" in sys.argv  # ours, not _common's
    args = parse_args(
        __doc__.splitlines()[0] if __doc__ else "app_tool_call", [a for a in sys.argv[1:] if a != "--keep-log"]
    )
    n = iterations_for(args, 400, 10)
    print(f"app_tool_call: {environment()}")
    with (
        run_webhost({SERVER: stdio_entry("apps")}, profile=args.profile_webhost) as host,
        sync_playwright() as playwright,
    ):
        browser = launch(playwright)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(60_000)
            app = open_probe(page, host.base_url, host.token)
            app.evaluate(APP_HELPERS)
            page.evaluate(PAGE_HELPERS)
            print(
                f"{args.warmup} warm-up and {n} timed calls per side, ABBA; tool {TOOL} on {SERVER} (stdio); "
                f"activity log {'left to grow' if keep_log else 'cleared before each pair'}"
            )

            def via_app(i: int) -> float:
                return check(app.evaluate(APP_CALL, f"a{i}"), f"a{i}", "app")

            def via_page(i: int) -> float:
                return check(page.evaluate(DIRECT_CALL, f"p{i}"), f"p{i}", "page")

            for i in range(args.warmup):
                via_app(i)
                via_page(i)
            app_ms: list[float] = []
            page_ms: list[float] = []
            for i in range(n):
                if not keep_log:
                    page.evaluate(CLEAR_LOG)
                for side in ("app", "page") if i % 2 == 0 else ("page", "app"):
                    if side == "app":
                        app_ms.append(via_app(i))
                    else:
                        page_ms.append(via_page(i))
            entries = page.evaluate("() => document.querySelectorAll('[data-log-entry]').length")
            page.evaluate(CLEAR_LOG)
            ping_ms = [app.evaluate("() => window.benchRequest('ping', {}).then((o) => o.ms)") for _ in range(n)]
            info_ms = [
                page.evaluate("() => window.benchDirect('session/info', {}).then((o) => o.ms)") for _ in range(n)
            ]
            problems = page.evaluate(
                "() => window.__page.apps.list().flatMap((a) => window.__page.apps.debug.bridge(a.frameId).problems)"
            )
        finally:
            browser.close()
    report(app_ms, page_ms, ping_ms, info_ms)
    if keep_log:
        print(f"activity log entries after the timed calls: {entries}")
    if problems:
        print(f"warning: the page reported problems with the App during the run: {problems}")
    if args.profile_webhost:
        print_profile(args.profile_webhost)
    return 0


def report(app_ms: list[float], page_ms: list[float], ping_ms: list[float], info_ms: list[float]) -> None:
    app, page = Summary.of([ms / 1000 for ms in app_ms]), Summary.of([ms / 1000 for ms in page_ms])
    ping, info = Summary.of([ms / 1000 for ms in ping_ms]), Summary.of([ms / 1000 for ms in info_ms])
    print()
    print(
        f"App tools/call round trip ({TOOL}): App → proxy → page → webhost → server and back, "
        "vs the page's own tools/call"
    )
    print(f"{'path':<44}{'n':>5}{'median':>12}{'p99':>12}")
    rows = [
        ("page rpc tools/call (baseline)", page),
        ("App tools/call (whole chain)", app),
        ("floor: App ping (answered by the page)", ping),
        ("floor: page session/info (WebSocket only)", info),
    ]
    for name, s in rows:
        print(f"{name:<44}{s.n:>5}{s.median_ms:>9.2f} ms{s.p99_ms:>9.2f} ms")
    print(
        f"ratio (median) {app.median_ms / page.median_ms:.2f}x, p99 {app.p99_ms / page.p99_ms:.2f}x; "
        f"overhead (median) {app.median_ms - page.median_ms:+.2f} ms"
    )
    app_drift, page_drift = drift(app_ms), drift(page_ms)
    if app_drift is not None and page_drift is not None:
        print(f"drift (median of the last quarter / the first): App {app_drift:.2f}x, page {page_drift:.2f}x")
    print(f"{load_average()} at the end of the run")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
