"""The host application, composed: the shared parts, who may come in, the routes, and the layers around them.

Each step is one builder in this package; `create_app` only puts them together, in order. The chat's
store is one of the parts (`HostDeps.conversations`); each person's chat lives with their workspace
(webhost/workspace/chat.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from fastapi import FastAPI
from starlette.types import ASGIApp

from webhost import __version__
from webhost.app.access import add_sign_in_routes, build_access, gate
from webhost.app.middleware import RedactWebSocket, SecurityHeaders, page_csp
from webhost.app.parts import build_parts, lifespan
from webhost.app.routes import (
    add_api_routes,
    add_page_routes,
    add_server_sign_in_callback,
    add_static_files,
    add_websocket,
)
from webhost.app.secret import deployment_secret, load_secret
from webhost.app.server import HostApp, Server
from webhost.app.state import HostState
from webhost.config import Config
from webhost.people import person_of
from webhost.settings import Settings
from webhost.upstream.client_factory import TransportFactory, default_transport

__all__ = ["HostApp", "HostState", "Server", "create_app", "deployment_secret", "load_secret"]


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
    parts = build_parts(settings, config, secret, transport_factory)
    host = HostState(settings=settings, config=config, audit=parts.audit, deps=parts.deps)
    access = build_access(settings, config.options.auth, parts.storage, secret, parts.host_origins, clock)

    app = FastAPI(
        title="webhost",
        version=__version__,
        lifespan=lifespan(parts, host),
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.host = host
    add_page_routes(app, access.auth.mode)
    if access.oidc is not None:
        add_sign_in_routes(app, access.oidc, access.policy, host.directory)
    add_api_routes(app, host, config, parts.redactor)
    assert parts.deps.oauth is not None
    add_server_sign_in_callback(app, parts.deps.oauth, parts.audit, parts.deps.public_origin)
    add_websocket(app, host, access.policy, config)
    add_static_files(app)

    masked = RedactWebSocket(app, parts.redactor, lambda scope: host.input_redactor({person_of(scope).id}))
    guarded = gate(masked, access, settings, parts.storage, clock)
    return HostApp(SecurityHeaders(guarded, page_csp(settings)), host.tabs, parts.journal)
