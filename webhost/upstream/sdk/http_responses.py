"""The private members under big Streamable HTTP responses: the SDK's transport parses each response whole.

Needs: a server's 30 MB result over Streamable HTTP read without holding the event loop, as a stdio server's is
(`sdk_workarounds.py` item 13). The SDK's transport reads a JSON response whole
and validates it with one `validate_json` call, and an SSE event's data the same way: 60 ms and more in one turn
of the loop for 30 MB, while every other tab waited (bench/README.md, "Stop 37"). `PiecewiseHTTPTransport` parses
a response or event of `long` characters or more with the parser it is given (webhost's parses in pieces with
the loop running between them, as for a stdio server's long line: `stdio_lines.parse_long_line`), and hands the
SDK the same message; anything smaller, and anything that parser cannot read, goes the SDK's own way (its error
then names the problem).
Private: `StreamableHTTPTransport._handle_json_response` and `_handle_sse_event`, and the module global
`streamable_http_client` builds its transport from.
Public hook that would replace it: a parser the transport takes (or one that reads in pieces itself).
"""

from __future__ import annotations

import codecs
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar

import httpx2
from mcp.client import streamable_http
from mcp.shared.message import SessionMessage
from mcp.types import PARSE_ERROR, ErrorData, JSONRPCError, JSONRPCResponse, RequestId

from ..text_pieces import TextPieces

__all__ = ["PiecewiseHTTPTransport", "streamable_http_client"]

logger = logging.getLogger("webhost.upstream.http")


# A message's text (whole or the chunks it arrived in) to a message; anything else it returns is "unreadable".
LongParser = Callable[[str | TextPieces], Awaitable[object]]


class PiecewiseHTTPTransport(streamable_http.StreamableHTTPTransport):
    parse_long: ClassVar[LongParser | None] = None  # set by `streamable_http_client`
    long: ClassVar[int] = 1024 * 1024  # characters: a message this long or longer goes to `parse_long`

    async def _handle_json_response(
        self, response: httpx2.Response, read_stream_writer: Any, *, request_id: RequestId
    ) -> None:
        length = response.headers.get("content-length", "")
        parse = type(self).parse_long
        if parse is None or not (length.isdigit() and int(length) >= self.long):
            return await super()._handle_json_response(response, read_stream_writer, request_id=request_id)
        parsed: object
        try:
            decoder = codecs.getincrementaldecoder("utf-8")()
            parts = [decoder.decode(chunk) async for chunk in response.aiter_bytes()]
            parts.append(decoder.decode(b"", final=True))
            parsed = await parse(TextPieces(parts))
        except (httpx2.StreamError, UnicodeDecodeError) as exc:
            parsed = exc
        if isinstance(parsed, SessionMessage):
            await read_stream_writer.send(parsed)
            return
        # What the SDK would have sent for a body it cannot read.
        problem = getattr(parsed, "error", parsed)
        logger.warning("A %s-byte JSON response could not be read: %s", length, problem)
        error = ErrorData(code=PARSE_ERROR, message=f"Failed to parse JSON response: {problem}")
        await read_stream_writer.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error)))

    async def _handle_sse_event(
        self,
        sse: httpx2.ServerSentEvent,
        read_stream_writer: Any,
        original_request_id: RequestId | None = None,
        resumption_callback: Callable[[str], Awaitable[None]] | None = None,
    ) -> bool:
        parse = type(self).parse_long
        if parse is not None and sse.event == "message" and len(sse.data) >= self.long:
            parsed = await parse(sse.data)
            if isinstance(parsed, SessionMessage):
                # As the SDK delivers an event it parsed (mcp/client/streamable_http.py, `_handle_sse_event`).
                message = parsed.message
                if original_request_id is not None and isinstance(message, JSONRPCResponse | JSONRPCError):
                    message.id = original_request_id
                await read_stream_writer.send(SessionMessage(message))
                if sse.id and resumption_callback:
                    await resumption_callback(sse.id)
                return isinstance(message, JSONRPCResponse | JSONRPCError)
        return await super()._handle_sse_event(sse, read_stream_writer, original_request_id, resumption_callback)


def streamable_http_client(
    url: str, *, http_client: httpx2.AsyncClient, parse_long: LongParser, long: int, max_event: int
) -> AbstractAsyncContextManager[Any]:
    """The SDK's `streamable_http_client`, over `PiecewiseHTTPTransport` with `parse_long` for messages of `long`
    characters or more. The SDK builds the transport from its module's global: that name is pointed at the
    subclass, and the parser set on it, for every connection of this process (webhost passes the same one)."""
    PiecewiseHTTPTransport.parse_long, PiecewiseHTTPTransport.long = parse_long, long
    streamable_http.StreamableHTTPTransport = PiecewiseHTTPTransport  # type: ignore[misc]
    return streamable_http.streamable_http_client(url, http_client=http_client, max_sse_event_size=max_event)
