"""The host application: page, static files, /healthz and /ws behind the AuthGate, plus shared state."""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import uvicorn
from fastapi import FastAPI, Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webhost import __version__, loophealth
from webhost.apps.instances import Sandbox
from webhost.apps.origins import derive_key, secret_from_text
from webhost.audit import LEGACY_FILE, AuditLimits, AuditLog, AuditUnavailable, visible_user
from webhost.auth import AccessPolicy, AuthGate, same_origin_path
from webhost.auth.gate import SIGN_IN_PATH, SIGN_OUT_PATH
from webhost.auth.oidc import OidcClient
from webhost.auth.proxy import TrustedProxies
from webhost.auth.signin import (
    CALLBACK_PATH,
    SESSION_COOKIE,
    SIGNED_OUT_PATH,
    STATE_COOKIE,
    OidcSettings,
    OidcSignIn,
    signed_out_page,
)
from webhost.config import AuthOptions, Config
from webhost.directory import SessionDirectory
from webhost.errors import PolicyRefused
from webhost.journal import CallJournal
from webhost.pending import Publish
from webhost.people import Person, person_of, sign_in_key, sign_in_of
from webhost.redact import Redactor
from webhost.session import BrowserSession
from webhost.settings import Settings
from webhost.storage.conversations import ChatSeal, ConversationStore
from webhost.storage.db import Storage
from webhost.storage.history import CallHistory
from webhost.storage.inputs import InputVault
from webhost.storage.live_calls import LiveCallStore, RoundSeal
from webhost.storage.oauth_tokens import OAuthVault
from webhost.storage.people import SeenPeople
from webhost.storage.urls import database_url
from webhost.upstream.client_factory import TransportFactory, default_transport
from webhost.upstream.oauth import CALLBACK_PATH as OAUTH_CALLBACK_PATH
from webhost.upstream.oauth import OAuthDeps, RefreshLocks
from webhost.upstream.oauth_callback import callback_endpoint
from webhost.upstream.sign_ins import ServerSignIns
from webhost.workspace import HostDeps, Workspace
from webhost.ws import REDACT_SCOPE_KEY, Tabs, serve_websocket

logger = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).parent
# For the tabs to be told "webhost is stopping" and their sessions ended, before uvicorn closes their sockets.
STOP_TABS_TIMEOUT = 4.0


@dataclass
class HostState:
    """The composition root's state: what every workspace shares, each person's workspace, the live tabs."""

    settings: Settings
    config: Config
    audit: AuditLog
    deps: HostDeps
    sessions: set[BrowserSession] = field(default_factory=set)
    workspaces: dict[str, Workspace] = field(default_factory=dict)
    directory: SessionDirectory = field(default_factory=SessionDirectory)
    task_group: anyio.abc.TaskGroup | None = None
    tabs: Tabs = field(default_factory=Tabs)

    def new_session(
        self, person: Person, notify: Publish, sign_in: str | None = None, origin: str | None = None
    ) -> BrowserSession:
        """A tab of this person, on their workspace (opened with their first tab, shared by the rest);
        `origin` is the page's origin the tab came in on (the OAuth callback URL is on it)."""
        assert self.task_group is not None, "the lifespan starts before any tab"
        workspace = self.workspaces.get(person.id)
        if workspace is None or workspace.closed:
            workspace = Workspace(self.deps, person, self.task_group, origin=origin)
            self.workspaces[person.id] = workspace
        session = BrowserSession(workspace, notify, self.directory, sign_in=sign_in)
        self.sessions.add(session)
        return session

    def input_redactor(self, people: set[str] | None) -> Redactor:
        """Masks the input values of these people (None: everyone's) whose workspace is open in this process."""
        if people is not None and len(people) == 1:  # every frame of a tab: one lookup
            workspace = self.workspaces.get(next(iter(people)))
            return workspace.input_redactor if workspace is not None else Redactor()
        workspaces = [w for w in self.workspaces.values() if people is None or w.person.id in people]
        return Redactor(value for w in workspaces for value in w.input_redactor.values)

    def end_session(self, session: BrowserSession) -> None:
        self.sessions.discard(session)
        session.workspace.detach(session, on_idle=self._forget_workspace)

    def _forget_workspace(self, workspace: Workspace) -> None:
        if self.workspaces.get(workspace.person.id) is workspace:
            del self.workspaces[workspace.person.id]

    async def close(self) -> None:
        for session in list(self.sessions):
            await session.close()
        for workspace in list(self.workspaces.values()):
            await workspace.close()
        self.workspaces.clear()


def deployment_secret(settings: Settings) -> bytes:
    """`WEBHOST_SECRET` when given (how replicas with data folders of their own share one), else the
    data folder's `secret` file. The file holds text, so `WEBHOST_SECRET=$(cat DATA/secret)` keeps a
    deployment's cookies, sandbox origins and stored input values as they were."""
    return secret_from_text(settings.secret) if settings.secret else load_secret(settings.data_dir)


def load_secret(data_dir: Path) -> bytes:
    """The per-deployment secret (sandbox labels, session cookies), created once in the data folder.

    A new secret is written to a temporary file created mode 0600 (never readable by others, even
    for a moment), synced, and then linked into place, so a reader sees the whole secret or none;
    when two processes start at once, the first one's secret wins and both use it.
    """
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = data_dir / "secret"
    existing = _read_secret(path)
    if existing is not None:
        return existing
    value = secrets.token_hex(32).encode()
    temporary = data_dir / f".secret-{secrets.token_hex(8)}"
    fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(value)
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(temporary, path)  # only if there is none: a concurrent start keeps its secret
        except FileExistsError:
            existing = _read_secret(path)
            if existing is not None:
                return existing
            os.replace(temporary, path)  # a short or empty secret left by a crash is replaced whole
        except OSError:  # a file system without hard links
            os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return value


def _read_secret(path: Path) -> bytes | None:
    try:
        value = path.read_bytes().strip()
    except FileNotFoundError:
        return None
    return value if len(value) >= 32 else None


def create_app(
    settings: Settings,
    config: Config,
    *,
    secret: bytes | None = None,
    transport_factory: TransportFactory = default_transport,
    clock: Callable[[], float] = time.time,
) -> ASGIApp:
    """The host app; `transport_factory` lets tests reach servers over in-memory streams, and `clock`
    is the time webhost checks the provider's ID tokens against (tests skew it)."""
    secret = secret or deployment_secret(settings)
    host_origins = tuple(settings.host_origins() + list(config.options.allowed_origins))
    sandbox = Sandbox(
        secret=secret,
        domain=settings.sandbox_domain,
        port=settings.sandbox_port_for_browsers(),
        scheme=settings.sandbox_scheme,
        host_origins=host_origins,
    )
    # The database is opened in every mode (it keeps each person's input values); oidc also keeps sessions there.
    storage = Storage(database_url(settings.database_url or config.options.database, settings.data_dir))
    vault = InputVault(storage, derive_key(secret, "inputs/v1"))
    # The calls this process runs, written down so another replica sharing the database can take them over.
    journal = CallJournal(LiveCallStore(storage, RoundSeal(derive_key(secret, "live-calls/v1"))))
    audit = AuditLog(
        storage, AuditLimits(**config.options.audit.model_dump()), legacy_file=settings.data_dir / LEGACY_FILE
    )
    # What reaches the browser never holds the deployment secret or the database password either.
    redactor = config.redactor().with_values(value for value in (settings.secret, storage.password) if value)
    history = CallHistory(storage, redactor)
    host = HostState(
        settings=settings,
        config=config,
        audit=audit,
        deps=HostDeps(
            config=config,
            audit=audit,
            sandbox=sandbox,
            transport_factory=transport_factory,
            vault=vault,
            journal=journal,
            oauth=OAuthDeps(OAuthVault(storage, derive_key(secret, "oauth/v1")), ServerSignIns(), RefreshLocks()),
            public_origin=next((o for o in settings.public_origins), None),
            history=history,
            conversations=ConversationStore(storage, ChatSeal(derive_key(secret, "chat/v1"))),
        ),
    )
    templates = Jinja2Templates(directory=str(PACKAGE_DIR / "templates"))
    auth = config.options.auth
    policy = AccessPolicy(settings.token, secret, list(host_origins), secure_cookies=secure_cookies(settings))
    oidc = oidc_sign_in(auth, storage, secret, policy.secure_cookies, clock) if auth.mode == "oidc" else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await storage.start()  # applies the migrations
        async with anyio.create_task_group() as task_group:  # where the workspaces' connections live
            host.task_group = task_group
            await journal.start(task_group)
            await audit.start(task_group)  # its writer; imports the audit file of 0.1 once
            task_group.start_soon(history.run)  # writes each person's calls, off the calls' path
            try:
                yield
            finally:
                journal.stopping = True  # calls waiting on a person stay recorded for the next replica
                await host.close()
                await journal.close()
                await history.stop()
                await audit.close()  # after the tabs: their last rows are stored too
                await storage.close()
                task_group.cancel_scope.cancel()

    app = FastAPI(
        title="webhost", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None
    )
    app.state.host = host

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/", response_class=HTMLResponse)
    async def index(request: Request) -> Any:
        return templates.TemplateResponse(
            request,
            "index.html",
            {"version": __version__, "static_url": "/static", "auth_mode": auth.mode},
        )

    if oidc is not None:
        add_sign_in_routes(app, oidc, policy, host.directory)

    @app.get("/api/servers")
    async def servers() -> JSONResponse:
        """For scripts: the configured servers (names and transports only, never secrets)."""
        return JSONResponse({"servers": [{"name": s.name, "transport": s.transport} for s in config.servers.values()]})

    @app.get("/api/audit")
    async def audit_export(
        request: Request, format: str = "json", server: str | None = None, user: str | None = None
    ) -> Response:
        """Export the audit log (JSON, or CSV with ?format=csv): the caller's own rows, an admin's everyone's
        (`?user=ID` narrows to one person); a member asking for another is a 403, an unreadable database a 503."""
        try:
            owner = visible_user(person_of(request.scope), user)
        except PolicyRefused as exc:
            return JSONResponse({"error": exc.message}, status_code=403)
        people = host.input_redactor(None if owner is None else {owner})
        try:
            if format == "csv":
                return PlainTextResponse(
                    people.text(redactor.text(await host.audit.export_csv(server=server, user=owner))),
                    media_type="text/csv",
                    headers={"content-disposition": "attachment; filename=webhost-audit.csv"},
                )
            return JSONResponse(
                {
                    "entries": people.value(
                        redactor.value(await host.audit.entries(server=server, user=owner, limit=10_000))
                    )
                }
            )
        except AuditUnavailable as exc:
            return JSONResponse({"error": exc.message}, status_code=503)

    @app.get("/api/health/loop")
    async def loop_health(request: Request, seconds: float = 5.0) -> JSONResponse:
        """Admins only: probe the event loop's lag for `seconds` (bench/sessions.py reads it under load)."""
        if not person_of(request.scope).is_admin:
            return JSONResponse({"error": "only an admin may measure the event loop"}, status_code=403)
        return JSONResponse(await loophealth.measure(seconds))

    assert host.deps.oauth is not None
    app.add_api_route(OAUTH_CALLBACK_PATH, callback_endpoint(host.deps.oauth.sign_ins, audit), methods=["GET"])

    @app.websocket("/ws")
    async def websocket(ws: WebSocket) -> None:
        person, sign_in = person_of(ws.scope), sign_in_of(ws.scope)
        origin = policy.origin_for(ws.headers.get("host"))
        await serve_websocket(
            ws,
            lambda notify: host.new_session(person, notify, sign_in, origin),
            host.end_session,
            host.tabs,
            config.options.limits,
        )

    app.mount("/static", StaticFiles(directory=str(PACKAGE_DIR / "static")), name="static")
    proxy = (
        TrustedProxies(auth.trusted_proxies, auth.user_header or "", auth.groups_header, auth.admins, auth.admin_groups)
        if auth.mode == "proxy"
        else None
    )
    # In oidc and proxy mode the token is an admin credential for scripts only when WEBHOST_TOKEN set it.
    masked = RedactWebSocket(app, redactor, lambda scope: host.input_redactor({person_of(scope).id}))
    gate = AuthGate(
        masked,
        policy,
        oidc=oidc,
        proxy=proxy,
        admin_token=auth.mode == "token" or settings.token_from_env,
        seen=SeenPeople(storage, clock=clock).seen,
    )
    return HostApp(SecurityHeaders(gate, page_csp(settings)), host.tabs, journal)


def oidc_sign_in(
    auth: AuthOptions, storage: Storage, secret: bytes, secure: bool, clock: Callable[[], float] = time.time
) -> OidcSignIn:
    client = OidcClient(auth.issuer or "", auth.client_id or "", auth.client_secret, auth.scopes, clock=clock)
    settings = OidcSettings(
        user_claim=auth.user_claim,
        name_claim=auth.name_claim,
        groups_claim=auth.groups_claim,
        admins=auth.admins,
        admin_groups=auth.admin_groups,
        session_hours=auth.session_hours,
    )
    return OidcSignIn(client, storage, derive_key(secret, "web-session/v1"), settings, secure_cookies=secure)


def add_sign_in_routes(app: FastAPI, oidc: OidcSignIn, policy: AccessPolicy, directory: SessionDirectory) -> None:
    """oidc mode's pages (the gate lets them through without a session; contract §5, docs/api.md)."""

    @app.get(SIGN_IN_PATH)
    async def sign_in(request: Request, next: str = "/") -> Response:
        return await oidc.begin(policy.origin_for(request.headers.get("host")), same_origin_path(next))

    @app.get(CALLBACK_PATH)
    async def callback(request: Request) -> Response:
        return await oidc.finish(dict(request.query_params), request.cookies.get(STATE_COOKIE))

    @app.post(SIGN_OUT_PATH)
    async def sign_out(request: Request) -> Response:
        cookie = request.cookies.get(SESSION_COOKIE)
        if cookie:
            directory.end_sign_in(sign_in_key(cookie), "signed out")
        return await oidc.sign_out(policy.origin_for(request.headers.get("host")), cookie)

    @app.get(SIGNED_OUT_PATH)
    async def signed_out() -> Response:
        return signed_out_page()


def secure_cookies(settings: Settings) -> bool:
    """The session cookie is Secure when asked, and whenever the page is served over https (a public
    origin on https, or a TLS deployment's https sandbox origins)."""
    return (
        settings.secure_cookies
        or settings.sandbox_scheme == "https"
        or any(origin.lower().startswith("https://") for origin in settings.public_origins)
    )


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


def page_csp(settings: Settings) -> str:
    """The host page's own policy: no inline script, frames only from the sandbox origins."""
    port = settings.sandbox_port_for_browsers()
    default_port = {"http": 80, "https": 443}.get(settings.sandbox_scheme)
    suffix = "" if port == default_port else f":{port}"
    sandbox = f"{settings.sandbox_scheme}://*.{settings.sandbox_domain}{suffix}"
    return "; ".join(
        [
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
        ]
    )


class RedactWebSocket:
    """The last step before the browser: every WebSocket frame webhost sends has the configuration's
    secret values masked (`webhost.redact`), whichever part of webhost built it (server state, errors,
    activity entries, logs, results)."""

    def __init__(
        self, app: ASGIApp, redactor: Redactor, person_redactor: Callable[[Scope], Redactor] = lambda scope: Redactor()
    ) -> None:
        self.app = app
        self.redactor = redactor
        self.person_redactor = person_redactor  # the input values of the socket's person, as they are now

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return

        def redact_value(value: object) -> object:
            masked = self.redactor.value(value) if self.redactor else value
            person = self.person_redactor(scope)
            return person.value(masked) if person else masked

        scope = {**scope, REDACT_SCOPE_KEY: redact_value}  # for a response in parts (webhost/ws.py)

        async def send_redacted(message: Message) -> None:
            if message["type"] == "websocket.send" and isinstance(message.get("text"), str):
                text = self.redactor.json_text(message["text"]) if self.redactor else message["text"]
                person = self.person_redactor(scope)
                message = {**message, "text": person.json_text(text) if person else text}
            await send(message)

        await self.app(scope, receive, send_redacted)


class SecurityHeaders:
    """Adds the page policy and anti-framing headers to every HTTP response of the host app (the
    gate's refusals and sign-in pages too)."""

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
            if message["type"] == "http.response.start":  # a header the response set itself wins
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in self.headers if name not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
