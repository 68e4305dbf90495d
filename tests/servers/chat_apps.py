"""Test MCP server for the chat (contract §8): a tool with an MCP App that records everything the host sends it,
an app-only tool, and plain tools.

- `show_board(title, items)`: its app (`ui://chat/board.html`) writes every notification it gets into
  `<pre id="log">` (`partial {...}`, `input {...}`, `result {...}`, `cancelled ...`) and counts them on
  `<body data-partials data-inputs data-results data-cancelled>`; once it has a result it sends
  `ui/update-model-context` ("Board TITLE shows N items"); its button `#say` sends `ui/message`
  ("Tell me more about TITLE") and logs the answer (`message ok` / `message error ...`). The tool's result
  has `structuredContent` with a marker the model must never see (`STRUCTURED-ONLY-MARKER`).
- `board_refresh`: app-only (`visibility: ["app"]`): never offered to the model.
- `lookup(q)`: a plain tool; `slow(seconds)`: sleeps (for Stop); `calls()`: how many times each tool ran.

Dual-era `MCPServer`; `python tests/servers/chat_apps.py` (stdio) or `--http PORT`.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

import anyio
from _support import add_common_args, advertise_extensions_on_initialize, serve
from mcp.server import MCPServer
from mcp.server.apps import Apps
from mcp.types import CallToolResult, TextContent

UI_EXTENSION = "io.modelcontextprotocol/ui"
BOARD_URI = "ui://chat/board.html"
MARKER = "STRUCTURED-ONLY-MARKER"

BOARD_HTML = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Board</title>
<style>body{font:13px system-ui,sans-serif;margin:8px} pre{white-space:pre-wrap;background:#f4f4f4;padding:6px}</style>
</head><body data-partials="0" data-inputs="0" data-results="0" data-cancelled="0">
<h1 id="title">Board</h1><ul id="items"></ul>
<button id="say" type="button">Ask the model about this board</button>
<pre id="log"></pre>
<script>
const logEl = document.getElementById("log");
function log(line) { logEl.textContent += line + "\n"; }
function count(name) { document.body.dataset[name] = String(Number(document.body.dataset[name]) + 1); }
let nextId = 1;
const pending = new Map();
let title = "";
function post(message) { window.parent.postMessage(message, "*"); }
function request(method, params) {
  const id = nextId++;
  post({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
function draw(args) {
  title = String(args.title ?? "");
  document.getElementById("title").textContent = title || "Board";
  const items = Array.isArray(args.items) ? args.items : [];
  document.getElementById("items").replaceChildren(...items.map((t) => {
    const li = document.createElement("li");
    li.textContent = String(t);
    return li;
  }));
}
window.addEventListener("message", async (event) => {
  if (event.source !== window.parent) return;
  const msg = event.data;
  if (!msg || msg.jsonrpc !== "2.0") return;
  if (typeof msg.method !== "string") {
    const entry = pending.get(msg.id);
    if (!entry) return;
    pending.delete(msg.id);
    if (msg.error) entry.reject(msg.error); else entry.resolve(msg.result);
    return;
  }
  if (msg.id !== undefined && msg.id !== null) {
    post({ jsonrpc: "2.0", id: msg.id, result: {} });
    return;
  }
  const p = msg.params || {};
  if (msg.method === "ui/notifications/tool-input-partial") {
    // When the first one came (epoch ms), for bench/chat.py's "first argument fragment → first partial".
    const now = performance.timeOrigin + performance.now();
    if (!document.body.dataset.firstPartialAt) document.body.dataset.firstPartialAt = String(now);
    count("partials"); log("partial " + JSON.stringify(p.arguments)); draw(p.arguments || {});
  } else if (msg.method === "ui/notifications/tool-input") {
    count("inputs"); log("input " + JSON.stringify(p.arguments)); draw(p.arguments || {});
  } else if (msg.method === "ui/notifications/tool-result") {
    count("results"); log("result " + JSON.stringify(p.structuredContent ?? null));
    const items = Array.isArray(p.structuredContent?.items) ? p.structuredContent.items.length : 0;
    try {
      const text = `Board ${title} shows ${items} items`;
      await request("ui/update-model-context", { content: [{ type: "text", text }] });
      log("context ok");
    } catch (error) {
      log("context error " + JSON.stringify(error));
    }
  } else if (msg.method === "ui/notifications/tool-cancelled") {
    count("cancelled"); log("cancelled " + JSON.stringify(p.reason ?? ""));
  }
});
document.getElementById("say").addEventListener("click", async () => {
  try {
    await request("ui/message", { role: "user", content: [{ type: "text", text: `Tell me more about ${title}` }] });
    log("message ok");
  } catch (error) {
    log("message error " + JSON.stringify(error));
  }
});
(async () => {
  await request("ui/initialize", {
    appInfo: { name: "board", version: "1.0.0" }, appCapabilities: {}, protocolVersion: "2026-01-26",
  });
  post({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
  log("initialized");
})();
</script></body></html>
"""


def build_server() -> MCPServer:
    apps = Apps()
    ran: Counter[str] = Counter()

    @apps.tool(resource_uri=BOARD_URI, title="Board", description="Shows a titled list of items on a board.")
    def show_board(title: str, items: list[str]) -> CallToolResult:
        ran["show_board"] += 1
        return CallToolResult(
            content=[TextContent(type="text", text=f"Board {title} with {len(items)} items")],
            structured_content={"title": title, "items": items, "note": MARKER},
        )

    @apps.tool(resource_uri=BOARD_URI, visibility=["app"], title="Refresh", description="Apps only.")
    def board_refresh() -> str:
        ran["board_refresh"] += 1
        return "refreshed"

    apps.add_html_resource(BOARD_URI, BOARD_HTML)

    mcp = MCPServer(
        "chat-apps",
        title="webhost chat test server",
        version="1.0.0",
        extensions=[apps],
        middleware=[advertise_extensions_on_initialize({UI_EXTENSION: {}})],
    )

    @mcp.tool(description="Looks a word up.")
    def lookup(q: str) -> str:
        ran["lookup"] += 1
        return f"{q}: a word in the test dictionary"

    @mcp.tool(description="Sleeps for a number of seconds.")
    async def slow(seconds: float = 30) -> str:
        ran["slow"] += 1
        await anyio.sleep(seconds)
        return f"slept {seconds} s"

    @mcp.tool(description="How many times each tool of this server ran (for tests).")
    def calls() -> str:
        return json.dumps(dict(ran))

    return mcp


mcp = build_server()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_common_args(parser)
    serve(mcp, parser.parse_args())


if __name__ == "__main__":
    main()
