"""One person's servers: a connection per configured server, shared by all of that person's tabs.

The workspace is where a person's servers talk back (`ConnectionEvents`). What concerns the
person as a whole (server status, list changes, logs, activity) reaches every one of their tabs;
a server's request for input reaches the tab whose call caused it (exactly, through the call's
context; by elimination for legacy server→client requests), and when no single tab can be named,
every tab of that person, where the first answer wins. Two people never share a workspace.

It opens when the person's first tab does, and closes `webhost.timeouts.idle` seconds after their
last tab closed (so a reload keeps the servers and their state); then every process is reaped.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import anyio.abc

from webhost.apps.instances import Sandbox
from webhost.apps.prefetch import AppPrefetch
from webhost.audit import AuditLog
from webhost.call_record import Recorder
from webhost.calls import CallHook, CallRegistry, current_origin, current_tab
from webhost.catalogue import Catalogue
from webhost.chat.runner import Chat, ChatDeps
from webhost.config import Config, ServerConfig
from webhost.elicitation.broker import InputBroker
from webhost.elicitation.requests import InputRequests
from webhost.errors import NotConnected
from webhost.journal import CallJournal
from webhost.jsonsize import size_at_most
from webhost.people import Person
from webhost.redact import Redactor
from webhost.resume import Takeover
from webhost.storage.conversations import ConversationStore
from webhost.storage.history import CallHistory
from webhost.storage.inputs import InputVault
from webhost.upstream.client_factory import TransportFactory, default_transport
from webhost.upstream.connection import Connection, ConnectionSettings, ElicitMode
from webhost.upstream.oauth import CALLBACK_PATH, OAuthBinding, OAuthDeps

logger = logging.getLogger(__name__)

MAX_ACTIVITY_DATA = 64 * 1024
USER_FIELDS = ("user.id", "user.email", "user.name")
CHAT_TAB = "chat"  # the "tab" the model's calls run in (current_tab), so their input requests find the chat


@dataclass(frozen=True)
class HostDeps:
    """What every workspace and tab of one host shares (built once by the composition root)."""

    config: Config
    audit: AuditLog
    sandbox: Sandbox
    transport_factory: TransportFactory = default_transport
    vault: InputVault | None = None  # where each person's `${input:ID}` values are kept (None: in memory only)
    journal: CallJournal | None = None  # the replica's record of its running calls (None: nothing survives it)
    oauth: OAuthDeps | None = None  # sign-in to remote servers (None: remote servers get no OAuth)
    public_origin: str | None = None  # the page's configured public origin (the OAuth callback's), if any
    history: CallHistory | None = None  # each person's calls, in the database (None: not kept)
    conversations: ConversationStore | None = None  # each person's chat (None: the chat is unavailable)


class Tab(Protocol):
    """What the workspace needs of a tab: to tell it things, and to let it answer its own requests."""

    id: str
    calls: CallRegistry
    requests: InputRequests

    def notify(self, method: str, params: dict[str, Any]) -> None: ...


class Workspace:
    """Implements ConnectionEvents for one person's connections."""

    def __init__(
        self, deps: HostDeps, person: Person, task_group: anyio.abc.TaskGroup, *, origin: str | None = None
    ) -> None:
        options = deps.config.options
        self.person = person
        self.deps = deps
        self.options = options
        self.catalogue = Catalogue()
        self.app_prefetch = AppPrefetch()  # app resources read ahead of apps/open (webhost/apps/prefetch.py)
        self.tabs: dict[str, Tab] = {}
        self._routes: dict[str, str | None] = {}  # input request id → the tab it was asked in (None: every tab)
        self.inputs = InputBroker(self._publish_input, human_timeout=options.human_timeout, leave_app=self._leave_app)
        self._any_tab = InputRequests(
            broker=self.inputs,
            apps=None,
            calls=None,
            options=options,
            activity=self.activity,
            route=self.route_to(None),
        )
        self._leave_app_of: dict[str, Callable[[str, str], None]] = {}
        settings = ConnectionSettings(
            connect_timeout=options.connect_timeout,
            call_timeout=options.call_timeout,
            max_input_rounds=options.max_input_rounds,
        )
        self.origin = origin or "http://127.0.0.1:8700"  # the page's origin of the first tab
        oauth = (
            OAuthBinding(deps.oauth, person.id, lambda: (self.deps.public_origin or self.origin) + CALLBACK_PATH)
            if deps.oauth is not None
            else None
        )
        self.connections: Mapping[str, Connection] = {
            name: Connection(
                expand_for(cfg, person), self, settings, transport_factory=deps.transport_factory, oauth=oauth
            )
            for name, cfg in deps.config.servers.items()
        }
        self._activity_ids = itertools.count(1)
        self._task_group = task_group
        self._status_seen = anyio.Event()  # set (and replaced) on every status change of a connection
        self.takeover = (
            Takeover(
                person_id=person.id,
                journal=deps.journal,
                connections=self.connections,
                requests=self._any_tab,
                notify_all=self._tell_all,
                activity=self.activity,
                has_tabs=lambda: bool(self.tabs),
                connected=self._status_change,
                task_group=task_group,
            )
            if deps.journal is not None
            else None
        )
        self._idle: anyio.CancelScope | None = None
        self.closed = False
        # The person's `${input:ID}` values: read from the vault when the workspace opens, never sent to a tab.
        self.input_values: dict[str, str] = {}
        self._inputs_loaded = anyio.Event()
        self._values_seen: set[str] = set()  # every value given in this workspace's life (masked even once forgotten)
        self.input_redactor = Redactor()
        self.chat = self._chat(task_group)
        for connection in self.connections.values():
            if not deps.config.servers[connection.name].input_ids:
                connection.start(task_group)
        task_group.start_soon(self._load_inputs)

    def _chat(self, task_group: anyio.abc.TaskGroup) -> Chat:
        """The person's chat: the model's calls run in a registry of their own, and what those calls ask of the
        person goes to every tab of the person, shown in the conversation (contract §8)."""
        self.chat_calls = CallRegistry(on_end=self._chat_call_ended, tab=CHAT_TAB)
        self.chat_requests = InputRequests(
            broker=self.inputs,
            apps=None,
            calls=self.chat_calls,
            options=self.options,
            activity=self.activity,
            route=self.route_to(None),
        )
        deps = self.deps
        return Chat(
            ChatDeps(
                options=self.options,
                person=self.person,
                store=deps.conversations,
                audit=deps.audit,
                connections=self.connections,
                catalogue=self.catalogue,
                notify_all=self._tell_all,
                task_group=task_group,
                calls=self.chat_calls,
                requests=self.chat_requests,
                recorder=Recorder(
                    history=deps.history,
                    person_id=self.person.id,
                    tab=CHAT_TAB,
                    redactor=lambda: self.input_redactor,
                    on_stored=lambda summary: self._tell_all("history/added", {"entry": summary}),
                ),
                input_values=lambda: self.input_values,
                redactor=lambda: deps.config.redactor().with_values(self.input_redactor.values),
                replica_id=deps.journal.replica_id if deps.journal is not None else None,
            )
        )

    def _chat_call_ended(self, call_id: str) -> None:
        self.inputs.release(
            lambda p: (
                self._routes.get(p.id) is None
                and (p.origin or {}).get("callId") == call_id
                and bool((p.origin or {}).get("conversationId"))
            )
        )

    # -- tabs -----------------------------------------------------------------------------------

    def attach(self, tab: Tab, leave_app: Callable[[str, str], None]) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        self.tabs[tab.id] = tab
        self._leave_app_of[tab.id] = leave_app
        for view in self.pending_for(tab.id):  # asked of every tab before this one opened: it may answer too
            tab.notify("elicitation/request", view)
        for view in self.chat.approvals.pending():  # the chat's decisions wait for any tab of the person
            tab.notify("approval/request", view)
        if self.takeover is not None:
            self.takeover.tab_attached()  # calls a stopped replica left behind: resumed or reported here

    @property
    def call_hook(self) -> CallHook | None:
        """What each tab's calls tell the replica's journal (None: not journalled)."""
        return self.deps.journal.hook(self.person.id) if self.deps.journal is not None else None

    def detach(self, tab: Tab, on_idle: Callable[[Workspace], None]) -> None:
        """A tab closed: what it was asked is released; with no tab left, the idle countdown starts."""
        self.tabs.pop(tab.id, None)
        self._leave_app_of.pop(tab.id, None)
        self.inputs.release(lambda p: self._routes.get(p.id) == tab.id or (not self.tabs and p.id in self._routes))
        if not self.tabs:
            self._task_group.start_soon(self._close_when_idle, on_idle)

    async def _close_when_idle(self, on_idle: Callable[[Workspace], None]) -> None:
        with anyio.CancelScope() as scope:
            self._idle = scope
            await anyio.sleep(self.options.idle_timeout)
            if not self.tabs:
                self._idle = None
                on_idle(self)
                await self.close()

    async def close(self) -> None:
        """Release every input request and stop every server process."""
        self.closed = True
        self.inputs.release(outcome="released")
        with anyio.CancelScope(shield=True):
            await self.chat.close()
            async with anyio.create_task_group() as tg:
                for connection in self.connections.values():
                    tg.start_soon(connection.stop)

    def route_to(self, tab_id: str | None) -> Callable[[str], None]:
        def route(request_id: str) -> None:
            self._routes[request_id] = tab_id

        return route

    def routed_to(self, request_id: str) -> str | None:
        return self._routes.get(request_id)

    def asked(self, request_id: str, tab_id: str) -> bool:
        return request_id in self._routes and self._routes[request_id] in (tab_id, None)

    def pending_for(self, tab_id: str) -> list[dict[str, Any]]:
        """The open input requests a tab should show: its own and those asked of every tab."""
        return [view for view in self.inputs.pending() if self._routes.get(str(view.get("id"))) in (tab_id, None)]

    def _publish_input(self, method: str, params: dict[str, Any]) -> None:
        request_id = str(params.get("id"))
        tab_id = self._routes.get(request_id)
        targets = [self.tabs[tab_id]] if tab_id in self.tabs else list(self.tabs.values())
        if method == "elicitation/resolved":
            self._routes.pop(request_id, None)
        for tab in targets:
            tab.notify(method, params)

    def _leave_app(self, frame_id: str, reason: str) -> None:
        for leave in list(self._leave_app_of.values()):
            leave(frame_id, reason)

    def _tell_all(self, method: str, params: dict[str, Any]) -> None:
        for tab in list(self.tabs.values()):
            tab.notify(method, params)

    def tell_tabs(self, method: str, params: dict[str, Any]) -> None:
        """Something of the person's own (their history) for every one of their tabs."""
        self._tell_all(method, params)

    # -- values the person provides (${input:ID}) -------------------------------------------------

    async def _load_inputs(self) -> None:
        try:
            await self._read_inputs()
        finally:
            self._inputs_loaded.set()
        for connection in self.connections.values():
            if connection.status == "disconnected" and self.deps.config.servers[connection.name].input_ids:
                self._start(connection)

    async def _read_inputs(self) -> None:
        """The person's values as the database has them now (another webhost process may have changed them)."""
        if self.deps.vault is None or not self.deps.config.inputs:
            return
        try:
            values = await self.deps.vault.values(self.person.id)
        except Exception as exc:  # the database is unreadable: the servers wait, as if nothing were stored
            logger.warning("cannot read the stored input values of %s: %s", self.person.id, type(exc).__name__)
            return
        self.input_values = {}
        self._remember(values)

    def _remember(self, values: Mapping[str, str]) -> None:
        self.input_values.update(values)
        self._values_seen.update(values.values())
        self.input_redactor = Redactor(self._values_seen)

    def missing_inputs(self, server: str) -> list[str]:
        return [i for i in self.deps.config.servers[server].input_ids if i not in self.input_values]

    def _start(self, connection: Connection) -> None:
        """Connect with the person's values filled in, or wait (`needs-input`) for the ones not given yet."""
        if self.closed:
            return
        base = self.deps.config.servers[connection.name]
        if base.input_ids:
            if not self._inputs_loaded.is_set():
                return  # `_load_inputs` starts it
            missing = self.missing_inputs(connection.name)
            if missing:
                specs = [self.deps.config.input_spec(i) for i in missing]
                connection.wait_for_inputs([spec.public() for spec in specs if spec is not None])
                return
            connection.config = expand_for(base, self.person, self.input_values)
        connection.start(self._task_group)

    async def set_inputs(self, values: Mapping[str, str]) -> list[Connection]:
        """Store the person's values and connect every server that was waiting only for values now given."""
        await self._inputs_loaded.wait()
        if self.deps.vault is not None:
            await self.deps.vault.store(self.person.id, dict(values))
        self._remember(values)
        started: list[Connection] = []
        for connection in self.connections.values():
            if connection.status == "needs-input":
                self._start(connection)
                if connection.status != "needs-input":
                    started.append(connection)
        return started

    async def forget_inputs(self, input_ids: list[str]) -> None:
        """Drop the person's values; a server using one keeps its connection and waits again after a reconnect."""
        await self._inputs_loaded.wait()
        if self.deps.vault is not None:
            await self.deps.vault.forget(self.person.id, input_ids)
        for input_id in input_ids:
            self.input_values.pop(input_id, None)

    def stored_inputs(self) -> set[str]:
        return set(self.input_values)

    # -- servers --------------------------------------------------------------------------------

    async def reconnect(self, connection: Connection) -> None:
        await connection.stop()
        self._forget(connection)
        if self.deps.config.servers[connection.name].input_ids and self._inputs_loaded.is_set():
            await self._read_inputs()
        self._start(connection)

    async def disconnect(self, connection: Connection) -> None:
        self._forget(connection)
        await connection.stop()

    async def sign_in(self, connection: Connection) -> str | None:
        """The authorization URL for the person to open (None: already signed in and connected).

        When no sign-in is waiting (a failed or expired one, or a sign-out), the connection is started
        again: the server's 401 begins a new flow, whose URL comes back here (bounded by the connect timeout).
        """
        if not connection.uses_oauth():
            raise NotConnected(f"server {connection.name!r} does not use sign-in", {"server": connection.name})
        if connection.sign_in_url is not None:
            return connection.sign_in_url
        if connection.status == "connected":
            return None
        changed = connection.sign_in_changed
        if connection.status != "connecting":
            await self.reconnect(connection)
        with anyio.move_on_after(self.options.connect_timeout):
            while connection.sign_in_url is None and connection.status == "connecting":
                await changed.wait()
                changed = connection.sign_in_changed
        if connection.sign_in_url is not None:
            return connection.sign_in_url
        status: str = connection.status  # moved while we waited
        if status == "connected":
            return None
        raise NotConnected(
            f"{connection.name}: {connection.error or 'the sign-in could not start'}",
            {"server": connection.name, "status": connection.status, "reason": connection.error},
        )

    async def sign_out_of(self, connection: Connection) -> str | None:
        """Forget the person's tokens for this server (revoked where supported); it then asks for sign-in again."""
        provider = connection.oauth
        if provider is None:
            raise NotConnected(f"server {connection.name!r} does not use sign-in", {"server": connection.name})
        await connection.stop()
        note = await provider.sign_out()
        self._forget(connection)
        self._start(connection)
        return note

    def _forget(self, connection: Connection) -> None:
        self.inputs.release(lambda p: p.server == connection.name)
        self.catalogue.forget(connection.name)
        self.app_prefetch.invalidate(connection.name)

    def _requests_for(self, server: str) -> InputRequests:
        """Whose tab a server's request belongs to: the call's own tab, the one tab busy with that server, or all."""
        tab_id = current_tab.get()
        if tab_id == CHAT_TAB:
            return self.chat_requests
        if tab_id is not None and tab_id in self.tabs:
            return self.tabs[tab_id].requests
        if (current_origin.get() or {}).get("resumed"):
            return self._any_tab  # a call resumed from a stopped replica belongs to no tab: ask every tab
        busy = [tab.requests for tab in self.tabs.values() if tab.calls.busy_on(server)]
        if self.chat_calls.busy_on(server):
            busy.append(self.chat_requests)
        if len(busy) == 1:
            return busy[0]
        if not busy and len(self.tabs) == 1:
            return next(iter(self.tabs.values())).requests
        return self._any_tab

    # -- ConnectionEvents ---------------------------------------------------------------------

    def status_changed(self, connection: Connection) -> None:
        self._status_seen.set()
        self._status_seen = anyio.Event()
        if connection.status != "connected":
            self.inputs.release(lambda p: p.server == connection.name)
            self.app_prefetch.invalidate(connection.name)
        if connection.status == "connecting":
            self.catalogue.forget(connection.name)  # connecting again by itself (upstream/connection.py): lists anew
        self._tell_all("servers/status", {"server": connection.state()})

    def activity(self, server: str, **entry: Any) -> None:
        duration = entry.pop("duration_ms", None)
        data = entry.pop("data", None)
        record = {
            "id": next(self._activity_ids),
            "ts": time.time(),
            "server": server,
            **entry,
            "durationMs": None if duration is None else round(duration, 2),
            "data": _clip(data),
        }
        # What a tab's own request caused goes to that tab; the servers' own news to every tab of the person.
        tab = self.tabs.get(current_tab.get() or "")
        if tab is not None:
            tab.notify("activity", {"entry": record})
        else:
            self._tell_all("activity", {"entry": record})

    async def server_notification(self, connection: Connection, method: str, params: dict[str, Any]) -> None:
        name = connection.name
        summary = method
        if method == "notifications/message":
            self._tell_all("server/log", {"server": name, **params})
            summary = f"[{params.get('level')}] {_short(params.get('data'))}"
        elif method.endswith("/list_changed"):
            kind = method.split("/")[1]
            self.catalogue.changed(name, kind)
            if kind == "resources":
                self.app_prefetch.invalidate(name)
            self._tell_all("list/changed", {"server": name, "list": kind})
        elif method == "notifications/resources/updated":
            self.app_prefetch.invalidate(name, str(params.get("uri")))
            self._tell_all("resources/updated", {"server": name, "uri": params.get("uri")})
        elif method == "notifications/elicitation/complete":
            elicitation_id = str(params.get("elicitationId"))
            for tab in list(self.tabs.values()):
                if tab.requests.url_step_completed(name, elicitation_id):
                    break
        if method != "notifications/progress":  # progress is shown on the call itself
            self.activity(name, direction="in", kind="notification", method=method, summary=summary, data=params)

    async def _status_change(self, connection: Connection) -> None:
        await self._status_seen.wait()

    async def elicit(self, connection: Connection, mode: ElicitMode, params: dict[str, Any]) -> dict[str, Any]:
        requests = self._requests_for(connection.name)
        with self._legacy_question(connection, requests):
            return await requests.elicit(connection, mode, params)

    async def sample(self, connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        requests = self._requests_for(connection.name)
        with self._legacy_question(connection, requests):
            return await requests.sample(connection, params)

    def _legacy_question(self, connection: Connection, requests: InputRequests) -> AbstractContextManager[None]:
        """A legacy server's question lives in this replica's session with the server: the journal notes it
        on the call, so that another replica can say it was lost if this one stops."""
        journal = self.deps.journal
        if journal is None or connection.era != "legacy" or requests.calls is None:
            return nullcontext()
        origin = requests.calls.origin_for(connection.name) or {}
        return journal.question(self.person.id, requests.calls.tab, origin.get("callId"))

    async def list_roots(self, connection: Connection) -> list[dict[str, Any]]:
        return self._any_tab.list_roots(connection)


def expand_for(config: ServerConfig, person: Person, inputs: Mapping[str, str] | None = None) -> ServerConfig:
    """The entry as this person's connection uses it: `${user.id}`, `${user.email}`, `${user.name}` and the
    person's `${input:ID}` values filled in (an input without a value is left as written)."""
    values = person.expansions() | {f"input:{key}": value for key, value in (inputs or {}).items()}

    def fill(text: str) -> str:
        for key in (*USER_FIELDS, *(f"input:{i}" for i in config.input_ids)):
            if key in values:
                text = text.replace("${" + key + "}", values[key])
        return text

    if not any(
        "${user." in text or "${input:" in text
        for text in (config.url or "", *config.env.values(), *config.headers.values())
    ):
        return config
    expanded = config.model_copy(
        update={
            "url": fill(config.url) if config.url else config.url,
            "env": {k: fill(v) for k, v in config.env.items()},
            "headers": {k: fill(v) for k, v in config.headers.items()},
        }
    )
    # The person's values are secrets of this connection too (masked in its errors and its description).
    expanded._expanded = config._expanded | {values[f"input:{i}"] for i in config.input_ids if f"input:{i}" in values}
    return expanded


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
