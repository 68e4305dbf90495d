"""admin_view: the admin view drawing 1,000 people with 30 days of usage, against a bare table of the same cells.

In the real page (Playwright, headless Chromium, token mode: an admin), the view's own module draws a
synthetic `admin/overview` answer (1,000 people, 2 models, 30 days, one usage row per person, day and model:
60,000 rows) into the document: from the call to the last row in the DOM, laid out and the next frame painted.
Baseline, interleaved in the same run: one plain <table> with the same rows and cells built with the page's
`h()` and appended at once, laid out and painted: what any table of that size costs the browser.
"""

from __future__ import annotations

import argparse
import tempfile

from _common import environment, iterations_for, load_average, median, parse_args, run_webhost, stdio_entry
from app_ready import launch
from playwright.sync_api import sync_playwright

SETUP = """async ([people, days]) => {
  const until = new Date(); const day = (i) => new Date(until - i * 86400000).toISOString().slice(0, 10);
  const usage = [];
  for (let p = 0; p < people; p++) for (let d = 0; d < days; d++) for (const model of ["big", "free"]) {
    const cost = model === "big" ? 0.01 : null;
    usage.push({ person: `p${p}`, day: day(d), model, input: 1000 + p, output: 200 + d, cost });
  }
  window.__overview = {
    since: day(days - 1), until: day(0), usage,
    people: Array.from({ length: people }, (_, p) => ({ id: `p${p}`, name: `Person ${p}`, email: `p${p}@example.com`,
      role: "member", groups: ["staff", `team-${p % 20}`], firstSeen: 1.7e9, lastSeen: 1.7e9 + p })),
    models: [{ id: "big", label: "Big", price: { input: 3, output: 15 } }, { id: "free", label: "Free", price: null }],
    access: { servers: { basic: "everyone" }, models: { big: "everyone", free: "everyone" } },
  };
  window.__admin = await import("/static/js/components/admin-view.js");
  window.__html = await import("/static/js/html.js");
}"""

# The view's rpc never opens: its own refresh waits, and `render` draws the synthetic answer.
ADMIN_ONCE = """async () => {
  const rpc = { opened: () => new Promise(() => {}), request: async () => ({}) };
  const view = new window.__admin.AdminView(rpc);
  document.body.append(view.el);
  const t0 = performance.now();
  await view.render(window.__overview);
  view.el.getBoundingClientRect();
  await new Promise((r) => requestAnimationFrame(() => r()));
  const ms = performance.now() - t0;
  const rows = view.el.querySelectorAll("[data-person]").length;
  view.el.remove(); view.dispose();
  if (rows !== window.__overview.people.length) throw new Error(`drew ${rows} rows`);
  return ms;
}"""

BARE_ONCE = """async () => {
  const { h } = window.__html; const o = window.__overview;
  const t0 = performance.now();
  const rows = o.people.map((p) => h("tr", {}, h("th", { text: p.name }), h("td", { text: p.role }),
    h("td", { text: p.groups.join(", ") }), h("td", { text: String(p.lastSeen) }),
    h("td", { text: "1" }), h("td", { text: "2" }), h("td", { text: "3" })));
  const table = h("table", {}, h("tbody", {}, rows));
  document.body.append(table);
  table.getBoundingClientRect();
  await new Promise((r) => requestAnimationFrame(() => r()));
  const ms = performance.now() - t0;
  table.remove();
  return ms;
}"""


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--people", type=int, default=1000, help="people in the synthetic answer (default 1000)")
    parser.add_argument("--days", type=int, default=30, help="days of usage (default 30)")


def main() -> int:
    args = parse_args(__doc__.splitlines()[0] if __doc__ else "admin_view", extra=add_args)
    n = iterations_for(args, 40, 10)
    print(f"admin_view: {environment()}; {args.people} people x {args.days} days x 2 models")
    with tempfile.TemporaryDirectory(prefix="webhost-bench-admin-"):
        with run_webhost({"basic": stdio_entry("basic")}) as host, sync_playwright() as pw:
            browser = launch(pw)
            try:
                page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                page.set_default_timeout(60_000)
                page.goto(f"{host.base_url}/?token={host.token}")
                page.wait_for_url(f"{host.base_url}/")
                page.evaluate(SETUP, [args.people, args.days])
                for _ in range(args.warmup):
                    page.evaluate(ADMIN_ONCE)
                    page.evaluate(BARE_ONCE)
                view: list[float] = []
                bare: list[float] = []
                for index in range(n):
                    for side in ("view", "bare") if index % 2 == 0 else ("bare", "view"):
                        (view if side == "view" else bare).append(
                            page.evaluate(ADMIN_ONCE if side == "view" else BARE_ONCE)
                        )
            finally:
                browser.close()
    print(f"{n} iterations per side, ABBA; {load_average()}")
    print(f"admin view, drawn and painted: median {median(view):7.1f} ms, worst {max(view):7.1f} ms")
    print(f"bare table, same rows:         median {median(bare):7.1f} ms, worst {max(bare):7.1f} ms")
    print(f"ratio (medians): {median(view) / median(bare):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
