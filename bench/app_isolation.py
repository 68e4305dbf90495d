"""The cost of isolation alone: an App in a pre-loaded cross-site frame against the same App in a same-process iframe.

No webhost here. Both sides run in one page of headless Chromium, interleaved, with the App of
`app_ready.py` (`@modelcontextprotocol/server-basic-react`, npm peers needed):

- **same-process** (app_ready.py's baseline): `iframe.srcdoc = html`, answer `ui/initialize`, wait for
  `ui/notifications/initialized`;
- **cross-site, pre-loaded**: a frame on another site (so in its own renderer process, as a per-server
  sandbox origin is), loaded before the clock starts, receives the HTML by `postMessage` and writes it into an
  inner same-origin frame with `document.write`: a warm proxy frame with no webhost, no token and no /app
  request. Messages are relayed both ways.

- **cross-site, process kept**: the same, with one more frame of that site kept in the page the whole
  time, so each new frame reuses a renderer process that already ran the App.

What the second side costs over the first is what running the App isolated from the page costs on this
machine in a renderer process of its own that is new each time; the third shows that the cost is the
new process (its caches cold), not the isolation: a warm proxy frame made after the last App closed is
such a new process, and a prepared App (docs/security.md) takes the boot off the click altogether.
Nothing is asserted.

    .venv/bin/python bench/app_isolation.py [--iterations N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import app_ready as ar
from _common import environment, load_average
from playwright.sync_api import sync_playwright

# A cross-site frame (its own renderer process) already loaded, which receives the HTML by postMessage and
# writes it into an inner same-origin frame: our warm path without webhost, the token or /app.
RELAY_DOC = """<!doctype html><html><body><script>
window.addEventListener("message", (e) => {
  if (e.source === parent && e.data && e.data.html) {
    const f = document.createElement("iframe"); f.style.cssText = "width:100%;height:600px;border:0";
    document.body.append(f); const d = f.contentDocument; d.open(); d.write(e.data.html); d.close();
    window.__inner = f; return;
  }
  if (window.__inner && e.source === window.__inner.contentWindow) parent.postMessage(e.data, "*");
  else if (e.source === parent && window.__inner) window.__inner.contentWindow.postMessage(e.data, "*");
});
parent.postMessage({ready: true}, "*");
</script></body></html>"""
XPROC_ONCE = """async () => {
  const frame = document.createElement("iframe");
  frame.style.cssText = "width: 100%; height: 600px; border: 0";
  await new Promise((resolve) => {
    const onReady = (e) => {
      if (e.source !== frame.contentWindow || !e.data || !e.data.ready) return;
      window.removeEventListener("message", onReady);
      resolve();
    };
    window.addEventListener("message", onReady);
    frame.src = "http://relay.test/"; document.body.append(frame);
  });
  const t0 = performance.now();
  const done = new Promise((resolve) => {
    const onMessage = (event) => {
      if (event.source !== frame.contentWindow) return;
      const m = event.data;
      if (!m || m.jsonrpc !== "2.0" || typeof m.method !== "string") return;
      const reply = (result) => frame.contentWindow.postMessage({jsonrpc: "2.0", id: m.id, result}, "*");
      if (m.method === "ui/initialize") {
        reply({protocolVersion: "2026-01-26", hostInfo: {name: "b", version: "1"},
               hostCapabilities: {}, hostContext: {}});
      } else if (m.method === "ui/notifications/initialized") {
        window.removeEventListener("message", onMessage);
        resolve(performance.now() - t0);
      }
      else if (m.id !== undefined) reply({});
    };
    window.addEventListener("message", onMessage);
  });
  frame.contentWindow.postMessage({html: window.appHtml}, "*");
  const ms = await done; frame.remove(); return ms;
}"""


# A frame of the relay's site that stays: the site's renderer process outlives each timed frame.
KEEP_PROCESS = """async () => {
  const keep = document.createElement("iframe");
  keep.style.cssText = "position: absolute; left: -9999px; width: 10px; height: 10px";
  keep.src = "http://relay.test/?keep";
  document.body.append(keep);
  await new Promise((resolve) => { keep.onload = resolve; });
}"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "app_isolation")
    parser.add_argument("--iterations", type=int, default=30, help="timed runs per side (default 30)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2 runs per side")
    args = parser.parse_args()
    if args.quick:
        args.iterations = 2
    if not ar.REACT_HTML.exists():
        raise SystemExit("app_isolation: the npm peers are not installed (scripts/install-test-deps)")
    print(f"app_isolation: {environment()}")
    html = ar.REACT_HTML.read_text(encoding="utf-8")
    with sync_playwright() as pw:
        browser = ar.launch(pw)
        base = ar.baseline_page(browser, html)
        base.context.route(
            "http://relay.test/**", lambda r: r.fulfill(status=200, content_type="text/html", body=RELAY_DOC)
        )
        for _ in range(3):
            base.evaluate(ar.BASELINE_ONCE)
            base.evaluate(XPROC_ONCE)
        same: list[float] = []
        cross: list[float] = []
        kept: list[float] = []
        # Same-process and cross-site interleaved first; then the site's process is kept, and the
        # same-process side goes on interleaved with the kept one (so both phases have a baseline).
        for index in range(args.iterations):
            for side in ("same", "cross") if index % 2 == 0 else ("cross", "same"):
                (same if side == "same" else cross).append(
                    base.evaluate(ar.BASELINE_ONCE if side == "same" else XPROC_ONCE)
                )
        base.evaluate(KEEP_PROCESS)
        base.evaluate(XPROC_ONCE)
        same_later: list[float] = []
        for index in range(args.iterations):
            for side in ("same", "kept") if index % 2 == 0 else ("kept", "same"):
                (same_later if side == "same" else kept).append(
                    base.evaluate(ar.BASELINE_ONCE if side == "same" else XPROC_ONCE)
                )
        browser.close()
    a, b = statistics.median(same), statistics.median(cross)
    a2, c = statistics.median(same_later), statistics.median(kept)
    print(f"same-process srcdoc (app_ready.py's baseline)          median {a:7.1f} ms")
    print(f"pre-loaded cross-site frame, HTML by postMessage, write median {b:7.1f} ms  ({b / a:.2f}x)")
    print(f"same-process srcdoc, second phase                      median {a2:7.1f} ms")
    print(f"the same cross-site frame, its site's process kept     median {c:7.1f} ms  ({c / a2:.2f}x)")
    print(f"{load_average()} at the end of the run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
