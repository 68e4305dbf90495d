"""Where one `echo` call spends its time on the server side: webhost against the bare relay, phase by phase.

Both servers run with timestamps taken at the edges of each phase, by wrapping functions of uvicorn, anyio, the
SDK and webhost from a launcher (`STAMPS` below); nothing in webhost itself is changed for it. Per call, the
first time each mark is passed after the page's frame came in gives the phases:

- **frame in → handler**: uvicorn reads the frame (its `data_received`), the ASGI middleware, the frame parsed,
  the request's task started (webhost); the relay parses it in its loop;
- **handler → SDK call** (webhost only): the call registry, the person's call origin, the request's activity
  entry, the timeout scope;
- **SDK call → to the pipe**: the SDK client builds and sends the request, and the transport writes the line;
- **the MCP server**: from the line written to the answer's line read (`basic.py`'s own time, both pipes);
- **the line parsed**, then **→ SDK returns** (the SDK matches the answer, validates the result and its
  output schema);
- **SDK returns → handler returns** (webhost only): the response's activity entry, the result as wire JSON,
  the history entry queued;
- **→ frame out**: the size check, the encoding, the send down the middleware to uvicorn.

The client's own round trip (median, this process) is printed beside it, with the direct SDK call, all three
interleaved. The marks cost about a microsecond each, on both sides.

`--event-loop asyncio` runs both servers on Python's own loop (webhost's default and the relay's, uvicorn's,
is uvloop). Nothing is asserted.

    .venv/bin/python bench/call_phases.py [--quick] [--iterations N] [--warmup N] [--event-loop auto|asyncio]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
from _common import (
    PYTHON,
    ROOT,
    SERVERS,
    RpcSocket,
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
from relay_floor import RELAY, open_relay
from websockets.asyncio.client import ClientConnection

TEXT = "hello, webhost"

# Imported first in both server processes (`sitecustomize`): wraps the functions at the phases' edges. SIGUSR1
# forgets the marks so far (the warm-up), SIGUSR2 writes them to $CALL_PHASES_OUT.
STAMPS = r"""
import functools, json, os, signal, time
_marks, _now = [], time.perf_counter_ns

def _sync(owner, name, enter, leave=None):
    inner = getattr(owner, name)
    @functools.wraps(inner)
    def wrapper(*args, **kwargs):
        _marks.append((enter, _now()))
        try:
            return inner(*args, **kwargs)
        finally:
            if leave:
                _marks.append((leave, _now()))
    setattr(owner, name, wrapper)

def _async(owner, name, enter, leave=None, only=None):
    inner = getattr(owner, name)
    @functools.wraps(inner)
    async def wrapper(*args, **kwargs):
        if only is None or only(*args, **kwargs):
            _marks.append((enter, _now()))
        try:
            return await inner(*args, **kwargs)
        finally:
            if leave:
                _marks.append((leave, _now()))
    setattr(owner, name, wrapper)

def _install():
    from anyio._backends import _asyncio as anyio_asyncio
    from mcp.client.client import Client
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol as Ws
    import webhost.upstream.stdio as stdio
    _sync(Ws, "data_received", "in")
    _async(Ws, "send", "out", only=lambda self, message: message.get("type") == "websocket.send")
    _async(Client, "call_tool", "sdk", "sdk_done")
    _async(anyio_asyncio.StreamWriterWrapper, "send", "pipe_out")
    _sync(stdio, "parse_line", "pipe_in", "parsed")  # stdio.py calls it by this name (stdio_lines.py)
    if os.environ.pop("CALL_PHASES_WEBHOST", None):
        from webhost.methods import METHODS
        call_tool = METHODS["tools/call"]
        async def handler(session, params):
            _marks.append(("handler", _now()))
            try:
                return await call_tool(session, params)
            finally:
                _marks.append(("handler_done", _now()))
        METHODS["tools/call"] = handler

_OUT = os.environ.pop("CALL_PHASES_OUT", None)  # popped: the MCP servers this process starts are not marked

def _dump(signum, frame):
    with open(_OUT, "w") as out:
        json.dump(_marks, out)

if _OUT:
    _install()
    signal.signal(signal.SIGUSR1, lambda signum, frame: _marks.clear())
    signal.signal(signal.SIGUSR2, _dump)
"""

WEBHOST_PHASES = [
    ("frame in → handler", "in", "handler"),
    ("handler → SDK call", "handler", "sdk"),
    ("SDK call → to the pipe", "sdk", "pipe_out"),
    ("the MCP server", "pipe_out", "pipe_in"),
    ("the line parsed", "pipe_in", "parsed"),
    ("→ SDK returns", "parsed", "sdk_done"),
    ("SDK returns → handler returns", "sdk_done", "handler_done"),
    ("→ frame out", "handler_done", "out"),
]
# The relay has no handler of its own: its frame-in phase ends at the SDK call, and its frame-out phase starts
# when the SDK returns.
RELAY_PHASES: dict[str, tuple[str, str] | None] = {
    "frame in → handler": ("in", "sdk"),
    "handler → SDK call": None,
    "SDK returns → handler returns": None,
    "→ frame out": ("sdk_done", "out"),
}


def relay_spec() -> list[tuple[str, str, str]]:
    spec = []
    for name, begin, end in WEBHOST_PHASES:
        edges = RELAY_PHASES.get(name, (begin, end))
        if edges is not None:
            spec.append((name, *edges))
    return spec


def phases(path: Path, spec: list[tuple[str, str, str]]) -> dict[str, float]:
    """Median µs of each phase over the calls whose every mark was seen."""
    marks = json.loads(path.read_text())
    starts = [index for index, (tag, _) in enumerate(marks) if tag == "in"]
    samples: dict[str, list[float]] = {name: [] for name, _, _ in spec}
    totals: list[float] = []
    for begin, end in zip(starts, [*starts[1:], len(marks)], strict=True):
        first: dict[str, int] = {}
        for tag, at in marks[begin:end]:
            first.setdefault(tag, at)
        if not all(a in first and b in first for _, a, b in spec):
            continue
        for name, a, b in spec:
            samples[name].append((first[b] - first[a]) / 1000)
        totals.append((first["out"] - first["in"]) / 1000)
    medians = {name: statistics.median(values) for name, values in samples.items() if values}
    medians["in → out (whole)"] = statistics.median(totals) if totals else float("nan")
    medians["calls"] = len(totals)
    return medians


def event_loop_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--event-loop", default="auto", choices=("auto", "asyncio"), help="both servers' loop")


async def timed_sides(
    direct: Client, bare: ClientConnection, wh: RpcSocket, servers: list[int], n: int, warmup: int
) -> dict[str, list[float]]:
    """The three sides interleaved (rotated); the servers' marks of the warm-up forgotten, the rest written out."""
    calls = 0

    async def via_direct() -> None:
        assert not (await direct.call_tool("echo", {"text": TEXT})).is_error

    async def via_bare() -> None:
        nonlocal calls
        calls += 1
        call = {"name": "echo", "arguments": {"text": TEXT}}
        await bare.send(json.dumps({"jsonrpc": "2.0", "id": calls, "method": "tools/call", "params": call}))
        assert json.loads(await bare.recv())["id"] == calls

    async def via_webhost() -> None:
        nonlocal calls
        calls += 1
        call = {"server": "basic", "name": "echo", "arguments": {"text": TEXT}, "callId": f"c{calls}"}
        assert not (await wh.request("tools/call", call)).get("isError")

    sides = {"direct": via_direct, "bare relay": via_bare, "webhost": via_webhost}
    for _ in range(warmup):
        for run in sides.values():
            await run()
    await anyio.sleep(0.3)  # the warm-up's history and activity written out
    for pid in servers:
        os.kill(pid, signal.SIGUSR1)
    samples: dict[str, list[float]] = {name: [] for name in sides}
    order = list(sides)
    for index in range(n):
        for name in order[index % 3 :] + order[: index % 3]:
            started = time.perf_counter()
            await sides[name]()
            samples[name].append(time.perf_counter() - started)
    await anyio.sleep(0.3)
    for pid in servers:
        os.kill(pid, signal.SIGUSR2)
    return samples


async def main() -> int:
    args = parse_args(__doc__.splitlines()[0] if __doc__ else "call_phases", extra=event_loop_option)
    n = iterations_for(args, 1500, 10)
    print(f"call_phases: {environment()}, event loop {args.event_loop}")
    with tempfile.TemporaryDirectory(prefix="call-phases-") as tmp:
        work = Path(tmp)
        (work / "sitecustomize.py").write_text(STAMPS, encoding="utf-8")
        # This checkout first: the launcher imports webhost before `-m webhost` would put the working folder first.
        site = {"PYTHONPATH": os.pathsep.join([str(work), str(ROOT), os.environ.get("PYTHONPATH", "")])}
        relay_out, webhost_out = work / "relay.json", work / "webhost.json"
        port = free_port()
        relay_code = RELAY
        if args.event_loop == "asyncio":
            relay_code = RELAY.replace("ws_per_message_deflate=False", 'ws_per_message_deflate=False, loop="asyncio"')
        relay = subprocess.Popen(
            [PYTHON, "-c", relay_code, str(port), str(SERVERS / "basic.py")],
            cwd=ROOT,
            env={**os.environ, **site, "CALL_PHASES_OUT": str(relay_out)},
        )
        env = {
            **site,
            "CALL_PHASES_OUT": str(webhost_out),
            "CALL_PHASES_WEBHOST": "1",
            "WEBHOST_EVENT_LOOP": args.event_loop,
        }
        try:
            params = StdioServerParameters(command=PYTHON, args=[str(SERVERS / "basic.py")])
            with run_webhost({"basic": stdio_entry("basic")}, env=env) as host:
                async with Client(params) as direct, connect(host, compression=False) as wh:
                    await wh.wait_connected("basic")
                    bare = await open_relay(port)
                    samples = await timed_sides(direct, bare, wh, [relay.pid, host.proc.pid], n, args.warmup)
                    for _ in range(50):  # each server writes its marks when its loop next wakes
                        if relay_out.exists() and webhost_out.exists():
                            break
                        await anyio.sleep(0.1)
                    await bare.close()
        finally:
            relay.terminate()
            relay.wait(timeout=10)
        webhost_phases = phases(webhost_out, WEBHOST_PHASES)
        relay_phases = phases(relay_out, relay_spec())

    direct_us = statistics.median(samples["direct"]) * 1e6
    print(f"\nserver side, median µs per phase ({n} calls each, interleaved with the direct SDK call)")
    print(f"{'phase':32} {'bare relay':>11} {'webhost':>9} {'webhost +':>10}")
    for name, _, _ in [*WEBHOST_PHASES, ("in → out (whole)", "", "")]:
        relay_value, webhost_value = relay_phases.get(name), webhost_phases.get(name)
        shown_relay = f"{relay_value:11.1f}" if relay_value is not None else f"{'-':>11}"
        extra = webhost_value - (relay_value or 0.0) if webhost_value is not None else float("nan")
        print(f"{name:32} {shown_relay} {webhost_value or float('nan'):9.1f} {extra:+10.1f}")
    print(f"calls with every mark: relay {relay_phases['calls']:.0f}, webhost {webhost_phases['calls']:.0f}")
    print("\nas the client sees it (median round trip, this process)")
    for name, values in samples.items():
        median = statistics.median(values) * 1e6
        print(f"{name:12} {median:8.1f} µs  {median / direct_us:5.2f}x direct")
    print(f"{load_average()} at the end of the run")
    return 0


if __name__ == "__main__":
    raise SystemExit(anyio.run(main))
