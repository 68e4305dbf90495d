"""The host application: page, static files, /healthz and /ws behind the AuthGate, plus shared state."""

from __future__ import annotations

import logging
import secrets
import signal
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webhost import __version__
from webhost.apps.instances import Sandbox
from webhost.audit import AuditLog
from webhost.auth import AccessPolicy, AuthGate
from webhost.config import Config
from webhost.pending import Publish
from webhost.session import BrowserSession, SessionDeps
from webhost.settings import Settings
from webhost.upstream.client_factory import TransportFactory, default_transport
from webhost.ws import Tabs, serve_websocket

logger = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).parent
# For the tabs to be told "webhost is stopping" and their sessions ended, before uvicorn closes their sockets.
STOP_TABS_TIMEOUT = 4.0


@dataclass
class HostState:
    """The composition root's state: what every session shares, and the live sessions."""

    settings: Settings
    config: Config
    audit: AuditLog
    session_deps: SessionDeps
    tabs: Tabs = field(default_factory=Tabs)

    def new_session(self, notify: Publish) -> BrowserSession:
        return BrowserSession(self.session_deps, notify)


def load_secret(data_dir: Path) -> bytes:
    """The per-deployment secret (sandbox labels, session cookies), created once in the data folder."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "secret"
    if path.exists():
        value = path.read_bytes().strip()
        if len(value) >= 32:
            return value
    value = secrets.token_hex(32).encode()
    path.write_bytes(value)
    path.chmod(0o600)
    return value


def create_app(
    settings: Settings,
    config: Config,
    *,
    secret: bytes | None = None,
    transport_factory: TransportFactory = default_transport,
) -> ASGIApp:
    """The host app; `transport_factory` lets tests reach servers over in-memory streams."""
    secret = secret or load_secret(settings.data_dir)
    audit = AuditLog(settings.data_dir / "audit.sqlite3")
    host_origins = tuple(settings.host_origins() + list(config.options.allowed_origins))
    sandbox = Sandbox(secret=secret, domain=settings.sandbox_domain, port=settings.sandbox_port_for_browsers(),
                      scheme=settings.sandbox_scheme, host_origins=host_origins)
    host = HostState(settings=settings, config=config, audit=audit,
                     session_deps=SessionDeps(config=config, audit=audit, sandbox=sandbox,
                                              transport_factory=transport_factory))
    templates = Jinja2Templates(directory=str(PACKAGE_DIR / "templates"))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        for session in host.tabs.sessions:
            await session.close()
        host.audit.close()

    app = FastAPI(title="webhost", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.host = host

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/", response_class=HTMLResponse)
    async def index(request: Request) -> Any:
        return templates.TemplateResponse(
            request, "index.html", {"version": __version__, "static_url": "/static"},
        )

    @app.get("/api/servers")
    async def servers() -> JSONResponse:
        """For scripts: the configured servers (names and transports only, never secrets)."""
        return JSONResponse({"servers": [{"name": s.name, "transport": s.transport}
                                         for s in config.servers.values()]})

    @app.get("/api/audit")
    async def audit_export(format: str = "json", server: str | None = None) -> Response:
        """Export the audit log (JSON, or CSV with ?format=csv)."""
        if format == "csv":
            return PlainTextResponse(host.audit.export_csv(server=server), media_type="text/csv",
                                     headers={"content-disposition": "attachment; filename=webhost-audit.csv"})
        return JSONResponse({"entries": host.audit.entries(server=server, limit=10_000)})

    @app.websocket("/ws")
    async def websocket(ws: WebSocket) -> None:
        await serve_websocket(ws, host.new_session, host.tabs, config.options.limits)

    app.mount("/static", StaticFiles(directory=str(PACKAGE_DIR / "static")), name="static")
    policy = AccessPolicy(settings.token, secret, list(host_origins), secure_cookies=settings.secure_cookies)
    return HostApp(AuthGate(SecurityHeaders(app, page_csp(settings)), policy), host.tabs)


class HostApp:
    """The host's ASGI app, with its live tabs for `Server` to stop before uvicorn closes their sockets."""

    def __init__(self, app: ASGIApp, tabs: Tabs) -> None:
        self.app = app
        self.tabs = tabs

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


def page_csp(settings: Settings) -> str:
    """The host page's own policy: no inline script, frames only from the sandbox origins."""
    port = settings.sandbox_port_for_browsers()
    default_port = {"http": 80, "https": 443}.get(settings.sandbox_scheme)
    suffix = "" if port == default_port else f":{port}"
    sandbox = f"{settings.sandbox_scheme}://*.{settings.sandbox_domain}{suffix}"
    return "; ".join([
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "media-src 'self' data: blob:",
        "connect-src 'self'",
        f"frame-src {sandbox}",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ])


class SecurityHeaders:
    """Adds the page policy and anti-framing headers to every HTTP response of the host app."""

    def __init__(self, app: ASGIApp, csp: str) -> None:
        self.app = app
        self.headers = [
            (b"content-security-policy", csp.encode()),
            (b"x-frame-options", b"DENY"),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"strict-origin"),
            (b"cross-origin-opener-policy", b"same-origin"),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.headers]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
