"""A tool call's round trip through webhost against the same call made directly with the SDK client.

webhost path: WebSocket client (this process) → webhost (`webhost serve`, a subprocess) → stdio MCP server
(`tests/servers/basic.py`) → back. Direct path: `mcp.Client` (this process) → its own stdio `basic.py` → back.
Both sides run in the same run, interleaved ABBA after a warm-up, on the same era (2026-07-28: both
clients use `mode="auto"` against the dual-era server).

Rows: `echo` with a short text, and `big` returning ~1 MB of text (`--big-bytes N`). basic.py's tools have an
output schema, so the text comes back twice, as a text block and as `structuredContent.result`: about 2 MB
of JSON per result. A last line times `session/info`, a webhost request that touches no MCP server: the
floor of the WebSocket hop alone.

    .venv/bin/python bench/tool_call.py [--quick] [--iterations N] [--warmup N] [--big-bytes N]
                                        [--no-ws-compression] [--profile-webhost FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
from _common import (
    PYTHON,
    SERVERS,
    Meter,
    Row,
    RpcFailed,
    Summary,
    connect,
    environment,
    interleaved,
    iterations_for,
    parse_args,
    print_profile,
    print_table,
    run_webhost,
    stdio_entry,
    timed,
)
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

ECHO_TEXT = "hello, webhost"


def cases(big_bytes: int) -> list[tuple[str, str, dict[str, object], int, int, int]]:
    """(row name, tool, arguments, expected text length, default iterations, --quick iterations)"""
    big_name = f"big ({big_bytes / 1e6:g} MB text)"
    return [
        ("echo", "echo", {"text": ECHO_TEXT}, len(ECHO_TEXT), 1500, 300),
        (big_name, "big", {"size_bytes": big_bytes}, big_bytes, 300, 40),
    ]


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--big-bytes", type=int, default=1_000_000, metavar="N",
                        help="text size of the big row (default 1000000; the JSON result is about twice that)")


def _text_length(content: list[dict[str, object]]) -> int:
    return sum(len(str(block.get("text", ""))) for block in content)


async def main() -> int:
    args = parse_args(__doc__.splitlines()[0] if __doc__ else "tool_call", extra=add_args)
    print(f"tool_call: {environment()}")
    rows: list[Row] = []
    params = StdioServerParameters(command=PYTHON, args=[str(SERVERS / "basic.py")])
    with run_webhost({"basic": stdio_entry("basic")}, profile=args.profile_webhost) as host:
        async with Client(params) as direct, connect(host, compression=not args.no_ws_compression) as ws:
            state = await ws.wait_connected("basic")
            print(f"era: direct {direct.protocol_version}, webhost {state['protocolVersion']}")
            await direct.list_tools()
            await ws.request("tools/list", {"server": "basic"})
            calls = 0

            for name, tool, arguments, expected, default_n, quick_n in cases(args.big_bytes):

                async def via_direct(tool: str = tool, arguments: dict[str, object] = arguments,
                                     expected: int = expected) -> None:
                    result = await direct.call_tool(tool, arguments)
                    length = sum(len(b.text) for b in result.content if isinstance(b, TextContent))
                    if result.is_error or length != expected:
                        raise RuntimeError(f"direct {tool} failed: {str(result)[:300]}")

                async def via_webhost(tool: str = tool, arguments: dict[str, object] = arguments,
                                      expected: int = expected) -> None:
                    nonlocal calls
                    calls += 1
                    result = await ws.request("tools/call", {"server": "basic", "name": tool,
                                                             "arguments": arguments, "callId": f"c{calls}"})
                    if result.get("isError") or _text_length(result["content"]) != expected:
                        raise RuntimeError(f"webhost {tool} failed: {str(result)[:300]}")

                n = iterations_for(args, default_n, quick_n)
                meter = Meter(host, ws)
                paired = await interleaved(via_direct, via_webhost, iterations=n, warmup=args.warmup, meter=meter)
                rows.append(paired.row(name, meter))

            floor_n = iterations_for(args, 1500, 300)
            floor = Summary.of(await timed(lambda: ws.request("session/info", {}), iterations=floor_n,
                                           warmup=args.warmup))
    print()
    print_table("tool call round trip: webhost (WebSocket → webhost → stdio server) vs direct SDK Client", rows)
    print(f"WebSocket floor (session/info, no MCP server): median {floor.median_ms:.2f} ms, "
          f"p99 {floor.p99_ms:.2f} ms, n={floor.n}")
    if args.profile_webhost:
        print_profile(args.profile_webhost)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(anyio.run(main))
    except RpcFailed as exc:
        print(f"tool_call: webhost refused a request: {exc}", file=sys.stderr)
        sys.exit(1)
