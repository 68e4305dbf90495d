"""One MCP connection (one browser session × one configured server), owned by one long-lived task.

The SDK's `Client` must be entered and exited in the same task, so `_own` holds the
`async with Client(...)` block for the connection's whole life; other tasks await the client's
methods directly. Status changes, stderr lines and upstream traffic are reported through
`ConnectionEvents`; nothing here knows about WebSockets.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

import anyio
import anyio.abc
from mcp import Client, MCPError
from mcp.client import ClientRequestContext
from mcp.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    ListRootsResult,
    LoggingMessageNotificationParams,
)
from pydantic import BaseModel

from webhost.config import ServerConfig
from webhost.errors import NotConnected, UpstreamTimeout

from .client_factory import ClientCallbacks, build_client
from .clock import HumanClock
from .results import map_exception
from .stderr import StderrPipe

logger = logging.getLogger(__name__)

Status = Literal["connecting", "connected", "error", "disconnected"]
T = TypeVar("T")


class ConnectionEvents(Protocol):
    """What a connection tells its session about."""

    def status_changed(self, connection: Connection) -> None: ...
    def activity(self, server: str, **entry: Any) -> None: ...
    async def server_notification(self, connection: Connection, method: str, params: dict[str, Any]) -> None: ...
    async def elicit(
        self, connection: Connection, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData: ...
    async def sample(
        self, connection: Connection, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData: ...
    async def list_roots(self, connection: Connection) -> ListRootsResult | ErrorData: ...


@dataclass
class ConnectionInfo:
    protocol_version: str | None = None
    server_info: dict[str, Any] | None = None
    capabilities: dict[str, Any] | None = None
    instructions: str | None = None


class Connection:
    def __init__(
        self, config: ServerConfig, events: ConnectionEvents, *, connect_timeout: float, max_input_rounds: int
    ) -> None:
        self.config = config
        self.name = config.name
        self.events = events
        self.connect_timeout = connect_timeout
        self.max_input_rounds = max_input_rounds
        self.status: Status = "disconnected"
        self.error: str | None = None
        self.info = ConnectionInfo()
        self.human_clock = HumanClock()
        self.tools: dict[str, dict[str, Any]] = {}
        self.resources: dict[str, dict[str, Any]] = {}
        self._client: Client | None = None
        self._stop: anyio.Event | None = None
        self._done: anyio.Event | None = None
        self._scope: anyio.CancelScope | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        version = self.info.protocol_version
        return {
            "name": self.name,
            "transport": self.config.transport,
            "target": self.config.describe(),
            "status": self.status,
            "error": self.error,
            "protocolVersion": version,
            "era": None if version is None else ("modern" if version >= "2026-07-28" else "legacy"),
            "serverInfo": self.info.server_info,
            "capabilities": self.info.capabilities,
            "instructions": self.info.instructions,
        }

    def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Begin connecting in the background; status changes are reported as they happen."""
        if self._done is not None and not self._done.is_set():
            return
        self._stop = anyio.Event()
        self._done = anyio.Event()
        self._set_status("connecting")
        task_group.start_soon(self._own, name=f"mcp-connection:{self.name}")

    async def stop(self) -> None:
        """Close the connection and wait (bounded) until its process, if any, is gone."""
        if self._stop is None or self._done is None:
            return
        self._stop.set()
        if self._scope is not None and self.status == "connecting":
            self._scope.cancel()
        with anyio.move_on_after(10):
            await self._done.wait()
        self._set_status("disconnected")

    def _set_status(self, status: Status, error: str | None = None) -> None:
        self.status = status
        if status != "error":
            error = None
        self.error = error
        self.events.status_changed(self)
        detail = f"{status}: {error}" if error else status
        self.events.activity(self.name, direction="local", kind="status", method=None, summary=detail)

    async def _own(self) -> None:
        assert self._stop is not None and self._done is not None
        stderr = StderrPipe(lambda line: self.events.activity(self.name, direction="in", kind="stderr",
                                                                method=None, summary=line))
        failure: str | None = None
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                exited = anyio.Event()
                exit_codes: list[int] = []

                def on_exit(code: int) -> None:
                    exit_codes.append(code)
                    exited.set()

                client = build_client(self.config, self._callbacks(), stderr=stderr,
                                      max_input_rounds=self.max_input_rounds, on_exit=on_exit)
                deadline = anyio.current_time() + self.connect_timeout
                scope.deadline = deadline
                async with stderr:
                    async with client:
                        stderr.release_write_end()
                        scope.deadline = float("inf")
                        self._client = client
                        self._record_info(client)
                        self._set_status("connected")
                        await self._serve_until_stopped(client, exited)
                        self._client = None
            if scope.cancelled_caught and not self._stop.is_set():
                failure = f"timed out connecting after {self.connect_timeout:g} s"
        except Exception as exc:  # any failure to start or a broken transport is this server's error only
            failure = _describe_connect_failure(exc, stderr.tail(), self.config.url)
            logger.info("connection %s failed: %s", self.name, failure)
        finally:
            self._client = None
            self._scope = None
            if failure is None and not self._stop.is_set():
                ended = f"the server exited with status {exit_codes[0]}" if exit_codes else \
                    "the server closed the connection"
                failure = ended + _tail_suffix(stderr.tail())
            if failure is not None:
                self._set_status("error", failure)
            self._done.set()

    async def _serve_until_stopped(self, client: Client, exited: anyio.Event) -> None:
        """Hold the client open until asked to stop, the process exits, or the transport closes."""
        assert self._stop is not None
        stop = self._stop
        async with anyio.create_task_group() as tg:
            if (self.info.protocol_version or "") >= "2026-07-28":
                tg.start_soon(self._listen, client)

            async def wake_on(event: anyio.Event) -> None:
                await event.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(wake_on, stop)
            tg.start_soon(wake_on, exited)
            # HTTP transports give no exit signal: notice a closed session by polling the dispatcher.
            while not _transport_closed(client):
                await anyio.sleep(0.5)
            tg.cancel_scope.cancel()

    async def _listen(self, client: Client) -> None:
        """2026-07-28 servers push list changes only on a subscriptions/listen stream.

        The SDK tees each event to the message handler, so draining the stream is all it takes.
        """
        caps = self.info.capabilities or {}

        def wants(kind: str) -> bool:
            value = caps.get(kind)
            return isinstance(value, dict) and bool(value.get("listChanged"))

        if not any(wants(kind) for kind in ("tools", "resources", "prompts")):
            return
        try:
            async with client.listen(tools_list_changed=wants("tools"), prompts_list_changed=wants("prompts"),
                                     resources_list_changed=wants("resources")) as subscription:
                async for _event in subscription:
                    pass
        except Exception as exc:  # a server without listen support still works, just without live updates
            self.events.activity(self.name, direction="in", kind="error", method="subscriptions/listen",
                                 summary=f"no live list updates: {exc}")

    def _record_info(self, client: Client) -> None:
        server_info = client.server_info
        self.info = ConnectionInfo(
            protocol_version=client.protocol_version,
            server_info=server_info.model_dump(by_alias=True, exclude_none=True) if server_info else None,
            capabilities=client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json"),
            instructions=client.instructions,
        )

    def _callbacks(self) -> ClientCallbacks:
        async def on_elicit(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
            return await self.events.elicit(self, context, params)

        async def on_sample(
            context: ClientRequestContext, params: CreateMessageRequestParams
        ) -> CreateMessageResult | ErrorData:
            return await self.events.sample(self, context, params)

        async def on_roots(context: ClientRequestContext) -> ListRootsResult | ErrorData:
            return await self.events.list_roots(self)

        async def on_log(params: LoggingMessageNotificationParams) -> None:
            await self.events.server_notification(
                self, "notifications/message", params.model_dump(by_alias=True, exclude_none=True, mode="json")
            )

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception):
                self.events.activity(self.name, direction="in", kind="error", method=None,
                                     summary=f"transport error: {message}")
                return
            method = getattr(message, "method", None)
            if not isinstance(method, str) or method == "notifications/message":
                return
            params = getattr(message, "params", None)
            dumped = params.model_dump(by_alias=True, exclude_none=True, mode="json") if params is not None else {}
            await self.events.server_notification(self, method, dumped)

        return ClientCallbacks(elicit=on_elicit, sample=on_sample, roots=on_roots, log=on_log, message=on_message)

    # -- requests ---------------------------------------------------------------------------

    @property
    def client(self) -> Client:
        if self._client is None or self.status != "connected":
            raise NotConnected(
                f"server {self.name!r} is not connected",
                {"server": self.name, "status": self.status, "reason": self.error},
            )
        return self._client

    async def request(
        self,
        method: str,
        summary: str,
        call: Callable[[Client], Awaitable[T]],
        *,
        timeout: float | None,
        data: dict[str, Any] | None = None,
    ) -> T:
        """Run one upstream request with activity entries, error mapping and a human-aware timeout."""
        client = self.client
        self.events.activity(self.name, direction="out", kind="request", method=method, summary=summary, data=data)
        started = time.monotonic()
        timed_out = False
        try:
            async with anyio.create_task_group() as tg:
                box: list[T] = []

                async def run() -> None:
                    box.append(await call(client))
                    tg.cancel_scope.cancel()

                tg.start_soon(run)
                if timeout is not None:
                    await self.human_clock.wait_machine_time(timeout)
                    timed_out = True
                    tg.cancel_scope.cancel()
            if timed_out and not box:
                raise UpstreamTimeout(
                    f"{self.name}: {method} timed out after {timeout:g} s",
                    {"server": self.name, "timeoutSeconds": timeout},
                )
            result = box[0]
        except BaseException as exc:
            elapsed = (time.monotonic() - started) * 1000
            mapped = map_exception(exc, self.name, method)
            if mapped is None:
                self.events.activity(self.name, direction="local", kind="error", method=method,
                                     summary="cancelled", duration_ms=elapsed)
                raise
            self.events.activity(self.name, direction="in", kind="error", method=method,
                                 summary=mapped.message, duration_ms=elapsed, data=mapped.data)
            raise mapped from exc
        elapsed = (time.monotonic() - started) * 1000
        self.events.activity(self.name, direction="in", kind="response", method=method, summary=summary,
                             duration_ms=elapsed, data=_loggable(result))
        return result


def _loggable(result: object) -> object:
    """What the activity log shows of a response (the session clips large ones to a preview)."""
    if isinstance(result, BaseModel):
        return result.model_dump(by_alias=True, exclude_none=True, mode="json")
    return None


def _transport_closed(client: Client) -> bool:
    try:
        dispatcher = client.session._dispatcher
    except RuntimeError:
        return True
    return bool(getattr(dispatcher, "_closed", False))


def _tail_suffix(tail: list[str]) -> str:
    return f" (stderr: {tail[-1]})" if tail else ""


def _describe_connect_failure(exc: BaseException, tail: list[str], url: str | None = None) -> str:
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
        leaf = leaf.exceptions[0]
    if isinstance(leaf, FileNotFoundError):
        return f"command not found: {leaf.filename}"
    if isinstance(leaf, PermissionError):
        return f"command not executable: {leaf.filename}"
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
