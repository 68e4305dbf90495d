"""One browser tab's session: its own connection to every server, its calls, its pending input requests.

Everything a server sends back (notifications, elicitation, sampling, roots) is delivered only
to the session that owns the connection, which is what keeps one person's input requests out of
another person's browser.
"""

from __future__ import annotations

import itertools
import logging
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
from mcp.client import ClientRequestContext
from mcp.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    ListRootsResult,
    Root,
    TextContent,
)

from webhost.approvals import ApprovalBroker
from webhost.apps.instances import AppInstance
from webhost.elicitation import requests as input_requests
from webhost.elicitation.broker import InputBroker, current_origin
from webhost.errors import Cancelled, InvalidParams
from webhost.upstream.connection import Connection

if TYPE_CHECKING:
    from webhost.app import HostState

logger = logging.getLogger(__name__)

MAX_ACTIVITY_DATA = 64 * 1024


class BrowserSession:
    """Implements ConnectionEvents for the connections of one tab."""

    def __init__(self, host: HostState, notify: Callable[[str, dict[str, Any]], None]) -> None:
        self.host = host
        self.id = "s-" + secrets.token_urlsafe(8)
        self.notify = notify
        options = host.config.options
        self.connections: dict[str, Connection] = {
            name: Connection(cfg, self, connect_timeout=options.connect_timeout,
                             max_input_rounds=options.max_input_rounds)
            for name, cfg in host.config.servers.items()
        }
        self.broker = InputBroker(notify, human_timeout=options.human_timeout)
        self.broker.on_fallback = lambda pending, frame_id: self.close_app(frame_id, reason="fell back to form")
        self.approvals = ApprovalBroker(notify, timeout=options.human_timeout)
        self.apps: dict[str, AppInstance] = {}
        self.app_in_flight: dict[str, int] = {}
        self.calls: dict[str, anyio.CancelScope] = {}
        self.call_origins: dict[str, dict[str, Any]] = {}
        self.broker.guess_origin = self._guess_origin
        self.url_elicitations: dict[tuple[str, str], str] = {}
        self._activity_ids = itertools.count(1)
        self._task_group: anyio.abc.TaskGroup | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self, task_group: anyio.abc.TaskGroup) -> None:
        self._task_group = task_group
        for connection in self.connections.values():
            connection.start(task_group)

    async def close(self) -> None:
        """Release every input request, cancel every call, stop every server process."""
        self.broker.release(outcome="released")
        self.approvals.release()
        for frame_id in list(self.apps):
            self.close_app(frame_id, reason="session closed")
        for scope in list(self.calls.values()):
            scope.cancel()
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for connection in self.connections.values():
                    tg.start_soon(connection.stop)

    def close_app(self, frame_id: str, *, reason: str) -> None:
        instance = self.apps.pop(frame_id, None)
        self.app_in_flight.pop(frame_id, None)
        if instance is None:
            return
        self.approvals.release(lambda p: p.frame == frame_id)
        self.host.audit.record("app.close", session=self.id, server=instance.server, frame=frame_id,
                               summary=reason)

    def connection(self, params: dict[str, Any]) -> Connection:
        name = params.get("server")
        if not isinstance(name, str):
            raise InvalidParams("params.server must name a configured server")
        connection = self.connections.get(name)
        if connection is None:
            raise InvalidParams(f"no server named {name!r} is configured", {"server": name})
        return connection

    async def reconnect(self, connection: Connection) -> None:
        assert self._task_group is not None
        await connection.stop()
        self.broker.release(lambda p: p.server == connection.name)
        connection.start(self._task_group)

    async def disconnect(self, connection: Connection) -> None:
        self.broker.release(lambda p: p.server == connection.name)
        await connection.stop()

    # -- ConnectionEvents ---------------------------------------------------------------------

    def status_changed(self, connection: Connection) -> None:
        if connection.status != "connected":
            self.broker.release(lambda p: p.server == connection.name)
        self.notify("servers/status", {"server": connection.state()})

    def activity(self, server: str, **entry: Any) -> None:
        duration = entry.pop("duration_ms", None)
        data = entry.pop("data", None)
        record = {"id": next(self._activity_ids), "ts": time.time(), "server": server, **entry,
                  "durationMs": None if duration is None else round(duration, 2), "data": _clip(data)}
        self.notify("activity", {"entry": record})

    async def server_notification(self, connection: Connection, method: str, params: dict[str, Any]) -> None:
        name = connection.name
        summary = method
        if method == "notifications/message":
            self.notify("server/log", {"server": name, **params})
            summary = f"[{params.get('level')}] {_short(params.get('data'))}"
        elif method.endswith("/list_changed"):
            kind = method.split("/")[1]
            self.notify("list/changed", {"server": name, "list": kind})
        elif method == "notifications/resources/updated":
            self.notify("resources/updated", {"server": name, "uri": params.get("uri")})
        elif method == "notifications/elicitation/complete":
            request_id = self.url_elicitations.pop((name, str(params.get("elicitationId"))), None)
            if request_id is not None:
                self.broker.complete(request_id, {"action": "accept"}, "completed")
        if method != "notifications/progress":  # progress is shown on the call itself
            self.activity(name, direction="in", kind="notification", method=method, summary=summary, data=params)

    async def elicit(
        self, connection: Connection, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        return await input_requests.elicit(self, connection, params)

    async def sample(
        self, connection: Connection, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData:
        view = input_requests.sampling_view(params)
        connection.human_clock.begin()
        try:
            answer = await self.broker.ask(connection.name, view, input_requests.validate_sampling_answer)
        finally:
            connection.human_clock.end()
        if answer.get("action") != "accept":
            return ErrorData(code=-1, message="The user declined the sampling request")
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=answer["content"]["text"]),
            model="webhost-person", stop_reason="endTurn",
        )

    async def list_roots(self, connection: Connection) -> ListRootsResult | ErrorData:
        roots = self.host.config.options.roots
        self.activity(connection.name, direction="in", kind="request", method="roots/list",
                      summary=f"{len(roots)} root(s) configured")
        if not roots:
            return ErrorData(code=-32601, message="webhost has no roots configured (set webhost.roots in the "
                                                  "configuration file)")
        return ListRootsResult(roots=[Root(uri=r.uri, name=r.name) for r in roots])  # type: ignore[arg-type]

    # -- calls --------------------------------------------------------------------------------

    async def tracked_call(self, call_id: str, origin: dict[str, Any], run: Callable[[], Any]) -> Any:
        """Run one cancellable page action, attributing the input requests it causes to it."""
        if call_id in self.calls:
            raise InvalidParams(f"callId {call_id!r} is already running")
        full_origin = {**origin, "callId": call_id}
        token = current_origin.set(full_origin)
        self.call_origins[call_id] = full_origin
        try:
            with anyio.CancelScope() as scope:
                self.calls[call_id] = scope
                return await run()
            raise Cancelled("the call was cancelled", {"callId": call_id})
        finally:
            self.calls.pop(call_id, None)
            self.call_origins.pop(call_id, None)
            current_origin.reset(token)
            self.broker.release(lambda p: (p.origin or {}).get("callId") == call_id)

    def _guess_origin(self, server: str) -> dict[str, Any] | None:
        candidates = [o for o in self.call_origins.values() if o.get("server") == server]
        return dict(candidates[0]) if len(candidates) == 1 else None

    def cancel_call(self, call_id: str) -> bool:
        scope = self.calls.get(call_id)
        if scope is None:
            return False
        scope.cancel()
        return True


def _short(value: object, limit: int = 200) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _clip(data: object) -> object:
    """Small data as is; large data as a preview, without encoding a multi-megabyte result twice."""
    if data is None:
        return None
    if _size_at_most(data, MAX_ACTIVITY_DATA):
        return data
    return {"truncated": True, "preview": _trimmed(data)}


def _trimmed(value: object, depth: int = 0) -> object:
    """A small copy for display: long strings cut, long lists and deep nesting elided."""
    if isinstance(value, str):
        return value if len(value) <= 300 else value[:300] + f"… ({len(value)} characters)"
    if depth > 6:
        return "…"
    if isinstance(value, dict):
        items = list(value.items())
        trimmed = {str(k): _trimmed(v, depth + 1) for k, v in items[:50]}
        if len(items) > 50:
            trimmed["…"] = f"{len(items) - 50} more keys"
        return trimmed
    if isinstance(value, list | tuple):
        head = [_trimmed(v, depth + 1) for v in value[:20]]
        return head + ([f"… {len(value) - 20} more items"] if len(value) > 20 else [])
    return value


def _size_at_most(value: object, budget: int) -> bool:
    """Whether a JSON value's encoded size is (roughly) within budget; stops walking once over it."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            budget -= len(item) + 2
        elif isinstance(item, dict):
            budget -= 2 + 4 * len(item)
            for key, child in item.items():
                budget -= len(str(key))
                stack.append(child)
        elif isinstance(item, list | tuple):
            budget -= 2 + len(item)
            stack.extend(item)
        else:
            budget -= 8
        if budget < 0:
            return False
    return True

