"""The host's routes: the page and its static files, /healthz (liveness, and readiness for a balancer), the
scripts' API, /ws, and the callback remote servers' sign-ins come back to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from webhost import __version__, loophealth
from webhost.access_policy import may_use_server
from webhost.app.readiness import Readiness
from webhost.app.state import HostState
from webhost.audit import AuditLog, AuditUnavailable, visible_user
from webhost.auth import AccessPolicy
from webhost.config import Config
from webhost.errors import PolicyRefused
from webhost.people import person_of, sign_in_of
from webhost.upstream.oauth import CALLBACK_PATH as OAUTH_CALLBACK_PATH
from webhost.upstream.oauth import CLIENT_METADATA_PATH, OAuthDeps, client_metadata_document
from webhost.upstream.oauth_callback import callback_endpoint
from webhost.ws import serve_websocket

PACKAGE_DIR = Path(__file__).resolve().parent.parent


def add_page_routes(app: FastAPI, auth_mode: str, readiness: Readiness, *, chat_first: bool = False) -> None:
    """`/healthz` (and `/healthz?ready=1`) and the page; `chat_first` (a model is configured) makes the chat
    the page's landing view."""
    templates = Jinja2Templates(directory=str(PACKAGE_DIR / "templates"))

    @app.get("/healthz", response_model=None)
    async def healthz(ready: str | None = None) -> dict[str, str] | JSONResponse:
        """Liveness: the process answers. With `?ready=1`, readiness, for a load balancer: 503 while this
        replica can neither audit nor sign anyone in (docs/deploy.md)."""
        if ready is None:
            return {"status": "ok"}
        problem = await readiness.problem()
        if problem is None:
            return {"status": "ready"}
        return JSONResponse({"status": "unavailable", "reason": problem}, status_code=503)

    @app.get("/", response_class=HTMLResponse)
    async def index(request: Request) -> Any:
        return templates.TemplateResponse(
            request,
            "index.html",
            {"version": __version__, "static_url": "/static", "auth_mode": auth_mode, "chat_first": chat_first},
        )


def add_static_files(app: FastAPI) -> None:
    """The page's scripts, styles and icons (mounted last: a mount matches everything under its path)."""
    app.mount("/static", StaticFiles(directory=str(PACKAGE_DIR / "static")), name="static")


def add_api_routes(app: FastAPI, host: HostState, config: Config) -> None:
    """For scripts: the configured servers, the audit log, the event loop's health."""

    @app.get("/api/servers")
    async def servers(request: Request) -> JSONResponse:
        """For scripts: the configured servers the caller may use (names and transports only, never secrets)."""
        groups = person_of(request.scope).groups
        config = host.config  # the running one (`webhost reload` replaces it)
        usable = [s for s in config.servers.values() if may_use_server(config.options.access, groups, s.name)]
        return JSONResponse({"servers": [{"name": s.name, "transport": s.transport} for s in usable]})

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
        try:  # the rows come masked (`AuditLog.mask`)
            if format == "csv":
                return PlainTextResponse(
                    await host.audit.export_csv(server=server, user=owner),
                    media_type="text/csv",
                    headers={"content-disposition": "attachment; filename=webhost-audit.csv"},
                )
            return JSONResponse({"entries": await host.audit.entries(server=server, user=owner, limit=10_000)})
        except AuditUnavailable as exc:
            return JSONResponse({"error": exc.message}, status_code=503)

    @app.get("/api/health/loop")
    async def loop_health(request: Request, seconds: float = 5.0) -> JSONResponse:
        """Admins only: probe the event loop's lag for `seconds` (bench/sessions.py reads it under load)."""
        if not person_of(request.scope).is_admin:
            return JSONResponse({"error": "only an admin may measure the event loop"}, status_code=403)
        return JSONResponse(await loophealth.measure(seconds))


def add_server_sign_in_callback(
    app: FastAPI, oauth: OAuthDeps, audit: AuditLog, public_origin: str | None = None
) -> None:
    """Where remote servers' authorization servers send the person back (contract §6), and webhost's own
    Client ID Metadata Document (SEP-991), which they fetch without a session."""
    app.add_api_route(OAUTH_CALLBACK_PATH, callback_endpoint(oauth.sign_ins, audit), methods=["GET"])

    @app.get(CLIENT_METADATA_PATH)
    async def client_metadata(request: Request) -> JSONResponse:
        origin = public_origin or f"{request.url.scheme}://{request.url.netloc}"
        return JSONResponse(client_metadata_document(origin), headers={"cache-control": "public, max-age=300"})


def add_websocket(app: FastAPI, host: HostState, policy: AccessPolicy, config: Config) -> None:
    """`/ws`: one tab's session, on its person's workspace (docs/api.md)."""

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
