"""Build the SDK `Client` for one configured server: transport, identity, capabilities, callbacks."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import httpx2
from mcp import Client, MCPError, StdioServerParameters
from mcp.client import advertise
from mcp.client.session import ElicitationFnT, ListRootsFnT, LoggingFnT, MessageHandlerFnT, SamplingFnT
from mcp.client.sse import sse_client
from mcp.types import DiscoverResult, Implementation
from pydantic import ValidationError

from webhost import __version__
from webhost.config import ProtocolChoice, ServerConfig
from webhost.config.limits import MAX_RESULT_BYTES

from .http_clients import mcp_http_client
from .sdk import RoundObservingClient, TransportStreams, streamable_http_client
from .stderr import StderrPipe
from .stdio import stdio_transport
from .stdio_lines import BIG_LINE, parse_long_line
from .task_wire import TasksExtension, TaskStatusFn

UI_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"
# The MCP Apps extension, with the nested `elicitation: {}` of app-rendered elicitation (SEP-3118).
# Both the current MIME type and the one before ext-apps #75 (servers may check for either).
UI_EXTENSION_SETTINGS: dict[str, Any] = {"mimeTypes": [APP_MIME_TYPE, "text/html+mcp"], "elicitation": {}}
CLIENT_INFO = Implementation(name="webhost", version=__version__)


Transport = AbstractAsyncContextManager[TransportStreams]


# The longest message a remote server's SSE stream may send unless told (`webhost.limits.maxResultBytes`' default):
# the SDK's own default (1 MiB) refused every result over a megabyte that came as an event.
MAX_MESSAGE = MAX_RESULT_BYTES


class TransportFactory(Protocol):
    """How a configured server is reached: a not-yet-entered transport (tests pass in-memory ones). `max_message`
    bounds one message where the transport must buffer it whole (an SSE event): results up to
    `webhost.limits.maxResultBytes` reach webhost's own check, which refuses a bigger one with a clear error."""

    def __call__(
        self, config: ServerConfig, stderr: StderrPipe, on_exit: Callable[[int], None], *, max_message: int = ...
    ) -> Transport: ...


@dataclass(frozen=True)
class ClientCallbacks:
    elicit: ElicitationFnT
    sample: SamplingFnT
    roots: ListRootsFnT
    log: LoggingFnT
    message: MessageHandlerFnT
    task_status: TaskStatusFn  # a server's `notifications/tasks` (2026-07-28) or `notifications/tasks/status`


MODERN = "2026-07-28"


class EraRefused(Exception):
    """The server does not speak the era its entry's `protocol` chose; the message says so for the page."""


def build_client(
    transport: Transport, callbacks: ClientCallbacks, *, max_input_rounds: int, protocol: ProtocolChoice = "auto"
) -> Client:
    """A not-yet-entered Client; entering it spawns the process or opens the HTTP session.

    `protocol` is the entry's era choice: "auto" negotiates (the SDK probes `server/discover`, falling back to
    `initialize`), "legacy" speaks `initialize` only, "2026-07-28" adopts that revision (`discover_pinned`
    then asks the server what it offers)."""
    return RoundObservingClient(
        transport,
        mode=protocol,
        client_info=CLIENT_INFO,
        extensions=[advertise(UI_EXTENSION, UI_EXTENSION_SETTINGS), TasksExtension(callbacks.task_status)],
        elicitation_callback=callbacks.elicit,
        sampling_callback=callbacks.sample,
        list_roots_callback=callbacks.roots,
        logging_callback=callbacks.log,
        message_handler=callbacks.message,
        log_level=None,  # the level travels with each request, as the person chose it (client.py, `_meta`)
        read_timeout_seconds=None,  # webhost applies its own timeout, which excludes a person's answering time
        input_required_max_rounds=max_input_rounds,
        cache=None,  # the page asks for fresh lists; stale listings would hide list_changed updates
    )


async def discover_pinned(client: Client, protocol: ProtocolChoice, name: str) -> None:
    """With `protocol` "2026-07-28", ask the entered client's server for its `server/discover` and adopt it (the
    SDK's pinned mode adopts an empty one); a server that does not answer it is not a 2026-07-28 server."""
    if protocol != MODERN:
        return
    hint = f'(webhost.servers.{name}.protocol is "{MODERN}"; set "auto" or "legacy" for a server of an earlier era)'
    try:
        raw = await client.session.send_discover(MODERN)
        client.session.adopt(DiscoverResult.model_validate(raw))
    except MCPError as exc:
        raise EraRefused(
            f"the server did not answer server/discover: {exc.error.message} (code {exc.code}) {hint}"
        ) from exc
    except (ValidationError, RuntimeError) as exc:
        raise EraRefused(f"the server's server/discover answer is not a 2026-07-28 one {hint}") from exc


def default_transport(
    config: ServerConfig,
    stderr: StderrPipe,
    on_exit: Callable[[int], None],
    *,
    auth: httpx2.Auth | None = None,
    max_message: int = MAX_MESSAGE,
) -> Transport:
    """The real transports: our stdio (linear reader, exit callback), Streamable HTTP, legacy SSE;
    `auth` is the person's OAuth for a remote server (upstream/oauth.py)."""
    if config.transport == "stdio":
        assert config.command is not None
        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env) or None, cwd=config.cwd
        )
        transport: Transport = stdio_transport(params, errlog=stderr.errlog, on_exit=on_exit)
        return transport
    assert config.url is not None
    if config.transport == "sse":
        sse: Transport = sse_client(
            config.url, headers=dict(config.headers) or None, auth=auth, httpx_client_factory=mcp_http_client
        )
        return sse
    return _streamable_http(config.url, dict(config.headers), auth, max_message)


@asynccontextmanager
async def _streamable_http(
    url: str, headers: dict[str, str], auth: httpx2.Auth | None, max_message: int
) -> AsyncIterator[Any]:
    # We pass our own httpx2 client (for the configured headers), so we own its lifetime too.
    refused: list[httpx2.Response] = []

    async def remember_refusal(response: httpx2.Response) -> None:
        if response.status_code >= 400:
            refused.append(response)

    async with mcp_http_client(headers, auth=auth, event_hooks={"response": [remember_refusal]}) as http_client:
        async with streamable_http_client(
            url, http_client=http_client, parse_long=parse_long_line, long=BIG_LINE, max_event=max_message
        ) as streams:
            try:
                yield streams
            except Exception as exc:
                # The SDK turns an HTTP error status into a generic JSON-RPC error; the status says more
                # (401: the entry's headers are wrong), so the connection ends with the HTTP error instead.
                leaf: BaseException = exc
                while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
                    leaf = leaf.exceptions[0]
                if not (refused and isinstance(leaf, MCPError)):
                    raise
                response = refused[-1]
                raise httpx2.HTTPStatusError(
                    f"HTTP {response.status_code}", request=response.request, response=response
                ) from exc
