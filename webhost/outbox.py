"""What one tab is sent, bounded: a slow tab loses only notifications it can do without, then is closed.

Responses and notifications that carry state the page must not miss (server status, input
requests, approvals, list changes) always queue. Notifications that are a running commentary
(activity entries, progress, server logs) are dropped once the queue holds more than a soft share
of the budget; the tab is then told how many it lost (`outbox/dropped`) as soon as it catches up.
When even the must-keep frames exceed the budget, the tab is closed with a reason instead of
holding the memory: nobody else's session waits on a slow tab.
"""

from __future__ import annotations

import json
from collections import Counter, deque
from collections.abc import Awaitable, Callable

import anyio

DROPPABLE = frozenset({"activity", "progress", "server/log", "apps/progress"})
SOFT_SHARE = 0.25  # past this share of the budget, commentary is dropped
CLOSE_CODE = 1013  # "try again later"


class Outbox:
    def __init__(self, *, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._queue: deque[str] = deque()
        self._bytes = 0
        self._ready = anyio.Event()
        self._dropped: Counter[str] = Counter()
        self.closed = False
        self.overflowed = anyio.Event()  # set when the tab must be closed

    @property
    def queued_bytes(self) -> int:
        return self._bytes

    def post(self, text: str, *, method: str | None = None) -> None:
        """Queue one encoded frame (`method` names a notification; None for a response)."""
        if self.closed:
            return
        size = len(text)
        if method in DROPPABLE and self._bytes + size > self.max_bytes * SOFT_SHARE:
            self._dropped[method] += 1
            return
        if self._bytes + size > self.max_bytes:
            self.closed = True
            self._queue.clear()
            self._bytes = 0
            self.overflowed.set()
            self._ready.set()
            return
        self._queue.append(text)
        self._bytes += size
        self._ready.set()

    def close(self) -> None:
        self.closed = True
        self._ready.set()

    async def drain(self, send: Callable[[str], Awaitable[None]]) -> None:
        """The writer loop: send frames in order until closed; report drops once the backlog is gone."""
        while True:
            while self._queue:
                text = self._queue.popleft()
                self._bytes -= len(text)
                await send(text)
            if self._dropped:
                dropped, self._dropped = self._dropped, Counter()
                await send(json.dumps({"jsonrpc": "2.0", "method": "outbox/dropped",
                                       "params": {"count": sum(dropped.values()), "methods": dict(dropped)}}))
                continue
            if self.closed:
                return
            self._ready = anyio.Event()
            await self._ready.wait()
