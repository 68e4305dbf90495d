"""An elicitation round trip through webhost against the same exchange made directly with the SDK client.

The tool `form_defaults` of `tests/servers/elicit.py` asks one form question and returns what came back.

- webhost path: the WebSocket client (this process) sends `tools/call`; webhost (a subprocess) calls the
  server, which asks; the question reaches the client as an `elicitation/request` notification; the client
  answers at once with `elicitation/respond` (accept, the form's defaults); webhost validates the answer
  against the schema and releases it to the server; the call completes and its response reaches the client.
- direct path: `mcp.Client` with an `elicitation_callback` that returns the same answer at once.

No human time on either side: the figures are the machinery's cost. Both eras, as separate rows:
modern (2026-07-28: the question is an `InputRequiredResult`, the answer goes back in a retried
`tools/call`) and legacy (`--legacy` server flag; 2025-11-25: a server→client `elicitation/create` inside
the open call). Interleaved ABBA after a warm-up, in the same run.

    .venv/bin/python bench/elicitation.py [--quick] [--iterations N] [--warmup N] [--no-ws-compression]
                                          [--profile-webhost FILE]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
from _common import (
    PYTHON,
    SERVERS,
    Meter,
    Row,
    RpcFailed,
    RpcSocket,
    connect,
    environment,
    interleaved,
    iterations_for,
    parse_args,
    print_profile,
    print_table,
    reset_profile,
    run_webhost,
    stdio_entry,
)
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.types import ElicitRequestParams, ElicitResult, TextContent

TOOL = "form_defaults"
# The defaults of form_defaults' schema, sent back as an accepted answer by both sides.
ANSWER: dict[str, str | int | float | bool] = {
    "name": "Ada Lovelace",
    "age": 36,
    "score": 9.5,
    "tier": "gold",
    "subscribed": True,
}
# (row name, webhost server name, server flags, default iterations, --quick iterations)
ERAS: list[tuple[str, str, list[str], int, int]] = [
    ("modern (2026-07-28, MRTR)", "modern", [], 800, 10),
    ("legacy (2025-11-25)", "legacy", ["--legacy"], 800, 10),
]


async def answer_at_once(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(action="accept", content=dict(ANSWER))


def check(text: str, side: str) -> None:
    body = json.loads(text)
    if body.get("action") != "accept" or body.get("content") != ANSWER:
        raise RuntimeError(f"{side}: the server did not get the answer: {text}")


async def via_webhost(ws: RpcSocket, server: str, call_id: str) -> None:
    call = await ws.send("tools/call", {"server": server, "name": TOOL, "arguments": {}, "callId": call_id})
    request = await ws.notification("elicitation/request")
    respond = await ws.send("elicitation/respond", {"id": request["id"], "action": "accept", "content": ANSWER})
    await ws.response(respond)
    result: dict[str, Any] = await ws.response(call)
    check(result["content"][0]["text"], "webhost")


async def main() -> int:
    args = parse_args(__doc__.splitlines()[0] if __doc__ else "elicitation")
    print(f"elicitation: {environment()}")
    rows: list[Row] = []
    servers = {server: stdio_entry("elicit", *flags) for _, server, flags, _, _ in ERAS}
    with run_webhost(servers, profile=args.profile_webhost) as host:
        async with connect(host, compression=not args.no_ws_compression) as ws:
            for _, server, _, _, _ in ERAS:
                await ws.wait_connected(server)
            reset_profile(host)
            calls = 0
            for name, server, flags, default_n, quick_n in ERAS:
                state = await ws.wait_connected(server)
                params = StdioServerParameters(command=PYTHON, args=[str(SERVERS / "elicit.py"), *flags])
                async with Client(params, elicitation_callback=answer_at_once) as direct:
                    print(f"{name}: direct {direct.protocol_version}, webhost {state['protocolVersion']}")
                    await direct.list_tools()
                    await ws.request("tools/list", {"server": server})

                    async def one_direct() -> None:
                        result = await direct.call_tool(TOOL, {})
                        check("".join(b.text for b in result.content if isinstance(b, TextContent)), "direct")

                    async def one_webhost(server: str = server) -> None:
                        nonlocal calls
                        calls += 1
                        await via_webhost(ws, server, f"c{calls}")

                    n = iterations_for(args, default_n, quick_n)
                    meter = Meter(host, ws)
                    paired = await interleaved(one_direct, one_webhost, iterations=n, warmup=args.warmup, meter=meter)
                    rows.append(paired.row(name, meter))
    print()
    print_table(
        f"elicitation round trip ({TOOL}, answered at once): webhost (WebSocket notification + "
        "elicitation/respond) vs direct SDK Client (elicitation_callback)",
        rows,
    )
    if args.profile_webhost:
        print_profile(args.profile_webhost)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(anyio.run(main))
    except RpcFailed as exc:
        print(f"elicitation: webhost refused a request: {exc}", file=sys.stderr)
        sys.exit(1)
