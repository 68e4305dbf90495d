"""The event loop `webhost serve` runs on: uvloop's when it is installed (`--event-loop`), else asyncio's.

On uvloop each tool call's hop through webhost costs less (bench/README.md). Nothing in webhost depends on
which loop runs, with one exception made here: host names are resolved as asyncio resolves them, by the C
library's `getaddrinfo` in a worker thread. uvloop's own resolver (libuv's) failed now and then to resolve
`localhost` ("Name or service not known") while webhost connected to a remote server on this machine, where
the C library in a thread never did; a connection that fails for no reason costs more than the lookup saves.
"""

from __future__ import annotations

import asyncio
import functools
import socket
from collections.abc import Callable
from typing import Any


class LoopUnavailable(Exception):
    """The event loop asked for cannot be had here; the message says why."""


def event_loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What makes the loop for `choice` (`auto`, `uvloop`, `asyncio`); None: asyncio's own."""
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise LoopUnavailable("uvloop is not installed (pip install uvloop; it does not run on Windows)") from None
        return None

    class Loop(uvloop.Loop):
        async def getaddrinfo(
            self, host: Any, port: Any, *, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0
        ) -> list[Any]:
            lookup = functools.partial(socket.getaddrinfo, host, port, family, type, proto, flags)
            return await self.run_in_executor(None, lookup)

    return Loop
