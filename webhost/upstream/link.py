"""The link to one server: one long-lived task owning the SDK `Client`, connecting again after a drop.

The SDK's `Client` must be entered and exited in the same task, so `_own` holds the
`async with Client(...)` block for the connection's whole life. The link keeps the status the page
shows, the server's side of the handshake, the person's sign-in to a remote server while it runs, and
liveness (the transport's end, the stdio process's exit, a keep-alive ping, the listen stream:
`liveness.py`). A remote server's connection that drops is connected again with back-off. The typed
requests that run over the link are `client.py`'s; `connection.py` puts the two together.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import anyio.abc
from mcp import Client
from mcp.client.auth import OAuthClientProvider

from webhost.config import ProtocolChoice, ServerConfig
from webhost.errors import NotConnected

from .client_factory import (
    MAX_MESSAGE,
    ClientCallbacks,
    TransportFactory,
    build_client,
    default_transport,
    discover_pinned,
)
from .clock import HumanClock
from .failures import describe_connect_failure, tail_suffix
from .legacy_calls import deliberately
from .liveness import ListenStream, keep_alive
from .oauth import NOT_OAUTH, OAuthBinding, describe_oauth_failure
from .sdk import advertised_capabilities
from .sdk_workarounds import Heard, tolerate_output_schema, watched_transport
from .sign_in import SignInState
from .stderr import StderrPipe

logger = logging.getLogger(__name__)

Status = Literal["connecting", "connected", "error", "disconnected", "needs-input", "auth-required"]
# A remote server's connection that was up and then dropped is tried again after each of these (seconds), while
# the attempts fail; past the last it stays in `error` for the person to reconnect. A stdio server that exits is
# not restarted: that is the server failing, and the person is told.
RECONNECT_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
# The level 2026-07-28 requests opt in to until the person chooses one (every message, as a workbench wants).
DEFAULT_LOG_LEVEL = "debug"


@dataclass(frozen=True)
class ConnectionSettings:
    """The limits one connection runs with (from the configuration's `webhost` options)."""

    connect_timeout: float
    call_timeout: float
    max_input_rounds: int
    protocol: ProtocolChoice = "auto"  # `webhost.servers.NAME.protocol`: the era to speak (client_factory.py)
    # `timeouts.maxTotal`: how long a call that keeps reporting progress may run in all (each note gives it
    # `call_timeout` more, machine time only; clock.py)
    max_total_timeout: float = 3600.0
    # `limits.maxResultBytes`: the longest message a transport buffers whole (an SSE event; client_factory.py)
    max_message: int = MAX_MESSAGE


@dataclass
class ConnectionInfo:
    protocol_version: str | None = None
    server_info: dict[str, Any] | None = None
    capabilities: dict[str, Any] | None = None
    client_capabilities: dict[str, Any] | None = None  # what webhost advertised to this server
    instructions: str | None = None


class Link:
    """The long-lived task and the state of one connection; its owner says where status and activity go.

    It is the OAuth flow's `SignInView` (upstream/oauth.py): while the person is asked to sign in, the
    connect deadline and the call clocks pause.
    """

    def __init__(
        self,
        config: ServerConfig,
        settings: ConnectionSettings,
        *,
        transport_factory: TransportFactory = default_transport,
        oauth: OAuthBinding | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.name = config.name
        self.settings = settings
        self._transport_factory = transport_factory
        self.status: Status = "disconnected"
        self.error: str | None = None
        self.info = ConnectionInfo()
        self.human_clock = HumanClock(clock)
        self.listen = ListenStream()  # 2026-07-28: the listen stream and its resource filter
        self.sign_in = SignInState(oauth)
        self._deadline_lifted = False
        self._client: Client | None = None
        self._stop: anyio.Event | None = None
        self._done: anyio.Event | None = None
        self._scope: anyio.CancelScope | None = None
        self.waiting_for: list[dict[str, Any]] = []  # the inputs a "needs-input" connection waits for
        # The level of `notifications/message` this person asked of this server (`logging/setLevel` from the page),
        # kept across reconnects; None: not chosen (2026-07-28 requests then carry DEFAULT_LOG_LEVEL).
        self.log_level: str | None = None
        # The caching hints (SEP-2549: `{ttlMs, cacheScope}`) of the last `server/discover` and first list pages.
        self.cache_hints: dict[str, dict[str, Any] | None] = {}
        self._reconnects = 0  # attempts since the connection was last up (RECONNECT_DELAYS)
        self._retry_in: float | None = None  # the wait before the next attempt, once a run ended in an error

    # -- what the owner (connection.py) fills in ------------------------------------------------

    def log(self, **entry: Any) -> None:
        """One activity entry of this server (direction, kind, method, summary, ...)."""

    def _status_moved(self) -> None:
        """`status` (or `error`) changed."""

    def _callbacks(self) -> ClientCallbacks:
        raise NotImplementedError

    # -- state ----------------------------------------------------------------------------------

    @property
    def era(self) -> Literal["modern", "legacy"] | None:
        version = self.info.protocol_version
        return None if version is None else ("modern" if version >= "2026-07-28" else "legacy")

    def request_log_level(self) -> str | None:
        """The log level each request carries in `_meta` (2026-07-28, where `logging/setLevel` is gone); None on
        a legacy connection, where the server keeps the level `logging/setLevel` gave it."""
        return (self.log_level or DEFAULT_LOG_LEVEL) if self.era == "modern" else None

    def log_level_state(self) -> dict[str, Any] | None:
        """What the page shows of the level: which it is, whether the person chose it, and how the server takes it."""
        if self.era is None:
            return None
        if self.era == "modern":
            return {"level": self.request_log_level(), "chosen": self.log_level is not None, "via": "request"}
        return {"level": self.log_level, "chosen": self.log_level is not None, "via": "setLevel"}

    def state(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.config.transport,
            "target": self.config.describe(),
            "status": self.status,
            "error": self.error,
            "protocolVersion": self.info.protocol_version,
            "era": self.era,
            "protocolChoice": self.settings.protocol,
            "serverInfo": self.info.server_info,
            "capabilities": self.info.capabilities,
            "clientCapabilities": self.info.client_capabilities,
            "instructions": self.info.instructions,
            "logLevel": self.log_level_state(),
            "cacheHints": {method: hint for method, hint in self.cache_hints.items() if hint},
            "inputs": self.waiting_for if self.status == "needs-input" else [],
            "signIn": self.sign_in.view(self.status == "auth-required"),
        }

    def connected_client(self) -> Client:
        """The SDK client, while connected; else `NotConnected`, as a request would get."""
        if self._client is None or self.status != "connected":
            raise NotConnected(
                f"server {self.name!r} is not connected",
                {"server": self.name, "status": self.status, "reason": self.error},
            )
        return self._client

    # -- sign-in (the SignInView of the OAuth flow) ---------------------------------------------

    def uses_oauth(self) -> bool:
        return self.sign_in.uses_oauth(self.config)

    def needs_sign_in(self, url: str, reason: str) -> None:
        self.sign_in.url = url
        if self._scope is not None and self._client is None and not self._deadline_lifted:
            self._scope.deadline = float("inf")  # connecting waits for the person, not against the timeout
            self._deadline_lifted = True
        self.human_clock.begin()  # a call waiting on this sign-in is off the clock
        self._set_status("auth-required", reason)

    def sign_in_noticed(self, reason: str) -> None:
        if self.status == "auth-required":
            self._set_status("auth-required", reason)

    def sign_in_over(self) -> None:
        self.sign_in.url = None
        self.human_clock.end()
        if self._deadline_lifted and self._scope is not None:
            self._scope.deadline = anyio.current_time() + self.settings.connect_timeout
            self._deadline_lifted = False
        if self.status == "auth-required":
            self._set_status("connected" if self._client is not None else "connecting")
        self.sign_in.moved()

    # -- lifecycle ------------------------------------------------------------------------------

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
        self._status_moved()
        detail = f"{status}: {error}" if error else status
        self.log(direction="local", kind="status", method=None, summary=detail)
        self.sign_in.moved()

    async def _own(self) -> None:
        assert self._stop is not None and self._done is not None
        stderr = StderrPipe(lambda line: self.log(direction="in", kind="stderr", method=None, summary=line))
        failure: str | None = None
        exit_codes: list[int] = []
        was_up = False
        oauth = self.sign_in.provider_for(self.config, self)
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
                    default_transport(self.config, stderr, on_exit, auth=oauth, max_message=self.settings.max_message)
                    if oauth is not None
                    else self._transport_factory(self.config, stderr, on_exit, max_message=self.settings.max_message)
                )
                heard = Heard()
                transport = watched_transport(raw, ended, heard)
                client = build_client(
                    transport,
                    self._callbacks(),
                    max_input_rounds=self.settings.max_input_rounds,
                    protocol=self.settings.protocol,
                )
                scope.deadline = anyio.current_time() + self.settings.connect_timeout
                async with stderr:
                    async with client:
                        await discover_pinned(client, self.settings.protocol, self.name)
                        tolerate_output_schema(client.session)
                        stderr.release_write_end()
                        scope.deadline = float("inf")
                        self._client = client
                        self._record_info(client)
                        self._set_status("connected")
                        was_up = True
                        await self._serve_until_stopped(client, ended, heard)
                        self._client = None
            if scope.cancelled_caught and not self._stop.is_set():
                failure = f"timed out connecting after {self.settings.connect_timeout:g} s"
        except Exception as exc:  # any failure to start or a broken transport is this server's error only
            failure = describe_connect_failure(
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
                provider = oauth if isinstance(oauth, OAuthClientProvider) else None
                auth_reason = describe_oauth_failure(oauth.failure, provider) or f"the sign-in failed: {oauth.failure}"
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
                failure = reason + tail_suffix(stderr.tail())
            if failure is not None:
                self._retry_in = self._retry_delay(was_up)
                retry = f" (connecting again in {self._retry_in:g} s)" if self._retry_in is not None else ""
                self._set_status("error", self.config.redactor().text(failure) + retry)

    async def _serve_until_stopped(self, client: Client, ended: anyio.Event, heard: Heard) -> None:
        """Hold the client open until asked to stop, the process exits, or the transport closes."""
        assert self._stop is not None
        stop = self._stop
        async with anyio.create_task_group() as tg:
            if self.era == "modern":
                capabilities = self.info.capabilities or {}
                tg.start_soon(self.listen.run, client, capabilities, ended, self._no_live_updates, heard)
            if self.config.transport in ("http", "sse"):
                tg.start_soon(keep_alive, client, ended, heard)
            if self.era == "legacy" and self.log_level is not None:
                tg.start_soon(self._restore_log_level, client, self.log_level)

            async def wake_on(event: anyio.Event) -> None:
                await event.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(wake_on, stop)
            tg.start_soon(wake_on, ended)

    async def _restore_log_level(self, client: Client, level: str) -> None:
        """A legacy server forgets the level with its session: give it the person's again after a reconnect."""
        self.log(direction="out", kind="request", method="logging/setLevel", summary=f"{level} (kept from before)")
        try:
            await deliberately(lambda: client.set_logging_level(level))  # type: ignore[arg-type]
        except Exception as exc:  # the connection stays up; the page's level control says what it is
            self.log(direction="in", kind="error", method="logging/setLevel", summary=str(exc) or type(exc).__name__)
            return
        self.log(direction="in", kind="response", method="logging/setLevel", summary=f"{level} (kept from before)")

    def _no_live_updates(self, reason: str) -> None:
        self.log(direction="in", kind="error", method="subscriptions/listen", summary=f"no live updates: {reason}")

    def _record_info(self, client: Client) -> None:
        server_info = client.server_info
        self.info = ConnectionInfo(
            protocol_version=client.protocol_version,
            server_info=server_info.model_dump(by_alias=True, exclude_none=True) if server_info else None,
            capabilities=client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json"),
            instructions=client.instructions,
            client_capabilities=advertised_capabilities(client.session, client.protocol_version),
        )
        discovered = client.session.discover_result
        self.cache_hints = (
            {"server/discover": {"ttlMs": discovered.ttl_ms, "cacheScope": discovered.cache_scope}}
            if discovered is not None
            else {}
        )
