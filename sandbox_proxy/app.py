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


def render_proxy_page(template: Template, config: ProxyConfig, host_origins: list[str], *, mode: str = "cold") -> str:
    """The proxy document: static markup plus escaped values for proxy.js (no inline script)."""
    return template.substitute(
        host_origins=html.escape(" ".join(host_origins), quote=True),
        allow=html.escape(config.allow, quote=True),
        sandbox=html.escape(config.sandbox, quote=True),
        mode=mode,
    )


def proxy_csp(config: ProxyConfig, host_origins: list[str]) -> str:
    """The App's policy from the token, with frame-ancestors set here (never taken from the token)."""
    return strip_directive(config.csp, "frame-ancestors") + "; " + frame_ancestors_directive(host_origins)


# The warm proxy document (docs/security.md "Warm proxy frames"): loaded before any App is chosen, so it
# carries no App's policy. It may run only its own script and frame only its own origin (the App's
# document, /app, which brings the App's policy in its own header); nothing else loads in it.
WARM_CSP = "default-src 'none'; script-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'"


def warm_csp(host_origins: list[str]) -> str:
    return WARM_CSP + "; " + frame_ancestors_directive(host_origins)


def app_document_csp(config: ProxyConfig, host_origins: list[str]) -> str:
    """The App document's policy in a warm frame: the token's, framed by the proxy on this origin."""
    return (
        strip_directive(config.csp, "frame-ancestors")
        + "; "
        + frame_ancestors_directive(host_origins).replace("frame-ancestors ", "frame-ancestors 'self' ", 1)
    )


def create_sandbox_app(
    *,
    secret: bytes,
    domain: str,
    host_origins: list[str],
    clock: Callable[[], float] = time.time,
) -> ASGIApp:
    """The sandbox listener for every `<label>.<domain>` origin.

    `GET /proxy?p=<token>` serves the proxy page when the token verifies and names the label of the
    request's Host; `GET /warm?p=<token>` the same proxy under the fixed `WARM_CSP` (a warm frame, kept
    ready before the click), and `GET /app?p=<token>` the empty App document a warm proxy writes the App
    into, under the token's policy; `GET /proxy.js` the relay script (an ES module) and
    `GET /constants.js` what it imports; `GET /healthz` a liveness answer; all else 404.
    `host_origins` are the host page origins this deployment allows to embed Apps.
    """
    configured = [o.lower().rstrip("/") for o in host_origins]
    frame_ancestors_directive(configured)  # validate early: a typo should fail at start-up
    page_template = Template((STATIC_DIR / "proxy.html").read_text(encoding="utf-8"))
    app_template = Template((STATIC_DIR / "app.html").read_text(encoding="utf-8"))
    scripts = {name: (STATIC_DIR / name).read_bytes() for name in ("proxy.js", "constants.js")}

    def verified(request: Request) -> tuple[ProxyConfig, list[str]] | Response:
        """The token's config and the host origins it allows here, or the refusal to send."""
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
        return config, origins

    async def proxy_page(request: Request) -> Response:
        checked = verified(request)
        if isinstance(checked, Response):
            return checked
        config, origins = checked
        warm = request.url.path == "/warm"
        csp = warm_csp(origins) if warm else proxy_csp(config, origins)
        body = render_proxy_page(page_template, config, origins, mode="warm" if warm else "cold")
        return Response(
            body, media_type="text/html; charset=utf-8", headers={**COMMON_HEADERS, "Content-Security-Policy": csp}
        )

    async def app_document(request: Request) -> Response:
        checked = verified(request)
        if isinstance(checked, Response):
            return checked
        config, origins = checked
        headers = {**COMMON_HEADERS, "Content-Security-Policy": app_document_csp(config, origins)}
        body = app_template.substitute(
            allow=html.escape(config.allow, quote=True), sandbox=html.escape(config.sandbox, quote=True)
        )
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
            Route("/warm", proxy_page, methods=["GET"]),
            Route("/app", app_document, methods=["GET"]),
            Route("/proxy.js", proxy_script, methods=["GET"]),
            Route("/constants.js", proxy_script, methods=["GET"]),
            Route("/healthz", healthz, methods=["GET"]),
        ],
        exception_handlers={404: not_found, 405: not_allowed},
    )
    app.router.redirect_slashes = False  # "/proxy/" is not the proxy: plain 404
    return app
