"""One MCP connection (one browser session × one configured server), owned by one long-lived task.

The SDK's `Client` must be entered and exited in the same task, so `_own` holds the
`async with Client(...)` block for the connection's whole life; other tasks call the typed
methods below, which run the SDK request and hand back MCP wire dicts. Nothing outside
`upstream/` sees an SDK object: server→client requests reach `ConnectionEvents` as wire dicts
too, and their answers go back the same way. Nothing here knows about WebSockets.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

import anyio
import anyio.abc
from mcp import Client, MCPError
from mcp.client import ClientRequestContext
from mcp.types import (
    CONNECTION_CLOSED,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
    ListRootsResult,
    LoggingMessageNotificationParams,
    PromptReference,
    ResourceTemplateReference,
    Root,
)
from pydantic import BaseModel, ValidationError

from webhost.config import ServerConfig
from webhost.errors import NotConnected, RequestRefused, UpstreamTimeout

from .client_factory import ClientCallbacks, TransportFactory, build_client, default_transport
from .clock import HumanClock
from .lenient import lenient_listing
from .oauth import NOT_OAUTH, OAuthBinding, PersonOAuth, ServerOAuth, describe_oauth_failure, machine_oauth
from .results import map_exception, to_wire
from .rounds import input_responses, watching
from .sdk_workarounds import client_capabilities, output_schema_errors, tolerate_output_schema, watched_transport
from .stderr import StderrPipe

logger = logging.getLogger(__name__)

Status = Literal["connecting", "connected", "error", "disconnected", "needs-input", "auth-required"]
ElicitMode = Literal["form", "url"]
ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
T = TypeVar("T")
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# A remote server's connection that was up and then dropped is tried again after each of these (seconds), while
# the attempts fail; past the last it stays in `error` for the person to reconnect. A stdio server that exits is
# not restarted: that is the server failing, and the person is told.
RECONNECT_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
LISTEN_AGAIN_SECONDS = 1.0  # a 2026-07-28 listen stream the server closed is opened again after this
BRIEF_LISTEN_SECONDS = 10.0  # three in a row that end sooner than this after opening: given up until a change
PING_TIMEOUT_SECONDS = 10.0
KEEP_ALIVE_SECONDS = 30.0  # a remote connection pings its server this often


class ConnectionEvents(Protocol):
    """What a connection tells its session about; every value is an MCP wire dict.

    The request handlers (`elicit`, `sample`, `list_roots`) return the wire result, or raise
    `RequestRefused` to answer the server with a JSON-RPC error.
    """

    def status_changed(self, connection: Connection) -> None: ...
    def activity(self, server: str, **entry: Any) -> None: ...
    async def server_notification(self, connection: Connection, method: str, params: dict[str, Any]) -> None: ...
    async def elicit(self, connection: Connection, mode: ElicitMode, params: dict[str, Any]) -> dict[str, Any]: ...
    async def sample(self, connection: Connection, params: dict[str, Any]) -> dict[str, Any]: ...
    async def list_roots(self, connection: Connection) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class ConnectionSettings:
    """The limits one connection runs with (from the configuration's `webhost` options)."""

    connect_timeout: float
    call_timeout: float
    max_input_rounds: int


@dataclass
class ConnectionInfo:
    protocol_version: str | None = None
    server_info: dict[str, Any] | None = None
    capabilities: dict[str, Any] | None = None
    client_capabilities: dict[str, Any] | None = None  # what webhost advertised to this server
    instructions: str | None = None


@dataclass(frozen=True)
class Page:
    """One page of a paginated listing, as wire dicts."""

    items: list[dict[str, Any]]
    next_cursor: str | None


class Connection:
    def __init__(
        self,
        config: ServerConfig,
        events: ConnectionEvents,
        settings: ConnectionSettings,
        *,
        transport_factory: TransportFactory = default_transport,
        oauth: OAuthBinding | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.events = events
        self.settings = settings
        self._transport_factory = transport_factory
        self.status: Status = "disconnected"
        self.error: str | None = None
        self.info = ConnectionInfo()
        self.human_clock = HumanClock()
        self._client: Client | None = None
        self._resource_subscriptions: set[str] = set()  # 2026-07-28: the listen stream's resource filter
        self._relisten = anyio.Event()
        self._stop: anyio.Event | None = None
        self._done: anyio.Event | None = None
        self._scope: anyio.CancelScope | None = None
        self.waiting_for: list[dict[str, Any]] = []  # the inputs a "needs-input" connection waits for
        self._oauth = oauth
        self.oauth: ServerOAuth | None = None  # this person's OAuth with the server (remote servers, made on start)
        self.sign_in_url: str | None = None  # the authorization URL while the flow waits for the person
        self.sign_in_changed = anyio.Event()  # set (and replaced) whenever the sign-in state moves
        self._deadline_lifted = False
        self._reconnects = 0  # attempts since the connection was last up (RECONNECT_DELAYS)
        self._retry_in: float | None = None  # the wait before the next attempt, once a run ended in an error

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def era(self) -> Literal["modern", "legacy"] | None:
        version = self.info.protocol_version
        return None if version is None else ("modern" if version >= "2026-07-28" else "legacy")

    def state(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.config.transport,
            "target": self.config.describe(),
            "status": self.status,
            "error": self.error,
            "protocolVersion": self.info.protocol_version,
            "era": self.era,
            "serverInfo": self.info.server_info,
            "capabilities": self.info.capabilities,
            "clientCapabilities": self.info.client_capabilities,
            "instructions": self.info.instructions,
            "inputs": self.waiting_for if self.status == "needs-input" else [],
            "signIn": self._sign_in_state(),
        }

    def _sign_in_state(self) -> dict[str, Any] | None:
        """What the page needs to offer sign-in or sign-out (never a token): None for a server without OAuth."""
        if self.oauth is None:
            return None
        tokens = self.oauth.context.current_tokens
        return {
            "signedIn": tokens is not None and self.status != "auth-required",
            "waiting": self.sign_in_url is not None,
        }

    # -- sign-in (SignInView for the OAuth flow) -------------------------------------------------

    def uses_oauth(self) -> bool:
        """Remote servers sign in per person, unless the entry sets its own Authorization header."""
        return (
            self._oauth is not None
            and self.config.transport in ("http", "sse")
            and not any(k.lower() == "authorization" for k in self.config.headers)
        )

    def _provider(self) -> ServerOAuth | None:
        if not self.uses_oauth():
            return None
        assert self._oauth is not None
        settings = self.config.oauth
        if settings is not None and settings.grant == "client_credentials" and settings.client_id:
            if self.oauth is None or self.oauth.context.server_url != self.config.url:
                self.oauth = machine_oauth(self.config, self._oauth.person_id, self._oauth.deps)
            return self.oauth
        redirect_uri = self._oauth.redirect_uri()
        if (
            self.oauth is None
            or self.oauth.redirect_uri != redirect_uri
            or self.oauth.context.server_url != self.config.url
        ):
            self.oauth = PersonOAuth(self.config, self._oauth.person_id, redirect_uri, self._oauth.deps, self)
        return self.oauth

    def needs_sign_in(self, url: str, reason: str) -> None:
        self.sign_in_url = url
        if self._scope is not None and self._client is None and not self._deadline_lifted:
            self._scope.deadline = float("inf")  # connecting waits for the person, not against the timeout
            self._deadline_lifted = True
        self.human_clock.begin()  # a call waiting on this sign-in is off the clock
        self._set_status("auth-required", reason)

    def sign_in_noticed(self, reason: str) -> None:
        if self.status == "auth-required":
            self._set_status("auth-required", reason)

    def sign_in_over(self) -> None:
        self.sign_in_url = None
        self.human_clock.end()
        if self._deadline_lifted and self._scope is not None:
            self._scope.deadline = anyio.current_time() + self.settings.connect_timeout
            self._deadline_lifted = False
        if self.status == "auth-required":
            self._set_status("connected" if self._client is not None else "connecting")
        self._moved()

    def _moved(self) -> None:
        self.sign_in_changed.set()
        self.sign_in_changed = anyio.Event()

    def wait_for_inputs(self, missing: list[dict[str, Any]]) -> None:
        """Not started: the person has not given these `${input:ID}` values yet (contract §6)."""
        self.waiting_for = missing
        self._set_status("needs-input")

    def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Begin connecting in the background; status changes are reported as they happen."""
        if self._done is not None and not self._done.is_set():
            return
        self._stop = anyio.Event()
        self._done = anyio.Event()
        self._reconnects = 0
        self.waiting_for = []
        self._set_status("connecting")
        task_group.start_soon(self._run, name=f"mcp-connection:{self.name}")

    async def _run(self) -> None:
        """Connect, serve, and connect again after a remote server's connection drops (`RECONNECT_DELAYS`)."""
        assert self._stop is not None and self._done is not None
        try:
            while True:
                self._retry_in = None
                await self._own()
                if self._retry_in is None or self._stop.is_set():
                    return
                with anyio.move_on_after(self._retry_in):
                    await self._stop.wait()
                if self._stop.is_set():
                    return
                self._set_status("connecting")
        finally:
            self._done.set()

    def _retry_delay(self, was_up: bool) -> float | None:
        """How long to wait before connecting again after this run's error; None: not again by itself."""
        if self.config.transport not in ("http", "sse") or (self._stop is not None and self._stop.is_set()):
            return None
        if was_up:
            self._reconnects = 0
        elif self._reconnects == 0:
            return None  # it never connected: a wrong URL or a server that is down says so and waits
        if self._reconnects >= len(RECONNECT_DELAYS):
            return None
        delay = RECONNECT_DELAYS[self._reconnects]
        self._reconnects += 1
        return delay

    async def stop(self) -> None:
        """Close the connection and wait (bounded) until its process, if any, is gone."""
        if self._stop is None or self._done is None:
            if self.status == "needs-input":
                self._set_status("disconnected")
            return
        self._stop.set()
        if self._scope is not None and (self.status == "connecting" or self._client is None):
            self._scope.cancel()
        with anyio.move_on_after(10):
            await self._done.wait()
        self._set_status("disconnected")

    def _set_status(self, status: Status, error: str | None = None) -> None:
        self.status = status
        if status not in ("error", "auth-required"):  # auth-required carries the reason in words
            error = None
        self.error = error
        self.events.status_changed(self)
        detail = f"{status}: {error}" if error else status
        self.events.activity(self.name, direction="local", kind="status", method=None, summary=detail)
        self._moved()

    async def _own(self) -> None:
        assert self._stop is not None and self._done is not None
        stderr = StderrPipe(
            lambda line: self.events.activity(self.name, direction="in", kind="stderr", method=None, summary=line)
        )
        failure: str | None = None
        exit_codes: list[int] = []
        was_up = False
        oauth = self._provider()
        if oauth is not None:
            oauth.failure = None
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                ended = anyio.Event()

                def on_exit(code: int) -> None:
                    exit_codes.append(code)
                    ended.set()

                raw = (
                    default_transport(self.config, stderr, on_exit, auth=oauth)
                    if oauth is not None
                    else self._transport_factory(self.config, stderr, on_exit)
                )
                transport = watched_transport(raw, ended)
                client = build_client(transport, self._callbacks(), max_input_rounds=self.settings.max_input_rounds)
                scope.deadline = anyio.current_time() + self.settings.connect_timeout
                async with stderr:
                    async with client:
                        tolerate_output_schema(client.session)
                        stderr.release_write_end()
                        scope.deadline = float("inf")
                        self._client = client
                        self._record_info(client)
                        self._set_status("connected")
                        was_up = True
                        await self._serve_until_stopped(client, ended)
                        self._client = None
            if scope.cancelled_caught and not self._stop.is_set():
                failure = f"timed out connecting after {self.settings.connect_timeout:g} s"
        except Exception as exc:  # any failure to start or a broken transport is this server's error only
            failure = _describe_connect_failure(
                exc,
                stderr.tail(),
                self.config.redacted_url(),
                exit_code=exit_codes[0] if exit_codes else None,
                cwd=self.config.cwd,
            )
            logger.info("connection %s failed: %s", self.name, self.config.redactor().text(failure))
        finally:
            self._client = None
            self._scope = None
            auth_reason: str | None = None
            if oauth is not None and oauth.failure is not None and not self._stop.is_set():
                # The sign-in failed inside a request (the transport only ends): say why, in words.
                auth_reason = describe_oauth_failure(oauth.failure, oauth) or f"the sign-in failed: {oauth.failure}"
            if auth_reason == NOT_OAUTH:
                failure = f"{self.config.redacted_url()} {NOT_OAUTH}"
            elif auth_reason is not None:
                failure = None
                logger.info("sign-in to %s did not complete: %s", self.name, auth_reason)
                self._set_status("auth-required", self.config.redactor().text(auth_reason))
            elif failure is None and not self._stop.is_set():
                reason = (
                    f"the server exited with status {exit_codes[0]}"
                    if exit_codes
                    else "the server closed the connection"
                )
                failure = reason + _tail_suffix(stderr.tail())
            if failure is not None:
                self._retry_in = self._retry_delay(was_up)
                retry = f" (connecting again in {self._retry_in:g} s)" if self._retry_in is not None else ""
                self._set_status("error", self.config.redactor().text(failure) + retry)

    async def _serve_until_stopped(self, client: Client, ended: anyio.Event) -> None:
        """Hold the client open until asked to stop, the process exits, or the transport closes."""
        assert self._stop is not None
        stop = self._stop
        async with anyio.create_task_group() as tg:
            if self.era == "modern":
                tg.start_soon(self._listen, client, ended)
            if self.config.transport in ("http", "sse"):
                tg.start_soon(_keep_alive, client, ended)

            async def wake_on(event: anyio.Event) -> None:
                await event.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(wake_on, stop)
            tg.start_soon(wake_on, ended)

    async def _listen(self, client: Client, lost: anyio.Event) -> None:
        """2026-07-28 servers push list changes and resource updates only on a subscriptions/listen stream.

        The SDK tees each event to the message handler, so draining the stream is all it takes. The
        stream's filter is fixed when it opens, so a change of the resources subscribed to re-opens it.
        """
        caps = self.info.capabilities or {}

        def wants(kind: str) -> bool:
            value = caps.get(kind)
            return isinstance(value, dict) and bool(value.get("listChanged"))

        brief = 0  # streams in a row that ended by themselves soon after opening
        while True:
            changed = self._relisten = anyio.Event()
            resources = sorted(self._resource_subscriptions)
            opened: float | None = None  # when the stream opened
            if any(wants(kind) for kind in ("tools", "resources", "prompts")) or resources:
                try:
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(_cancel_when, changed, tg.cancel_scope)
                        async with client.listen(
                            tools_list_changed=wants("tools"),
                            prompts_list_changed=wants("prompts"),
                            resources_list_changed=wants("resources"),
                            resource_subscriptions=resources,
                        ) as subscription:
                            opened = anyio.current_time()
                            async for _event in subscription:
                                pass
                        tg.cancel_scope.cancel()
                except Exception as exc:  # a server without listen support still works, just without live updates
                    if opened is None:
                        self._no_live_updates(str(exc))
            if opened is not None and not changed.is_set():
                # The stream ended by itself: the server went away (the connection is over, and a remote one
                # is connected again), or it closed the stream (listen again, not in a tight loop).
                if not await _answers_ping(client):
                    lost.set()
                    return
                brief = brief + 1 if anyio.current_time() - opened < BRIEF_LISTEN_SECONDS else 0
                if brief < 3:
                    with anyio.move_on_after(LISTEN_AGAIN_SECONDS):
                        await changed.wait()
                    continue
                self._no_live_updates("the server keeps closing the listen stream")
            brief = 0
            await changed.wait()

    def _no_live_updates(self, reason: str) -> None:
        self.events.activity(
            self.name, direction="in", kind="error", method="subscriptions/listen", summary=f"no live updates: {reason}"
        )

    def _record_info(self, client: Client) -> None:
        server_info = client.server_info
        self.info = ConnectionInfo(
            protocol_version=client.protocol_version,
            server_info=server_info.model_dump(by_alias=True, exclude_none=True) if server_info else None,
            capabilities=client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json"),
            instructions=client.instructions,
            client_capabilities=client_capabilities(client.session, client.protocol_version),
        )

    def _callbacks(self) -> ClientCallbacks:
        """The SDK's callbacks, translated to wire dicts for the session and back."""

        async def on_elicit(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
            mode: ElicitMode = "url" if isinstance(params, ElicitRequestURLParams) else "form"
            try:
                answer = await self.events.elicit(
                    self, mode, params.model_dump(by_alias=True, exclude_none=True, mode="json")
                )
            except RequestRefused as exc:
                return ErrorData(code=exc.code, message=exc.message)
            return ElicitResult.model_validate(answer)

        async def on_sample(
            context: ClientRequestContext, params: CreateMessageRequestParams
        ) -> CreateMessageResult | ErrorData:
            try:
                answer = await self.events.sample(self, to_wire(params))
            except RequestRefused as exc:
                return ErrorData(code=exc.code, message=exc.message)
            return CreateMessageResult.model_validate(answer)

        async def on_roots(context: ClientRequestContext) -> ListRootsResult | ErrorData:
            try:
                roots = await self.events.list_roots(self)
            except RequestRefused as exc:
                return ErrorData(code=exc.code, message=exc.message)
            return ListRootsResult(roots=[Root.model_validate(root) for root in roots])

        async def on_log(params: LoggingMessageNotificationParams) -> None:
            await self.events.server_notification(self, "notifications/message", to_wire(params))

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception):
                self.events.activity(
                    self.name, direction="in", kind="error", method=None, summary=f"transport error: {message}"
                )
                return
            method = getattr(message, "method", None)
            if not isinstance(method, str) or method == "notifications/message":
                return
            params = getattr(message, "params", None)
            dumped = to_wire(params) if isinstance(params, BaseModel) else {}
            await self.events.server_notification(self, method, dumped)

        return ClientCallbacks(elicit=on_elicit, sample=on_sample, roots=on_roots, log=on_log, message=on_message)

    # -- typed requests: each returns MCP wire dicts ------------------------------------------

    async def list_tools(self, cursor: str | None = None) -> Page:
        return await self._list("tools/list", cursor, lambda c: c.list_tools(cursor=cursor, cache_mode="refresh"))

    async def list_resources(self, cursor: str | None = None, *, timeout: float | None = None) -> Page:
        return await self._list(
            "resources/list", cursor, lambda c: c.list_resources(cursor=cursor, cache_mode="refresh"), timeout=timeout
        )

    async def list_resource_templates(self, cursor: str | None = None) -> Page:
        return await self._list(
            "resources/templates/list",
            cursor,
            lambda c: c.list_resource_templates(cursor=cursor, cache_mode="refresh"),
        )

    async def list_prompts(self, cursor: str | None = None) -> Page:
        return await self._list("prompts/list", cursor, lambda c: c.list_prompts(cursor=cursor, cache_mode="refresh"))

    async def _list(
        self,
        method: str,
        cursor: str | None,
        listing: Callable[[Client], Awaitable[Any]],
        *,
        timeout: float | None = None,
    ) -> Page:
        """One page; a malformed item is an error stub in it, not a failed list (upstream/lenient.py)."""
        items, next_cursor = await self._request(
            method, method, lambda c: lenient_listing(c, method, cursor, lambda: listing(c)), timeout=timeout
        )
        return Page(items, next_cursor)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        on_progress: ProgressFn | None = None,
        meta: dict[str, Any] | None = None,
        summary: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        schema_errors: list[str] = []
        token = output_schema_errors.set(schema_errors)
        try:
            result = await self._call_tool(name, arguments, on_progress, meta, summary, data)
        finally:
            output_schema_errors.reset(token)
        if schema_errors:
            # Kept and shown, with the SDK's message beside it (sdk_workarounds.py, 6.).
            result = {**result, "webhost": {"outputSchemaError": schema_errors[-1]}}
        return result

    async def _call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        on_progress: ProgressFn | None,
        meta: dict[str, Any] | None,
        summary: str | None,
        data: dict[str, Any] | None,
    ) -> dict[str, Any]:
        with watching({"method": "tools/call", "params": {"name": name, "arguments": arguments}}):
            result: dict[str, Any] = await self._request(
                "tools/call",
                summary or name,
                lambda c: _wire(
                    c.call_tool(
                        name,
                        arguments,
                        progress_callback=on_progress,  # type: ignore[arg-type]
                        meta=meta,  # type: ignore[arg-type]
                    )
                ),
                data={"arguments": arguments, **(data or {})},
            )
        return result

    async def read_resource(self, uri: str, *, summary: str | None = None) -> dict[str, Any]:
        with watching({"method": "resources/read", "params": {"uri": uri}}):
            result = await self._request(
                "resources/read", summary or uri, lambda c: _wire(c.read_resource(uri, cache_mode="bypass"))
            )
        return result

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        with watching({"method": "prompts/get", "params": {"name": name, "arguments": arguments}}):
            result = await self._request(
                "prompts/get", name, lambda c: _wire(c.get_prompt(name, arguments)), data={"arguments": arguments}
            )
        return result

    async def resume(
        self, request: dict[str, Any], round_: dict[str, Any], answers: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        """Retry a request another replica left waiting on an input round: `answers` (wire dicts, by key) to
        the round's `inputRequests`, its `requestState` echoed as stored. Later rounds go through the callbacks."""
        method = str(request.get("method"))
        params = request.get("params") or {}
        requests = round_.get("inputRequests") or {}
        state = round_.get("requestState")
        responses = input_responses(requests if isinstance(requests, dict) else {}, answers)
        state = state if isinstance(state, str) else None
        name = str(params.get("name") or params.get("uri") or "")
        arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}

        def send(c: Client) -> Awaitable[BaseModel]:
            if method == "tools/call":
                return c.call_tool(name, arguments, input_responses=responses, request_state=state)
            if method == "prompts/get":
                return c.get_prompt(name, arguments, input_responses=responses, request_state=state)
            if method == "resources/read":
                return c.read_resource(name, input_responses=responses, request_state=state)
            raise ValueError(f"{method} has no input rounds")

        with watching({"method": method, "params": params}):
            result = await self._request(
                method, f"{name} (resumed)", lambda c: _wire(send(c)), data={"resumed": True, "arguments": arguments}
            )
        return result

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, str], context_arguments: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """`completion/complete` for a prompt (`{"type": "ref/prompt", "name"}`) or a template (`ref/resource`)."""
        try:
            reference: PromptReference | ResourceTemplateReference = (
                PromptReference.model_validate(ref)
                if ref.get("type") == "ref/prompt"
                else ResourceTemplateReference.model_validate(ref)
            )
        except ValidationError as exc:
            raise map_exception(exc, self.name, "completion/complete") or exc from None
        result = await self._request(
            "completion/complete",
            str(ref.get("name") or ref.get("uri")),
            lambda c: _wire(c.complete(reference, argument, context_arguments)),
        )
        return result

    async def subscribe(self, uri: str) -> None:
        """Updates of one resource: `resources/subscribe` before 2026-07-28, the listen stream's filter since."""
        if self.era == "modern":
            self._connected_client  # noqa: B018  (raises NotConnected, as a request would)
            self._resource_subscriptions.add(uri)
            self._relisten.set()
            self.events.activity(
                self.name,
                direction="local",
                kind="notification",
                method="subscriptions/listen",
                summary=f"listening for updates of {uri}",
            )
            return
        await self._request("resources/subscribe", uri, lambda c: c.subscribe_resource(uri))

    async def unsubscribe(self, uri: str) -> None:
        if self.era == "modern":
            self._resource_subscriptions.discard(uri)
            self._relisten.set()
            return
        await self._request("resources/unsubscribe", uri, lambda c: c.unsubscribe_resource(uri))

    async def set_log_level(self, level: str) -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        await self._request("logging/setLevel", level, lambda c: c.set_logging_level(level))  # type: ignore[arg-type]

    async def ping(self) -> float:
        """Round-trip time in milliseconds."""
        started = time.monotonic()
        await self._request("ping", "ping", lambda c: c.send_ping())
        return (time.monotonic() - started) * 1000

    # -- the one place a request runs ---------------------------------------------------------

    @property
    def _connected_client(self) -> Client:
        if self._client is None or self.status != "connected":
            raise NotConnected(
                f"server {self.name!r} is not connected",
                {"server": self.name, "status": self.status, "reason": self.error},
            )
        return self._client

    async def _request(
        self,
        method: str,
        summary: str,
        call: Callable[[Client], Awaitable[T]],
        *,
        timeout: float | None = None,
        data: dict[str, Any] | None = None,
    ) -> T:
        """Run one upstream request with activity entries, error mapping and a human-aware timeout."""
        client = self._connected_client
        limit = self.settings.call_timeout if timeout is None else timeout
        self.events.activity(self.name, direction="out", kind="request", method=method, summary=summary, data=data)
        started = time.monotonic()
        try:
            # One cancel scope whose deadline pauses while a person is asked (HumanClock): no task, no polling.
            with self.human_clock.deadline(limit) as scope:
                result = await call(client)
            if scope.cancelled_caught:
                raise UpstreamTimeout(
                    f"{self.name}: {method} timed out after {limit:g} s",
                    {"server": self.name, "timeoutSeconds": limit},
                )
        except BaseException as exc:
            elapsed = (time.monotonic() - started) * 1000
            mapped = map_exception(exc, self.name, method)
            if mapped is None:
                self.events.activity(
                    self.name, direction="local", kind="error", method=method, summary="cancelled", duration_ms=elapsed
                )
                raise
            self.events.activity(
                self.name,
                direction="in",
                kind="error",
                method=method,
                summary=mapped.message,
                duration_ms=elapsed,
                data=mapped.data,
            )
            raise mapped from exc
        elapsed = (time.monotonic() - started) * 1000
        self.events.activity(
            self.name,
            direction="in",
            kind="response",
            method=method,
            summary=summary,
            duration_ms=elapsed,
            data=result if isinstance(result, dict) else _loggable(result),
        )
        return result


async def _wire(pending: Awaitable[BaseModel]) -> dict[str, Any]:
    """The awaited SDK result as a wire dict, dumped once (the activity entry and the caller share it)."""
    return to_wire(await pending)


async def _keep_alive(client: Client, lost: anyio.Event) -> None:
    """A remote server that went away while nothing was asked of it is noticed within `KEEP_ALIVE_SECONDS`
    (and connected again), not at the person's next call, which would fail."""
    while True:
        await anyio.sleep(KEEP_ALIVE_SECONDS)
        if not await _answers_ping(client):
            lost.set()
            return


async def _answers_ping(client: Client) -> bool:
    """Whether the server still answers at all: an error it sends back counts (it may not know `ping`); the SDK's
    own "Connection closed", a transport error or silence does not."""
    with anyio.move_on_after(PING_TIMEOUT_SECONDS):
        try:
            await client.send_ping()
        except MCPError as exc:
            return exc.code != CONNECTION_CLOSED
        except Exception:
            return False
        return True
    return False


async def _cancel_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def _loggable(result: object) -> object:
    """What the activity log shows of a response (the session clips large ones to a preview)."""
    if isinstance(result, BaseModel):
        return to_wire(result)
    return None


# Lines of a crash report that say nothing about the cause: Node's version banner, stack frames,
# the caret under a source line, the braces of an error object's dump.
_NOISE = re.compile(r"^(?:Node\.js v\d[\w.-]*|at .*|File \".*|\^+|[{}()\[\],;]+|\w+: .*,|\w+: \[\]|throw \w+;?)$")
_ERROR_LINE = re.compile(r"^(?:[\w.]*(?:Error|Exception|Exit)\b|error\b|fatal\b|panic\b)", re.IGNORECASE)


def useful_stderr_line(tail: list[str]) -> str | None:
    """The stderr line that best says why a server failed: the last error line ("Error: Cannot find module
    …", a Python traceback's last line), else the last line that is not noise, else the last line."""
    lines = [line.strip() for line in tail if line.strip()]
    meaningful = [line for line in lines if not _NOISE.match(line)]
    errors = [line for line in meaningful if _ERROR_LINE.match(line)]
    if errors:
        return errors[-1]
    if meaningful:
        return meaningful[-1]
    return lines[-1] if lines else None


def _tail_suffix(tail: list[str]) -> str:
    line = useful_stderr_line(tail)
    return f" (stderr: {line})" if line else ""


def _describe_connect_failure(
    exc: BaseException, tail: list[str], url: str | None = None, *, exit_code: int | None = None, cwd: str | None = None
) -> str:
    """One line for the page; `url` is the redacted URL, `exit_code` the stdio server's if it exited."""
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
        leaf = leaf.exceptions[0]
    if isinstance(leaf, OSError) and cwd is not None and leaf.filename == cwd:
        if isinstance(leaf, FileNotFoundError):
            return f"working directory not found: {cwd}"
        if isinstance(leaf, NotADirectoryError):
            return f"working directory is not a directory: {cwd}"
        return f"working directory not accessible: {cwd}"
    if isinstance(leaf, FileNotFoundError):
        return f"command not found: {leaf.filename}"
    if isinstance(leaf, PermissionError):
        return f"command not executable: {leaf.filename}"
    if exit_code is not None:
        return f"the server exited with status {exit_code}" + _tail_suffix(tail)
    kind = type(leaf).__name__
    if url and kind in ("ConnectError", "ConnectTimeout"):
        return f"cannot reach {url} ({leaf or 'connection refused'})"
    response = getattr(leaf, "response", None)
    status = getattr(response, "status_code", None)
    if url and isinstance(status, int):
        hint = " (check the entry's headers)" if status in (401, 403) else ""
        return f"{url} answered HTTP {status}{hint}"
    if isinstance(leaf, MCPError):
        text = f"the server refused the connection: {leaf.error.message} (code {leaf.code})"
    else:
        text = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
    return text + _tail_suffix(tail)
