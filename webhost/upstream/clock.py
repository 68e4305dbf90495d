"""Machine time vs human time: a request's timeout counts only time when nobody is being asked for input."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import anyio


@dataclass(eq=False)
class _Deadline:
    scope: anyio.CancelScope
    budget: float
    start: float
    mark: float


class HumanClock:
    """Tracks how long a person has been answering input requests on one connection, in O(1).

    `total()` is the human time accumulated so far (finished answers plus the one in progress);
    a request notes it when it starts, and the difference later is the human time it must not
    count against its timeout.

    A request's timeout is a cancel scope (`deadline`): nothing polls. While a person is being asked,
    every open deadline is suspended (set to infinity); when the last answer ends, each is set again
    to what is left of its machine-time budget. A request that reports progress has its budget grown
    (`progressed`), up to a maximum in all.

    `now` is the clock the human time is measured on (monotonic seconds); tests pass one they move by
    hand. The deadlines themselves are the event loop's (`anyio.current_time()`), re-armed from it.
    """

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._waiting = 0
        self._busy_since: float | None = None
        self._finished = 0.0
        self._deadlines: dict[anyio.CancelScope, _Deadline] = {}

    def begin(self) -> None:
        if self._waiting == 0:
            self._busy_since = self._now()
            for entry in self._deadlines.values():
                entry.scope.deadline = math.inf
        self._waiting += 1

    def end(self) -> None:
        self._waiting = max(0, self._waiting - 1)
        if self._waiting == 0 and self._busy_since is not None:
            self._finished += self._now() - self._busy_since
            self._busy_since = None
            for entry in self._deadlines.values():
                self._arm(entry)

    @property
    def waiting(self) -> bool:
        return self._waiting > 0

    def total(self, now: float | None = None) -> float:
        now = self._now() if now is None else now
        return self._finished + (now - self._busy_since if self._busy_since is not None else 0.0)

    def machine_time_since(self, start: float, mark: float) -> float:
        """Wall time since `start` minus the human time since `mark` (`total()` taken at `start`)."""
        now = self._now()
        return (now - start) - (self.total(now) - mark)

    def _arm(self, entry: _Deadline) -> None:
        remaining = max(0.0, entry.budget - self.machine_time_since(entry.start, entry.mark))
        entry.scope.deadline = anyio.current_time() + remaining

    @contextmanager
    def deadline(self, budget: float) -> Iterator[anyio.CancelScope]:
        """A cancel scope that expires once `budget` seconds of machine time (human time excluded) have passed.

        Its `cancelled_caught` tells a timeout from a result.
        """
        entry = _Deadline(anyio.CancelScope(), budget, self._now(), self.total())
        if self.waiting:
            entry.scope.deadline = math.inf
        else:
            self._arm(entry)
        self._deadlines[entry.scope] = entry
        try:
            with entry.scope:
                yield entry.scope
        finally:
            self._deadlines.pop(entry.scope, None)

    def progressed(self, scope: anyio.CancelScope, budget: float, max_total: float) -> None:
        """The request under `scope` reported progress: it may run `budget` more seconds of machine time from
        now, but no more than `max_total` in all since it started, and never less than it already had."""
        entry = self._deadlines.get(scope)
        if entry is None:
            return
        used = self.machine_time_since(entry.start, entry.mark)
        entry.budget = max(entry.budget, min(used + budget, max_total))
        if not self.waiting:
            self._arm(entry)

    def budget(self, scope: anyio.CancelScope) -> float | None:
        """The machine time the request under `scope` may run in all (grown by its progress), while it runs."""
        entry = self._deadlines.get(scope)
        return None if entry is None else entry.budget
