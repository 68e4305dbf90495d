"""The stdio transport's framing of a server's stdout: text split into lines in linear time, and each line parsed
into a message (a line of a megabyte or more in bounded pieces), with a request too malformed for the SDK answered
rather than dropped. Split from `stdio.py`, which reads the pipe and feeds these."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    jsonrpc_message_adapter,
)

from webhost.frames import has_lone_surrogate

from .big_json import loads_in_pieces
from .text_pieces import TextPieces

logger = logging.getLogger("webhost.upstream.stdio")

BIG_LINE = 1024 * 1024  # characters; longer lines are parsed by `_parse_big`


class LineSplitter:
    """Splits decoded text into lines, looking at and copying each character a bounded number of times.

    The SDK's reader re-joins and re-splits its whole pending buffer for every chunk, which is quadratic in the
    length of one line. Here the pending text is a list of chunks known to hold no newline: only new text is
    searched, and a line is joined once, when its newline arrives; a line of `BIG_LINE` or more is not joined at
    all (a 30 MB join was one 15-20 ms turn of the event loop), its chunks go on as `TextPieces`.
    """

    def __init__(self) -> None:
        self._pending: list[str] = []
        # Work counters, so tests can prove the reader linear without timing it.
        self.fed = 0  # characters received
        self.scanned = 0  # characters searched for a newline
        self.copied = 0  # characters copied into slices and joined lines

    def feed(self, text: str) -> list[str | TextPieces]:
        """Returns the lines that `text` completes, without their newlines; keeps the unfinished rest. A line of
        `BIG_LINE` characters or more that came in several chunks is returned as its chunks, not joined."""
        self.fed += len(text)
        lines: list[str | TextPieces] = []
        start = 0
        while (end := text.find("\n", start)) != -1:
            self.scanned += end + 1 - start
            piece = text[start:end]
            self.copied += len(piece)
            line: str | TextPieces = piece
            if self._pending:
                self._pending.append(piece)
                if sum(map(len, self._pending)) >= BIG_LINE:
                    line = TextPieces(self._pending)
                else:
                    line = "".join(self._pending)
                    self.copied += len(line)
                self._pending = []
            lines.append(line)
            start = end + 1
        self.scanned += len(text) - start
        if start < len(text):
            self.copied += len(text) - start if start else 0  # a whole-string slice is the string itself
            self._pending.append(text[start:])
        return lines


@dataclass(frozen=True)
class Unreadable:
    """A line that names a request (an id and a method) but is not valid JSON-RPC: answered, then surfaced."""

    method: str
    reply: JSONRPCError
    error: Exception


def parse_line(line: str) -> SessionMessage | Exception | Unreadable:
    """Parses one stdout line, returning a parse error as a value for the session to surface.

    The SDK drops a line that fails JSON-RPC validation, so a server request whose `params` are not an object
    (`"params": "garbage"`) would wait forever for its answer; such a request is answered here with INVALID_PARAMS
    (or INVALID_REQUEST when what is wrong is not the params). Requests that are valid JSON-RPC but whose params
    fail the method's schema are the SDK's to answer (it does, with INVALID_PARAMS).
    """
    try:
        message = (_parse_big(line) if len(line) >= BIG_LINE else None) or jsonrpc_message_adapter.validate_json(
            line, by_name=False
        )
    except ValueError as exc:
        logger.warning("Failed to parse a JSON-RPC message from the MCP server's stdout (%d chars)", len(line))
        return _unreadable_request(line, exc) or exc
    return SessionMessage(message)


async def parse_long_line(line: str | TextPieces) -> SessionMessage | Exception | Unreadable:
    """A line of a megabyte or more, parsed in bounded pieces (`big_json.py`): the event loop, which serves every
    other tab, runs between them. Anything that way cannot read goes through `parse_line`, as before."""
    try:
        value = await loads_in_pieces(line)  # never with a lone surrogate, which pydantic's parser refuses
    except (ValueError, RecursionError):
        return parse_line(str(line))
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_python(value, by_name=False))
    except ValueError:
        return parse_line(str(line))


def _parse_big(line: str) -> JSONRPCMessage | None:
    """A big line, parsed with the standard library and then validated: pydantic's own JSON parser holds about three
    more copies of a long string while it reads it (over one 10 MB image line: +39 MB while parsing, +19 MB with
    orjson, +10 MB this way, the string itself; bench/README.md), and is slower at it. None where the two could
    differ (the caller then parses it as before): what the standard library accepts and pydantic refuses (a lone
    UTF-16 surrogate, an integer past the interpreter's digit limit), or a line that is not a valid message
    (pydantic's own error then names it)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if has_lone_surrogate(value):
        return None
    try:
        return jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValueError:
        return None


def _unreadable_request(line: str, exc: ValueError) -> Unreadable | None:
    try:
        raw = json.loads(line)
    except ValueError:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("method"), str):
        return None
    request_id = raw.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None  # a notification, or an id no answer could carry
    method: str = raw["method"]
    if "params" in raw and not isinstance(raw["params"], dict):
        error = ErrorData(
            code=INVALID_PARAMS,
            message=f"Invalid request parameters: {method} params must be an "
            f"object, not {type(raw['params']).__name__}",
        )
    else:
        error = ErrorData(code=INVALID_REQUEST, message=f"Invalid request: {method} is not a valid JSON-RPC request")
    return Unreadable(method, JSONRPCError(jsonrpc="2.0", id=request_id, error=error), exc)
