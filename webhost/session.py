"""One browser tab's session: its calls, app frames and approvals, on its person's shared workspace.

The session builds one owner for each piece of the tab's state (calls, app frames, approvals, the
app policy, its side of input requests) and wires them to the person's `Workspace` (connections,
catalogue, pending input requests). Handlers use these owners and never reach past them. A
server's request for input reaches the tab whose call caused it, so one tab's questions are not
shown in another; another person's never are, since people never share a workspace.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import Any

import anyio

from webhost.approvals import ApprovalBroker
from webhost.apps.instances import AppInstance, AppInstances
from webhost.apps.policy import AppPolicy
from webhost.calls import CallRegistry
from webhost.config import Config, WebhostOptions
from webhost.directory import SessionDirectory
from webhost.elicitation.requests import InputRequests
from webhost.errors import InvalidParams
from webhost.pending import Publish
from webhost.people import Person
from webhost.upstream.connection import Connection
from webhost.workspace import Workspace


class BrowserSession:
    """One tab of one person."""

    def __init__(
        self, workspace: Workspace, notify: Publish, directory: SessionDirectory, *, sign_in: str | None = None
    ) -> None:
        deps = workspace.deps
        options = deps.config.options
        self.id = "s-" + secrets.token_urlsafe(8)
        self.started = time.time()
        self.sign_in = sign_in  # the web session it was opened with (oidc mode): signing out ends the tab
        self.workspace = workspace
        self.directory = directory
        # Set when someone ends this tab (`sessions/end`): the browser edge closes the socket with the reason.
        self.ended = anyio.Event()
        self.end_reason = ""
        self._left: set[str] = set()  # the call ids this tab left running when it went (close)
        self.notify = notify
        self.audit = deps.audit
        self.sandbox = deps.sandbox
        self.history = deps.history
        self.catalogue = workspace.catalogue
        self.inputs = workspace.inputs
        self.connections: Mapping[str, Connection] = workspace.connections
        self.approvals = ApprovalBroker(notify, timeout=options.human_timeout)
        self.apps = AppInstances(
            session_id=self.id,
            person=self.person,
            sandbox=deps.sandbox,
            options=options,
            audit=deps.audit,
            catalogue=self.catalogue,
            activity=self.activity,
            on_close=self._app_closed,
            prefetch=workspace.app_prefetch,
        )
        self.calls = CallRegistry(on_end=self._call_ended, tab=self.id, hook=workspace.call_hook)
        self.requests = InputRequests(
            broker=self.inputs,
            apps=self.apps,
            calls=self.calls,
            options=options,
            activity=self.activity,
            route=workspace.route_to(self.id),
            roots=workspace.roots.effective,
        )
        self.app_policy = AppPolicy(
            session_id=self.id,
            person=self.person,
            options=options,
            audit=deps.audit,
            approvals=self.approvals,
            catalogue=self.catalogue,
            notify=notify,
            chat=workspace.chat,
            tasks=workspace.tasks,
        )
        workspace.attach(self, self._leave_app)
        directory.add(self)

    def activity(self, server: str, **entry: Any) -> None:
        self.workspace.activity(server, **entry)

    def pending(self) -> list[dict[str, Any]]:
        return self.workspace.pending_for(self.id)

    def asked_here(self, request_id: str) -> bool:
        """Whether this tab was asked this input request (its own, or one asked of all its person's tabs)."""
        return self.workspace.asked(request_id, self.id)

    # -- lifecycle ----------------------------------------------------------------------------

    def servers_connected(self) -> list[str]:
        return sorted(name for name, c in self.connections.items() if c.status == "connected")

    def end(self, reason: str) -> None:
        """Ask the browser edge to close this tab's socket with `reason` (the page shows it)."""
        if not self.ended.is_set():
            self.end_reason = reason
            self.ended.set()

    async def close(self, *, leave_calls: bool = False) -> None:
        """Release this tab's approvals and app frames and cancel its calls; the workspace decides the servers.

        With `leave_calls` (the tab went away, as a reload does), its page tool calls are not cancelled: they run
        on in the person's workspace, where the person's next tab finds them (workspace/left_calls.py).
        """
        self.directory.remove(self)
        self.approvals.release()
        self.apps.close_all(reason="session closed")
        self._left = self.workspace.leave_calls(self) if leave_calls else set()
        self.calls.cancel_all(keep=self._left)

    def _call_ended(self, call_id: str) -> None:
        # A left call's input requests were handed to every tab (routed to None).
        routes = (self.id, None) if call_id in self._left else (self.id,)
        self.inputs.release(
            lambda p: self.workspace.routed_to(p.id) in routes and (p.origin or {}).get("callId") == call_id
        )

    # The workspace's, read each time: a session refresh changes the person's groups, a reload the configuration.
    @property
    def person(self) -> Person:
        return self.workspace.person

    @property
    def options(self) -> WebhostOptions:
        return self.workspace.options

    @property
    def config(self) -> Config:
        return self.workspace.deps.config

    def _app_closed(self, instance: AppInstance) -> None:
        self.approvals.release_frame(instance.frame_id)

    def _leave_app(self, frame_id: str, reason: str) -> None:
        self.apps.close(frame_id, reason=reason)

    def connection(self, params: dict[str, Any]) -> Connection:
        name = params.get("server")
        if not isinstance(name, str):
            raise InvalidParams("params.server must name a configured server")
        connection = self.connections.get(name)
        if connection is None:
            raise InvalidParams(f"no server named {name!r} is configured", {"server": name})
        return connection

    async def reconnect(self, connection: Connection) -> None:
        await self.workspace.reconnect(connection)

    async def disconnect(self, connection: Connection) -> None:
        await self.workspace.disconnect(connection)
