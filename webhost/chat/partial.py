"""Tool arguments while the model is still writing them: healed partial JSON, sent to the app at a bounded pace.

SEP-1865's `ui/notifications/tool-input-partial` carries "partial JSON healed by closing open
brackets". `jiter` (a dependency of both provider SDKs) parses a prefix of a JSON text in partial mode,
keeping a string cut in the middle; a value still being typed (`tr` of `true`, `1.` of a number) is
left out until it is whole. `PartialArguments` keeps one call's text and says when there is
something new worth sending: at most every `THROTTLE_SECONDS`, never the same object twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import jiter
import orjson

THROTTLE_SECONDS = 0.1


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
        if self._sent_at is not None and now - self._sent_at < self._interval:
            self._pending = healed
            return None
        return self._mark_sent(healed, encoded, now)

    def due(self) -> dict[str, Any] | None:
        """A healed object held back by the pace, once its time has come (the caller's timer asks)."""
        if self._pending is None:
            return None
        now = self._clock()
        if self._sent_at is not None and now - self._sent_at < self._interval:
            return None
        pending, self._pending = self._pending, None
        return self._mark_sent(pending, orjson.dumps(pending), now)

    def next_due_in(self) -> float | None:
        """Seconds until the held-back object may go (None: nothing held back)."""
        if self._pending is None or self._sent_at is None:
            return None if self._pending is None else 0.0
        return max(0.0, self._interval - (self._clock() - self._sent_at))

    def _mark_sent(self, healed: dict[str, Any], encoded: bytes, now: float) -> dict[str, Any]:
        self._sent_at = now
        self._last = encoded
        return healed
