"""Domain errors, each carrying the JSON-RPC error it becomes at the browser edge.

Each code says whose fault an error is (docs/api.md, "Errors"): -32000 is only ever an MCP server's own
failure; webhost's own bugs are -32603 with a reference the log's traceback carries too (ws.py), and webhost's
refusals, limits and its stopping have codes of their own.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UPSTREAM_ERROR = -32000
UPSTREAM_TIMEOUT = -32001
NOT_CONNECTED = -32002
POLICY_REFUSED = -32003
STOPPING = -32005  # webhost is stopping: the request was not finished (-32004 is an App's resource error)
CANCELLED = -32800


class WebhostError(Exception):
    """An error the page is shown as a JSON-RPC error object."""

    code = UPSTREAM_ERROR

    def __init__(self, message: str, data: dict[str, Any] | None = None, *, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        if code is not None:
            self.code = code

    def to_jsonrpc(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class InvalidParams(WebhostError):
    code = INVALID_PARAMS


class UpstreamError(WebhostError):
    """The MCP server answered with an error, broke the protocol, or went away mid-request."""

    code = UPSTREAM_ERROR


class UpstreamTimeout(WebhostError):
    code = UPSTREAM_TIMEOUT


class NotConnected(WebhostError):
    code = NOT_CONNECTED


class PolicyRefused(WebhostError):
    code = POLICY_REFUSED


class Cancelled(WebhostError):
    code = CANCELLED


class RequestRefused(WebhostError):
    """webhost's answer to a server→client request is a JSON-RPC error (a refused schema, a declined sample)."""

    code = INVALID_PARAMS


CHAT_UNAVAILABLE = -32010


class ChatUnavailable(WebhostError):
    """The chat cannot answer: no model configured, no database, or the person's own API key not given yet."""

    code = CHAT_UNAVAILABLE
