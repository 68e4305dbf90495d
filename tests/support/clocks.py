"""A wall clock a test moves forward instead of sleeping: real time plus the seconds the test added, so that
what runs on it (token expiry, given to `in_process_host(clock=...)`) sees time pass only when the test says."""

from __future__ import annotations

import time


class MovedClock:
    def __init__(self) -> None:
        self.added = 0.0

    def __call__(self) -> float:
        return time.time() + self.added

    def move(self, seconds: float) -> None:
        self.added += seconds
