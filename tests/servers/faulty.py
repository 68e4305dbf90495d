"""Hand-written stdio MCP server that misbehaves on purpose, in the way `argv[1]` chooses.

No SDK. Run it as `python tests/servers/faulty.py MODE [SECONDS] [--legacy]` (`--legacy`: `server/discover`
is not found, so the client falls back to `initialize`). Apart from its fault it is a correct
dual-era server: a first request of `initialize` makes it legacy (it answers the client's version if it
knows it, else 2025-11-25), a first request carrying the 2026-07-28 `_meta` envelope (for example
`server/discover`) makes it modern (`resultType`, `ttlMs`, `cacheScope`, `serverInfo` stamps). It has
one tool, `echo(text)`, plus `tools/list`, `ping` (legacy) and `resources/list`/`prompts/list`
(empty).

Modes:

- `normal`: no fault (a control).
- `garbage`: writes non-JSON noise (and JSON that is not JSON-RPC) to stdout at start and before every
  response, then answers correctly.
- `crash_on_call`: on `tools/call`, writes half a response line and exits with status 1.
- `exit_at_start`: prints a message on stderr and exits with status 3 before reading anything.
- `no_result_type`: on 2026-07-28, the `tools/call` result lacks the required `resultType`.
- `slow_start`: sleeps SECONDS (default 3) before reading anything.
- `hang_on_call`: never answers `tools/call` (answers everything else).
- `bad_items`: every list holds one good item and malformed ones (a tool whose `inputSchema` is a string,
  one without a name, a resource without a `uri`, a template without `uriTemplate`, a prompt whose
  `arguments` is not a list); the tool `typed` declares an `outputSchema` and returns `structuredContent`
  that breaks it (`{"n": "seven"}` for an integer `n`).
"""

from __future__ import annotations

import io
import json
import sys
import time
from typing import Any

MODES = (
    "normal",
    "garbage",
    "crash_on_call",
    "exit_at_start",
    "no_result_type",
    "slow_start",
    "hang_on_call",
    "bad_items",
)
MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SERVER_INFO = {"name": "faulty", "version": "1.0.0"}
NOISE = [
    "this line is not JSON",
    "{not json either",
    "[]",
    '{"hello": "world"}',
    '{"jsonrpc": "2.0", "id": "nobody-asked", "result": {}}',
    "\x1b[31mcoloured log line\x1b[0m",
]
ECHO_TOOL = {
    "name": "echo",
    "title": "Echo",
    "description": "Return the text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}

TYPED_TOOL = {
    "name": "typed",
    "description": "Declares an output schema its result breaks.",
    "inputSchema": {"type": "object"},
    "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
}
BAD_LISTS: dict[str, tuple[str, list[Any]]] = {
    "tools/list": ("tools", [ECHO_TOOL, {"name": "broken", "inputSchema": "nope"}, {"title": "No name"}, TYPED_TOOL]),
    "resources/list": (
        "resources",
        [{"uri": "faulty://good", "name": "good"}, {"name": "no-uri"}, {"uri": "faulty://also", "name": 7}],
    ),
    "resources/templates/list": (
        "resourceTemplates",
        [{"uriTemplate": "faulty://t/{x}", "name": "good"}, {"name": "no-template"}],
    ),
    "prompts/list": ("prompts", [{"name": "good"}, {"name": "bad-args", "arguments": "x"}]),
}


class Faulty:
    def __init__(self, mode: str, *, legacy_only: bool = False) -> None:
        self.mode = mode
        self.legacy_only = legacy_only
        self.era: str | None = None  # "legacy" or "modern", fixed by the first request

    def write(self, line: str) -> None:
        sys.stdout.write(line)
        sys.stdout.flush()

    def noise(self) -> None:
        for line in NOISE:
            self.write(line + "\n")

    def send(self, message: dict[str, Any]) -> None:
        if self.mode == "garbage":
            self.noise()
        self.write(json.dumps(message, separators=(",", ":")) + "\n")

    def result(self, message_id: Any, result: dict[str, Any], *, cacheable: bool = False) -> None:
        if self.era == "modern":
            result = {"resultType": "complete", **result, "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}
            if cacheable:
                result.update(ttlMs=0, cacheScope="private")
        self.send({"jsonrpc": "2.0", "id": message_id, "result": result})

    def error(self, message_id: Any, code: int, message: str, data: Any = None) -> None:
        body: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            body["data"] = data
        self.send({"jsonrpc": "2.0", "id": message_id, "error": body})

    def capabilities(self) -> dict[str, Any]:
        return {"tools": {}, "resources": {}, "prompts": {}}

    def handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if not isinstance(method, str) or "id" not in message:
            return  # responses and notifications need no answer
        message_id = message["id"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        enveloped = "io.modelcontextprotocol/protocolVersion" in meta
        if self.era is None:
            self.era = "modern" if enveloped and method != "initialize" else "legacy"

        if method == "initialize":
            if self.era == "modern":
                self.error(message_id, -32022, "connection is modern", {"supported": [MODERN]})
                return
            requested = params.get("protocolVersion")
            version = requested if requested in LEGACY else LEGACY[0]
            self.result(
                message_id,
                {"protocolVersion": version, "capabilities": self.capabilities(), "serverInfo": SERVER_INFO},
            )
            return
        if self.era == "modern" and meta.get("io.modelcontextprotocol/protocolVersion") != MODERN:
            requested = meta.get("io.modelcontextprotocol/protocolVersion")
            self.error(
                message_id, -32022, "Unsupported protocol version", {"supported": [MODERN], "requested": requested}
            )
            return
        if method == "server/discover" and self.legacy_only:
            self.era = None  # the next request (initialize) decides
            self.error(message_id, -32601, "Method not found")
            return
        if method == "server/discover":
            if self.era != "modern":
                self.error(message_id, -32601, "Method not found")
                return
            result = {"supportedVersions": [MODERN], "capabilities": self.capabilities()}
            self.result(message_id, result, cacheable=True)
        elif method == "ping" and self.era == "legacy":
            self.result(message_id, {})
        elif self.mode == "bad_items" and method in BAD_LISTS:
            key, items = BAD_LISTS[method]
            self.result(message_id, {key: items}, cacheable=True)
        elif method == "tools/list":
            self.result(message_id, {"tools": [ECHO_TOOL]}, cacheable=True)
        elif method == "resources/list":
            self.result(message_id, {"resources": []}, cacheable=True)
        elif method == "resources/templates/list":
            self.result(message_id, {"resourceTemplates": []}, cacheable=True)
        elif method == "prompts/list":
            self.result(message_id, {"prompts": []}, cacheable=True)
        elif method == "tools/call":
            self.call_tool(message_id, params)
        else:
            self.error(message_id, -32601, f"Method not found: {method}")

    def call_tool(self, message_id: Any, params: dict[str, Any]) -> None:
        if self.mode == "crash_on_call":
            self.write('{"jsonrpc":"2.0","id":' + json.dumps(message_id) + ',"result":{"content":[')
            print("faulty: crashing in the middle of tools/call (mode crash_on_call)", file=sys.stderr, flush=True)
            sys.exit(1)
        if self.mode == "hang_on_call":
            return
        if self.mode == "bad_items" and params.get("name") == "typed":
            content = [{"type": "text", "text": '{"n": "seven"}'}]
            self.result(message_id, {"content": content, "structuredContent": {"n": "seven"}, "isError": False})
            return
        if params.get("name") != "echo":
            self.error(message_id, -32602, f"Unknown tool: {params.get('name')}")
            return
        text = str((params.get("arguments") or {}).get("text", ""))
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
        if self.mode == "no_result_type" and self.era == "modern":
            result["_meta"] = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
            self.send({"jsonrpc": "2.0", "id": message_id, "result": result})  # no resultType
            return
        self.result(message_id, result)


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "normal"
    if mode not in MODES:
        print(f"faulty: unknown mode {mode!r}; choose one of {', '.join(MODES)}", file=sys.stderr)
        sys.exit(2)
    if mode == "exit_at_start":
        print("faulty: exiting at start with status 3 (mode exit_at_start)", file=sys.stderr, flush=True)
        sys.exit(3)
    for stream in (sys.stdin, sys.stdout):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(encoding="utf-8", newline="\n")
    server = Faulty(mode, legacy_only="--legacy" in sys.argv[2:])
    if mode == "slow_start":
        seconds = float(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "--legacy" else 3.0
        print(f"faulty: sleeping {seconds} s before reading stdin (mode slow_start)", file=sys.stderr, flush=True)
        time.sleep(seconds)
    if mode == "garbage":
        server.noise()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            server.error(None, -32700, "Parse error")
            continue
        if isinstance(message, dict):
            server.handle(message)


if __name__ == "__main__":
    main()
