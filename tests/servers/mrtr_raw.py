"""Hand-written stdio MCP server speaking only 2026-07-28: app-rendered elicitation over MRTR, byte-exact.

No SDK: it reads newline-delimited JSON-RPC on stdin and writes crafted responses, so every byte of
`server/discover`, `InputRequiredResult` (with `params._meta.ui.resourceUri`) and `requestState` is
exactly as written here. Run it with `python tests/servers/mrtr_raw.py`.

- `server/discover` advertises `extensions["io.modelcontextprotocol/ui"] = {"elicitation": {}}`.
- `initialize` is rejected with -32022 (UnsupportedProtocolVersion, `data.supported = ["2026-07-28"]`);
  so is a request whose envelope names another version. A request without the envelope is -32602.
- Tools (all ask one form question, key `color`, over MRTR):
  - `pick_color`: the hint names `ui://mrtr/picker.html`, an app that answers properly;
  - `pick_never_init`: `ui://mrtr/never-init.html` never sends `ui/initialize`;
  - `pick_no_capability`: `ui://mrtr/no-capability.html` initialises without `appCapabilities.elicitation`;
  - `pick_bad_answer`: `ui://mrtr/bad-answer.html` answers with content that violates the schema;
  - `pick_missing_resource`: the hint names `ui://mrtr/missing.html`, which does not exist;
  - `echo`: no input request, for smoke tests.
- The hint is attached only when the request's client capabilities negotiate app-rendered elicitation
  (form elicitation, the UI extension listing `text/html;profile=mcp-app`, and its `elicitation` member),
  as SEP-3118 requires; otherwise the same question goes out as a plain form. A client without form
  elicitation gets -32021.
- `requestState` is a fixed, visible string per tool with awkward characters; a retry must echo it byte
  for byte or get -32602. An answer that breaks the schema reaching the server gives an `isError` result
  saying so (the host should never let one through).
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any

VERSION = "2026-07-28"
UI_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME = "text/html;profile=mcp-app"
SERVER_INFO = {"name": "mrtr-raw", "version": "1.0.0"}
META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}

PALETTE = {"#e11d48": "Raspberry", "#16a34a": "Fern", "#2563eb": "Cobalt", "#eab308": "Sunflower"}
COLOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "color": {
            "type": "string",
            "title": "Colour",
            "oneOf": [{"const": value, "title": title} for value, title in PALETTE.items()],
        }
    },
    "required": ["color"],
}

PICK_TOOLS: dict[str, str] = {
    "pick_color": "ui://mrtr/picker.html",
    "pick_never_init": "ui://mrtr/never-init.html",
    "pick_no_capability": "ui://mrtr/no-capability.html",
    "pick_bad_answer": "ui://mrtr/bad-answer.html",
    "pick_missing_resource": "ui://mrtr/missing.html",
}


def request_state(tool: str) -> str:
    return f'mrtr-raw ✓ "{tool}" +/= \\ round-1'


# ---- app documents -------------------------------------------------------------------------------------------

_BRIDGE = r"""
const logEl = document.getElementById("log");
function log(line) { logEl.textContent += line + "\n"; }
let nextId = 1;
const pending = new Map();
function post(message) { window.parent.postMessage(message, "*"); }
function request(method, params) {
  const id = nextId++;
  post({ jsonrpc: "2.0", id: id, method: method, params: params });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
const handlers = {};
window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const msg = event.data;
  if (!msg || msg.jsonrpc !== "2.0") return;
  if (typeof msg.method !== "string") {
    const entry = pending.get(msg.id);
    if (entry) { pending.delete(msg.id); msg.error ? entry.reject(msg.error) : entry.resolve(msg.result); }
    return;
  }
  log("received " + msg.method);
  if (msg.id === undefined || msg.id === null) return;
  if (msg.method === "ping" || msg.method === "ui/resource-teardown") {
    post({ jsonrpc: "2.0", id: msg.id, result: {} });
  } else if (handlers[msg.method]) {
    handlers[msg.method](msg.params || {}, msg.id);
  } else {
    post({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } });
  }
});
async function initialize(appCapabilities) {
  const result = await request("ui/initialize", {
    appInfo: { name: APP, version: "1.0.0" }, appCapabilities: appCapabilities, protocolVersion: "2026-01-26",
  });
  post({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
  log("initialized; host elicitation capability: " + JSON.stringify((result.hostCapabilities || {}).elicitation));
  return result;
}
"""

_PICKER = r"""
handlers["elicitation/create"] = (params, id) => {
  log("elicitation/create: " + params.message);
  const property = (params.requestedSchema || {}).properties || {};
  const options = (property.color && property.color.oneOf) || [];
  const box = document.getElementById("choices");
  box.replaceChildren();
  for (const option of options) {
    const button = document.createElement("button");
    button.dataset.value = option.const;
    button.textContent = option.title;
    button.style.borderLeft = "16px solid " + (/^#[0-9a-f]{6}$/i.test(option.const) ? option.const : "gray");
    button.addEventListener("click", () => answer(id, { action: "accept", content: { color: option.const } }));
    box.appendChild(button);
  }
  for (const action of ["decline", "cancel"]) {
    const button = document.createElement("button");
    button.dataset.action = action;
    button.textContent = action;
    button.addEventListener("click", () => answer(id, { action: action }));
    box.appendChild(button);
  }
};
function answer(id, result) {
  post({ jsonrpc: "2.0", id: id, result: result });
  log("answered " + JSON.stringify(result));
  logEl.dataset.done = "true";
}
initialize({ elicitation: {} });
"""

_NEVER_INIT = r"""
log("this app never sends ui/initialize");
"""

_NO_CAPABILITY = r"""
initialize({}).then(() => { log("initialized without appCapabilities.elicitation"); logEl.dataset.done = "true"; });
"""

_BAD_ANSWER = r"""
handlers["elicitation/create"] = (params, id) => {
  const result = { action: "accept", content: { color: "not-a-colour", injected: "<script>alert(1)<\/script>" } };
  post({ jsonrpc: "2.0", id: id, result: result });
  log("answered with a schema-violating result " + JSON.stringify(result));
  logEl.dataset.done = "true";
};
initialize({ elicitation: {} });
"""


def _page(app: str, script: str) -> str:
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'><title>"
        + app
        + "</title></head>\n<body><h1>"
        + app
        + "</h1><div id='choices'></div><pre id='log'></pre>\n<script>\nconst APP = "
        + json.dumps(app)
        + ";\n"
        + _BRIDGE
        + script
        + "</script></body></html>\n"
    )


RESOURCES: dict[str, tuple[str, str]] = {
    "ui://mrtr/picker.html": ("picker", _page("mrtr-picker", _PICKER)),
    "ui://mrtr/never-init.html": ("never-init", _page("mrtr-never-init", _NEVER_INIT)),
    "ui://mrtr/no-capability.html": ("no-capability", _page("mrtr-no-capability", _NO_CAPABILITY)),
    "ui://mrtr/bad-answer.html": ("bad-answer", _page("mrtr-bad-answer", _BAD_ANSWER)),
}


# ---- JSON-RPC plumbing ----------------------------------------------------------------------------------------


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def envelope(params: dict[str, Any]) -> dict[str, Any]:
    """The request `_meta`; enforces the 2026-07-28 envelope rules."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or "io.modelcontextprotocol/protocolVersion" not in meta:
        raise RpcError(-32602, "Missing io.modelcontextprotocol/protocolVersion in params._meta")
    requested = meta["io.modelcontextprotocol/protocolVersion"]
    if requested != VERSION:
        raise RpcError(-32022, "Unsupported protocol version", {"supported": [VERSION], "requested": requested})
    if not isinstance(meta.get("io.modelcontextprotocol/clientCapabilities"), dict):
        raise RpcError(-32602, "Missing io.modelcontextprotocol/clientCapabilities in params._meta")
    return meta


def wants_app_elicitation(capabilities: dict[str, Any]) -> bool:
    elicitation = capabilities.get("elicitation")
    if not isinstance(elicitation, dict) or ("form" not in elicitation and "url" in elicitation):
        return False
    settings = (capabilities.get("extensions") or {}).get(UI_EXTENSION)
    return (
        isinstance(settings, dict)
        and APP_MIME in (settings.get("mimeTypes") or [])
        and isinstance(settings.get("elicitation"), dict)
    )


def cacheable(result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "resultType": "complete", "ttlMs": 0, "cacheScope": "private", "_meta": META}


def discover() -> dict[str, Any]:
    return cacheable(
        {
            "supportedVersions": [VERSION],
            "capabilities": {"tools": {}, "resources": {}, "extensions": {UI_EXTENSION: {"elicitation": {}}}},
            "instructions": "Modern-only raw server: app-rendered elicitation over MRTR.",
        }
    )


def list_tools() -> dict[str, Any]:
    tools: list[dict[str, Any]] = [
        {
            "name": "echo",
            "title": "Echo",
            "description": "Return the text.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        }
    ]
    for name, uri in PICK_TOOLS.items():
        tools.append(
            {
                "name": name,
                "title": name.replace("_", " ").capitalize(),
                "description": f"Ask for a colour; app hint {uri}.",
                "inputSchema": {"type": "object", "properties": {}},
            }
        )
    return cacheable({"tools": tools})


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error, "resultType": "complete", "_meta": META}


def call_tool(params: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "echo":
        return text_result(str(arguments.get("text", "")))
    if name not in PICK_TOOLS:
        raise RpcError(-32602, f"Unknown tool: {name}")
    capabilities = meta["io.modelcontextprotocol/clientCapabilities"]
    elicitation = capabilities.get("elicitation")
    if not isinstance(elicitation, dict) or ("form" not in elicitation and "url" in elicitation):
        raise RpcError(-32021, "form elicitation required", {"requiredCapabilities": {"elicitation": {"form": {}}}})
    state = request_state(name)
    echoed = params.get("requestState")
    if echoed is not None and echoed != state:
        raise RpcError(-32602, "Invalid requestState: not echoed byte for byte")
    answer = (params.get("inputResponses") or {}).get("color")
    if echoed is None or not isinstance(answer, dict):
        ask: dict[str, Any] = {"mode": "form", "message": "Pick a colour.", "requestedSchema": COLOR_SCHEMA}
        if wants_app_elicitation(capabilities):
            ask["_meta"] = {"ui": {"resourceUri": PICK_TOOLS[name]}}
        return {
            "resultType": "input_required",
            "inputRequests": {"color": {"method": "elicitation/create", "params": ask}},
            "requestState": state,
            "_meta": META,
        }
    action = answer.get("action")
    if action != "accept":
        return text_result(f"No colour picked ({action}).")
    content = answer.get("content")
    if not isinstance(content, dict) or set(content) != {"color"} or content["color"] not in PALETTE:
        return text_result(
            "The server received an answer that violates the requested schema: " + json.dumps(content),
            is_error=True,
        )
    return text_result(f"You picked {PALETTE[content['color']]} ({content['color']}).")


def list_resources() -> dict[str, Any]:
    return cacheable(
        {
            "resources": [
                {"uri": uri, "name": name, "mimeType": APP_MIME, "title": f"{name} app"}
                for uri, (name, _) in RESOURCES.items()
            ]
        }
    )


def read_resource(params: dict[str, Any]) -> dict[str, Any]:
    uri = params.get("uri")
    if uri not in RESOURCES:
        raise RpcError(-32602, f"Resource not found: {uri}", {"uri": uri})
    return cacheable({"contents": [{"uri": uri, "mimeType": APP_MIME, "text": RESOURCES[uri][1]}]})


def handle(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        raise RpcError(
            -32022,
            "This server speaks only 2026-07-28; the initialize handshake is not supported",
            {"supported": [VERSION], "requested": params.get("protocolVersion")},
        )
    meta = envelope(params)
    if method == "server/discover":
        return discover()
    if method == "tools/list":
        return list_tools()
    if method == "tools/call":
        return call_tool(params, meta)
    if method == "resources/list":
        return list_resources()
    if method == "resources/templates/list":
        return cacheable({"resourceTemplates": []})
    if method == "resources/read":
        return read_resource(params)
    raise RpcError(-32601, f"Method not found: {method}")


def main() -> None:
    for stream in (sys.stdin, sys.stdout):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(encoding="utf-8", newline="\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if not isinstance(message, dict) or "method" not in message:
            continue  # a response or junk: this server sends no requests
        if "id" not in message:
            continue  # notifications (e.g. notifications/cancelled) need no answer
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        try:
            send({"jsonrpc": "2.0", "id": message["id"], "result": handle(message["method"], params)})
        except RpcError as error:
            body: dict[str, Any] = {"code": error.code, "message": error.message}
            if error.data is not None:
                body["data"] = error.data
            send({"jsonrpc": "2.0", "id": message["id"], "error": body})


if __name__ == "__main__":
    main()
