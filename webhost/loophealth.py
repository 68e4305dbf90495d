"""How late the event loop runs, measured only while someone asks (`GET /api/health/loop`, admins only).

A probe coroutine sleeps `TICK` seconds again and again and records how much longer each sleep took
than asked: that oversleep is what every tab's next frame waits behind (a long callback, a full
garbage-collection pass, a blocking call). While the probe runs, `gc.callbacks` times every
collection, so a spike can be told apart as the collector's or someone else's. Nothing runs and
nothing is installed outside a measurement, so production pays nothing for it.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Sequence
from typing import Any

import anyio

TICK = 0.01
MAX_SECONDS = 300.0


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    """Nearest rank, as the benchmarks report it."""
    if not ordered:
        return 0.0
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


class _GcTimer:
    """Times each collection by generation through `gc.callbacks` (installed for one measurement)."""

    def __init__(self) -> None:
        self.pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.setdefault(int(info.get("generation", 2)), []).append(time.perf_counter() - self._started)


async def measure(seconds: float, tick: float = TICK) -> dict[str, Any]:
    """Probe the loop for `seconds` (at most MAX_SECONDS): oversleep percentiles and the collector's pauses, in ms."""
    seconds = min(max(seconds, tick), MAX_SECONDS)
    timer = _GcTimer()
    gc.callbacks.append(timer)
    lags: list[float] = []
    try:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            started = time.perf_counter()
            await anyio.sleep(tick)
            lags.append(max(0.0, time.perf_counter() - started - tick))
    finally:
        gc.callbacks.remove(timer)
    lags.sort()
    return {
        "seconds": seconds,
        "tickMs": tick * 1000,
        "samples": len(lags),
        "p50Ms": round(_percentile(lags, 0.5) * 1000, 3),
        "p99Ms": round(_percentile(lags, 0.99) * 1000, 3),
        "maxMs": round((lags[-1] if lags else 0.0) * 1000, 3),
        "gc": {
            str(generation): {
                "passes": len(pauses),
                "totalMs": round(sum(pauses) * 1000, 3),
                "maxMs": round(max(pauses, default=0.0) * 1000, 3),
            }
            for generation, pauses in sorted(timer.pauses.items())
        },
        "gcThreshold": list(gc.get_threshold()),
        "gcFrozen": gc.get_freeze_count(),
    }
