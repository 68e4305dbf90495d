"""Machine time vs human time: a request's timeout counts only time when nobody is being asked for input."""

from __future__ import annotations

import time

import anyio


class HumanClock:
    """Tracks how long a person has been answering input requests on one connection, in O(1).

    `total()` is the human time accumulated so far (finished answers plus the one in progress);
    a request notes it when it starts, and the difference later is the human time it must not
    count against its timeout.
    """

    def __init__(self) -> None:
        self._waiting = 0
        self._busy_since: float | None = None
        self._finished = 0.0

    def begin(self) -> None:
        if self._waiting == 0:
            self._busy_since = time.monotonic()
        self._waiting += 1

    def end(self) -> None:
        self._waiting = max(0, self._waiting - 1)
        if self._waiting == 0 and self._busy_since is not None:
            self._finished += time.monotonic() - self._busy_since
            self._busy_since = None

    @property
    def waiting(self) -> bool:
        return self._waiting > 0

    def total(self, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        return self._finished + (now - self._busy_since if self._busy_since is not None else 0.0)

    def machine_time_since(self, start: float, mark: float) -> float:
        """Wall time since `start` minus the human time since `mark` (`total()` taken at `start`)."""
        now = time.monotonic()
        return (now - start) - (self.total(now) - mark)

    async def wait_machine_time(self, budget: float) -> None:
        """Return once `budget` seconds of machine time (human time excluded) have passed from now."""
        start, mark = time.monotonic(), self.total()
        while True:
            remaining = budget - self.machine_time_since(start, mark)
            if remaining <= 0 and not self.waiting:
                return
            await anyio.sleep(1.0 if self.waiting else min(max(remaining, 0.01), 1.0))
