"""Tool arguments while the model is still writing them: healed partial JSON, sent to the app at a bounded pace.

SEP-1865's `ui/notifications/tool-input-partial` carries "partial JSON healed by closing open
brackets". `jiter` (a dependency of both provider SDKs) parses a prefix of a JSON text in partial mode,
keeping a string cut in the middle; a value still being typed (`tr` of `true`, `1.` of a number) is
left out until it is whole. `PartialArguments` keeps one call's text and says when there is
something new worth sending: at most every `THROTTLE_SECONDS`, never the same object twice; what the pace
held back goes out from one flusher per call (`flush_when_due`) once its time has come.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import jiter
import orjson

THROTTLE_SECONDS = 0.1
# A held-back object this close to its time counts as due: an event loop's timer may wake a little before the
# monotonic clock reaches the deadline (uvloop's ticks are milliseconds), and the pace is no exact science.
DUE_SLACK_SECONDS = 0.005


def heal(text: str) -> dict[str, Any] | None:
    """The object a prefix of an arguments text stands for so far (None: not an object yet)."""
    if not text.strip():
        return None
    try:
        value = jiter.from_json(text.encode("utf-8", "surrogatepass"), partial_mode="trailing-strings")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class PartialArguments:
    """One tool call's argument text as it streams, and the healed objects worth sending."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, interval: float = THROTTLE_SECONDS) -> None:
        self.text = ""
        self._clock = clock
        self._interval = interval
        self._sent_at: float | None = None
        self._last: bytes | None = None
        self._pending: dict[str, Any] | None = None
        self.flushing = False  # a flusher waits for the held-back object (one per call, not one per fragment)

    def add(self, fragment: str) -> dict[str, Any] | None:
        """Append a fragment; the healed object to send now, or None (nothing new, or too soon: kept)."""
        self.text += fragment
        healed = heal(self.text)
        if healed is None:
            return None
        encoded = orjson.dumps(healed)
        if encoded == self._last:
            self._pending = None
            return None
        now = self._clock()
        if not self._due_at(now):
            self._pending = healed
            return None
        return self._mark_sent(healed, encoded, now)

    def due(self) -> dict[str, Any] | None:
        """A healed object held back by the pace, once its time has come (the caller's timer asks)."""
        if self._pending is None:
            return None
        now = self._clock()
        if not self._due_at(now):
            return None
        pending, self._pending = self._pending, None
        return self._mark_sent(pending, orjson.dumps(pending), now)

    def next_due_in(self) -> float | None:
        """Seconds until the held-back object may go (None: nothing held back)."""
        if self._pending is None or self._sent_at is None:
            return None if self._pending is None else 0.0
        return max(0.0, self._interval - (self._clock() - self._sent_at))

    def _due_at(self, now: float) -> bool:
        return self._sent_at is None or now - self._sent_at >= self._interval - DUE_SLACK_SECONDS

    def _mark_sent(self, healed: dict[str, Any], encoded: bytes, now: float) -> dict[str, Any]:
        self._sent_at = now
        self._last = encoded
        return healed


def flush_soon(
    partial: PartialArguments,
    task_group: anyio.abc.TaskGroup,
    send: Callable[[dict[str, Any]], None],
    *,
    still_wanted: Callable[[], bool],
) -> None:
    """Start the call's flusher if something is held back and none runs yet (one per call, not one per fragment)."""
    if partial.flushing or partial.next_due_in() is None:
        return
    partial.flushing = True
    task_group.start_soon(flush_when_due, partial, send, still_wanted)


async def flush_when_due(
    partial: PartialArguments,
    send: Callable[[dict[str, Any]], None],
    still_wanted: Callable[[], bool],
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
) -> None:
    """Send what the pace held back once its time has come, until nothing is held back or it is no longer wanted.

    The wait is asked again after each sleep, however early the timer woke: a held-back object given up then would
    never be sent, as the stream may hold for long after its last fragment (the model is thinking)."""
    partial.flushing = True
    try:
        while (delay := partial.next_due_in()) is not None and still_wanted():
            await sleep(delay)
            healed = partial.due()
            if healed is not None and still_wanted():
                send(healed)
    finally:
        partial.flushing = False
