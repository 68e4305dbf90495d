"""The SDK `Client`'s and `ClientSession`'s private members webhost needs: input rounds, tool listings,
the capabilities it advertised, and the transport's stream type."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.client.session import ClientSession
from mcp.types import InputRequiredResult, ListToolsResult
from pydantic import BaseModel

__all__ = [
    "RoundObservingClient",
    "TransportStreams",
    "absorb_tool_listing",
    "advertised_capabilities",
    "round_observer",
    "send_unchecked",
]

# Told about each input round of the request running in this task: the round, or None once it was answered.
RoundObserver = Callable[[InputRequiredResult | None], None]
round_observer: ContextVar[RoundObserver | None] = ContextVar("round_observer", default=None)


class RoundObservingClient(Client):
    """`Client` that reports each 2026-07-28 input round of a watched request to `round_observer`.

    Needs: every `InputRequiredResult` of tools/call, prompts/get and resources/read as it arrives, with the
    `requestState` the SDK echoes, and the moment its answers go back, so that a call's round can be written
    down and resumed by another replica (`upstream/rounds.py`, `sdk_workarounds.py` item 4).
    Private: overrides `Client._drive_input_required`, the one place every round passes.
    Public hook that would replace it: a round observer on `Client` (told of each `InputRequiredResult` and of
    its answering), or the round's `requestState` on the callbacks' request context.
    """

    async def _drive_input_required(self, first: Any, retry: Callable[[Any, str | None], Awaitable[Any]]) -> Any:
        seen = round_observer.get()
        if seen is None or not isinstance(first, InputRequiredResult):
            return await super()._drive_input_required(first, retry)
        seen(first)

        async def watched_retry(responses: Any, state: str | None) -> Any:
            seen(None)  # answered: the round is no longer waiting for anyone
            result = await retry(responses, state)
            if isinstance(result, InputRequiredResult):
                seen(result)
            return result

        return await super()._drive_input_required(first, watched_retry)


def absorb_tool_listing(client: Client, listing: ListToolsResult, *, complete: bool) -> None:
    """Record the tools of a listing webhost validated item by item, as the SDK's own listing would.

    Needs: the output schemas (and the other per-tool state) of the valid tools of a listing in which one
    tool was malformed, so their results are checked as after a normal listing (`upstream/lenient.py`,
    `sdk_workarounds.py` item 5).
    Private: `ClientSession._absorb_tool_listing`.
    Public hook that would replace it: lenient listings in the SDK (each item validated on its own, a bad one
    reported rather than failing the page), or a public `ClientSession.absorb_tool_listing`.
    """
    client.session._absorb_tool_listing(listing, complete=complete)


def advertised_capabilities(session: ClientSession, version: str | None) -> dict[str, Any] | None:
    """What this client advertised to the server for `version`, as wire JSON (None if unknown).

    Needs: webhost's side of the handshake for the server view, beside the server's (`sdk_workarounds.py`
    item 7).
    Private: `ClientSession._build_capabilities`; read defensively, so a reshaped member shows nothing
    rather than failing the connection.
    Public hook that would replace it: `Client.client_capabilities`, what was sent in `initialize` or
    `server/discover`.
    """
    build = getattr(session, "_build_capabilities", None)
    if build is None or version is None:
        return None
    try:
        capabilities = build(version)
    except Exception:  # a private method that changed shape: show nothing rather than fail the connection
        return None
    dumped: dict[str, Any] = capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


async def send_unchecked(session: ClientSession, request: BaseModel, *, timeout: float | None = None) -> dict[str, Any]:
    """Send `request` as the session sends any (its era's envelope and headers) and return the raw result.

    Needs: a 2025-11-25 task-augmented `tools/call`, which the server answers with a `CreateTaskResult`
    (`{"task": {...}}`); the SDK validates every `tools/call` answer against `CallToolResult` first (its
    per-version result table has no task shape), so `send_request` refuses it (`upstream/tasks.py`,
    `sdk_workarounds.py` item 12).
    Private: `ClientSession._stamp` and `ClientSession._dispatcher.send_raw_request`.
    Public hook that would replace it: task-augmented requests in the SDK (`call_tool(..., task=...)` returning
    `CreateTaskResult`), or a `send_request` that validates only against the result type it is given.
    """
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    opts: dict[str, Any] = {}
    session._stamp(data, opts)  # type: ignore[arg-type]
    if timeout is not None:
        opts["timeout"] = timeout
    raw: dict[str, Any] = await session._dispatcher.send_raw_request(data["method"], data.get("params"), opts)  # type: ignore[arg-type]
    return raw
