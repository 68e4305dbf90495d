"""webhost's peak memory while one big result (default ~10 MB) goes from a stdio server to the page.

For each row, webhost (`webhost serve`, a subprocess) calls `tests/servers/basic.py` for one result of about
`--mb` MB on the wire: `image` (random bytes as base64 image content, which nothing compresses) and `text`
(the `big` tool: its text comes back twice, as a text block and as `structuredContent.result`, so the text
is half the size). Each row is taken twice in the same run, on two sockets: **parts** (`/ws?parts=1`, as the
page opens it: a result this big comes as `response/part` frames made while they are sent, docs/api.md) and
**one frame** (a socket that did not ask for parts: the whole result encoded, then sent).

Before each call the benchmark resets the kernel's peak-RSS mark of the webhost process
(`echo 5 > /proc/PID/clear_refs`), and after it reads `VmHWM`: the peak during that call. Printed: the peak
above the RSS before the call, in MB and as a multiple of the result the page received (how many full copies
of it webhost held at once). webhost runs with glibc's `MALLOC_MMAP_THRESHOLD_` fixed at 128 KiB, so every
big buffer is its own mapping, given back when freed: otherwise glibc raises that threshold after the first
big free, later buffers come from a heap that keeps what earlier calls freed, and the peak above the RSS
before a call depends on what came before it. Linux only. Nothing is asserted.

    .venv/bin/python bench/big_result.py [--mb N] [--iterations N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
from _common import RpcSocket, connect, environment, load_average, run_webhost, stdio_entry


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "big_result")
    parser.add_argument("--mb", type=float, default=10.0, help="result size on the wire, MB (default 10)")
    parser.add_argument("--iterations", type=int, default=3, help="calls per row (default 3; the peak is the max)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: one 1 MB call per row")
    args = parser.parse_args()
    if args.quick:
        args.mb, args.iterations = 1.0, 1
    print(f"big_result: {environment()}")
    size = int(args.mb * 1_000_000)
    rows = [
        ("image", "binary", {"image_bytes": size * 3 // 4}),
        ("text", "big", {"size_bytes": size // 2}),
    ]
    with run_webhost({"basic": stdio_entry("basic")}, env={"MALLOC_MMAP_THRESHOLD_": str(128 * 1024)}) as host:
        pid = host.proc.pid
        async with connect(host, parts=True) as in_parts, connect(host, parts=False) as whole:
            await in_parts.wait_connected("basic")
            print()
            print(f"one ~{args.mb:g} MB result through webhost: its peak RSS during the call (VmHWM after a reset)")
            print(
                f"{'row':<20}{'result':>10}{'RSS before':>12}{'peak':>10}{'peak - before':>15}{'copies':>8}{'time':>9}"
            )
            for name, tool, arguments in rows:
                for side, ws in (("parts", in_parts), ("one frame", whole)):
                    await _row(f"{name}, {side}", pid, ws, tool, arguments, args.iterations)
    print("result = characters of the frames the page received for the call; copies = (peak - before) / result")
    print(f"{load_average()} at the end of the run")
    return 0


async def _row(label: str, pid: int, ws: RpcSocket, tool: str, arguments: dict[str, Any], iterations: int) -> None:
    clear = Path(f"/proc/{pid}/clear_refs")
    peaks: list[tuple[float, float, float, float]] = []
    for i in range(iterations + 1):  # the first call warms up (buffers, imports)
        before = status_kb(pid, "VmRSS")
        clear.write_text("5")
        received = ws.bytes_received
        started = time.perf_counter()
        result = await ws.request(
            "tools/call", {"server": "basic", "name": tool, "arguments": arguments, "callId": f"{label}{i}"}
        )
        elapsed = time.perf_counter() - started
        peak = status_kb(pid, "VmHWM")
        if result.get("isError"):
            raise RuntimeError(f"{tool} failed: {str(result)[:300]}")
        result_mb = (ws.bytes_received - received) / 1e6
        if i:
            peaks.append((result_mb, before / 1000, peak / 1000, elapsed))
    result_mb, before_mb, peak_mb, elapsed = max(peaks, key=lambda p: p[2] - p[1])
    extra = peak_mb - before_mb
    print(
        f"{label:<20}{result_mb:>7.1f} MB{before_mb:>9.1f} MB{peak_mb:>7.1f} MB{extra:>12.1f} MB"
        f"{extra / result_mb:>7.1f}x{elapsed * 1000:>6.0f} ms"
    )


if __name__ == "__main__":
    sys.exit(anyio.run(main))
