"""Click → result shown, in a real Chromium: the workbench's everyday loop, timed the way the MCP Inspector's
"Execute Tool" was (shared/reference/landscape.md, "Measured").

One `webhost serve` with tests/servers/basic.py over stdio; the page signs in, opens `echo`, and then, inside
the page (no Playwright round trip in the timing), N times: write a new text, click Call, wait until the
new result element says `ok` with that text, and one animation frame (the result painted). Prints the
median and p99 in ms. A figure, not a test: it never fails on the numbers.

    .venv/bin/python tools/click_to_result.py [--iterations N] [--warmup N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright

from tests.support.browser import chromium_launch_kwargs
from tests.support.process import run_webhost, stdio_server
from webhost.testing.page import WebhostPage

LOOP_JS = """async ([n]) => {
  const view = () => document.querySelector('.tool-view:not([data-parked])[data-open-tool="echo"]');
  const input = view().querySelector('[name="text"]');
  const button = view().querySelector('[data-testid="call-tool"]');
  const times = [];
  for (let i = 0; i < n; i++) {
    const text = `run ${i} ${Math.random()}`;
    input.value = text;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    const shown = new Promise((resolve) => {
      const done = () => {
        const r = view().querySelector('[data-testid="tool-result"]');
        return r && r.dataset.status === "ok" && r.textContent.includes(text);
      };
      const observer = new MutationObserver(() => {
        if (done()) { observer.disconnect(); requestAnimationFrame(() => resolve(performance.now())); }
      });
      observer.observe(view(), { subtree: true, childList: true, attributes: true, characterData: true });
    });
    const t0 = performance.now();
    button.click();
    times.push((await shown) - t0);
  }
  return times;
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, run_webhost(Path(tmp), {"basic": stdio_server("basic")}) as host:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(headless=True, **chromium_launch_kwargs(playwright))
            ui = WebhostPage(browser.new_context().new_page())
            ui.sign_in(host)
            ui.wait_connected("basic")
            ui.open_tool("basic", "echo")
            ui.page.evaluate(LOOP_JS, [args.warmup])
            times = sorted(ui.page.evaluate(LOOP_JS, [args.iterations]))
            browser.close()
    p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
    print(f"click → result shown, echo, {len(times)} runs: median {statistics.median(times):.1f} ms, p99 {p99:.1f} ms")


if __name__ == "__main__":
    main()
