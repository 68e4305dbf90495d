"""The SDK's callbacks for one connection: what the server sends or asks, as wire dicts for its owner and back.

Nothing past this module sees an SDK object: a server→client request reaches the owner (the person's
workspace) as a wire dict, and its answer comes back as one, or as `RequestRefused`, which answers the
server with a JSON-RPC error.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, TypeVar

from mcp.client import ClientRequestContext
from mcp.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
    ListRootsResult,
    LoggingMessageNotificationParams,
    Root,
)
from pydantic import BaseModel

from webhost.errors import RequestRefused

from .client_factory import ClientCallbacks
from .results import to_wire

ElicitMode = Literal["form", "url"]
C = TypeVar("C", contravariant=True)  # what the owner is told the request came through (the Connection)


class ServerRequests(Protocol[C]):
    """What a server sends or asks, as the owner receives it; every value is an MCP wire dict."""

    def activity(self, server: str, **entry: Any) -> None: ...
    async def server_notification(self, connection: C, method: str, params: dict[str, Any]) -> None: ...
    async def elicit(self, connection: C, mode: ElicitMode, params: dict[str, Any]) -> dict[str, Any]: ...
    async def sample(self, connection: C, params: dict[str, Any]) -> dict[str, Any]: ...
    async def list_roots(self, connection: C) -> list[dict[str, Any]]: ...


def server_callbacks(events: ServerRequests[C], connection: C, name: str) -> ClientCallbacks:
    """The SDK's callbacks for the server `name`, translated to wire dicts for `events` and back."""

    async def on_elicit(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        mode: ElicitMode = "url" if isinstance(params, ElicitRequestURLParams) else "form"
        try:
            answer = await events.elicit(
                connection, mode, params.model_dump(by_alias=True, exclude_none=True, mode="json")
            )
        except RequestRefused as exc:
            return ErrorData(code=exc.code, message=exc.message)
        return ElicitResult.model_validate(answer)

    async def on_sample(
        context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData:
        try:
            answer = await events.sample(connection, to_wire(params))
        except RequestRefused as exc:
            return ErrorData(code=exc.code, message=exc.message)
        return CreateMessageResult.model_validate(answer)

    async def on_roots(context: ClientRequestContext) -> ListRootsResult | ErrorData:
        try:
            roots = await events.list_roots(connection)
        except RequestRefused as exc:
            return ErrorData(code=exc.code, message=exc.message)
        return ListRootsResult(roots=[Root.model_validate(root) for root in roots])

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        await events.server_notification(connection, "notifications/message", to_wire(params))

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            events.activity(name, direction="in", kind="error", method=None, summary=f"transport error: {message}")
            return
        method = getattr(message, "method", None)
        if not isinstance(method, str) or method == "notifications/message":
            return
        params = getattr(message, "params", None)
        dumped = to_wire(params) if isinstance(params, BaseModel) else {}
        await events.server_notification(connection, method, dumped)

    async def on_task_status(method: str, params: dict[str, Any]) -> None:
        await events.server_notification(connection, method, params)

    return ClientCallbacks(
        elicit=on_elicit,
        sample=on_sample,
        roots=on_roots,
        log=on_log,
        message=on_message,
        task_status=on_task_status,
    )
