"""Machine time vs human time: a request's timeout counts only time when nobody is being asked for input."""

from __future__ import annotations

import time

import anyio


class HumanClock:
    """Tracks the intervals during which a person is answering an input request on one connection."""

    def __init__(self) -> None:
        self._waiting = 0
        self._busy_since: float | None = None
        self._intervals: list[tuple[float, float]] = []

    def begin(self) -> None:
        if self._waiting == 0:
            self._busy_since = time.monotonic()
        self._waiting += 1

    def end(self) -> None:
        self._waiting = max(0, self._waiting - 1)
        if self._waiting == 0 and self._busy_since is not None:
            self._intervals.append((self._busy_since, time.monotonic()))
            self._busy_since = None
            # Keep only recent history: no request outlives a day.
            cutoff = time.monotonic() - 86400
            self._intervals = [i for i in self._intervals if i[1] > cutoff]

    @property
    def waiting(self) -> bool:
        return self._waiting > 0

    def human_time_since(self, start: float, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        total = sum(max(0.0, min(end, now) - max(begin, start)) for begin, end in self._intervals)
        if self._busy_since is not None:
            total += max(0.0, now - max(self._busy_since, start))
        return total

    def machine_time_since(self, start: float) -> float:
        now = time.monotonic()
        return (now - start) - self.human_time_since(start, now)

    async def wait_machine_time(self, start: float, budget: float) -> None:
        """Return once `budget` seconds of machine time (human time excluded) have passed since `start`."""
        while True:
            remaining = budget - self.machine_time_since(start)
            if remaining <= 0 and not self.waiting:
                return
            await anyio.sleep(1.0 if self.waiting else min(max(remaining, 0.01), 1.0))
