"""Where webhost works around the `mcp` SDK (2.3.0) on the client side, each named with the behaviour it avoids.

1. The SDK's stdio client reads lines in quadratic time (a 10 MB result took 4–11 s) and leaks
   grandchildren on a clean exit: `stdio.py` is our own POSIX transport, used instead on POSIX.
2. `Client` has no public "the transport has closed" signal (the dispatcher keeps a private
   `_closed`). `watched_transport` wraps any transport's read stream and sets an event when the
   dispatcher's receive loop leaves it, which it does exactly when the connection is over (end of
   stream, a broken transport, or our own close). No polling, no private fields.
3. The SDK drops a line that is not a valid JSON-RPC message, so a server→client request whose
   `params` are not an object (`"params": "garbage"`) was never answered and the server waited
   forever. Our stdio transport answers such a request itself (INVALID_PARAMS, `stdio.py:
   _unreadable_request`). A request that is valid JSON-RPC but whose params fail the method's
   schema is answered by the SDK (INVALID_PARAMS). The SDK's HTTP transports still drop them.
4. The SDK's MRTR driver keeps each round's `requestState` to itself, so a round could not be written
   down for another replica to resume. `rounds.RoundWatchingClient` overrides the private
   `Client._drive_input_required` to report every round of a watched request (and its answering).

Server-side workarounds (for the demo and test servers, not webhost itself) live in
`webhost/demo/sdk_fixes.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any

import anyio
from mcp.client._transport import TransportStreams


class _WatchedReadStream:
    """Forwards every read to the transport's stream; `closed` is set once the reader is done with it."""

    def __init__(self, inner: Any, closed: anyio.Event) -> None:
        self._inner = inner
        self._closed = closed

    @property
    def last_context(self) -> Any:  # the dispatcher reads the sender's contextvars snapshot, when there is one
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._closed.set()
            raise

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError):
            self._closed.set()
            raise

    async def aclose(self) -> None:
        self._closed.set()
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedReadStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        self._closed.set()
        result: bool | None = await self._inner.__aexit__(exc_type, exc, tb)
        return result


@asynccontextmanager
async def watched_transport(
    transport: AbstractAsyncContextManager[TransportStreams], closed: anyio.Event
) -> AsyncIterator[Any]:
    """The same transport, with `closed` set when the connection's receive loop ends."""
    async with transport as (read_stream, write_stream):
        try:
            yield _WatchedReadStream(read_stream, closed), write_stream
        finally:
            closed.set()
