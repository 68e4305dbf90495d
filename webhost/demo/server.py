"""The demo MCP server that ships with webhost: every feature the host shows, in one friendly server.

webhost's embedded demo configuration starts it as `[sys.executable, "-m", "webhost.demo.server"]`
over stdio; `--http PORT` serves Streamable HTTP on 127.0.0.1:PORT/mcp instead. It is dual-era: a
client that opens with `server/discover` gets the 2026-07-28 protocol (input requests travel as
`InputRequiredResult` rounds), one that opens with `initialize` gets the legacy protocol (server→client
`elicitation/create` requests).

What it offers:

- tools with text and structured output (`get_weather`), progress (`count_slowly`), an image
  (`generate_image`), audio (`play_tone`), a form with many argument types (`plan_trip`) and an error
  result (`divide`);
- a resource (`demo://readme`), a template (`demo://greeting/{name}`) and a binary resource
  (`demo://logo.png`), and prompts with arguments;
- an MCP App (`show_dashboard` → `ui://demo/dashboard.html`) with an app-only tool (`dashboard_refresh`);
- input requests: a form (`register_user`), URL mode (`connect_account`) and an app-rendered form
  (`pick_color` → `ui://demo/picker.html`, SEP-3118). The server advertises
  `extensions["io.modelcontextprotocol/ui"] = {"elicitation": {}}`.

The 2026-07-28 wire model of the `mcp` 2.3.0 server drops `_meta` from the params of an input request
(protocol.md B5.12), which would strip the app hint off `pick_color`'s elicitation. Tools here build
their `InputRequiredResult` with `_exact_input_required`, which stashes the exact params in the result's
`_meta`; the server middleware `_restore_exact_input_requests` runs on the serialised wire dict and puts
them back, so `_meta.ui.resourceUri` reaches the client in both eras. Likewise the 2025-11-25 wire model
has no `ServerCapabilities.extensions`, so `_advertise_extensions_on_initialize` puts the UI extension
back into the legacy `InitializeResult`.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import math
import random
import secrets
import struct
import time
import wave
import zlib
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import anyio
from jsonschema import Draft202012Validator, FormatChecker
from mcp.server import MCPServer, ServerRequestContext
from mcp.server.apps import Apps
from mcp.server.context import CallNext, HandlerResult
from mcp.server.mcpserver import Audio, Context, Image
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp.types import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CallToolResult,
    ClientCapabilities,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    ImageContent,
    InputRequest,
    InputRequiredResult,
    TextContent,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

UI_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"
DASHBOARD_URI = "ui://demo/dashboard.html"
PICKER_URI = "ui://demo/picker.html"
EXACT_PARAMS_META_KEY = "webhost.demo/exactInputRequestParams"

Ctx = Context[Any, Any]

# --------------------------------------------------------------------------------------------------
# The MCP Apps (plain HTML + inline JS, no external URLs; they speak the postMessage protocol by hand)
# --------------------------------------------------------------------------------------------------

_APP_CSS = """
:root {
  color-scheme: light dark;
  --bg: var(--color-background-primary, #ffffff);
  --bg2: var(--color-background-secondary, #f6f8fa);
  --fg: var(--color-text-primary, #1f2328);
  --fg2: var(--color-text-secondary, #59636e);
  --border: var(--color-border-primary, #d1d9e0);
  --accent: var(--color-text-info, #0969da);
  --danger: var(--color-text-danger, #d1242f);
  --ok: var(--color-text-success, #1a7f37);
  --radius: var(--border-radius-md, 8px);
}
:root[data-theme="dark"] {
  --bg: var(--color-background-primary, #0d1117);
  --bg2: var(--color-background-secondary, #161b22);
  --fg: var(--color-text-primary, #e6edf3);
  --fg2: var(--color-text-secondary, #9198a1);
  --border: var(--color-border-primary, #3d444d);
  --accent: var(--color-text-info, #4493f8);
  --danger: var(--color-text-danger, #f85149);
  --ok: var(--color-text-success, #3fb950);
}
* { box-sizing: border-box; }
html, body { margin: 0; }
body {
  font-family: var(--font-sans, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  font-size: var(--font-text-sm-size, 14px);
  line-height: var(--font-text-sm-line-height, 1.45);
  color: var(--fg);
  background: var(--bg);
}
main { padding: 16px; display: flex; flex-direction: column; gap: 14px; }
h1 { font-size: var(--font-heading-sm-size, 18px); margin: 0; }
h2 { font-size: var(--font-text-md-size, 15px); margin: 0 0 6px; }
p { margin: 0; }
button {
  font: inherit; color: var(--fg); background: var(--bg2); border: 1px solid var(--border);
  border-radius: var(--border-radius-sm, 6px); padding: 6px 12px; cursor: pointer;
}
button:hover { border-color: var(--accent); }
button:disabled { opacity: 0.55; cursor: default; }
button.primary { background: var(--accent); border-color: var(--accent); color: #ffffff; }
pre {
  font-family: var(--font-mono, ui-monospace, SFMono-Regular, Menlo, monospace); font-size: 12px;
  background: var(--bg2); border: 1px solid var(--border); border-radius: var(--radius);
  padding: 8px; margin: 6px 0 0; max-height: 180px; overflow: auto; white-space: pre-wrap;
}
.muted { color: var(--fg2); }
.row { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
.pill { border: 1px solid var(--border); border-radius: 999px; padding: 1px 10px; font-size: 12px; }
"""

# The host bridge, shared by both apps: JSON-RPC 2.0 over postMessage with window.parent.
_BRIDGE_JS = """
const PROTOCOL_VERSION = "2026-01-26";
const bridge = (() => {
  let nextId = 1;
  const pending = new Map();
  const requestHandlers = new Map();
  const notificationHandlers = new Map();
  const logEl = () => document.getElementById("log");
  function log(line) {
    const el = logEl();
    if (!el) return;
    const stamp = new Date().toLocaleTimeString();
    el.textContent += "[" + stamp + "] " + line + "\\n";
    el.scrollTop = el.scrollHeight;
  }
  function short(value) {
    const text = JSON.stringify(value);
    return text === undefined ? "" : (text.length > 300 ? text.slice(0, 300) + "…" : text);
  }
  function post(message) { window.parent.postMessage(message, "*"); }
  function request(method, params) {
    const id = nextId++;
    log("→ " + method + " " + short(params));
    post({ jsonrpc: "2.0", id: id, method: method, params: params === undefined ? {} : params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
  }
  function notify(method, params) {
    const message = { jsonrpc: "2.0", method: method };
    if (params !== undefined) message.params = params;
    if (method !== "ui/notifications/size-changed") log("→ " + method + " " + short(params));
    post(message);
  }
  function respond(id, result) { post({ jsonrpc: "2.0", id: id, result: result }); }
  function fail(id, code, message) {
    post({ jsonrpc: "2.0", id: id, error: { code: code, message: message } });
  }
  window.addEventListener("message", async (event) => {
    if (event.source !== window.parent) return;
    const msg = event.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
    if (typeof msg.method !== "string") {
      const entry = pending.get(msg.id);
      if (!entry) return;
      pending.delete(msg.id);
      if (msg.error) {
        log("← error for " + entry.method + ": " + short(msg.error));
        entry.reject(msg.error);
      } else {
        log("← result for " + entry.method + ": " + short(msg.result));
        entry.resolve(msg.result);
      }
      return;
    }
    if (msg.id !== undefined && msg.id !== null) {
      log("← request " + msg.method);
      const handler = requestHandlers.get(msg.method);
      if (!handler) { fail(msg.id, -32601, "Method not found: " + msg.method); return; }
      try {
        const result = await handler(msg.params || {}, msg.id);
        if (result !== undefined) respond(msg.id, result);
      } catch (error) {
        fail(msg.id, -32603, String(error && error.message ? error.message : error));
      }
      return;
    }
    log("← " + msg.method);
    const handler = notificationHandlers.get(msg.method);
    if (handler) handler(msg.params || {});
  });
  requestHandlers.set("ping", () => ({}));
  requestHandlers.set("ui/resource-teardown", () => ({}));
  let hostContext = {};
  function applyHostContext(patch) {
    hostContext = Object.assign({}, hostContext, patch || {});
    const root = document.documentElement;
    if (hostContext.theme === "light" || hostContext.theme === "dark") {
      root.dataset.theme = hostContext.theme;
      root.style.colorScheme = hostContext.theme;
    }
    const styles = hostContext.styles || {};
    const variables = styles.variables || {};
    for (const [name, value] of Object.entries(variables)) {
      if (typeof name === "string" && name.startsWith("--") && typeof value === "string") {
        root.style.setProperty(name, value);
      }
    }
    if (styles.css && typeof styles.css.fonts === "string") {
      let tag = document.getElementById("host-fonts");
      if (!tag) {
        tag = document.createElement("style");
        tag.id = "host-fonts";
        document.head.appendChild(tag);
      }
      tag.textContent = styles.css.fonts;
    }
    if (typeof bridge.onHostContext === "function") bridge.onHostContext(hostContext);
  }
  notificationHandlers.set("ui/notifications/host-context-changed", applyHostContext);
  let lastSize = "";
  function reportSize() {
    const main = document.querySelector("main") || document.body;
    const rect = main.getBoundingClientRect();
    const width = Math.ceil(rect.width);
    const height = Math.ceil(rect.height);
    const key = width + "x" + height;
    if (key === lastSize) return;
    lastSize = key;
    notify("ui/notifications/size-changed", { width: width, height: height });
  }
  async function connect(appInfo, appCapabilities) {
    const result = await request("ui/initialize", {
      appInfo: appInfo,
      appCapabilities: appCapabilities,
      protocolVersion: PROTOCOL_VERSION,
    });
    applyHostContext((result && result.hostContext) || {});
    notify("ui/notifications/initialized");
    const main = document.querySelector("main") || document.body;
    new ResizeObserver(() => requestAnimationFrame(reportSize)).observe(main);
    reportSize();
    return result;
  }
  return {
    log, request, notify, respond, fail, connect, reportSize,
    onRequest: (method, handler) => requestHandlers.set(method, handler),
    onNotification: (method, handler) => notificationHandlers.set(method, handler),
    hostContext: () => hostContext,
    onHostContext: null,
  };
})();
"""

DASHBOARD_HTML = (
    """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Service dashboard</title>
<style>"""
    + _APP_CSS
    + """
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); gap: 10px; }
.card {
  background: var(--bg2); border: 1px solid var(--border); border-radius: var(--radius); padding: 10px;
}
.card .label { color: var(--fg2); font-size: 12px; }
.card .value { font-size: 22px; font-weight: var(--font-weight-semibold, 600); }
.chart {
  display: flex; align-items: flex-end; gap: 4px; height: 90px; padding: 6px;
  border: 1px solid var(--border); border-radius: var(--radius);
}
.bar { flex: 1; background: var(--accent); border-radius: 3px 3px 0 0; min-height: 2px; opacity: 0.85; }
#elicitation { border: 2px solid var(--accent); border-radius: var(--radius); padding: 12px; }
#elicitation .form { display: flex; flex-direction: column; gap: 10px; }
#elicitation label { display: flex; flex-direction: column; gap: 4px; font-weight: 500; }
#elicitation .help { color: var(--fg2); font-weight: normal; font-size: 12px; }
#elicitation input, #elicitation select {
  font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--border);
  border-radius: 6px; padding: 5px 8px;
}
#elicitation .choices { display: flex; flex-wrap: wrap; gap: 10px; font-weight: normal; }
#elicitation .choices label { flex-direction: row; align-items: center; font-weight: normal; }
</style>
</head>
<body>
<main id="app">
  <div class="row">
    <h1>Service dashboard</h1>
    <span class="pill" id="region">…</span>
    <span class="pill muted" id="status">connecting…</span>
  </div>
  <p class="muted" id="updated">Waiting for the tool result…</p>
  <section class="cards" id="cards" aria-label="Metrics"></section>
  <section class="chart" id="chart" aria-label="Requests per minute, last 12 intervals"></section>
  <section class="row" aria-label="Actions">
    <button class="primary" id="refresh" data-action="refresh">Refresh (tools/call)</button>
    <button id="message" data-action="message">Send a chat message</button>
    <button id="context" data-action="context">Update model context</button>
    <button id="link" data-action="open-link">Open example.com</button>
    <button id="fullscreen" data-action="display-mode">Go fullscreen</button>
    <button id="log-to-host" data-action="log">Log to host</button>
  </section>
  <section id="elicitation" hidden></section>
  <details>
    <summary>Tool input and result</summary>
    <pre id="tool-input">(none yet)</pre>
    <pre id="tool-result">(none yet)</pre>
  </details>
  <details open>
    <summary>Bridge log</summary>
    <pre id="log"></pre>
  </details>
</main>
<script>
"""
    + _BRIDGE_JS
    + """
(() => {
  const $ = (id) => document.getElementById(id);
  let region = "global";
  let displayMode = "inline";

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== undefined && value !== null) node.setAttribute(key, String(value));
    }
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function render(data) {
    if (!data || typeof data !== "object") return;
    region = typeof data.region === "string" ? data.region : region;
    $("region").textContent = region;
    $("updated").textContent = "Updated " + new Date(data.generatedAt || Date.now()).toLocaleTimeString();
    const metrics = data.metrics || {};
    const cards = [
      ["Requests / min", metrics.requestsPerMinute],
      ["Error rate", metrics.errorRatePercent === undefined ? undefined : metrics.errorRatePercent + " %"],
      ["p95 latency", metrics.p95LatencyMs === undefined ? undefined : metrics.p95LatencyMs + " ms"],
      ["Active users", metrics.activeUsers],
    ];
    $("cards").replaceChildren(...cards.map(([label, value]) => {
      const card = el("div", { class: "card" });
      card.append(el("div", { class: "label" }, label), el("div", { class: "value" }, value ?? "–"));
      return card;
    }));
    const series = Array.isArray(data.series) ? data.series.filter((n) => typeof n === "number") : [];
    const peak = Math.max(1, ...series);
    $("chart").replaceChildren(...series.map((n) => {
      const bar = el("div", { class: "bar", title: String(n) });
      bar.style.height = Math.round((n / peak) * 100) + "%";
      return bar;
    }));
  }

  function showResult(result) {
    $("tool-result").textContent = JSON.stringify(result, null, 2);
    if (result && result.structuredContent) render(result.structuredContent);
    $("status").textContent = result && result.isError ? "tool error" : "live";
  }

  bridge.onNotification("ui/notifications/tool-input", (params) => {
    $("tool-input").textContent = JSON.stringify(params.arguments || {}, null, 2);
    if (params.arguments && typeof params.arguments.region === "string") region = params.arguments.region;
    $("region").textContent = region;
  });
  bridge.onNotification("ui/notifications/tool-input-partial", (params) => {
    $("tool-input").textContent = "(partial) " + JSON.stringify(params.arguments || {});
  });
  bridge.onNotification("ui/notifications/tool-result", showResult);
  bridge.onNotification("ui/notifications/tool-cancelled", (params) => {
    $("status").textContent = "cancelled" + (params.reason ? ": " + params.reason : "");
  });
  bridge.onHostContext = (ctx) => {
    if (ctx.displayMode) {
      displayMode = ctx.displayMode;
      $("fullscreen").textContent = displayMode === "fullscreen" ? "Back to inline" : "Go fullscreen";
    }
  };

  async function guarded(button, work) {
    button.disabled = true;
    try { await work(); } catch (error) { bridge.log("failed: " + JSON.stringify(error)); }
    finally { button.disabled = false; }
  }

  $("refresh").addEventListener("click", (e) => guarded(e.currentTarget, async () => {
    $("status").textContent = "refreshing…";
    const result = await bridge.request("tools/call", { name: "dashboard_refresh", arguments: { region } });
    showResult(result);
  }));
  $("message").addEventListener("click", (e) => guarded(e.currentTarget, () => bridge.request("ui/message", {
    role: "user",
    content: [{
      type: "text",
      text: "The " + region + " dashboard shows " + $("cards").innerText.replace(/\\s+/g, " "),
    }],
  })));
  $("context").addEventListener("click", (e) => guarded(e.currentTarget, () => {
    const text = "The user is looking at the " + region + " service dashboard.";
    return bridge.request("ui/update-model-context", {
      content: [{ type: "text", text }],
      structuredContent: { region, viewedAt: new Date().toISOString() },
    });
  }));
  $("link").addEventListener("click", (e) => guarded(e.currentTarget, () =>
    bridge.request("ui/open-link", { url: "https://example.com/" })));
  $("fullscreen").addEventListener("click", (e) => guarded(e.currentTarget, async () => {
    const wanted = displayMode === "fullscreen" ? "inline" : "fullscreen";
    const result = await bridge.request("ui/request-display-mode", { mode: wanted });
    if (result && result.mode) bridge.onHostContext({ displayMode: result.mode });
  }));
  $("log-to-host").addEventListener("click", () => bridge.notify("notifications/message", {
    level: "info", logger: "demo-dashboard", data: "Hello from the dashboard app",
  }));

  // App-rendered elicitation: the host forwards an elicitation/create bound to this view.
  function choicesOf(prop) {
    if (Array.isArray(prop.oneOf)) return prop.oneOf.map((o) => [o.const, o.title || String(o.const)]);
    if (Array.isArray(prop.enum)) {
      const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
      return prop.enum.map((v, i) => [v, names.length === prop.enum.length ? names[i] : String(v)]);
    }
    return null;
  }
  function field(name, prop, required) {
    const label = el("label", {}, (prop.title || name) + (required ? " *" : ""));
    if (prop.description) label.append(el("span", { class: "help" }, prop.description));
    let read;
    const choices = choicesOf(prop);
    if (prop.type === "boolean") {
      const box = el("input", { type: "checkbox", name });
      box.checked = prop.default === true;
      label.append(box);
      read = () => box.checked;
    } else if (prop.type === "array") {
      const items = prop.items || {};
      const options = Array.isArray(items.anyOf)
        ? items.anyOf.map((o) => [o.const, o.title || String(o.const)])
        : (items.enum || []).map((v) => [v, String(v)]);
      const group = el("div", { class: "choices" });
      const defaults = Array.isArray(prop.default) ? prop.default : [];
      for (const [value, title] of options) {
        const box = el("input", { type: "checkbox", name, value });
        box.checked = defaults.includes(value);
        const item = el("label", {});
        item.append(box, document.createTextNode(" " + title));
        group.append(item);
      }
      label.append(group);
      read = () => [...group.querySelectorAll("input:checked")].map((b) => b.value);
    } else if (choices) {
      const select = el("select", { name });
      if (!required || prop.default === undefined) select.append(el("option", { value: "" }, "—"));
      for (const [value, title] of choices) select.append(el("option", { value }, title));
      if (prop.default !== undefined) select.value = prop.default;
      label.append(select);
      read = () => (select.value === "" ? undefined : select.value);
    } else if (prop.type === "integer" || prop.type === "number") {
      const input = el("input", {
        type: "number", name, step: prop.type === "integer" ? "1" : "any",
        min: prop.minimum, max: prop.maximum,
      });
      if (prop.default !== undefined) input.value = prop.default;
      label.append(input);
      read = () => (input.value === "" ? undefined : Number(input.value));
    } else {
      const types = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };
      const input = el("input", {
        type: types[prop.format] || "text", name, minlength: prop.minLength, maxlength: prop.maxLength,
      });
      if (typeof prop.default === "string") input.value = prop.default;
      if (required) input.required = true;
      label.append(input);
      read = () => {
        if (input.value === "") return undefined;
        return prop.format === "date-time" ? new Date(input.value).toISOString() : input.value;
      };
    }
    return { label, read };
  }

  bridge.onRequest("elicitation/create", (params, id) => {
    const box = $("elicitation");
    box.hidden = false;
    const schema = params.requestedSchema || {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const form = el("div", { class: "form" });
    const readers = {};
    for (const [name, prop] of Object.entries(schema.properties || {})) {
      const made = field(name, prop || {}, required.has(name));
      readers[name] = made.read;
      form.append(made.label);
    }
    const buttons = el("div", { class: "row" });
    const submit = el("button", { type: "button", class: "primary", "data-action": "accept" }, "Submit");
    const decline = el("button", { type: "button", "data-action": "decline" }, "Decline");
    const cancel = el("button", { type: "button", "data-action": "cancel" }, "Cancel");
    buttons.append(submit, decline, cancel);
    form.append(buttons);
    box.replaceChildren(el("h2", {}, "Input requested"), el("p", {}, params.message || ""), form);
    const finish = (result) => {
      bridge.respond(id, result);
      box.replaceChildren(el("p", { class: "muted" }, "Answer sent (" + result.action + ")."));
    };
    // No <form> submission: app sandboxes usually lack allow-forms, which blocks the submit event.
    submit.addEventListener("click", () => {
      const content = {};
      for (const [name, read] of Object.entries(readers)) {
        const value = read();
        if (value !== undefined) content[name] = value;
      }
      finish({ action: "accept", content });
    });
    decline.addEventListener("click", () => finish({ action: "decline" }));
    cancel.addEventListener("click", () => finish({ action: "cancel" }));
    return undefined; // answered later, from the form
  });

  bridge.connect(
    { name: "webhost-demo-dashboard", version: "1.0.0" },
    { elicitation: {}, availableDisplayModes: ["inline", "fullscreen"] },
  ).then((result) => {
    $("status").textContent = "connected to " + ((result.hostInfo && result.hostInfo.name) || "host");
  }, (error) => {
    $("status").textContent = "handshake failed";
    bridge.log("ui/initialize failed: " + JSON.stringify(error));
  });
})();
</script>
</body>
</html>
"""
)

PICKER_HTML = (
    """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Colour picker</title>
<style>"""
    + _APP_CSS
    + """
#swatches { display: grid; grid-template-columns: repeat(auto-fill, minmax(92px, 1fr)); gap: 8px; }
.swatch {
  display: flex; flex-direction: column; align-items: stretch; gap: 6px; padding: 6px;
  background: var(--bg2); border: 2px solid var(--border); border-radius: var(--radius);
}
.swatch .chip { height: 42px; border-radius: 6px; border: 1px solid rgba(0, 0, 0, 0.15); }
.swatch[aria-checked="true"] { border-color: var(--accent); box-shadow: 0 0 0 2px var(--accent); }
#preview { display: flex; align-items: center; gap: 12px; }
#preview-chip { width: 64px; height: 64px; border-radius: 12px; border: 1px solid var(--border); }
</style>
</head>
<body>
<main id="app">
  <h1 id="title">Pick a colour</h1>
  <p id="message" class="muted">Waiting for the host to forward the request…</p>
  <div id="swatches" role="radiogroup" aria-label="Colours"></div>
  <div id="preview"><div id="preview-chip"></div><span id="preview-label">No colour selected</span></div>
  <div class="row">
    <button class="primary" id="accept" data-action="accept" disabled>Use this colour</button>
    <button id="decline" data-action="decline" disabled>Decline</button>
    <button id="cancel" data-action="cancel" disabled>Cancel</button>
  </div>
  <details><summary>Bridge log</summary><pre id="log"></pre></details>
</main>
<script>
"""
    + _BRIDGE_JS
    + """
(() => {
  const $ = (id) => document.getElementById(id);
  const HEX = /^#[0-9a-fA-F]{6}$/;
  let current = null;   // { id, property, value }

  function optionsOf(prop) {
    if (Array.isArray(prop.oneOf)) {
      return prop.oneOf.map((o) => ({ value: o.const, title: o.title || o.const }));
    }
    if (Array.isArray(prop.enum)) return prop.enum.map((v) => ({ value: v, title: String(v) }));
    return [];
  }

  function select(value, title) {
    current.value = value;
    for (const node of $("swatches").children) {
      node.setAttribute("aria-checked", String(node.dataset.value === value));
    }
    $("preview-chip").style.background = HEX.test(value) ? value : "transparent";
    $("preview-label").textContent = title + " (" + value + ")";
    $("accept").disabled = false;
  }

  function finish(result) {
    if (!current) return;
    bridge.respond(current.id, result);
    current = null;
    for (const id of ["accept", "decline", "cancel"]) $(id).disabled = true;
    $("message").textContent = "Answer sent (" + result.action + "). The host closes this view.";
  }

  bridge.onRequest("elicitation/create", (params, id) => {
    const schema = params.requestedSchema || {};
    const properties = schema.properties || {};
    const names = Object.keys(properties);
    const property = names.includes("color") ? "color" : names.find((n) => optionsOf(properties[n]).length);
    if (!property) {
      bridge.log("no choosable property in the schema; declining");
      return { action: "decline" };
    }
    current = { id, property, value: null };
    $("title").textContent = properties[property].title || "Pick a colour";
    $("message").textContent = params.message || "";
    const swatches = optionsOf(properties[property]).map((option) => {
      const value = String(option.value);
      const button = document.createElement("button");
      button.type = "button";
      button.className = "swatch";
      button.setAttribute("role", "radio");
      button.setAttribute("aria-checked", "false");
      button.dataset.value = value;
      const chip = document.createElement("span");
      chip.className = "chip";
      if (HEX.test(value)) chip.style.background = value;
      const label = document.createElement("span");
      label.textContent = option.title;
      button.append(chip, label);
      button.addEventListener("click", () => select(value, option.title));
      return button;
    });
    $("swatches").replaceChildren(...swatches);
    const preset = properties[property].default;
    if (typeof preset === "string") {
      const match = optionsOf(properties[property]).find((o) => o.value === preset);
      if (match) select(preset, match.title);
    }
    $("decline").disabled = false;
    $("cancel").disabled = false;
    return undefined; // answered when the user clicks
  });

  $("accept").addEventListener("click", () => {
    if (current && current.value !== null) {
      finish({ action: "accept", content: { [current.property]: current.value } });
    }
  });
  $("decline").addEventListener("click", () => finish({ action: "decline" }));
  $("cancel").addEventListener("click", () => finish({ action: "cancel" }));

  bridge.connect({ name: "webhost-demo-picker", version: "1.0.0" }, { elicitation: {} }).catch((error) => {
    $("message").textContent = "Handshake with the host failed.";
    bridge.log("ui/initialize failed: " + JSON.stringify(error));
  });
})();
</script>
</body>
</html>
"""
)


# --------------------------------------------------------------------------------------------------
# Server, extension settings and the MRTR `_meta` fix
# --------------------------------------------------------------------------------------------------


class DemoApps(Apps):
    """MCP Apps, advertised with `{"elicitation": {}}`: this server may ask for input through an app."""

    def settings(self) -> dict[str, Any]:
        return {"elicitation": {}}


def _exact_input_required(
    input_requests: Mapping[str, InputRequest], request_state: str | None = None
) -> InputRequiredResult:
    """An `InputRequiredResult` whose input-request params reach the wire exactly as built (B5.12)."""
    exact = {
        key: request.params.model_dump(by_alias=True, mode="json", exclude_none=True)
        for key, request in input_requests.items()
        if request.params is not None
    }
    return InputRequiredResult(
        input_requests=dict(input_requests), request_state=request_state, _meta={EXACT_PARAMS_META_KEY: exact}
    )


async def _restore_exact_input_requests(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: re-insert the params the 2026-07-28 wire model sieved out, drop the stash.

    Middleware runs around the runner's serialisation step, so it sees the wire dict: by then
    `inputRequests[key].params._meta` is gone, and the stash in the result `_meta` holds the original.
    """
    result = await call_next(ctx)
    if not isinstance(result, dict) or result.get("resultType") != "input_required":
        return result
    meta = result.get("_meta")
    if not isinstance(meta, dict) or EXACT_PARAMS_META_KEY not in meta:
        return result
    exact = meta[EXACT_PARAMS_META_KEY]
    result["_meta"] = {key: value for key, value in meta.items() if key != EXACT_PARAMS_META_KEY}
    requests = result.get("inputRequests")
    if isinstance(requests, dict) and isinstance(exact, dict):
        for key, params in exact.items():
            if isinstance(requests.get(key), dict):
                requests[key]["params"] = params
    return result


async def _advertise_extensions_on_initialize(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Server middleware: keep `capabilities.extensions` in the legacy `InitializeResult`.

    The 2025-11-25 wire model of `ServerCapabilities` has no `extensions` member, so the 2.3.0 server
    sieves it out of the handshake answer; a legacy client would never learn that this server offers
    MCP Apps with app-rendered elicitation. `server/discover` (2026-07-28) keeps it without help.
    """
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict) and isinstance(result.get("capabilities"), dict):
        capabilities = dict(result["capabilities"])
        capabilities.setdefault("extensions", {UI_EXTENSION: apps.settings()})
        result = {**result, "capabilities": capabilities}
    return result


apps = DemoApps()


# ---- the MCP App: registered on `apps` before MCPServer consumes the extension ----------------


class DashboardMetrics(BaseModel):
    requestsPerMinute: int
    errorRatePercent: float
    p95LatencyMs: int
    activeUsers: int


class DashboardData(BaseModel):
    """What the dashboard shows."""

    region: str
    generatedAt: str
    metrics: DashboardMetrics
    series: list[int]


Region = Literal["global", "europe", "americas", "asia"]


def _dashboard_data(region: str) -> DashboardData:
    rng = random.Random(f"{region}:{time.time_ns() // 1_000_000_000}")
    base = {"global": 1800, "europe": 640, "americas": 720, "asia": 540}.get(region, 500)
    series = [int(base * rng.uniform(0.7, 1.3)) for _ in range(12)]
    return DashboardData(
        region=region,
        generatedAt=datetime.now(UTC).isoformat(timespec="seconds"),
        metrics=DashboardMetrics(
            requestsPerMinute=series[-1],
            errorRatePercent=round(rng.uniform(0.05, 2.5), 2),
            p95LatencyMs=rng.randint(80, 420),
            activeUsers=int(base * rng.uniform(3, 6)),
        ),
        series=series,
    )


def _dashboard_result(data: DashboardData) -> CallToolResult:
    m = data.metrics
    text = (
        f"Service dashboard ({data.region}): {m.requestsPerMinute} requests/min, "
        f"{m.errorRatePercent} % errors, "
        f"p95 {m.p95LatencyMs} ms, {m.activeUsers} active users."
    )
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=data.model_dump(mode="json")
    )


@apps.tool(
    resource_uri=DASHBOARD_URI,
    title="Show the service dashboard",
    description="An interactive MCP App: live metrics, a refresh button that calls a tool, and buttons for "
    "every host feature (message, model context, links, fullscreen). Text summary for other clients.",
)
def show_dashboard(
    region: Annotated[Region, Field(description="Which region to show")] = "global",
) -> Annotated[CallToolResult, DashboardData]:
    return _dashboard_result(_dashboard_data(region))


@apps.tool(
    resource_uri=DASHBOARD_URI,
    visibility=["app"],
    title="Refresh the dashboard",
    description="App-only: fresh numbers for the dashboard app.",
)
def dashboard_refresh(region: Region = "global") -> Annotated[CallToolResult, DashboardData]:
    return _dashboard_result(_dashboard_data(region))


apps.add_html_resource(
    DASHBOARD_URI,
    DASHBOARD_HTML,
    name="dashboard",
    title="Service dashboard",
    description="The dashboard app for show_dashboard",
    prefers_border=True,
)
apps.add_html_resource(
    PICKER_URI,
    PICKER_HTML,
    name="picker",
    title="Colour picker",
    description="Renders pick_color's question (app-rendered elicitation)",
    prefers_border=True,
)


mcp: MCPServer[Any] = MCPServer(
    "webhost-demo",
    title="webhost demo",
    description="A tour of MCP: tools, resources, prompts, an MCP App and every kind of input request.",
    version="1.0.0",
    instructions=(
        "A demo server. Try get_weather for structured output, count_slowly for progress, show_dashboard "
        "for an interactive app, and register_user, connect_account or pick_color for input requests."
    ),
    extensions=[apps],
    middleware=[_advertise_extensions_on_initialize, _restore_exact_input_requests],
)


def _is_modern(ctx: Ctx) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _state(raw: str | None) -> dict[str, Any]:
    """The plaintext request state (MCPServer seals it on the wire and unseals it for the handler)."""
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _dump_state(value: Mapping[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _missing_capability(required: dict[str, Any], what: str) -> MCPError:
    return MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"This tool needs a client that supports {what}",
        data={"requiredCapabilities": required},
    )


def _require_form(ctx: Ctx) -> None:
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities else None
    if elicitation is not None and (elicitation.form is not None or elicitation.url is None):
        return
    if _is_modern(ctx):
        raise _missing_capability({"elicitation": {"form": {}}}, "form elicitation")
    raise ToolError("This tool asks questions, and the connected client does not support elicitation.")


def _require_url(ctx: Ctx) -> None:
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities else None
    if elicitation is not None and elicitation.url is not None:
        return
    if _is_modern(ctx):
        raise _missing_capability({"elicitation": {"url": {}}}, "URL-mode elicitation")
    raise ToolError("This tool needs URL-mode elicitation, which the connected client does not support.")


def _client_renders_app_elicitation(capabilities: ClientCapabilities | None) -> bool:
    """SEP-3118, client side: form elicitation, the UI extension with the app MIME type, and `elicitation`."""
    if capabilities is None or capabilities.elicitation is None:
        return False
    if capabilities.elicitation.form is None and capabilities.elicitation.url is not None:
        return False
    settings = (capabilities.extensions or {}).get(UI_EXTENSION)
    if not isinstance(settings, dict):
        return False
    mime_types = settings.get("mimeTypes")
    return isinstance(mime_types, list) and APP_MIME_TYPE in mime_types and "elicitation" in settings


async def _legacy_ask(ctx: Ctx, params: ElicitRequestFormParams) -> ElicitResult:
    """Send one server→client `elicitation/create` (legacy era) with the params exactly as built."""
    result: ElicitResult = await ctx.session.send_request(
        ElicitRequest(params=params),
        ElicitResult,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )
    return result


def _schema_problems(schema: Mapping[str, Any], content: Mapping[str, Any] | None) -> list[str]:
    """Which fields of an accepted answer break the requested schema (names only, never values)."""
    validator = Draft202012Validator(dict(schema), format_checker=FormatChecker())
    problems = set()
    for error in validator.iter_errors(dict(content or {})):
        problems.add(".".join(str(part) for part in error.absolute_path) or "(the answer as a whole)")
    return sorted(problems)


# --------------------------------------------------------------------------------------------------
# Pictures and sounds, generated in code
# --------------------------------------------------------------------------------------------------


def _png(width: int, height: int, pixel: Callable[[int, int], tuple[int, int, int]]) -> bytes:
    """Encode an RGB image as PNG with nothing but zlib."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            rows.extend(pixel(x, y))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + chunk(b"IEND", b"")
    )


def _hex_rgb(value: str) -> tuple[int, int, int]:
    return int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)


def _wav_tone(frequency: float, seconds: float, rate: int = 8000) -> bytes:
    """A sine tone with a short fade in and out, 8-bit mono WAV."""
    frames = bytearray()
    total = int(rate * seconds)
    fade = max(1, int(rate * 0.02))
    for i in range(total):
        envelope = min(1.0, i / fade, (total - i) / fade)
        frames.append(int(128 + 110 * envelope * math.sin(2 * math.pi * frequency * i / rate)))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        out.writeframes(bytes(frames))
    return buffer.getvalue()


# --------------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------------


class Weather(BaseModel):
    """Current (made-up) weather for a city."""

    city: str
    temperature: float = Field(description="In the requested unit")
    unit: Literal["celsius", "fahrenheit"]
    conditions: str
    humidity_percent: int
    wind_kmh: int


_CONDITIONS = ("sunny", "partly cloudy", "cloudy", "light rain", "showers", "windy", "foggy", "snow flurries")


@mcp.tool(
    title="Get the weather",
    description="Current weather for a city (made up, but stable for a few minutes). "
    "Returns a sentence and the same data as structured content.",
)
def get_weather(
    city: Annotated[str, Field(min_length=1, max_length=100, description="City name, e.g. Berlin")],
    unit: Annotated[Literal["celsius", "fahrenheit"], Field(description="Temperature unit")] = "celsius",
) -> Annotated[CallToolResult, Weather]:
    name = city.strip().title()
    seed = hashlib.sha256(f"{name.lower()}:{int(time.time() // 300)}".encode()).digest()
    rng = random.Random(seed)
    celsius = round(rng.uniform(-8, 34), 1)
    temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32, 1)
    weather = Weather(
        city=name,
        temperature=temperature,
        unit=unit,
        conditions=rng.choice(_CONDITIONS),
        humidity_percent=rng.randint(20, 95),
        wind_kmh=rng.randint(0, 60),
    )
    symbol = "°C" if unit == "celsius" else "°F"
    text = (
        f"{weather.city}: {weather.temperature}{symbol}, {weather.conditions}, "
        f"humidity {weather.humidity_percent} %, wind {weather.wind_kmh} km/h."
    )
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=weather.model_dump(mode="json")
    )


@mcp.tool(
    title="Count slowly",
    description="Count to `steps`, waiting `delay` seconds per step and reporting progress. Cancel it any time.",
)
async def count_slowly(
    ctx: Ctx,
    steps: Annotated[int, Field(ge=1, le=100, description="How far to count")] = 5,
    delay: Annotated[float, Field(ge=0, le=5, description="Seconds per step")] = 0.3,
) -> str:
    for step in range(1, steps + 1):
        await anyio.sleep(delay)
        await ctx.report_progress(step, steps, f"Counted {step} of {steps}")
    return f"Counted to {steps}."


_PALETTE: dict[str, str] = {
    "#e11d48": "Raspberry",
    "#f97316": "Tangerine",
    "#eab308": "Sunflower",
    "#16a34a": "Fern",
    "#0891b2": "Lagoon",
    "#2563eb": "Cobalt",
    "#7c3aed": "Violet",
    "#334155": "Slate",
}


@mcp.tool(
    title="Generate an image",
    description="A small gradient PNG drawn in code, in the colour you choose.",
)
def generate_image(
    color: Annotated[
        Literal["#e11d48", "#f97316", "#eab308", "#16a34a", "#0891b2", "#2563eb", "#7c3aed", "#334155"],
        Field(description="Base colour"),
    ] = "#2563eb",
    size: Annotated[int, Field(ge=8, le=256, description="Width and height in pixels")] = 96,
) -> Image:
    red, green, blue = _hex_rgb(color)

    def pixel(x: int, y: int) -> tuple[int, int, int]:
        t = (x + y) / (2 * size)
        ring = 0.5 + 0.5 * math.cos(math.hypot(x - size / 2, y - size / 2) / 4)
        mix = 0.55 + 0.45 * (1 - t) * ring
        return (
            int(red * mix + 255 * (1 - mix)),
            int(green * mix + 255 * (1 - mix)),
            int(blue * mix + 255 * (1 - mix)),
        )

    return Image(data=_png(size, size, pixel), format="png")


@mcp.tool(title="Play a tone", description="A short sine tone as WAV audio, generated in code.")
def play_tone(
    frequency: Annotated[int, Field(ge=100, le=2000, description="Pitch in hertz")] = 440,
    duration: Annotated[float, Field(ge=0.1, le=3.0, description="Length in seconds")] = 0.6,
) -> Audio:
    return Audio(data=_wav_tone(frequency, duration), format="wav")


class Traveller(BaseModel):
    """Who is travelling."""

    name: str = Field(min_length=1, description="Lead traveller's name")
    age: int = Field(ge=0, le=120, description="Age in years")


@mcp.tool(
    title="Plan a trip",
    description="A form with every kind of argument: text, bounded integer, number, boolean, choice, list "
    "and object. Returns an itinerary summary.",
)
def plan_trip(
    destination: Annotated[str, Field(min_length=1, description="Where to")],
    nights: Annotated[int, Field(ge=1, le=30, description="Number of nights (1-30)")],
    budget_eur: Annotated[float, Field(ge=0, description="Total budget in euros")],
    traveller: Annotated[Traveller, Field(description="The lead traveller")],
    transport: Annotated[Literal["train", "plane", "car", "bike"], Field(description="How to get there")] = "train",
    flexible_dates: Annotated[bool, Field(description="Dates may move a few days")] = False,
    activities: Annotated[list[str], Field(description="Things to do, one per entry")] = [],  # noqa: B006
) -> str:
    per_night = budget_eur / nights
    lines = [
        f"Trip to {destination} for {traveller.name} ({traveller.age}), {nights} night(s) by {transport}.",
        f"Budget €{budget_eur:,.2f} — about €{per_night:,.2f} per night.",
        "Dates are flexible." if flexible_dates else "Dates are fixed.",
    ]
    if activities:
        lines.append("Plan: " + "; ".join(f"day {i + 1}: {a}" for i, a in enumerate(activities[:nights])))
    return "\n".join(lines)


@mcp.tool(
    title="Divide",
    description="Divide a by b. Dividing by zero returns an error result (isError: true).",
)
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ToolError("Cannot divide by zero. Try another value for b.")
    return a / b


# ---- input requests -------------------------------------------------------------------------------

REGISTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Full name", "minLength": 1, "maxLength": 80},
        "email": {
            "type": "string",
            "title": "Email address",
            "format": "email",
            "description": "We send the confirmation here.",
        },
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
        "newsletter": {"type": "boolean", "title": "Send me the monthly newsletter", "default": False},
        "plan": {
            "type": "string",
            "title": "Plan",
            "oneOf": [
                {"const": "free", "title": "Free"},
                {"const": "pro", "title": "Pro (€9 a month)"},
                {"const": "team", "title": "Team (€29 a month)"},
            ],
            "default": "free",
        },
        "interests": {
            "type": "array",
            "title": "Interests",
            "description": "Pick up to three.",
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "tools", "title": "Tools"},
                    {"const": "apps", "title": "MCP Apps"},
                    {"const": "elicitation", "title": "Elicitation"},
                    {"const": "security", "title": "Security"},
                    {"const": "python", "title": "Python"},
                ]
            },
        },
    },
    "required": ["name", "email"],
}

CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Create the account", "default": True}},
    "required": ["confirm"],
}


def _register_form() -> ElicitRequestFormParams:
    return ElicitRequestFormParams(
        message="Create a demo account. Nothing is stored.", requested_schema=REGISTER_SCHEMA
    )


def _confirm_form(profile: Mapping[str, Any]) -> ElicitRequestFormParams:
    plan = next(
        (o["title"] for o in REGISTER_SCHEMA["properties"]["plan"]["oneOf"] if o["const"] == profile.get("plan")),
        "Free",
    )
    return ElicitRequestFormParams(
        message=f"Create a {plan} account for {profile.get('name')} <{profile.get('email')}>?",
        requested_schema=CONFIRM_SCHEMA,
    )


def _registered(profile: Mapping[str, Any]) -> str:
    interests = ", ".join(profile.get("interests") or []) or "none"
    return (
        f"Registered {profile.get('name')} <{profile.get('email')}> "
        f"on the {profile.get('plan', 'free')} plan "
        f"(age {profile.get('age', 'not given')}, newsletter {'yes' if profile.get('newsletter') else 'no'}, "
        f"interests: {interests}). This is a demo: nothing was stored."
    )


def _checked_profile(answer: ElicitResult) -> dict[str, Any]:
    problems = _schema_problems(REGISTER_SCHEMA, answer.content)
    if problems:
        raise ToolError("The answer did not match the form (fields: " + ", ".join(problems) + ").")
    profile = dict(answer.content or {})
    profile.setdefault("plan", "free")
    profile.setdefault("newsletter", False)
    return profile


async def _register_legacy(ctx: Ctx) -> str:
    """The same two questions as server→client requests, inside the open tools/call (legacy era)."""
    answer = await _legacy_ask(ctx, _register_form())
    if answer.action != "accept":
        return f"Registration {answer.action}d."
    profile = _checked_profile(answer)
    confirm = await _legacy_ask(ctx, _confirm_form(profile))
    if confirm.action != "accept" or not (confirm.content or {}).get("confirm"):
        return "Registration not confirmed; nothing was created."
    return _registered(profile)


@mcp.tool(
    title="Register a user",
    description="Asks for your details in a form (text, email, number, yes/no, a plan and interests), then "
    "asks you to confirm: two rounds of input.",
    structured_output=False,
)
async def register_user(ctx: Ctx) -> str | InputRequiredResult:
    _require_form(ctx)
    if not _is_modern(ctx):
        return await _register_legacy(ctx)
    state = _state(ctx.request_state)
    responses = ctx.input_responses or {}
    if state.get("step") == "confirm":
        confirm = responses.get("confirm")
        profile = state.get("profile") or {}
        if not isinstance(confirm, ElicitResult):
            return _exact_input_required({"confirm": ElicitRequest(params=_confirm_form(profile))}, ctx.request_state)
        if confirm.action != "accept" or not (confirm.content or {}).get("confirm"):
            return "Registration not confirmed; nothing was created."
        return _registered(profile)

    answer = responses.get("profile")
    if not isinstance(answer, ElicitResult):
        return _exact_input_required(
            {"profile": ElicitRequest(params=_register_form())}, _dump_state({"step": "profile"})
        )
    if answer.action != "accept":
        return f"Registration {answer.action}d."
    profile = _checked_profile(answer)
    return _exact_input_required(
        {"confirm": ElicitRequest(params=_confirm_form(profile))},
        _dump_state({"step": "confirm", "profile": profile}),
    )


@mcp.tool(
    title="Connect an account",
    description="Asks you to open a web page out of band (URL-mode input request), as an OAuth sign-in "
    "would. The page is example.com; nothing is connected.",
    structured_output=False,
)
async def connect_account(
    ctx: Ctx,
    service: Annotated[Literal["calendar", "storage", "crm"], Field(description="What to connect")] = "calendar",
) -> str | InputRequiredResult:
    _require_url(ctx)
    if not _is_modern(ctx):
        elicitation_id = f"demo-connect-{secrets.token_hex(6)}"
        url = f"https://example.com/?connect={service}&elicitation={elicitation_id}"
        result = await ctx.elicit_url(
            f"Sign in to the demo {service} service to connect it.", url, elicitation_id=elicitation_id
        )
        if result.action != "accept":
            return f"Connection {result.action}d; nothing was connected."
        await anyio.sleep(0.5)  # the out-of-band step "finishes"
        await ctx.session.send_elicit_complete(elicitation_id, related_request_id=ctx.request_id)
        return f"Connected the demo {service} service (simulated; elicitation {elicitation_id} completed)."

    state = _state(ctx.request_state)
    answer = (ctx.input_responses or {}).get("sign_in")
    if not isinstance(answer, ElicitResult) or "connection" not in state:
        connection = secrets.token_hex(6)
        url = f"https://example.com/?connect={service}&connection={connection}"
        ask = ElicitRequestURLParams(message=f"Sign in to the demo {service} service to connect it.", url=url)
        return _exact_input_required({"sign_in": ElicitRequest(params=ask)}, _dump_state({"connection": connection}))
    if answer.action != "accept":
        return f"Connection {answer.action}d; nothing was connected."
    return f"Connected the demo {service} service (simulated; connection {state['connection']})."


COLOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "color": {
            "type": "string",
            "title": "Favourite colour",
            "description": "One of the palette's colours",
            "oneOf": [{"const": value, "title": title} for value, title in _PALETTE.items()],
        }
    },
    "required": ["color"],
}


def _color_form(ctx: Ctx) -> ElicitRequestFormParams:
    """The colour question; carries the app hint only when the client negotiated app-rendered elicitation."""
    params: dict[str, Any] = {
        "message": "Pick the colour for your demo profile.",
        "requestedSchema": COLOR_SCHEMA,
    }
    if _client_renders_app_elicitation(ctx.client_capabilities):
        params["_meta"] = {"ui": {"resourceUri": PICKER_URI}}
    return ElicitRequestFormParams.model_validate(params)


def _picked(answer: ElicitResult) -> CallToolResult:
    if answer.action != "accept":
        return CallToolResult(content=[TextContent(type="text", text=f"No colour picked ({answer.action}).")])
    problems = _schema_problems(COLOR_SCHEMA, answer.content)
    if problems:
        raise ToolError("The answer did not match the question (fields: " + ", ".join(problems) + ").")
    color = str((answer.content or {})["color"])
    rgb = _hex_rgb(color)
    swatch = _png(48, 48, lambda _x, _y: rgb)
    return CallToolResult(
        content=[
            TextContent(type="text", text=f"You picked {_PALETTE[color]} ({color})."),
            ImageContent(type="image", data=_b64(swatch), mime_type="image/png"),
        ]
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@mcp.tool(
    title="Pick a colour",
    description="Asks for a colour. Hosts that support app-rendered elicitation show a colour-picker app; "
    "others show an ordinary form with the same question.",
)
async def pick_color(ctx: Ctx) -> CallToolResult | InputRequiredResult:
    _require_form(ctx)
    if not _is_modern(ctx):
        return _picked(await _legacy_ask(ctx, _color_form(ctx)))
    answer = (ctx.input_responses or {}).get("color")
    if not isinstance(answer, ElicitResult):
        return _exact_input_required({"color": ElicitRequest(params=_color_form(ctx))}, _dump_state({"ask": "color"}))
    return _picked(answer)


# --------------------------------------------------------------------------------------------------
# Resources and prompts
# --------------------------------------------------------------------------------------------------

README = """# webhost demo server

This server ships with webhost so that a fresh install has something to show.

## Tools

| Tool | Shows |
|---|---|
| `get_weather` | text **and** structured output |
| `count_slowly` | progress notifications, cancellation |
| `generate_image`, `play_tone` | image and audio content |
| `plan_trip` | a form with every argument type |
| `divide` | an error result (divide by zero) |
| `show_dashboard` | an interactive **MCP App** |
| `register_user` | a two-round form input request |
| `connect_account` | a URL-mode input request |
| `pick_color` | an input request rendered by an app |

## Resources

- `demo://readme` — this page
- `demo://greeting/{name}` — a template: try `demo://greeting/Ada`
- `demo://logo.png` — a binary resource
"""


@mcp.resource(
    "demo://readme",
    name="readme",
    title="About this demo",
    description="What the demo server offers",
    mime_type="text/markdown",
)
def readme() -> str:
    return README


@mcp.resource(
    "demo://greeting/{name}",
    name="greeting",
    title="A greeting",
    description="A personal greeting for any name",
    mime_type="text/plain",
)
def greeting(name: str) -> str:
    return f"Hello, {name}! Welcome to the webhost demo."


def _logo() -> bytes:
    def pixel(x: int, y: int) -> tuple[int, int, int]:
        inside = (x - 31.5) ** 2 + (y - 31.5) ** 2 < 26**2
        if not inside:
            return (255, 255, 255)
        return _hex_rgb(list(_PALETTE)[(x // 8 + y // 8) % len(_PALETTE)])

    return _png(64, 64, pixel)


@mcp.resource(
    "demo://logo.png",
    name="logo",
    title="Demo logo",
    description="A 64×64 PNG (binary resource)",
    mime_type="image/png",
)
def logo() -> bytes:
    return _logo()


@mcp.prompt(title="Plan a trip", description="Ask for a day-by-day trip plan.")
def trip_planner(destination: str, days: str = "3", style: str = "relaxed") -> str:
    return (
        f"Plan a {style} trip to {destination} for {days} day(s). "
        "Give a short plan for each day and one tip about local food."
    )


@mcp.prompt(title="Explain a tool", description="Ask the assistant to explain one of this server's tools.")
def explain_tool(tool: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": {
                "type": "text",
                "text": f"What does the demo tool `{tool}` do, and when is it useful?",
            },
        },
    ]


# --------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m webhost.demo.server", description="The webhost demo MCP server.")
    parser.add_argument(
        "--http", type=int, metavar="PORT", help="serve Streamable HTTP on HOST:PORT/mcp instead of stdio"
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface for --http (default 127.0.0.1)")
    args = parser.parse_args(argv)
    if args.http is not None:
        mcp.run(transport="streamable-http", host=args.host, port=args.http, streamable_http_path="/mcp")
    else:
        mcp.run()


if __name__ == "__main__":
    main()
