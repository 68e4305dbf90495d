"""What one tab is sent, bounded: a slow tab loses only notifications it can do without, then is closed.

Responses and notifications that carry state the page must not miss (server status, input
requests, approvals, list changes) always queue. Notifications that are a running commentary
(activity entries, progress, server logs) are dropped once the queue holds more than a soft share
of the budget; the tab is then told how many it lost (`outbox/dropped`) as soon as it catches up.
When even the must-keep frames exceed the budget, the tab is closed with a reason instead of
holding the memory: nobody else's session waits on a slow tab.

Activity entries are coalesced: each is encoded when it is posted, held for at most `BATCH_WINDOW`,
and sent as one `activity` notification carrying a list (`{"entries": [...]}`). A notification
posted meanwhile sends the held entries first, so notifications keep their order of posting. A
response goes ahead of them and they follow it in the same writer turn: a tool call's request and
response entries travel together just after its result, which the page shows one frame sooner.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

import anyio

DROPPABLE = frozenset({"activity", "progress", "server/log", "apps/progress"})
SOFT_SHARE = 0.25  # past this share of the budget, commentary is dropped
CLOSE_CODE = 1013  # "try again later"
BATCH_METHOD = "activity"
BATCH_WINDOW = 0.02  # seconds an activity entry may wait for company
BATCH_MAX = 64  # entries per frame


@dataclass(eq=False)
class _Stream:
    """A response sent as several frames, each made when the writer gets to it (webhost/response_parts.py)."""

    frames: Iterator[str]
    chars: int  # counted against the budget until the last frame is sent


class Outbox:
    def __init__(self, *, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._queue: deque[str | _Stream] = deque()
        self._bytes = 0
        self._ready = anyio.Event()
        self._dropped: Counter[str] = Counter()
        self.closed = False
        self.overflowed = anyio.Event()  # set when the tab must be closed
        self._batch: list[str] = []  # encoded activity entries not yet in a frame
        self._batch_bytes = 0
        self._batch_due = 0.0
        # The held entries' deadline, as a timer of the loop: the writer is not woken to learn it (most
        # batches leave with the result they precede, before the deadline, and the timer is cancelled).
        self._batch_timer: asyncio.TimerHandle | None = None
        # Held while a frame is being sent, by the writer or by `send_response`: one frame at a time on the socket.
        # asyncio's lock, because it takes no loop turn when it is free (anyio's yields on every acquire).
        self._sending = asyncio.Lock()
        self._send: Callable[[str], Awaitable[None]] | None = None  # the writer's, once it runs

    def post_entry(self, entry: str) -> None:
        """Hold one encoded activity entry for the next `activity` frame (sent within `BATCH_WINDOW`)."""
        if self.closed:
            return
        if not self._batch:
            loop = asyncio.get_running_loop()
            self._batch_due = loop.time() + BATCH_WINDOW
            self._batch_timer = loop.call_at(self._batch_due, self._batch_expired)
        self._batch.append(entry)
        self._batch_bytes += len(entry)
        if len(self._batch) >= BATCH_MAX or self._batch_bytes >= self.max_bytes * SOFT_SHARE / 4:
            self._flush_batch()

    def _batch_expired(self) -> None:
        self._batch_timer = None
        self._flush_batch()

    def _flush_batch(self) -> None:
        if self._batch_timer is not None:
            self._batch_timer.cancel()
            self._batch_timer = None
        if not self._batch:
            return
        entries, self._batch, self._batch_bytes = self._batch, [], 0
        text = '{"jsonrpc":"2.0","method":"' + BATCH_METHOD + '","params":{"entries":[' + ",".join(entries) + "]}}"
        self._queue_frame(text, BATCH_METHOD, len(entries))

    def post(self, text: str, *, method: str | None = None) -> None:
        """Queue one encoded frame (`method` names a notification; None for a response)."""
        if self.closed:
            return
        if method is None:
            # A response goes ahead of the entries held for the log (its own request's among them): the
            # page shows the result one frame sooner, and the log follows in the same writer turn.
            self._queue_frame(text, method, 1)
            self._flush_batch()
            return
        self._flush_batch()  # entries posted before a notification go before it
        self._queue_frame(text, method, 1)

    async def send_response(self, text: str) -> None:
        """A response, sent from its request's own task when nothing is queued or being sent (most are): the
        writer task is not woken for it. Otherwise it is queued as `post` queues it."""
        send = self._send
        if send is None or self.closed or self._queue or self._sending.locked():
            self.post(text)
            return
        async with self._sending:
            try:
                await send(text)
            except Exception:  # the tab went away; the read loop ends the session
                return
        self._flush_batch()  # the entries held for the log follow it, as after a queued response

    def post_stream(self, frames: Iterator[str], chars: int) -> None:
        """Queue a response made of several frames (`chars` characters in all), sent back to back as a response is."""
        if self.closed:
            return
        self._queue_frame(_Stream(frames, chars), None, 1)
        self._flush_batch()

    def _queue_frame(self, text: str | _Stream, method: str | None, count: int) -> None:
        size = text.chars if isinstance(text, _Stream) else len(text)
        if method in DROPPABLE and self._bytes + size > self.max_bytes * SOFT_SHARE:
            self._dropped[method] += count
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
        self._flush_batch()
        self.closed = True
        self._ready.set()

    async def drain(self, send: Callable[[str], Awaitable[None]]) -> None:
        """The writer loop: send frames in order until closed; report drops once the backlog is gone."""
        self._send = send
        while True:
            while self._queue:
                async with self._sending:
                    if not self._queue:  # overflowed while waiting for a response being sent
                        break
                    item = self._queue.popleft()
                    if isinstance(item, _Stream):
                        for text in item.frames:  # the next part is made only once the last one is sent
                            if self.overflowed.is_set():
                                break  # the tab is being closed; the queue was dropped
                            await send(text)
                            # A send that the socket takes at once does not yield (a fast reader on loopback
                            # takes megabytes): without this, a 30 MB result's parts were made and sent in one
                            # step of the loop, and every other tab waited 0.1-0.4 s for it.
                            await asyncio.sleep(0)
                        self._bytes = max(0, self._bytes - item.chars)
                    else:
                        self._bytes -= len(item)
                        await send(item)
            if self._dropped:
                dropped, self._dropped = self._dropped, Counter()
                report = {"count": sum(dropped.values()), "methods": dict(dropped)}
                async with self._sending:
                    await send(json.dumps({"jsonrpc": "2.0", "method": "outbox/dropped", "params": report}))
                continue
            if self.closed:
                return
            self._ready = anyio.Event()
            await self._ready.wait()
