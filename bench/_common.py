"""Shared plumbing for the benchmarks: command line, a webhost subprocess, a lean WebSocket JSON-RPC client,
interleaved timing, statistics and a small table.

Every benchmark compares a path through webhost with the same work done directly with the SDK, measured
in the same run and interleaved (ABBA order), so both sides share the machine's noise. Figures are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import websockets
from websockets.asyncio.client import ClientConnection

from webhost.testing.host import Webhost as Webhost  # re-exported: the scripts type their hosts with it
from webhost.testing.host import free_port as free_port  # re-exported: scripts that start their own servers
from webhost.testing.host import start_webhost

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
PYTHON = sys.executable

Timed = Callable[[], Awaitable[None]]


# ---- command line ---------------------------------------------------------------------------------------


def parse_args(
    description: str,
    argv: Sequence[str] | None = None,
    *,
    extra: Callable[[argparse.ArgumentParser], None] | None = None,
) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    if extra is not None:
        extra(parser)
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: a few iterations of each row (its figures mean little)"
    )
    parser.add_argument(
        "--iterations",
        type=int,
        default=None,
        metavar="N",
        help="timed iterations per side for every row (default: per row, see the table)",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=None,
        metavar="N",
        help="untimed iterations per side before each row (default 30, --quick 2)",
    )
    parser.add_argument(
        "--no-ws-compression",
        action="store_true",
        help="do not offer permessage-deflate on the WebSocket (browsers always offer it)",
    )
    parser.add_argument(
        "--profile-webhost",
        type=Path,
        default=None,
        metavar="FILE",
        help="run webhost under cProfile (CPU-time clock), write the stats to FILE and print "
        "where its CPU goes (the profiler slows webhost 4-5 times: the ratios of such a run "
        "are not figures)",
    )
    args = parser.parse_args(argv)
    if args.iterations is not None and args.iterations < 1:
        parser.error("--iterations must be at least 1")
    if args.warmup is None:
        args.warmup = 2 if args.quick else 30
    return args


def iterations_for(args: argparse.Namespace, default: int, quick: int) -> int:
    if args.iterations is not None:
        return int(args.iterations)
    return quick if args.quick else default


# ---- statistics -----------------------------------------------------------------------------------------


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile: p99 of 100 samples is the 99th smallest, of 1000 the 990th."""
    ordered = sorted(samples)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def median(samples: Sequence[float]) -> float:
    ordered = sorted(samples)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def drift(samples: Sequence[float]) -> float | None:
    """Median of the last quarter over the median of the first (in run order); None below 40 samples."""
    quarter = len(samples) // 4
    if quarter < 10:
        return None
    return median(samples[-quarter:]) / median(samples[:quarter])


@dataclass
class Summary:
    n: int
    median_ms: float
    p99_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Summary:
        return cls(len(seconds), median(seconds) * 1000, percentile(seconds, 0.99) * 1000)


@dataclass
class Row:
    name: str
    direct: Summary
    webhost: Summary
    direct_cpu_ms: float | None = None
    """CPU time of this process (the SDK client) per direct call."""
    webhost_cpu_ms: float | None = None
    """CPU time of the webhost process per webhost call (user + system)."""
    frames: float | None = None
    """WebSocket frames the client received per webhost call (responses and notifications)."""
    direct_drift: float | None = None
    webhost_drift: float | None = None
    """Median of the last quarter of the samples over the median of the first quarter (1.00: no drift)."""

    @property
    def ratio(self) -> float:
        return self.webhost.median_ms / self.direct.median_ms

    @property
    def overhead_ms(self) -> float:
        return self.webhost.median_ms - self.direct.median_ms


# ---- timing ---------------------------------------------------------------------------------------------


@dataclass
class Paired:
    """Wall-clock samples of both sides, and this process's CPU time spent inside the direct side's calls."""

    direct_s: list[float]
    webhost_s: list[float]
    direct_cpu_s: float

    def row(self, name: str, meter: Meter | None = None) -> Row:
        webhost_cpu, frames = meter.per_call() if meter is not None else (None, None)
        return Row(
            name,
            Summary.of(self.direct_s),
            Summary.of(self.webhost_s),
            direct_cpu_ms=self.direct_cpu_s * 1000 / len(self.direct_s),
            webhost_cpu_ms=webhost_cpu,
            frames=frames,
            direct_drift=drift(self.direct_s),
            webhost_drift=drift(self.webhost_s),
        )


async def interleaved(
    direct: Timed, webhost: Timed, *, iterations: int, warmup: int, meter: Meter | None = None
) -> Paired:
    """Time both sides `iterations` times each, alternating ABBA so that neither always goes first.

    The meter (webhost CPU, frames) starts after the warm-up and sees only the timed calls.
    """
    for _ in range(warmup):
        await direct()
        await webhost()
    if meter is not None:
        meter.start()
    direct_s: list[float] = []
    webhost_s: list[float] = []
    direct_cpu = 0.0
    for index in range(iterations):
        for side in ("direct", "webhost") if index % 2 == 0 else ("webhost", "direct"):
            cpu = time.process_time()
            started = time.perf_counter()
            if side == "direct":
                await direct()
                direct_s.append(time.perf_counter() - started)
                direct_cpu += time.process_time() - cpu
            else:
                await webhost()
                webhost_s.append(time.perf_counter() - started)
    if meter is not None:
        meter.stop(iterations)
    return Paired(direct_s, webhost_s, direct_cpu)


async def timed(run: Timed, *, iterations: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        await run()
    samples: list[float] = []
    for _ in range(iterations):
        started = time.perf_counter()
        await run()
        samples.append(time.perf_counter() - started)
    return samples


class Meter:
    """CPU time of the webhost process and frames received by the page, over a block of webhost calls.

    webhost is idle while the direct side runs (apart from a timer or two), so its CPU time over an
    interleaved block divided by the webhost calls is the CPU one call costs it.
    """

    def __init__(self, host: Webhost, ws: RpcSocket) -> None:
        self.host, self.ws = host, ws
        self.cpu0: float | None = None
        self.frames0 = 0
        self.result: tuple[float | None, float] = (None, 0.0)

    def start(self) -> None:
        self.cpu0, self.frames0 = process_cpu_seconds(self.host.proc.pid), self.ws.frames

    def stop(self, calls: int) -> None:
        cpu1 = process_cpu_seconds(self.host.proc.pid)
        frames = (self.ws.frames - self.frames0) / calls
        cpu = None if cpu1 is None or self.cpu0 is None else (cpu1 - self.cpu0) * 1000 / calls
        self.result = (cpu, frames)

    def per_call(self) -> tuple[float | None, float]:
        return self.result


def process_cpu_seconds(pid: int) -> float | None:
    """user + system CPU seconds of one process (Linux /proc; None elsewhere). Resolution: one clock tick."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---- printing -------------------------------------------------------------------------------------------


def environment() -> str:
    cores = os.cpu_count()
    return (
        f"python {platform.python_version()}, mcp {version('mcp')}, websockets {version('websockets')}, "
        f"{cores} core(s), {platform.system()} {platform.machine()}, {load_average()}"
    )


def load_average() -> str:
    """The 1-minute load average: above the core count, other work competes with the benchmark."""
    try:
        return f"load average {os.getloadavg()[0]:.2f}"
    except OSError:
        return "load average unknown"


def print_table(title: str, rows: Sequence[Row]) -> None:
    headers = [
        "row",
        "n",
        "direct med",
        "direct p99",
        "webhost med",
        "webhost p99",
        "ratio",
        "overhead",
        "client CPU",
        "webhost CPU",
        "frames",
    ]
    body = [
        [
            row.name,
            str(row.direct.n),
            f"{row.direct.median_ms:.2f} ms",
            f"{row.direct.p99_ms:.2f} ms",
            f"{row.webhost.median_ms:.2f} ms",
            f"{row.webhost.p99_ms:.2f} ms",
            f"{row.ratio:.2f}x",
            f"{row.overhead_ms:+.2f} ms",
            "n/a" if row.direct_cpu_ms is None else f"{row.direct_cpu_ms:.2f} ms",
            "n/a" if row.webhost_cpu_ms is None else f"{row.webhost_cpu_ms:.2f} ms",
            "n/a" if row.frames is None else f"{row.frames:.1f}",
        ]
        for row in rows
    ]
    widths = [max(len(line[i]) for line in [headers, *body]) for i in range(len(headers))]

    def fmt(cells: Sequence[str]) -> str:
        padded = (c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded)

    print(title)
    print(fmt(headers))
    print("  ".join("-" * w for w in widths))
    for line in body:
        print(fmt(line))
    print("ratio = webhost median / direct median; overhead = webhost median - direct median")
    drifts = [
        f"{row.name}: direct {row.direct_drift:.2f}x, webhost {row.webhost_drift:.2f}x"
        for row in rows
        if row.direct_drift is not None and row.webhost_drift is not None
    ]
    if drifts:
        print("drift (median of the last quarter of the run / the first quarter): " + "; ".join(drifts))
    print(f"{load_average()} at the end of the run")
    print(
        "client CPU = this process's CPU per direct call (the SDK client's work); webhost CPU = the webhost "
        "process's CPU per call through it (1 clock tick resolution over the block); frames = WebSocket frames "
        "the page received per call"
    )
    sys.stdout.flush()


PROFILE_GROUPS = [
    ("/webhost/", "webhost (our code)"),
    ("/mcp/", "mcp SDK"),
    ("/mcp_types/", "mcp SDK"),
    ("pydantic", "pydantic"),
    ("/anyio/", "anyio"),
    ("/asyncio/", "asyncio event loop"),
    ("/uvicorn/", "uvicorn + websockets"),
    ("/websockets/", "uvicorn + websockets"),
    ("/starlette/", "starlette"),
    ("/json/", "json"),
    ("importlib", "imports (startup)"),
    ("zlib", "zlib (permessage-deflate)"),
    ("select.epoll", "epoll (waiting)"),
    ("_socket", "socket syscalls"),
    ("posix.", "pipe syscalls"),
]


def print_profile(path: Path, limit: int = 25) -> None:
    """The top entries of a webhost profile by own time, and own time grouped by package."""
    import pstats

    if not path.exists():
        print(f"(no profile written to {path})")
        return
    stats = pstats.Stats(str(path))
    groups: dict[str, float] = {}
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]
    for (filename, _line, name), (_cc, _nc, tottime, _ct, _callers) in raw.items():
        where = f"{filename} {name}"
        group = next((label for needle, label in PROFILE_GROUPS if needle in where), "other")
        groups[group] = groups.get(group, 0.0) + tottime
    total = sum(groups.values())
    print(f"\n--- webhost CPU profile ({path}): own CPU time by package, {total:.2f} s in all ---")
    for label, seconds in sorted(groups.items(), key=lambda item: -item[1]):
        print(f"{seconds:8.2f} s  {100 * seconds / total:5.1f} %  {label}")
    print(f"\n--- top {limit} functions by own CPU time ---")
    stats.strip_dirs().sort_stats("tottime").print_stats(limit)


# ---- a webhost subprocess -------------------------------------------------------------------------------


def stdio_entry(script: str, *args: str) -> dict[str, Any]:
    """A webhost config entry running tests/servers/SCRIPT.py over stdio."""
    return {"command": PYTHON, "args": [str(SERVERS / f"{script}.py"), *args]}


# `python -m webhost` under cProfile with a CPU-time clock: on a loaded 2-core machine a wall-clock profile
# charges whatever runs while webhost is descheduled (the page, the server) to the call that was running.
# SIGUSR1 (`reset_profile`) drops what was collected so far: startup (imports, pydantic schemas) and connecting.
PROFILE_LAUNCHER = """
import cProfile, runpy, signal, sys, time
out = sys.argv.pop(1)
profiler = cProfile.Profile(time.process_time)

def reset(signum, frame):
    profiler.disable()
    profiler.clear()
    profiler.enable()

signal.signal(signal.SIGUSR1, reset)
profiler.enable()
try:
    runpy.run_module("webhost", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    profiler.disable()
    profiler.dump_stats(out)
"""


@contextlib.contextmanager
def run_webhost(
    servers: dict[str, Any],
    *,
    profile: Path | None = None,
    env: dict[str, str] | None = None,
    options: dict[str, Any] | None = None,
) -> Iterator[Webhost]:
    """`python -m webhost serve` on free ports with these servers (the testing kit's `start_webhost`, as
    tests/support/process.py runs it), optionally under cProfile; `env` adds to its environment; `options` is
    the file's `webhost` object."""
    with tempfile.TemporaryDirectory(prefix="webhost-bench-") as tmp:
        launcher = (PYTHON, "-c", PROFILE_LAUNCHER, str(profile.resolve())) if profile else (PYTHON, "-m", "webhost")
        with start_webhost(
            {"mcpServers": servers, **({"webhost": options} if options else {})},
            directory=tmp,
            args=["--log-level", "warning"],
            env=env,
            launcher=launcher,
            cwd=ROOT,
            # uvicorn re-raises the signal it caught once it has shut down: SIGTERM would then kill the
            # process before cProfile writes its stats, while SIGINT ends as a KeyboardInterrupt that
            # `webhost serve` turns into a normal exit.
            stop_signal=signal.SIGINT if profile else signal.SIGTERM,
            stop_timeout=30,
        ) as host:
            host.extra["profile"] = profile
            yield host


def reset_profile(host: Webhost) -> None:
    """When webhost runs under the profiler, drop what it has collected so far (call once set up)."""
    if host.extra.get("profile") is not None and host.proc.poll() is None:
        host.proc.send_signal(signal.SIGUSR1)


# ---- a lean WebSocket JSON-RPC client -------------------------------------------------------------------


class RpcFailed(Exception):
    pass


class RpcSocket:
    """The page's side of /ws, reduced to what a benchmark needs: no reader task, frames read in line.

    Every frame is parsed (a page parses them too); notifications nobody waits for are dropped.
    """

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._next_id = 0
        self.frames = 0
        self.bytes_received = 0  # characters of every frame read (the UTF-8 bytes, for ASCII JSON)
        self._responses: dict[int, dict[str, Any]] = {}

    async def send(self, method: str, params: dict[str, Any]) -> int:
        self._next_id += 1
        await self.ws.send(json.dumps({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}))
        return self._next_id

    async def _read(self) -> dict[str, Any]:
        """The next message, a response sent in parts joined as the page joins it (docs/api.md)."""
        texts: list[str] = []
        while True:
            text = await self.ws.recv()
            message: dict[str, Any] = json.loads(text)
            self.frames += 1
            self.bytes_received += len(text)
            if message.get("method") != "response/part":
                return message
            texts.append(message["params"]["text"])
            if message["params"].get("last"):
                joined: dict[str, Any] = json.loads("".join(texts))
                return joined

    async def response(self, request_id: int) -> Any:
        """Read frames until the response to `request_id`; keep other responses, drop notifications."""
        while request_id not in self._responses:
            message = await self._read()
            if "id" in message and ("result" in message or "error" in message):
                self._responses[message["id"]] = message
        answer = self._responses.pop(request_id)
        if "error" in answer:
            raise RpcFailed(f"{answer['error'].get('code')}: {answer['error'].get('message')}")
        return answer["result"]

    async def notification(self, method: str) -> dict[str, Any]:
        """Read frames until a notification `method`; keep responses met on the way."""
        while True:
            message = await self._read()
            if "id" in message and ("result" in message or "error" in message):
                self._responses[message["id"]] = message
            elif message.get("method") == method:
                params: dict[str, Any] = message["params"]
                return params

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return await self.response(await self.send(method, params))

    async def wait_connected(self, server: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = (await self.request("servers/list", {}))["servers"]
            state: dict[str, Any] = next(s for s in states if s["name"] == server)
            if state["status"] == "connected":
                return state
            if state["status"] == "error":
                raise RpcFailed(f"{server} failed to connect: {state['error']}")
            await anyio.sleep(0.05)
        raise TimeoutError(f"{server} did not connect")


@contextlib.asynccontextmanager
async def connect(host: Webhost, *, compression: bool = True, parts: bool = True) -> AsyncIterator[RpcSocket]:
    """A socket as the page opens it (`parts=1`: a very large result in parts, docs/api.md)."""
    async with websockets.connect(
        host.ws_url + ("?parts=1" if parts else ""),
        additional_headers={"Authorization": f"Bearer {host.token}"},
        origin=host.base_url,
        max_size=None,
        open_timeout=10,  # type: ignore[arg-type]
        compression="deflate" if compression else None,
    ) as ws:
        yield RpcSocket(ws)
