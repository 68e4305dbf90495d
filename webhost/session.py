"""One browser tab's session: the composition of its owners, and where its servers' messages arrive.

The session builds one owner for each piece of state (connections, calls, app frames, pending
input requests, approvals, the catalogue) and wires them; handlers use those owners and never
reach past them. Everything a server sends back (notifications, elicitation, sampling, roots) is
delivered only to the session that owns the connection, which is what keeps one person's input
requests out of another person's browser.
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from webhost.approvals import ApprovalBroker
from webhost.apps.instances import AppInstance, AppInstances, Sandbox
from webhost.apps.policy import AppPolicy
from webhost.audit import AuditLog
from webhost.calls import CallRegistry
from webhost.catalogue import Catalogue
from webhost.config import Config
from webhost.elicitation.broker import InputBroker
from webhost.elicitation.requests import InputRequests
from webhost.errors import InvalidParams
from webhost.jsonsize import size_at_most
from webhost.pending import Publish
from webhost.upstream.client_factory import TransportFactory, default_transport
from webhost.upstream.connection import Connection, ConnectionSettings, ElicitMode

MAX_ACTIVITY_DATA = 64 * 1024


@dataclass(frozen=True)
class SessionDeps:
    """What every session of one host shares (built once by the composition root)."""

    config: Config
    audit: AuditLog
    sandbox: Sandbox
    transport_factory: TransportFactory = default_transport


class BrowserSession:
    """Implements ConnectionEvents for the connections of one tab."""

    def __init__(self, deps: SessionDeps, notify: Publish) -> None:
        options = deps.config.options
        self.id = "s-" + secrets.token_urlsafe(8)
        self.notify = notify
        self.options = options
        self.audit = deps.audit
        self.sandbox = deps.sandbox
        self.catalogue = Catalogue()
        self.approvals = ApprovalBroker(notify, timeout=options.human_timeout)
        self.apps = AppInstances(session_id=self.id, sandbox=deps.sandbox, options=options, audit=deps.audit,
                                 catalogue=self.catalogue, activity=self.activity, on_close=self._app_closed)
        self.inputs = InputBroker(notify, human_timeout=options.human_timeout,
                                  leave_app=lambda frame_id, reason: self.apps.close(frame_id, reason=reason))
        self.calls = CallRegistry(on_end=self._call_ended)
        self.requests = InputRequests(broker=self.inputs, apps=self.apps, calls=self.calls, options=options,
                                      activity=self.activity)
        self.app_policy = AppPolicy(session_id=self.id, options=options, audit=deps.audit, approvals=self.approvals,
                                    catalogue=self.catalogue, notify=notify)
        settings = ConnectionSettings(connect_timeout=options.connect_timeout, call_timeout=options.call_timeout,
                                      max_input_rounds=options.max_input_rounds)
        self.connections: Mapping[str, Connection] = {
            name: Connection(cfg, self, settings, transport_factory=deps.transport_factory)
            for name, cfg in deps.config.servers.items()
        }
        self._activity_ids = itertools.count(1)
        self._task_group: anyio.abc.TaskGroup | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self, task_group: anyio.abc.TaskGroup) -> None:
        self._task_group = task_group
        for connection in self.connections.values():
            connection.start(task_group)

    async def close(self) -> None:
        """Release every input request, cancel every call, stop every server process."""
        self.inputs.release(outcome="released")
        self.approvals.release()
        self.apps.close_all(reason="session closed")
        self.calls.cancel_all()
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for connection in self.connections.values():
                    tg.start_soon(connection.stop)

    def _call_ended(self, call_id: str) -> None:
        self.inputs.release(lambda p: (p.origin or {}).get("callId") == call_id)

    def _app_closed(self, instance: AppInstance) -> None:
        self.approvals.release_frame(instance.frame_id)

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
        self._forget(connection)
        connection.start(self._task_group)

    async def disconnect(self, connection: Connection) -> None:
        self._forget(connection)
        await connection.stop()

    def _forget(self, connection: Connection) -> None:
        self.inputs.release(lambda p: p.server == connection.name)
        self.catalogue.forget(connection.name)

    # -- ConnectionEvents ---------------------------------------------------------------------

    def status_changed(self, connection: Connection) -> None:
        if connection.status != "connected":
            self.inputs.release(lambda p: p.server == connection.name)
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
            self.catalogue.changed(name, kind)
            self.notify("list/changed", {"server": name, "list": kind})
        elif method == "notifications/resources/updated":
            self.notify("resources/updated", {"server": name, "uri": params.get("uri")})
        elif method == "notifications/elicitation/complete":
            self.requests.url_step_completed(name, str(params.get("elicitationId")))
        if method != "notifications/progress":  # progress is shown on the call itself
            self.activity(name, direction="in", kind="notification", method=method, summary=summary, data=params)

    async def elicit(self, connection: Connection, mode: ElicitMode, params: dict[str, Any]) -> dict[str, Any]:
        return await self.requests.elicit(connection, mode, params)

    async def sample(self, connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        return await self.requests.sample(connection, params)

    async def list_roots(self, connection: Connection) -> list[dict[str, Any]]:
        return self.requests.list_roots(connection)


def _short(value: object, limit: int = 200) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _clip(data: object) -> object:
    """Small data as is; large data as a preview, without encoding a multi-megabyte result twice."""
    if data is None:
        return None
    if size_at_most(data, MAX_ACTIVITY_DATA):
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
