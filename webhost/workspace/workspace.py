"""One person's servers: a connection per configured server, shared by all of that person's tabs.

The workspace is where a person's servers talk back (`ConnectionEvents`). What concerns the
person as a whole (server status, list changes, logs, activity) reaches every one of their tabs;
a server's request for input reaches the tab whose call caused it (`routes.py`), and when no single
tab can be named, every tab of that person, where the first answer wins. Two people never share a
workspace. It composes the owners of the person's state: the input routes, the `${input:ID}` values
(`values.py`), the sign-in to remote servers (`sign_in.py`), the catalogue and the app prefetch.

It opens when the person's first tab does, and closes `webhost.timeouts.idle` seconds after their
last tab closed (so a reload keeps the servers and their state); then every process is reaped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any

import anyio
import anyio.abc

from webhost.access_policy import may_use_server
from webhost.apps.prefetch import AppPrefetch
from webhost.calls import CallHook, current_tab
from webhost.catalogue import Catalogue
from webhost.chat.attachments import drop_uploads
from webhost.config import ServerConfig
from webhost.elicitation.requests import InputRequests
from webhost.errors import RequestRefused
from webhost.people import Person
from webhost.redact import Redactor
from webhost.resume import Takeover
from webhost.roots import HostRoots, PersonRoots
from webhost.tasks import TaskBook
from webhost.upstream.connection import Connection, ConnectionSettings, ElicitMode
from webhost.upstream.oauth import CALLBACK_PATH, OAuthBinding

from .activity import ActivityEntries, short
from .chat import person_chat
from .connecting import until_connected
from .deps import HostDeps, Tab
from .left_calls import LeftCalls
from .routes import InputRoutes
from .sign_in import ServerSignIn
from .values import InputValues, expand_for

# Activity entries whose text is a server's own output or webhost's words about that server (not its results).
OWN_TEXT = frozenset({"stderr", "status", "error"})


class Workspace:
    """Implements ConnectionEvents for one person's connections."""

    def __init__(
        self, deps: HostDeps, person: Person, task_group: anyio.abc.TaskGroup, *, origin: str | None = None
    ) -> None:
        options = deps.config.options
        self.person = person
        self.deps = deps
        self.options = options
        # Asked at each answer, not now: the rules and the person's groups as they are then (webhost.access).
        self.catalogue = Catalogue(lambda: self.deps.config.options.access, lambda: self.person.groups)
        self.app_prefetch = AppPrefetch()  # app resources read ahead of apps/open (webhost/apps/prefetch.py)
        self.tabs: dict[str, Tab] = {}
        self._leave_app_of: dict[str, Callable[[str, str], None]] = {}
        self.roots = PersonRoots(deps.roots or HostRoots(options.roots), person.id, self._roots_changed)
        self.routes = InputRoutes(
            self.tabs, options, activity=self.activity, leave_app=self._leave_app, roots=self.roots.effective
        )
        self.inputs = self.routes.broker
        settings = ConnectionSettings(
            connect_timeout=options.connect_timeout,
            call_timeout=options.call_timeout,
            max_input_rounds=options.max_input_rounds,
            max_total_timeout=options.max_total_timeout,
            max_message=options.limits.max_result_bytes,
        )
        self.origin = origin or "http://127.0.0.1:8700"  # the page's origin of the first tab
        self._settings = settings
        self._oauth = (
            OAuthBinding(deps.oauth, person.id, lambda: (self.deps.public_origin or self.origin) + CALLBACK_PATH)
            if deps.oauth is not None
            else None
        )
        # One dict, shared by the tabs, the chat, the tasks and the takeover: `follow` changes it in place.
        self.connections: dict[str, Connection] = {
            name: self._connection(name)
            for name in deps.config.servers
            # A server the person may not use gets no connection: absent from everything built on these.
            if may_use_server(options.access, person.groups, name)
        }
        self._activity = ActivityEntries()
        self._own_secrets: dict[str, tuple[ServerConfig, Redactor]] = {}
        self._task_group = task_group
        # Page tool calls run here, so that a reload does not take them with the tab (left_calls.py).
        self.left_calls = LeftCalls(
            task_group, tell_all=self._tell_all, has_tabs=lambda: bool(self.tabs), tab_done=self.routes.left_done
        )
        self.tasks = TaskBook(task_group, self._tell_all, self.connections, self._task_input)  # calls run as tasks
        self._status_seen = anyio.Event()  # set (and replaced) on every status change of a connection
        self.takeover = (
            Takeover(
                person_id=person.id,
                journal=deps.journal,
                connections=self.connections,
                requests=self.routes.any_tab,
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
        self.values = InputValues(deps.config, deps.vault, person)
        self.sign_ins = ServerSignIn(
            connect_timeout=options.connect_timeout, reconnect=self.reconnect, restart=self._start, forget=self._forget
        )
        self.chat = person_chat(
            deps,
            person,
            connections=self.connections,
            catalogue=self.catalogue,
            routes=self.routes,
            values=self.values,
            tell_all=self._tell_all,
            task_group=task_group,
            tasks=self.tasks,
            until_connected=self.until_connected,
        )
        for connection in self.connections.values():
            if not deps.config.servers[connection.name].input_ids:
                connection.start(task_group)
        task_group.start_soon(self._load_inputs)

    def _connection(self, name: str) -> Connection:
        cfg = self.deps.config.servers[name]
        return Connection(
            expand_for(cfg, self.person),
            self,
            replace(self._settings, protocol=self.options.policy(name).protocol),
            transport_factory=self.deps.transport_factory,
            oauth=self._oauth,
        )

    # -- groups and configuration that change under a live workspace (webhost/app/follow.py) ---

    async def follow(self, person: Person, deps: HostDeps) -> tuple[list[str], list[str]]:
        """The person's groups changed (a session refresh) or the configuration was reloaded: connections to the
        servers they may no longer use are closed (their calls there cancelled first), those they now may use
        are opened, and a changed entry is restarted. A stored OAuth token of a dropped server stays in the vault,
        unusable with no connection, until access returns. The tabs are told (`servers/changed`, and `chat/models`
        with what `chat/info` now answers when the chat's models changed for them); what runs on keeps the rules
        it started under, what starts next reads the new ones. Returns (gained, lost) names."""
        old_servers, old_models = self.deps.config.servers, self.chat.info()
        self.person, self.deps, self.options = person, deps, deps.config.options
        self.chat.deps.person = self.chat.person = person
        self.chat.deps.options = self.chat.options = self.options
        self.values.follow(deps.config, person)
        wanted = [n for n in deps.config.servers if may_use_server(self.options.access, person.groups, n)]
        lost = [n for n in self.connections if n not in wanted]
        changed = [n for n in self.connections if n in wanted and deps.config.servers[n] != old_servers.get(n)]
        gained = [n for n in wanted if n not in self.connections]
        for name in lost + changed:
            await self.drop(name)
        for name in gained + changed:
            connection = self._connection(name)
            self.connections[name] = connection
            self._start(connection)
        # Keep the configuration's order, which the page shows.
        ordered = {n: self.connections[n] for n in wanted if n in self.connections}
        self.connections.clear()
        self.connections.update(ordered)
        if lost or gained or changed:
            self._tell_all("servers/changed", {"servers": list(self.connections)})
        models = self.chat.info()
        if models != old_models:  # a model gained or lost, or its entry (label, key) changed by a reload
            self._tell_all("chat/models", models)
        return gained, lost

    async def drop(self, name: str) -> None:
        """Close this person's connection to `name`: every call of theirs on it is cancelled (in each tab, left
        by a gone tab, in the chat), what it asked is released, and its process stops."""
        connection = self.connections.pop(name, None)
        if connection is None:
            return
        self.left_calls.cancel_on(name)
        for tab in list(self.tabs.values()):
            tab.calls.cancel_on(name)
        self.routes.chat_calls.cancel_on(name)
        self._forget(connection)
        with anyio.CancelScope(shield=True):
            await connection.stop()

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
        for ending in self.left_calls.unheard():  # calls left running by a tab that went, ended meanwhile
            tab.notify("calls/outcome", ending)
        if self.takeover is not None:
            self.takeover.tab_attached()  # calls a stopped replica left behind: resumed or reported here

    @property
    def call_hook(self) -> CallHook | None:
        """What each tab's calls tell the replica's journal (None: not journalled)."""
        return self.deps.journal.hook(self.person.id) if self.deps.journal is not None else None

    def leave_calls(self, tab: Tab) -> set[str]:
        """`tab` is going: its page tool calls run on, and what they ask goes to every tab. Returns their ids."""
        left = self.left_calls.leave(tab.id)
        self.routes.leave(tab.id, tab.calls, left)
        return left

    def detach(self, tab: Tab, on_idle: Callable[[Workspace], None]) -> None:
        """A tab closed: what it was asked is released; with no tab left, the idle countdown starts."""
        self.tabs.pop(tab.id, None)
        self._leave_app_of.pop(tab.id, None)
        self.routes.release_tab(tab.id)
        drop_uploads(self.chat, tab.id)  # the files it was sending: their spools freed
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

    async def close(self, *, shutting_down: bool = False) -> None:
        """Release every input request and stop every server process (`shutting_down`: webhost stops, so the
        chat's turns end interrupted, to be retried)."""
        self.closed = True
        self.left_calls.cancel_all()
        self.roots.close()
        self.inputs.release(outcome="released")
        drop_uploads(self.chat)
        with anyio.CancelScope(shield=True):
            await self.chat.close(shutting_down=shutting_down)
            async with anyio.create_task_group() as tg:
                for connection in self.connections.values():
                    tg.start_soon(connection.stop)

    def route_to(self, tab_id: str | None) -> Callable[[str], None]:
        return self.routes.route_to(tab_id)

    def routed_to(self, request_id: str) -> str | None:
        return self.routes.routed_to(request_id)

    def asked(self, request_id: str, tab_id: str) -> bool:
        return self.routes.asked(request_id, tab_id)

    def pending_for(self, tab_id: str) -> list[dict[str, Any]]:
        """The open input requests a tab should show: its own and those asked of every tab."""
        return self.routes.pending_for(tab_id)

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

    @property
    def input_redactor(self) -> Redactor:
        return self.values.redactor

    async def _load_inputs(self) -> None:
        await self.roots.load()
        await self.values.load()
        for connection in self.connections.values():
            if connection.status == "disconnected" and self.deps.config.servers[connection.name].input_ids:
                self._start(connection)

    def _start(self, connection: Connection) -> None:
        """Connect with the person's values filled in, or wait (`needs-input`) for the ones not given yet."""
        if self.closed:
            return
        base = self.deps.config.servers[connection.name]
        if base.input_ids:
            if not self.values.loaded.is_set():
                return  # `_load_inputs` starts it
            missing = self.values.missing(connection.name)
            if missing:
                specs = [self.deps.config.input_spec(i) for i in missing]
                connection.wait_for_inputs([spec.public() for spec in specs if spec is not None])
                return
            connection.config = expand_for(base, self.person, self.values.values)
        connection.start(self._task_group)

    async def set_inputs(self, values: Mapping[str, str]) -> list[Connection]:
        """Store the person's values and connect every server that was waiting only for values now given."""
        await self.values.store(values)
        started: list[Connection] = []
        for connection in self.connections.values():
            if connection.status == "needs-input":
                self._start(connection)
                if connection.status != "needs-input":
                    started.append(connection)
        return started

    async def forget_inputs(self, input_ids: list[str]) -> None:
        """Drop the person's values; a server using one keeps its connection and waits again after a reconnect."""
        await self.values.forget(input_ids)

    def stored_inputs(self) -> set[str]:
        return set(self.values.values)

    # -- roots ----------------------------------------------------------------------------------

    def _roots_changed(self) -> None:
        """The roots this person's servers get changed: tell each connected server, and the person's tabs."""
        if self.closed:
            return
        for connection in self.connections.values():
            if connection.status == "connected":
                self._task_group.start_soon(connection.client.roots_changed)
        self._tell_all("roots/changed", {"roots": self.roots.view(admin=self.person.is_admin)})

    # -- servers --------------------------------------------------------------------------------

    async def reconnect(self, connection: Connection) -> None:
        await connection.stop()
        self._forget(connection)
        if self.deps.config.servers[connection.name].input_ids and self.values.loaded.is_set():
            await self.values.read()
        self._start(connection)

    async def disconnect(self, connection: Connection) -> None:
        self._forget(connection)
        await connection.stop()

    async def sign_in(self, connection: Connection) -> str | None:
        """The authorization URL for the person to open (None: already signed in and connected)."""
        return await self.sign_ins.sign_in(connection)

    async def sign_out_of(self, connection: Connection) -> str | None:
        """Forget the person's tokens for this server (revoked where supported); it then asks for sign-in again."""
        return await self.sign_ins.sign_out(connection)

    def _forget(self, connection: Connection) -> None:
        self.inputs.release(lambda p: p.server == connection.name)
        self.catalogue.forget(connection.name)
        self.app_prefetch.invalidate(connection.name)

    # -- ConnectionEvents ---------------------------------------------------------------------

    def status_changed(self, connection: Connection) -> None:
        self._status_seen.set()
        self._status_seen = anyio.Event()
        if connection.status != "connected":
            self.inputs.release(lambda p: p.server == connection.name)
            self.app_prefetch.invalidate(connection.name)
        if connection.status == "connecting":
            self.catalogue.forget(connection.name)  # connecting again by itself (upstream/link.py): lists anew
        self._tell_all("servers/status", {"server": connection.state()})

    def own_secrets(self, server: str) -> Redactor:
        """A server's own secrets (its entry's, with the person's values that fill it), which it already has:
        masked in its stderr and log lines and in webhost's status and errors about it, and nowhere else, so that
        nothing the page shows tells a server whether a string is another server's secret."""
        connection = self.connections.get(server)
        if connection is None:
            return Redactor()
        cached = self._own_secrets.get(server)
        if cached is None or cached[0] is not connection.config:  # the config changes when values are filled in
            cached = (connection.config, connection.config.redactor())
            self._own_secrets[server] = cached
        return cached[1]

    def activity(self, server: str, **entry: Any) -> None:
        if entry.get("kind") in OWN_TEXT:
            own = self.own_secrets(server)
            if own:
                entry = {**entry, "summary": own.value(entry.get("summary")), "data": own.value(entry.get("data"))}
        record = self._activity.record(server, entry)
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
            masked = self.own_secrets(name).value(params)  # its own secrets, which it has anyway
            params = masked if isinstance(masked, dict) else params
            self._tell_all("server/log", {"server": name, **params})
            summary = f"[{params.get('level')}] {short(params.get('data'))}"
        elif method.endswith("/list_changed"):
            kind = method.split("/")[1]
            self.catalogue.changed(name, kind)
            if kind == "resources":
                self.app_prefetch.invalidate(name)
            self._tell_all("list/changed", {"server": name, "list": kind})
        elif method == "notifications/resources/updated":
            self.app_prefetch.invalidate(name, str(params.get("uri")))
            self._tell_all("resources/updated", {"server": name, "uri": params.get("uri")})
        elif method in ("notifications/tasks", "notifications/tasks/status"):
            self.tasks.noted(name, params)
            summary = f"task {params.get('taskId')}: {params.get('status')}"
        elif method == "notifications/progress":
            self.tasks.progressed(name, params)  # a task's (a call's own are routed by the SDK to the call)
        elif method == "notifications/elicitation/complete":
            elicitation_id = str(params.get("elicitationId"))
            # A tab's call, or the model's (the chat's requests): whichever is at that step.
            for requests in [*(tab.requests for tab in self.tabs.values()), self.routes.chat]:
                if requests.url_step_completed(name, elicitation_id):
                    break
        if method != "notifications/progress":  # progress is shown on the call itself
            self.activity(name, direction="in", kind="notification", method=method, summary=summary, data=params)

    async def _status_change(self, connection: Connection) -> None:
        await self._status_seen.wait()

    async def until_connected(self, connection: Connection, what: str) -> None:
        """A call waits while its server is still connecting, at most `timeouts.connect` (connecting.py)."""
        await until_connected(connection, lambda: self._status_change(connection), self.activity, what)

    async def elicit(self, connection: Connection, mode: ElicitMode, params: dict[str, Any]) -> dict[str, Any]:
        requests = self.routes.requests_for(connection.name)
        with self._legacy_question(connection, requests):
            return await requests.elicit(connection, mode, params)

    async def sample(self, connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        requests = self.routes.requests_for(connection.name)
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

    async def _task_input(self, connection: Connection, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One of a 2026-07-28 task's input requests, answered as the server's own requests are."""
        if method == "elicitation/create":
            return await self.elicit(connection, "url" if params.get("mode") == "url" else "form", params)
        if method == "sampling/createMessage":
            return await self.sample(connection, params)
        if method == "roots/list":
            return {"roots": await self.list_roots(connection)}
        raise RequestRefused(f"{connection.name}: a task asked {method!r}, which webhost does not answer")

    async def list_roots(self, connection: Connection) -> list[dict[str, Any]]:
        return self.routes.any_tab.list_roots(connection)
