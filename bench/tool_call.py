"""A tool call's round trip through webhost against the same call made directly with the SDK client.

webhost path: WebSocket client (this process) → webhost (`webhost serve`, a subprocess) → stdio MCP server
(`tests/servers/basic.py`) → back. Direct path: `mcp.Client` (this process) → its own stdio `basic.py` → back.
Both sides run in the same run, interleaved ABBA after a warm-up, on the same era (2026-07-28: both
clients use `mode="auto"` against the dual-era server).

Rows: `echo` with a short text; `big` returning ~1 MB of text (`--big-bytes N`; basic.py's `big` has an output
schema, so the text comes back twice, as a text block and as `structuredContent.result`: about 2 MB of JSON,
very repetitive, so it compresses ~500:1); `binary` with an image of 750 kB of random bytes (about 1 MB of
base64 that does not compress). A last line times `session/info`, a webhost request that touches no MCP
server: the floor of the WebSocket hop alone.

Row `access` (asked for by name, not in the default rows): the cost of the access rules (`webhost.access`,
contract §9). A second webhost serves `basic` twice: as `ruled`, whose entry has 200 rules, each naming one of its
tools (so every call of it is checked against its listing: the rules' dearest path), and as `plain`, which no
rule names. `echo` on each, ABBA in the same run and the same process (two processes differ by more than the
rules cost). The goal is at most 2 % more.

    .venv/bin/python bench/tool_call.py [--quick] [--iterations N] [--warmup N] [--big-bytes N]
                                        [--direct-transport sdk|webhost] [--no-ws-compression]
                                        [--rows echo,big,image,access]
                                        [--profile-webhost FILE]
"""

from __future__ import annotations

import argparse
import math
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
    Summary,
    Timed,
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
    timed,
)
from mcp import Client, StdioServerParameters
from mcp.types import ImageContent, TextContent

ECHO_TEXT = "hello, webhost"
ACCESS_RULES = 200
# 200 rules, each naming a tool of `ruled` (none of them echo, which goes with its server) for a group of its own.
ACCESS_OPTIONS = {
    "access": {"servers": {"ruled": {"tools": {f"tool_{i}": {"groups": [f"group-{i}"]} for i in range(ACCESS_RULES)}}}}
}
IMAGE_BYTES = 750_000  # random bytes: about 1 MB of base64 that permessage-deflate cannot shrink much


def cases(big_bytes: int) -> list[tuple[str, str, dict[str, object], int, int, int]]:
    """(row name, tool, arguments, expected payload length, default iterations, --quick iterations)

    The payload length is what `payload_length` counts in the result: text blocks' text and image blocks' data.
    """
    image_text = f"{IMAGE_BYTES} image bytes, 256 blob bytes"
    return [
        ("echo", "echo", {"text": ECHO_TEXT}, len(ECHO_TEXT), 1500, 10),
        (f"big ({big_bytes / 1e6:g} MB text)", "big", {"size_bytes": big_bytes}, big_bytes, 300, 3),
        (
            "image (1 MB base64)",
            "binary",
            {"image_bytes": IMAGE_BYTES},
            4 * math.ceil(IMAGE_BYTES / 3) + len(image_text),
            300,
            3,
        ),
    ]


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--big-bytes",
        type=int,
        default=1_000_000,
        metavar="N",
        help="text size of the big row (default 1000000; the JSON result is about twice that)",
    )
    parser.add_argument(
        "--direct-transport",
        choices=["sdk", "webhost"],
        default="sdk",
        help="the direct client's stdio transport: the SDK's stdio_client (default), or webhost's "
        "own (webhost.upstream.stdio), to leave the transport out of the comparison",
    )
    parser.add_argument(
        "--rows",
        default="echo,big,image",
        metavar="LIST",
        help="which rows to run, comma-separated among echo, big, image, access (default echo,big,image; a "
        "profile of one row shows that row's costs alone)",
    )


def direct_target(kind: str, params: StdioServerParameters) -> Any:
    """What the direct `Client` connects through: the server parameters (the SDK spawns it) or webhost's transport."""
    if kind == "sdk":
        return params
    from webhost.upstream.stdio import stdio_transport

    return stdio_transport(params)


def payload_length(content: list[dict[str, object]]) -> int:
    """Characters of text blocks' `text` and image blocks' `data` (the wire form, as the page gets it)."""
    return sum(
        len(str(block.get("text") or block.get("data") or ""))
        for block in content
        if block.get("type") in ("text", "image")
    )


async def main() -> int:
    args = parse_args(__doc__.splitlines()[0] if __doc__ else "tool_call", extra=add_args)
    print(f"tool_call: {environment()}")
    rows: list[Row] = []
    params = StdioServerParameters(command=PYTHON, args=[str(SERVERS / "basic.py")])
    with run_webhost({"basic": stdio_entry("basic")}, profile=args.profile_webhost) as host:
        direct_client = Client(direct_target(args.direct_transport, params))
        async with direct_client as direct, connect(host, compression=not args.no_ws_compression) as ws:
            state = await ws.wait_connected("basic")
            print(
                f"era: direct {direct.protocol_version}, webhost {state['protocolVersion']}; "
                f"direct stdio transport: {args.direct_transport}"
            )
            await direct.list_tools()
            await ws.request("tools/list", {"server": "basic"})
            reset_profile(host)
            calls = 0

            wanted = {r.strip() for r in args.rows.split(",") if r.strip()}
            for name, tool, arguments, expected, default_n, quick_n in cases(args.big_bytes):
                if name.split(" ")[0] not in wanted:
                    continue

                async def via_direct(
                    tool: str = tool, arguments: dict[str, object] = arguments, expected: int = expected
                ) -> None:
                    result = await direct.call_tool(tool, arguments)
                    length = sum(
                        len(b.text) if isinstance(b, TextContent) else len(b.data)
                        for b in result.content
                        if isinstance(b, TextContent | ImageContent)
                    )
                    if result.is_error or length != expected:
                        raise RuntimeError(f"direct {tool} failed: {str(result)[:300]}")

                async def via_webhost(
                    tool: str = tool, arguments: dict[str, object] = arguments, expected: int = expected
                ) -> None:
                    nonlocal calls
                    calls += 1
                    result = await ws.request(
                        "tools/call", {"server": "basic", "name": tool, "arguments": arguments, "callId": f"c{calls}"}
                    )
                    if result.get("isError") or payload_length(result["content"]) != expected:
                        raise RuntimeError(f"webhost {tool} failed: {str(result)[:300]}")

                n = iterations_for(args, default_n, quick_n)
                meter = Meter(host, ws)
                paired = await interleaved(via_direct, via_webhost, iterations=n, warmup=args.warmup, meter=meter)
                rows.append(paired.row(name, meter))

            floor_n = iterations_for(args, 1500, 10)
            floor = Summary.of(
                await timed(lambda: ws.request("session/info", {}), iterations=floor_n, warmup=args.warmup)
            )
    access = await access_row(args) if "access" in wanted else None
    print()
    print_table("tool call round trip: webhost (WebSocket → webhost → stdio server) vs direct SDK Client", rows)
    print(
        f"WebSocket floor (session/info, no MCP server): median {floor.median_ms:.2f} ms, "
        f"p99 {floor.p99_ms:.2f} ms, n={floor.n}"
    )
    if access is not None:
        print(access)
    if args.profile_webhost:
        print_profile(args.profile_webhost)
    return 0


async def access_row(args: argparse.Namespace) -> str:
    """echo on a server ACCESS_RULES rules name against echo on one no rule names, in one webhost, ABBA."""
    servers = {"plain": stdio_entry("basic"), "ruled": stdio_entry("basic")}
    with run_webhost(servers, options=ACCESS_OPTIONS) as host:
        async with connect(host, compression=not args.no_ws_compression) as ws:
            for server in servers:
                await ws.wait_connected(server)
                await ws.request("tools/list", {"server": server})
            calls = 0

            def echo(server: str) -> Timed:
                async def call() -> None:
                    nonlocal calls
                    calls += 1
                    arguments = {"text": ECHO_TEXT}
                    params = {"server": server, "name": "echo", "arguments": arguments, "callId": f"a{calls}"}
                    result = await ws.request("tools/call", params)
                    if result.get("isError") or payload_length(result["content"]) != len(ECHO_TEXT):
                        raise RuntimeError(f"echo on {server} failed: {str(result)[:300]}")

                return call

            n = iterations_for(args, 1500, 10)
            paired = await interleaved(echo("plain"), echo("ruled"), iterations=n, warmup=args.warmup)
    off, on = Summary.of(paired.direct_s), Summary.of(paired.webhost_s)
    extra = (on.median_ms / off.median_ms - 1) * 100
    return (
        f"access rules: echo with {ACCESS_RULES} rules median {on.median_ms:.3f} ms (p99 {on.p99_ms:.3f}), "
        f"without {off.median_ms:.3f} ms (p99 {off.p99_ms:.3f}), n={on.n}: {extra:+.1f} % (goal <= +2 %)"
    )


if __name__ == "__main__":
    try:
        sys.exit(anyio.run(main))
    except RpcFailed as exc:
        print(f"tool_call: webhost refused a request: {exc}", file=sys.stderr)
        sys.exit(1)
