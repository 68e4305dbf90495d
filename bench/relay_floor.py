"""The floor of any SDK-based relay: `echo` directly, through the least relay that can be written, and through webhost.

Three sides in the same run, rotated so that none always goes first:

- **direct**: `mcp.Client(StdioServerParameters(...))` in this process → its own `tests/servers/basic.py`;
- **bare relay**: a WebSocket client in this process → a 30-line uvicorn + Starlette app in a subprocess (the
  same uvicorn settings as `webhost serve`: no deflate) holding one `mcp.Client` over webhost's stdio transport
  → `basic.py`; per frame it parses the request, awaits `client.call_tool`, dumps the result
  (`model_dump(mode="json", by_alias=True, exclude_none=True)`), encodes it with orjson and sends one frame.
  No auth, no activity log, no timeout, no audit, no cancel scope: what is left is the extra process hop,
  the WebSocket and the SDK client's own work;
- **webhost**: the same WebSocket client → `webhost serve` → `basic.py`, as `tool_call.py` measures it.

What webhost adds over the bare relay is its own code; what the bare relay adds over direct is the hop that
no relay can avoid. Nothing is asserted.

    .venv/bin/python bench/relay_floor.py [--quick] [--iterations N] [--warmup N]
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
import websockets
from _common import (
    PYTHON,
    ROOT,
    SERVERS,
    Summary,
    connect,
    environment,
    free_port,
    iterations_for,
    load_average,
    parse_args,
    run_webhost,
    stdio_entry,
)
from mcp import Client, StdioServerParameters
from websockets.asyncio.client import ClientConnection

TEXT = "hello, webhost"

RELAY = """
import sys, orjson, uvicorn
from contextlib import asynccontextmanager
from mcp import Client, StdioServerParameters
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from webhost.upstream.stdio import stdio_transport

state = {}

@asynccontextmanager
async def lifespan(app):
    params = StdioServerParameters(command=sys.executable, args=[sys.argv[2]])
    async with Client(stdio_transport(params)) as client:
        state["client"] = client
        yield

async def ws(websocket):
    await websocket.accept()
    client = state["client"]
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        request = orjson.loads(message["text"])
        p = request["params"]
        result = await client.call_tool(p["name"], p["arguments"])
        wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        await websocket.send_text(orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": wire}).decode())

app = Starlette(routes=[WebSocketRoute("/ws", ws)], lifespan=lifespan)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", ws_per_message_deflate=False)
"""


async def open_relay(port: int) -> ClientConnection:
    """A socket to the bare relay started on `port`, once it listens (it imports the SDK first: about a second)."""
    for _ in range(100):
        try:
            return await websockets.connect(f"ws://127.0.0.1:{port}/ws", max_size=None, compression=None)
        except OSError:
            await anyio.sleep(0.1)
    raise SystemExit("the bare relay did not start")


async def main() -> int:
    args = parse_args(__doc__.splitlines()[0] if __doc__ else "relay_floor")
    n = iterations_for(args, 1500, 10)
    print(f"relay_floor: {environment()}")
    port = free_port()
    relay = subprocess.Popen([PYTHON, "-c", RELAY, str(port), str(SERVERS / "basic.py")], cwd=ROOT)
    try:
        params = StdioServerParameters(command=PYTHON, args=[str(SERVERS / "basic.py")])
        with run_webhost({"basic": stdio_entry("basic")}) as host:
            async with Client(params) as direct, connect(host, compression=False) as wh:
                await wh.wait_connected("basic")
                bare = await open_relay(port)
                calls = 0

                async def via_direct() -> None:
                    result = await direct.call_tool("echo", {"text": TEXT})
                    assert not result.is_error

                async def via_bare() -> None:
                    nonlocal calls
                    calls += 1
                    args = {"name": "echo", "arguments": {"text": TEXT}}
                    await bare.send(json.dumps({"jsonrpc": "2.0", "id": calls, "method": "tools/call", "params": args}))
                    answer = json.loads(await bare.recv())
                    assert answer["id"] == calls and not answer["result"].get("isError")

                async def via_webhost() -> None:
                    nonlocal calls
                    calls += 1
                    params = {"server": "basic", "name": "echo", "arguments": {"text": TEXT}, "callId": f"c{calls}"}
                    result = await wh.request("tools/call", params)
                    assert not result.get("isError")

                sides = {"direct": via_direct, "bare relay": via_bare, "webhost": via_webhost}
                samples: dict[str, list[float]] = {name: [] for name in sides}
                order = list(sides)
                for _ in range(args.warmup):
                    for run in sides.values():
                        await run()
                for index in range(n):
                    rotated = order[index % 3 :] + order[: index % 3]
                    for name in rotated:
                        started = time.perf_counter()
                        await sides[name]()
                        samples[name].append(time.perf_counter() - started)
                await bare.close()
    finally:
        relay.terminate()
        relay.wait(timeout=10)
    print()
    print("echo round trip: direct SDK Client vs the least possible relay vs webhost (no deflate on either socket)")
    print(f"{'side':<14}{'n':>6}{'median':>11}{'p99':>11}{'× direct':>10}")
    base = Summary.of(samples["direct"]).median_ms
    for name, values in samples.items():
        s = Summary.of(values)
        print(f"{name:<14}{s.n:>6}{s.median_ms:>8.2f} ms{s.p99_ms:>8.2f} ms{s.median_ms / base:>9.2f}x")
    print(f"{load_average()} at the end of the run")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
