"""What one person's very big results cost everyone else: another tab's round trips while ~30 MB results flow.

One `webhost serve` with two stdio servers, `big` and `other` (both `tests/servers/basic.py`). Two tabs, as the page
opens them (`/ws?parts=1`):

- **the big tab**, in a process of its own as another person's page is, calls `big` on `big` back to back (`--mb`
  MB of text, 15 by default: the tool has an output schema, so the text comes back twice, a result of about 30 MB,
  under the 32 MiB cap), and every 200 ms also calls `echo` on `other` in the same tab (**same tab, other server**);
- **the other tab** calls `echo` on `other` every 20 ms (**another tab**), and `session/info` (which touches no
  server: webhost's event loop alone) in between.

Each row is measured alone first (**baseline**: the big tab idle), then while the big results flow (**during**),
for `--duration` seconds each, and printed as p50 / p99 / max with the ratio to the baseline. Also printed: the
big results completed and their mean time. `--webhost-root DIR` runs `python -m webhost` from another checkout
(an export of an earlier commit), for a before/after in two runs. Nothing is asserted.

    .venv/bin/python bench/big_stall.py [--mb 15] [--duration 20] [--webhost-root DIR] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import websockets
from _common import PYTHON, ROOT, environment, load_average, percentile, stdio_entry

from webhost.testing.host import Webhost, start_webhost

ECHO_GAP = 0.02
SAME_TAB_GAP = 0.2


class Tab:
    """A page's socket with a reader task: concurrent requests, responses in parts joined as the page joins them."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self._next = 0
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._parts: dict[Any, list[str]] = {}

    async def read(self) -> None:
        async for text in self.ws:
            message = json.loads(text)
            if message.get("method") == "response/part":
                params = message["params"]
                self._parts.setdefault(params["id"], []).append(params["text"])
                if not params.get("last"):
                    continue
                message = json.loads("".join(self._parts.pop(params["id"])))
            future = self._waiting.pop(message.get("id"), None) if "id" in message else None
            if future is not None and not future.done():
                future.set_result(message)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._next] = future
        await self.ws.send(json.dumps({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}))
        answer = await future
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        result: dict[str, Any] = answer["result"]
        return result

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"server": server, "name": tool, "arguments": arguments, "callId": f"c{self._next + 1}"}
        return await self.request("tools/call", params)

    async def wait_connected(self, *servers: str) -> None:
        for _ in range(600):
            states = {s["name"]: s["status"] for s in (await self.request("servers/list", {}))["servers"]}
            if all(states.get(name) == "connected" for name in servers):
                return
            await asyncio.sleep(0.05)
        raise TimeoutError(f"{servers} did not connect")


@dataclass(frozen=True)
class Address:
    """Where a tab connects: what a second process needs of the `Webhost`."""

    ws_url: str
    token: str
    base_url: str


@contextlib.asynccontextmanager
async def tab(host: Address) -> AsyncIterator[Tab]:
    async with websockets.connect(
        host.ws_url + "?parts=1",
        additional_headers={"Authorization": f"Bearer {host.token}"},
        origin=host.base_url,
        max_size=None,
        compression="deflate",
    ) as ws:
        opened = Tab(ws)
        reader = asyncio.create_task(opened.read())
        try:
            yield opened
        finally:
            reader.cancel()


@contextlib.contextmanager
def webhost(root: Path) -> Iterator[Webhost]:
    servers = {"big": stdio_entry("basic"), "other": stdio_entry("basic")}
    with (
        tempfile.TemporaryDirectory(prefix="webhost-bench-") as tmp,
        start_webhost(
            {"mcpServers": servers},
            directory=tmp,
            args=["--log-level", "warning"],
            launcher=(PYTHON, "-m", "webhost"),
            cwd=root,
            start_timeout=60,
            stop_timeout=30,
        ) as host,
    ):
        yield host


async def paced(gap: float, until: float, run: Any, samples: list[float]) -> None:
    while time.monotonic() < until:
        started = time.perf_counter()
        await run()
        elapsed = time.perf_counter() - started
        samples.append(elapsed * 1000)
        await asyncio.sleep(max(0.0, gap - elapsed))


async def big_phase(big: Tab, duration: float, size: int | None) -> dict[str, list[float]]:
    """The big tab's side of one phase: big results back to back (none in the baseline), and its own echo."""
    same: list[float] = []
    bigs: list[float] = []
    until = time.monotonic() + duration

    async def big_calls() -> None:
        while size is not None and time.monotonic() < until:
            started = time.perf_counter()
            result = await big.call("big", "big", {"size_bytes": size})
            assert len(result["content"][0]["text"]) == size
            bigs.append((time.perf_counter() - started) * 1000)

    await asyncio.gather(
        big_calls(), paced(SAME_TAB_GAP, until, lambda: big.call("other", "echo", {"text": "y"}), same)
    )
    return {"same tab: echo": same, "big results": bigs}


def big_person(host: Address, size: int, duration: float, go: Any, results: Any) -> None:
    """The big tab in a process of its own, as another person's page is: parsing a 30 MB result holds its own
    event loop for 50-70 ms of CPU, which, in one process with the other tab, was counted as webhost's stall."""

    async def run() -> None:
        async with tab(host) as big:
            await big.wait_connected("big", "other")
            await big.call("big", "big", {"size_bytes": size})  # warm: the first big result
            for phase_size in (None, size):
                results.put("ready")
                await asyncio.to_thread(go.wait)
                go.clear()
                results.put(await big_phase(big, duration, phase_size))

    asyncio.run(run())


async def phase(other: Tab, duration: float, go: Any, results: Any) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"another tab: echo": [], "another tab: session/info": []}
    await asyncio.to_thread(results.get)  # the big tab is ready for this phase
    until = time.monotonic() + duration
    go.set()

    async def info() -> None:
        await other.request("session/info", {})

    await asyncio.gather(
        paced(ECHO_GAP, until, lambda: other.call("other", "echo", {"text": "x"}), samples["another tab: echo"]),
        paced(ECHO_GAP * 2, until, info, samples["another tab: session/info"]),
    )
    samples.update(await asyncio.to_thread(results.get))
    return samples


def line(name: str, values: list[float], base: list[float] | None) -> str:
    if not values:
        return f"{name:<28}{'-':>8}"
    p50, p99, top = percentile(values, 0.5), percentile(values, 0.99), max(values)
    ratio = f"{p50 / percentile(base, 0.5):6.2f}x / {p99 / percentile(base, 0.99):6.2f}x" if base else ""
    return f"{name:<28}{len(values):>6}{p50:>11.1f}{p99:>11.1f}{top:>11.1f}   {ratio}"


async def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mb", type=float, default=15.0, help="the big tool's text, MB (the result is twice it)")
    parser.add_argument("--duration", type=float, default=None, help="seconds per phase (default 20, --quick 1)")
    parser.add_argument("--webhost-root", type=Path, default=ROOT, help="run python -m webhost from this checkout")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 s phases, a 1 MB text")
    args = parser.parse_args()
    duration = args.duration or (1.0 if args.quick else 20.0)
    if args.quick:
        args.mb = 1.0
    size = int(args.mb * 1_000_000)
    print(f"big_stall: {environment()}; webhost from {args.webhost_root}")
    spawn = multiprocessing.get_context("spawn")
    go, results = spawn.Event(), spawn.Queue()
    with webhost(args.webhost_root.resolve()) as host:
        address = Address(host.ws_url, host.token, host.base_url)
        person = spawn.Process(target=big_person, args=(address, size, duration, go, results), daemon=True)
        person.start()
        try:
            async with tab(address) as other:
                await other.wait_connected("big", "other")
                base = await phase(other, duration, go, results)
                during = await phase(other, duration, go, results)
        finally:
            person.join(timeout=30)
            if person.is_alive():
                person.terminate()
    print(f"\n~{2 * args.mb:g} MB results back to back in one tab, {duration:g} s per phase; times in ms")
    print(f"{'row':<28}{'n':>6}{'p50':>11}{'p99':>11}{'max':>11}   ratio p50 / p99 to the baseline")
    for name in ("another tab: echo", "another tab: session/info", "same tab: echo"):
        print(line(f"{name}, baseline", base[name], None))
        print(line(f"{name}, during", during[name], base[name]))
    bigs = during["big results"]
    mean = sum(bigs) / len(bigs) if bigs else 0.0
    print(f"big results completed: {len(bigs)} in {duration:g} s (mean {mean:.0f} ms each); {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
