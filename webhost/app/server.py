"""Serving the host app: uvicorn's server, stopping the tabs gracefully before it closes their sockets."""

from __future__ import annotations

import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from webhost.journal import CallJournal
from webhost.ws import Tabs

# For the tabs to be told "webhost is stopping" and their sessions ended, before uvicorn closes their sockets.
STOP_TABS_TIMEOUT = 4.0


class HostApp:
    """The host's ASGI app, with its live tabs for `Server` to stop before uvicorn closes their sockets."""

    def __init__(self, app: ASGIApp, tabs: Tabs, journal: CallJournal | None = None) -> None:
        self.app = app
        self.tabs = tabs
        self.journal = journal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


class Server(uvicorn.Server):
    """uvicorn's server, stopping gracefully on SIGTERM or SIGINT.

    - Before uvicorn closes the sockets (it sends close 1012 at once, after which nothing can reach the page),
      every request a tab has in flight is answered with a JSON-RPC error ("webhost is stopping", -32000,
      `data.method`), the socket is closed with 1001 and the tab's session ended (calls cancelled, server
      processes stopped), all within `STOP_TABS_TIMEOUT`. uvicorn's own graceful shutdown follows.
    - The signal is a request to stop, answered by stopping: the process exits with its own status (0). uvicorn
      re-raises the signal once it is done, so the process died of it (status -15) before anything after `serve()`
      could run.
    """

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        app = self.config.app
        if isinstance(app, HostApp):
            if app.journal is not None:
                app.journal.stopping = True  # before the tabs' calls end: what waits on a person stays recorded
            await app.tabs.stop(STOP_TABS_TIMEOUT)
        await super().shutdown(sockets)

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)
