"""The event loop's lag, sampled for `/metrics`: a sleeper that asks for `INTERVAL` and notes how much
longer it slept (what every tab's next frame waits behind: a long callback, a collection, a blocking call).

It starts with the first scrape, on the serving loop, so a host nobody scrapes pays nothing; one wake-up
every `INTERVAL` costs microseconds. The task ends with its loop (`webhost serve`'s runner cancels it at exit).
loophealth.py is the fine-grained probe an admin runs on demand.
"""

from __future__ import annotations

import asyncio
import time

from webhost.observability.metrics import LOOP_LAG

INTERVAL = 0.5


class LoopLagSampler:
    def __init__(self, interval: float = INTERVAL) -> None:
        self.interval = interval
        self.worst = 0.0  # the longest lag since the last scrape took it
        self._task: asyncio.Task[None] | None = None

    def ensure_running(self) -> None:
        """Start sampling on the running loop, unless it already does (a new loop, in tests, gets its own)."""
        loop = asyncio.get_running_loop()
        task = self._task
        if task is None or task.done() or task.get_loop() is not loop:
            self._task = loop.create_task(self._sample(), name="webhost-loop-lag")

    def take_worst(self) -> float:
        worst, self.worst = self.worst, 0.0
        return worst

    async def _sample(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(self.interval)
            lag = max(0.0, time.perf_counter() - started - self.interval)
            self.worst = max(self.worst, lag)
            LOOP_LAG.observe(lag)
