"""webhost's peak memory while one big result (default ~10 MB) goes from a stdio server to the page.

For each row, webhost (`webhost serve`, a subprocess) calls `tests/servers/basic.py` for one result of about
`--mb` MB on the wire: `image` (random bytes as base64 image content, which nothing compresses) and `text`
(the `big` tool: its text comes back twice, as a text block and as `structuredContent.result`, so the text
is half the size). Before each call the benchmark resets the kernel's peak-RSS mark of the webhost process
(`echo 5 > /proc/PID/clear_refs`), and after it reads `VmHWM`: the peak during that call. Printed: the peak
above the RSS before the call, in MB and as a multiple of the frame the page received (how many full copies
of the result webhost held at once, roughly: the line read from the pipe, the parsed message, the SDK's
model, the wire dict, the encoded frame). Linux only. Nothing is asserted.

    .venv/bin/python bench/big_result.py [--mb N] [--iterations N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
from _common import connect, environment, load_average, run_webhost, stdio_entry


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "big_result")
    parser.add_argument("--mb", type=float, default=10.0, help="result size on the wire, MB (default 10)")
    parser.add_argument("--iterations", type=int, default=3, help="calls per row (default 3; the peak is the max)")
    args = parser.parse_args()
    print(f"big_result: {environment()}")
    size = int(args.mb * 1_000_000)
    rows = [
        ("image", "binary", {"image_bytes": size * 3 // 4}),
        ("text", "big", {"size_bytes": size // 2}),
    ]
    with run_webhost({"basic": stdio_entry("basic")}) as host:
        pid = host.proc.pid
        clear = Path(f"/proc/{pid}/clear_refs")
        async with connect(host) as ws:
            await ws.wait_connected("basic")
            await ws.request(
                "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": "x"}, "callId": "w"}
            )
            print()
            print(f"one ~{args.mb:g} MB result through webhost: its peak RSS during the call (VmHWM after a reset)")
            print(f"{'row':<8}{'frame':>10}{'RSS before':>12}{'peak':>10}{'peak - before':>15}{'copies':>8}{'time':>9}")
            for name, tool, arguments in rows:
                peaks: list[tuple[float, float, float, float]] = []
                for i in range(args.iterations + 1):  # the first call warms up (buffers, imports)
                    before = status_kb(pid, "VmRSS")
                    clear.write_text("5")
                    frames0 = ws.bytes_received
                    started = time.perf_counter()
                    result = await ws.request(
                        "tools/call", {"server": "basic", "name": tool, "arguments": arguments, "callId": f"{name}{i}"}
                    )
                    elapsed = time.perf_counter() - started
                    peak = status_kb(pid, "VmHWM")
                    if result.get("isError"):
                        raise RuntimeError(f"{tool} failed: {str(result)[:300]}")
                    frame_mb = (ws.bytes_received - frames0) / 1e6
                    if i:
                        peaks.append((frame_mb, before / 1000, peak / 1000, elapsed))
                frame_mb, before_mb, peak_mb, elapsed = max(peaks, key=lambda p: p[2] - p[1])
                extra = peak_mb - before_mb
                print(
                    f"{name:<8}{frame_mb:>7.1f} MB{before_mb:>9.1f} MB{peak_mb:>7.1f} MB{extra:>12.1f} MB"
                    f"{extra / frame_mb:>7.1f}x{elapsed * 1000:>6.0f} ms"
                )
    print("frame = bytes of WebSocket frames the page received for the call; copies = (peak - before) / frame")
    print(f"{load_average()} at the end of the run")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
