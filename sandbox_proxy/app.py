"""The sandbox proxy's ASGI app: serves the proxy page (with the App's CSP header) and its script only."""

from __future__ import annotations

import html
import logging
import time
from collections.abc import Callable
from pathlib import Path
from string import Template

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from webhost.apps.csp import frame_ancestors_directive, strip_directive
from webhost.apps.origins import label_from_host
from webhost.apps.proxy_token import ProxyConfig, ProxyTokenError, verify_proxy_config

log = logging.getLogger("webhost.sandbox")

STATIC_DIR = Path(__file__).parent / "static"

# Headers on every response. No X-Frame-Options anywhere: framing is governed by frame-ancestors.
COMMON_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    # The App inherits this; APIs with referrer allow-lists see its stable origin, never the token.
    "Referrer-Policy": "strict-origin",
}
# Error pages, the script and healthz: nothing may run in, frame or embed them cross-origin.
LOCKED_CSP = "default-src 'none'; frame-ancestors 'none'"
LOCKED_HEADERS = {
    **COMMON_HEADERS,
    "Content-Security-Policy": LOCKED_CSP,
    "Cross-Origin-Resource-Policy": "same-origin",
}


def _error(status: int, text: str) -> Response:
    return PlainTextResponse(text, status_code=status, headers=LOCKED_HEADERS)


def effective_host_origins(token_origins: tuple[str, ...], configured: list[str]) -> list[str]:
    """The origins that may embed this page: the token's, limited to the listener's configured ones."""
    if not configured:
        return list(token_origins)
    allowed = {o.lower().rstrip("/") for o in configured}
    return [o for o in token_origins if o in allowed]


def render_proxy_page(template: Template, config: ProxyConfig, host_origins: list[str]) -> str:
    """The proxy document: static markup plus escaped values for proxy.js (no inline script)."""
    return template.substitute(
        host_origins=html.escape(" ".join(host_origins), quote=True),
        allow=html.escape(config.allow, quote=True),
        sandbox=html.escape(config.sandbox, quote=True),
    )


def proxy_csp(config: ProxyConfig, host_origins: list[str]) -> str:
    """The App's policy from the token, with frame-ancestors set here (never taken from the token)."""
    return strip_directive(config.csp, "frame-ancestors") + "; " + frame_ancestors_directive(host_origins)


def create_sandbox_app(
    *,
    secret: bytes,
    domain: str,
    host_origins: list[str],
    clock: Callable[[], float] = time.time,
) -> ASGIApp:
    """The sandbox listener for every `<label>.<domain>` origin.

    `GET /proxy?p=<token>` serves the proxy page when the token verifies and names the label of the
    request's Host; `GET /proxy.js` the relay script (an ES module) and `GET /constants.js` what it
    imports; `GET /healthz` a liveness answer; all else 404.
    `host_origins` are the host page origins this deployment allows to embed Apps.
    """
    configured = [o.lower().rstrip("/") for o in host_origins]
    frame_ancestors_directive(configured)  # validate early: a typo should fail at start-up
    page_template = Template((STATIC_DIR / "proxy.html").read_text(encoding="utf-8"))
    scripts = {name: (STATIC_DIR / name).read_bytes() for name in ("proxy.js", "constants.js")}

    async def proxy_page(request: Request) -> Response:
        label = label_from_host(request.headers.get("host"), domain)
        if label is None:
            return _error(404, "Not Found")
        token = request.query_params.get("p", "")
        try:
            config = verify_proxy_config(secret, token, now=clock())
        except ProxyTokenError as exc:
            log.info("sandbox proxy refused on %s: %s", label, exc)
            return _error(403, "Forbidden: invalid or expired proxy token")
        if config.label != label:
            log.warning("sandbox proxy token for %s presented on %s", config.label, label)
            return _error(403, "Forbidden: token is for another origin")
        origins = effective_host_origins(config.host_origins, configured)
        if not origins:
            return _error(403, "Forbidden: no allowed host origin")
        headers = {**COMMON_HEADERS, "Content-Security-Policy": proxy_csp(config, origins)}
        body = render_proxy_page(page_template, config, origins)
        return Response(body, media_type="text/html; charset=utf-8", headers=headers)

    async def proxy_script(request: Request) -> Response:
        # Loaded only by the proxy page on the same origin, so CORP same-origin costs nothing.
        body = scripts[request.url.path.lstrip("/")]
        return Response(body, media_type="text/javascript; charset=utf-8", headers=LOCKED_HEADERS)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"}, headers=LOCKED_HEADERS)

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(404, "Not Found")

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return _error(405, "Method Not Allowed")

    app = Starlette(
        routes=[
            Route("/proxy", proxy_page, methods=["GET"]),
            Route("/proxy.js", proxy_script, methods=["GET"]),
            Route("/constants.js", proxy_script, methods=["GET"]),
            Route("/healthz", healthz, methods=["GET"]),
        ],
        exception_handlers={404: not_found, 405: not_allowed},
    )
    app.router.redirect_slashes = False  # "/proxy/" is not the proxy: plain 404
    return app
