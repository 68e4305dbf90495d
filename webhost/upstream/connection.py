"""One MCP connection (one person × one configured server): its link and the requests that run over it.

`Connection` is the link to the server (`link.py`: the long-lived task owning the SDK `Client`,
reconnects, liveness, status, sign-in) with its typed requests (`client.py`: `ServerClient`, every
request timed, audited and mapped to wire dicts) put together, and the owner it reports to
(`ConnectionEvents`: the person's workspace). Nothing outside `upstream/` sees an SDK object:
server→client requests reach `ConnectionEvents` as wire dicts too (`callbacks.py`), and their answers
go back the same way. Nothing here knows about WebSockets or tabs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from webhost.config import ServerConfig

from .callbacks import ElicitMode, ServerRequests, server_callbacks
from .client import LOG_LEVELS, Page, ProgressFn, ServerClient
from .client_factory import ClientCallbacks, TransportFactory, default_transport
from .failures import useful_stderr_line
from .link import RECONNECT_DELAYS, ConnectionInfo, ConnectionSettings, Link, Status
from .oauth import OAuthBinding
from .task_wire import TASKS_EXTENSION
from .tasks import TaskClient

__all__ = [
    "LOG_LEVELS",
    "RECONNECT_DELAYS",
    "Connection",
    "ConnectionEvents",
    "ConnectionInfo",
    "ConnectionSettings",
    "ElicitMode",
    "Page",
    "ProgressFn",
    "ServerClient",
    "Status",
    "TASKS_EXTENSION",
    "useful_stderr_line",
]


class ConnectionEvents(ServerRequests["Connection"], Protocol):
    """What a connection tells its owner about; every value is an MCP wire dict.

    The request handlers (`elicit`, `sample`, `list_roots`) return the wire result, or raise
    `RequestRefused` to answer the server with a JSON-RPC error.
    """

    def status_changed(self, connection: Connection) -> None: ...


class Connection(Link):
    """The link to one server, reporting to `events`, with its requests (`client`) and its tasks (`tasks`)."""

    def __init__(
        self,
        config: ServerConfig,
        events: ConnectionEvents,
        settings: ConnectionSettings,
        *,
        transport_factory: TransportFactory = default_transport,
        oauth: OAuthBinding | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(config, settings, transport_factory=transport_factory, oauth=oauth, clock=clock)
        self.events = events
        self.client = ServerClient(self)
        self.tasks = TaskClient(self.client)  # tasks/get, tasks/result, tasks/cancel, tasks/list (both eras)

    def log(self, **entry: Any) -> None:
        self.events.activity(self.name, **entry)

    def _status_moved(self) -> None:
        self.events.status_changed(self)

    def _callbacks(self) -> ClientCallbacks:
        return server_callbacks(self.events, self, self.name)
