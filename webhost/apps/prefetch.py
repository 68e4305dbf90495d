"""App resources read ahead of the click: one person's `ui://` reads, each kept for one `apps/open`.

When the page shows a tool that has an App, it asks `apps/warm`; the read (the resource and its
listing entry, from which `apps/open` builds the CSP and permissions) is kept here, per server and
URI, in that person's workspace. The next `apps/open` of that URI takes it (an open that finds a
warm read still in flight waits for it) instead of reading again; everything per open stays per open:
the frame id, the audit row, the CSP built from the metadata, the signed proxy token.

A kept read serves one open only and is dropped after `TTL` seconds, on `resources/list_changed`,
on `resources/updated` for its URI, and when its server reconnects or goes down: an open never uses
what the server has since said is stale.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

Read = tuple[dict[str, Any], Any]
TTL = 60.0


@dataclass(eq=False)
class _Entry:
    started: float
    done: anyio.Event = field(default_factory=anyio.Event)
    value: Read | None = None
    stale: bool = False


class AppPrefetch:
    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], _Entry] = {}

    async def warm(self, server: str, uri: str, read: Callable[[], Awaitable[Read]]) -> bool:
        """Read ahead unless a fresh read is kept or under way; True when a read is kept afterwards."""
        key = (server, uri)
        existing = self._entries.get(key)
        if existing is not None and not existing.stale and time.monotonic() - existing.started < TTL:
            await existing.done.wait()
            return existing.value is not None
        entry = _Entry(time.monotonic())
        self._entries[key] = entry
        try:
            entry.value = await read()
        except Exception:
            if self._entries.get(key) is entry:
                del self._entries[key]
            return False
        finally:
            entry.done.set()
        return not entry.stale

    async def take(self, server: str, uri: str) -> Read | None:
        """The kept read for one open (removed: the next open reads or takes a new one), or None."""
        entry = self._entries.pop((server, uri), None)
        if entry is None:
            return None
        await entry.done.wait()
        if entry.stale or entry.value is None or time.monotonic() - entry.started >= TTL:
            return None
        return entry.value

    def peek(self, server: str, uri: str) -> Read | None:
        """The kept read, if it is done and fresh, left in place for the open (a prepared App's description)."""
        entry = self._entries.get((server, uri))
        if entry is None or not entry.done.is_set() or entry.stale or entry.value is None:
            return None
        return entry.value if time.monotonic() - entry.started < TTL else None

    def invalidate(self, server: str, uri: str | None = None) -> None:
        """Drop what is kept for a server (every URI, or one), reads still in flight included."""
        for key in [k for k in self._entries if k[0] == server and (uri is None or k[1] == uri)]:
            self._entries.pop(key).stale = True

    def __len__(self) -> int:
        return len(self._entries)
