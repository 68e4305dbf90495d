"""The page itself: click Call on `echo` → the result shown, timed in the browser, against bare WebSocket round trips.

webhost side: the real page (headless Chromium through Playwright), the `echo` tool of `tests/servers/basic.py`
(stdio) opened in its tool view, its form filled once; each sample clicks `[data-testid=call-tool]` and waits
until the new `[data-testid=tool-result]` has `data-status="ok"` (a MutationObserver, `performance.now()` in
the page). "painted" waits one more animation frame and a task after that, the earliest moment the browser
can have shown it (headless Chromium draws at 60 Hz, so this adds up to ~17 ms of frame alignment).

Baselines, from the same page in the same run, interleaved ABBA: a bare `WebSocket` of its own to webhost's
`/ws` (the page's cookie, the page's origin) sending the same `tools/call` (the backend's work without the
page's), and `session/info` (the WebSocket hop alone, no MCP server).

The activity log is first filled to `--log-entries` (default 2000: the log keeps that many, its DOM the
newest 500) by calls the page makes through its own RPC client, untimed; the page's activity log then keeps
growing during the run, as it does for a person. Nothing is asserted.

    .venv/bin/python bench/page_call.py [--quick] [--iterations N] [--warmup N] [--log-entries N] [--collapse-log]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import Summary, environment, iterations_for, load_average, median, parse_args, run_webhost, stdio_entry
from app_ready import launch
from playwright.sync_api import Page, sync_playwright

TEXT = "hello, webhost"

# Click Call, resolve when the new result is in the DOM with status ok, then after the next frame.
CLICK_ONCE = """async () => {
  const view = document.querySelector('[data-open-server="basic"][data-open-tool="echo"]');
  const before = new Set(view.querySelectorAll('[data-testid="tool-result"]'));
  const button = view.querySelector('[data-testid="call-tool"]');
  const t0 = performance.now();
  const shown = await new Promise((resolve, reject) => {
    const check = () => {
      const r = [...view.querySelectorAll('[data-testid="tool-result"]')].find((x) => !before.has(x));
      if (!r || !r.dataset.status || r.dataset.status === "pending") return false;
      observer.disconnect();
      if (r.dataset.status !== "ok" || !r.textContent.includes(__TEXT__)) reject(new Error(r.textContent));
      else resolve(performance.now() - t0);
      return true;
    };
    const observer = new MutationObserver(check);
    observer.observe(view, {subtree: true, childList: true, characterData: true, attributes: true,
                            attributeFilter: ["data-status"]});
    button.click();
  });
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  return [shown, performance.now() - t0];
}""".replace("__TEXT__", json.dumps(TEXT))

OPEN_BARE = """async () => {
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  const waiting = new Map();
  ws.onmessage = (event) => {
    const msg = JSON.parse(event.data);  // every frame is parsed, as the page does
    const done = msg.id !== undefined && waiting.get(msg.id);
    if (done) { waiting.delete(msg.id); done(msg); }
  };
  let next = 1;
  window.__bare = (method, params) => new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    ws.send(JSON.stringify({jsonrpc: "2.0", id, method, params}));
  });
  window.__bareCall = 0;
}"""

BARE_ONCE = """async (method) => {
  const params = method === "tools/call"
    ? {server: "basic", name: "echo", arguments: {text: __TEXT__}, callId: `bare-${++window.__bareCall}`}
    : {};
  const t0 = performance.now();
  const msg = await window.__bare(method, params);
  const ms = performance.now() - t0;
  if (msg.error) throw new Error(JSON.stringify(msg.error));
  return ms;
}""".replace("__TEXT__", json.dumps(TEXT))

FILL_LOG = """async (entries) => {
  const count = () => window.__page.activity?.count?.() ?? null;
  let i = 0;
  // Two entries per call (request and response); a few calls in flight at once.
  const calls = Math.ceil(entries / 2);
  const run = async () => {
    while (i < calls) {
      i += 1;
      await window.__page.rpc.request("tools/call",
        {server: "basic", name: "echo", arguments: {text: "fill " + i}, callId: `fill-${i}`});
    }
  };
  await Promise.all([run(), run(), run(), run()]);
  return count();
}"""


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--log-entries",
        type=int,
        default=2000,
        metavar="N",
        help="activity log entries made before the timed run (default 2000)",
    )
    parser.add_argument(
        "--collapse-log",
        action="store_true",
        help="hide the activity log (its Hide button) before the run: what the log's rendering costs",
    )


def page_for(browser: Any, base_url: str, token: str) -> Page:
    page: Page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{base_url}/?token={token}")
    page.wait_for_url(f"{base_url}/")
    page.wait_for_selector('[data-server="basic"][data-status="connected"]', timeout=60_000)
    page.evaluate(
        'async () => { const main = document.querySelector(\'script[type="module"][src*="/js/main.js"]\'); '
        "window.__page = (await import(main.src)).page; }"
    )
    page.wait_for_function("() => window.__page.rpc.state === 'open'")
    page.click('[data-server="basic"] [data-tool="echo"]')
    view = page.locator('[data-open-server="basic"][data-open-tool="echo"]')
    view.locator('[name="text"]').fill(TEXT)
    page.evaluate(OPEN_BARE)
    return page


def log_entries(page: Page) -> tuple[int, int]:
    """(entries the log shows it has, rows in its DOM)"""
    counted: str = page.locator('[data-testid="activity-log"] .log-count').first.text_content() or "0"
    rows: int = page.locator('[data-testid="activity-log"] [data-log-entry]').count()
    digits = "".join(ch for ch in counted if ch.isdigit())
    return int(digits or 0), rows


def main() -> int:
    args = parse_args(__doc__.splitlines()[0] if __doc__ else "page_call", extra=add_args)
    n = iterations_for(args, 300, 10)
    print(f"page_call: {environment()}")
    with tempfile.TemporaryDirectory(prefix="webhost-bench-page-"):
        with (
            run_webhost({"basic": stdio_entry("basic")}, profile=args.profile_webhost) as host,
            sync_playwright() as pw,
        ):
            browser = launch(pw)
            try:
                page = page_for(browser, host.base_url, host.token)
                page.evaluate(FILL_LOG, args.log_entries)
                page.wait_for_timeout(200)  # the log's last coalesced flush
                if args.collapse_log:
                    page.click('[data-testid="activity-log"] button[aria-expanded="true"]')
                before = log_entries(page)
                print(
                    f"activity log before the run: {before[0]} entries ({before[1]} rows in its DOM); "
                    f"{args.warmup} warm-up and {n} timed iterations per side, ABBA"
                )
                for _ in range(args.warmup):
                    page.evaluate(CLICK_ONCE)
                    page.evaluate(BARE_ONCE, "tools/call")
                    page.evaluate(BARE_ONCE, "session/info")
                shown: list[float] = []
                painted: list[float] = []
                bare_call: list[float] = []
                bare_info: list[float] = []
                for index in range(n):
                    order = ("page", "bare") if index % 2 == 0 else ("bare", "page")
                    for side in order:
                        if side == "page":
                            dom, frame = page.evaluate(CLICK_ONCE)
                            shown.append(dom)
                            painted.append(frame)
                        else:
                            bare_call.append(page.evaluate(BARE_ONCE, "tools/call"))
                            bare_info.append(page.evaluate(BARE_ONCE, "session/info"))
                after = log_entries(page)
            finally:
                browser.close()
    report(shown, painted, bare_call, bare_info, before, after)
    return 0


def report(
    shown: list[float],
    painted: list[float],
    bare_call: list[float],
    bare_info: list[float],
    before: tuple[int, int],
    after: tuple[int, int],
) -> None:
    rows = [
        ("page: click → result in the DOM", shown),
        ("page: click → next frame painted", painted),
        ("bare WebSocket tools/call echo (baseline)", bare_call),
        ("bare WebSocket session/info (floor)", bare_info),
    ]
    print()
    print("click → result shown for echo, in the page (performance.now()), against a bare WebSocket from it")
    print(f"{'row':<44}{'n':>5}{'median':>11}{'p99':>11}{'ratio':>8}")
    base = median(bare_call)
    for name, values in rows:
        s = Summary.of([v / 1000 for v in values])
        print(f"{name:<44}{s.n:>5}{s.median_ms:>8.2f} ms{s.p99_ms:>8.2f} ms{s.median_ms / base:>7.2f}x")
    print("ratio = row median / bare tools/call median; goal: click → result under 20 ms median")
    print(f"activity log: {before[0]} entries before, {after[0]} after ({after[1]} rows in its DOM)")
    print(f"{load_average()} at the end of the run")


if __name__ == "__main__":
    sys.exit(main())
