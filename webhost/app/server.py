"""Serving the host app: uvicorn's server, stopping the tabs gracefully before it closes their sockets."""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from webhost.app.pidfile import PidFile
from webhost.journal import CallJournal
from webhost.ws import Tabs

logger = logging.getLogger(__name__)

# For the tabs to be told "webhost is stopping" and their sessions ended, before uvicorn closes their sockets.
STOP_TABS_TIMEOUT = 4.0


Reload = Callable[[], Awaitable[tuple[bool, str]]]


class HostApp:
    """The host's ASGI app, with its live tabs for `Server` to stop before uvicorn closes their sockets, and
    what re-reads its configuration (`reload`, on SIGHUP: app/reload.py)."""

    def __init__(
        self, app: ASGIApp, tabs: Tabs, journal: CallJournal | None = None, *, reload: Reload | None = None
    ) -> None:
        self.app = app
        self.tabs = tabs
        self.journal = journal
        self.reload = reload

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

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._reloads: set[asyncio.Task[None]] = set()
        self._reloading = asyncio.Lock()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        app = self.config.app
        if isinstance(app, HostApp):
            if app.journal is not None:
                app.journal.stopping = True  # before the tabs' calls end: what waits on a person stays recorded
            await app.tabs.stop(STOP_TABS_TIMEOUT)
        await super().shutdown(sockets)

    # Where each reload's outcome goes for `webhost reload` (app/pidfile.py); set by `webhost serve`.
    pid_file: PidFile | None = None

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        app = self.config.app
        if isinstance(app, HostApp) and app.reload is not None:
            loop = asyncio.get_running_loop()
            # The handler runs between two bytecodes of the loop's thread: it only schedules the reload.
            original[signal.SIGHUP] = signal.signal(
                signal.SIGHUP, lambda sig, frame: loop.call_soon_threadsafe(self._reload_soon, app)
            )
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    def _reload_soon(self, app: HostApp) -> None:
        task = asyncio.ensure_future(self._reload(app))
        self._reloads.add(task)
        task.add_done_callback(self._reloads.discard)

    async def _reload(self, app: HostApp) -> None:
        assert app.reload is not None
        async with self._reloading:  # one at a time, in the order asked
            try:
                applied, line = await app.reload()
            except Exception as exc:  # never the server's end: the running configuration stays
                logger.exception("reload failed")
                applied, line = False, f"failed, the running configuration is kept: {type(exc).__name__}: {exc}"
            if self.pid_file is not None:
                self.pid_file.reloaded(applied, line)
