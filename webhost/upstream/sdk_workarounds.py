"""Every place webhost works around the `mcp` SDK (2.3) on the client side, each named with the behaviour it avoids.

Those that name a private SDK member do it in the seam, `upstream/sdk/` (and only there: a test and an
import-linter contract say so); docs/architecture.md says which upstream change would let each one go.
This module holds the transport wrappers of items 2 and 5 and the output-schema tolerance of item 6.

1. The SDK's stdio client reads lines in quadratic time (a 10 MB result took 4–11 s) and leaks
   grandchildren on a clean exit: `stdio.py` is our own POSIX transport, used instead on POSIX. At
   shutdown it closes the loop's subprocess transport, which nothing public reaches
   (`sdk.close_subprocess_transport`: anyio's `Process._process._transport`).
2. `Client` has no public "the transport has closed" signal (the dispatcher keeps a private
   `_closed`). `watched_transport` wraps any transport's read stream and sets an event when the
   dispatcher's receive loop leaves it, which it does exactly when the connection is over (end of
   stream, a broken transport, or our own close), and its write stream, for a transport that can no
   longer send while its read stream stays open. No polling, no private fields. The streams' type
   (`TransportStreams`) is only exported from the private `mcp.client._transport`: `sdk` re-exports it.
3. The SDK drops a line that is not a valid JSON-RPC message, so a server→client request whose
   `params` are not an object (`"params": "garbage"`) was never answered and the server waited
   forever. Our stdio transport answers such a request itself (INVALID_PARAMS, `stdio.py:
   _unreadable_request`). A request that is valid JSON-RPC but whose params fail the method's
   schema is answered by the SDK (INVALID_PARAMS). The SDK's HTTP transports still drop them.
4. The SDK's MRTR driver keeps each round's `requestState` to itself, so a round could not be written
   down for another replica to resume. `sdk.RoundObservingClient` overrides the private
   `Client._drive_input_required` to report every round of a watched request (and its answering) to
   `rounds.watching`.
5. A listing with one malformed item (a tool whose `inputSchema` is a string, a resource without a
   `uri`) fails whole in the SDK (`ValidationError` for the result), so one bad tool hid every other.
   The transport wrappers below keep the raw result of a list request made under `capture_raw`
   (the request's id is taken from the write, in the caller's task, so concurrent requests never mix),
   and `upstream/lenient.py` validates that raw listing item by item. The valid tools are handed to
   the session's private `_absorb_tool_listing` (`sdk.absorb_tool_listing`), so their output schemas
   are known as after a normal listing.
6. A result whose `structuredContent` breaks the tool's `outputSchema` makes the SDK raise
   `RuntimeError` and drop the result. `tolerate_output_schema` replaces the session's
   `validate_tool_result` so the SDK's own message is collected in `output_schema_errors` (a context
   variable of the calling task) and the result is kept, shown with the error beside it.
7. The SDK does not say which capabilities the client advertised; `sdk.advertised_capabilities` asks
   the session's private `_build_capabilities` for the negotiated version (None if it is gone), so the
   server view can show webhost's side beside the server's.
8. The SDK's OAuth provider stores only tokens and client information, and a refresh is invisible to
   its caller. `oauth.PersonOAuth` also restores the expiry, the discovered metadata and a
   pre-registered client when it loads, counts refreshes and, when a refresh is refused because another
   replica rotated the token, takes the stored one: through `sdk.ProviderHooks`, which routes the
   private `_initialize`, `_refresh_token` and `_handle_refresh_response` (and reads `_initialized`).
9. The SDK's flow holds its lock for the whole request (every call waits on every other) and the
   transport swallows what the flow raised. `oauth.PersonOAuth` sends a request with a valid token
   without the lock, and keeps the flow's failure for the connection (so do the client-credentials
   providers, `oauth._Tracked`): `sdk.ProviderHooks` routes the private `_auth_flow` and
   `_add_auth_header`.
10. The SDK makes one lock per provider; webhost needs one per (person, server) for the host, so a
    rotating refresh token is spent once: `sdk.share_lock` replaces the provider's `context.lock`.
11. The SDK computes and checks token expiry on the wall clock, to the second: `sdk.keep_time` has the
    provider's context use webhost's expiry (a little early, `oauth.expiry_after`) on an injected clock
    (`OAuthDeps.clock`), so tests move time instead of waiting for a token to end.
12. The SDK has no client call for a 2025-11-25 task-augmented `tools/call`, and validates every
    `tools/call` answer against `CallToolResult` (its result table has no `CreateTaskResult`):
    `sdk.send_unchecked` sends the request through the session's private `_stamp` and dispatcher and
    returns the raw answer, which `upstream/tasks.py` reads as a task or a result.
13. The SDK's Streamable HTTP transport reads a JSON response whole and validates it, or an SSE event's data,
    in one call: a 30 MB result held the event loop for 60 ms and more. `sdk.streamable_http_client` builds
    the SDK's transport as `sdk.PiecewiseHTTPTransport` (its private `_handle_json_response` and
    `_handle_sse_event`), which parses a response of a megabyte or more in pieces (`stdio_lines.parse_long_line`,
    as a stdio server's long line is) with the loop running between them.

Server-side workarounds (for the demo and test servers, not webhost itself) live in
`webhost/demo/sdk_fixes.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from types import TracebackType
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.shared.message import SessionMessage
from mcp.types import CallToolResult, JSONRPCRequest, JSONRPCResponse

from .sdk import TransportStreams

LIST_METHODS = frozenset({"tools/list", "resources/list", "resources/templates/list", "prompts/list"})


class RawResult:
    """The raw result of the one list request sent while this is `capture_raw` (5.)."""

    def __init__(self) -> None:
        self.raw: dict[str, Any] | None = None
        self._registry: dict[Any, RawResult] | None = None
        self._request_id: Any = None

    def release(self) -> None:
        if self._registry is not None:
            self._registry.pop(self._request_id, None)


capture_raw: ContextVar[RawResult | None] = ContextVar("capture_raw", default=None)
# The SDK's messages for results that broke their tool's output schema, in this task (6.).
output_schema_errors: ContextVar[list[str] | None] = ContextVar("output_schema_errors", default=None)


def tolerate_output_schema(session: ClientSession) -> None:
    """Keep a result whose structured content fails the output schema; collect the SDK's message (6.)."""
    validate = session.validate_tool_result

    async def collecting(name: str, result: CallToolResult) -> None:
        try:
            await validate(name, result)
        except RuntimeError as exc:
            errors = output_schema_errors.get()
            if errors is None:
                raise
            errors.append(str(exc))

    session.validate_tool_result = collecting  # type: ignore[method-assign]


def _take_raw(item: Any, registry: dict[Any, RawResult]) -> None:
    if registry and isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCResponse):
        holder = registry.pop(item.message.id, None)
        if holder is not None:
            holder.raw = item.message.result


class _CapturingWriteStream:
    """Forwards every write; a list request sent under `capture_raw` is noted so its answer is kept (5.). A write
    the transport can no longer take sets `closed` (2.): the SDK's Streamable HTTP client can lose its sending
    task (a POST to a server that went away) while its read stream stays open, and every request then fails
    with "Connection closed" on a connection that still looked connected."""

    def __init__(self, inner: Any, registry: dict[Any, RawResult], closed: anyio.Event | None = None) -> None:
        self._inner = inner
        self._registry = registry
        self._closed = closed

    async def send(self, item: Any) -> None:
        holder = capture_raw.get()
        if (
            holder is not None
            and isinstance(item, SessionMessage)
            and isinstance(item.message, JSONRPCRequest)
            and item.message.method in LIST_METHODS
        ):
            holder._registry, holder._request_id = self._registry, item.message.id
            self._registry[item.message.id] = holder
        try:
            await self._inner.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            if self._closed is not None:
                self._closed.set()
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _CapturingWriteStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        result: bool | None = await self._inner.__aexit__(exc_type, exc, tb)
        return result


class Heard:
    """When the server last sent anything (the event loop's clock): a server that answers is alive, whatever a
    ping says (upstream/liveness.py)."""

    def __init__(self) -> None:
        self.at = anyio.current_time()


class _WatchedReadStream:
    """Forwards every read to the transport's stream; `closed` is set once the reader is done with it, and
    `heard` moved on by every message."""

    def __init__(
        self,
        inner: Any,
        closed: anyio.Event,
        registry: dict[Any, RawResult] | None = None,
        heard: Heard | None = None,
    ) -> None:
        self._inner = inner
        self._closed = closed
        self._registry: dict[Any, RawResult] = registry if registry is not None else {}
        self._heard = heard

    @property
    def last_context(self) -> Any:  # the dispatcher reads the sender's contextvars snapshot, when there is one
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._closed.set()
            raise
        self._took(item)
        return item

    def _took(self, item: Any) -> None:
        if self._heard is not None and not isinstance(item, Exception):
            self._heard.at = anyio.current_time()
        _take_raw(item, self._registry)

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            item = await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError):
            self._closed.set()
            raise
        self._took(item)
        return item

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
    transport: AbstractAsyncContextManager[TransportStreams], closed: anyio.Event, heard: Heard | None = None
) -> AsyncIterator[Any]:
    """The same transport, with `closed` set when the connection's receive loop ends (2.), the raw
    results of list requests kept when asked (5.), and `heard` moved on by every message from the server."""
    registry: dict[Any, RawResult] = {}
    async with transport as (read_stream, write_stream):
        try:
            read, write = (
                _WatchedReadStream(read_stream, closed, registry, heard),
                _CapturingWriteStream(write_stream, registry, closed),
            )
            yield read, write
        finally:
            closed.set()
