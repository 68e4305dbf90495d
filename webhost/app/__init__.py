"""The host application, composed: the shared parts, who may come in, the routes, and the layers around them.

Each step is one builder in this package; `create_app` only puts them together, in order. The chat's
store is one of the parts (`HostDeps.conversations`); each person's chat lives with their workspace
(webhost/workspace/chat.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio.to_thread
from anyio.abc import TaskGroup
from fastapi import FastAPI
from starlette.types import ASGIApp

from webhost import __version__
from webhost.app.access import add_sign_in_routes, build_access, gate
from webhost.app.follow import Follow, refresh_tick
from webhost.app.metrics import add_metrics_route
from webhost.app.middleware import SecurityHeaders, page_csp
from webhost.app.parts import build_parts, lifespan
from webhost.app.readiness import Readiness
from webhost.app.reload import Reloader
from webhost.app.routes import (
    add_api_routes,
    add_page_routes,
    add_server_sign_in_callback,
    add_static_files,
    add_websocket,
)
from webhost.app.secret import SecretProblem, deployment_secret, load_secret
from webhost.app.server import HostApp, Server
from webhost.app.state import HostState
from webhost.chat.providers import import_wires
from webhost.config import Config
from webhost.observability.tracing import instrument_app
from webhost.redact import Redactor
from webhost.settings import Settings
from webhost.storage.session_refresh import SessionRefreshes
from webhost.upstream.client_factory import TransportFactory, default_transport

__all__ = ["HostApp", "HostState", "SecretProblem", "Server", "create_app", "deployment_secret", "load_secret"]


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
    parts = build_parts(settings, config, secret, transport_factory, clock)
    host = HostState(settings=settings, config=config, audit=parts.audit, deps=parts.deps)
    access = build_access(settings, config.options.auth, parts.storage, secret, parts.host_origins, clock)

    follow = Follow(
        host,
        record_seen=access.auth.mode == "proxy",
        refresher=access.refresher,
        people=SessionRefreshes(parts.storage) if access.oidc is not None else None,
    )

    apis = [model.api for model in config.options.chat.models]

    async def warm_wires() -> None:  # abandoned, not awaited, if webhost stops before the import is done
        await anyio.to_thread.run_sync(import_wires, apis, abandon_on_cancel=True)

    def background(task_group: TaskGroup) -> None:
        if follow.refresher is not None:  # oidc mode: the people in use are refreshed as their sessions fall due
            task_group.start_soon(follow.run, refresh_tick(follow.refresher.seconds), name="group-refresh")
        if apis:  # after start-up, off its path: a configured model's first answer does not wait the SDK import
            task_group.start_soon(warm_wires, name="import-model-wires")

    app = FastAPI(
        title="webhost",
        version=__version__,
        lifespan=lifespan(parts, host, background),
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.host = host
    add_page_routes(
        app, access.auth.mode, Readiness(parts.storage, parts.audit), chat_first=bool(config.options.chat.models)
    )
    if access.oidc is not None:
        add_sign_in_routes(app, access.oidc, access.policy, host.directory)
    add_api_routes(app, host, config)
    assert parts.deps.oauth is not None
    add_server_sign_in_callback(app, parts.deps.oauth, parts.audit, parts.deps.public_origin)
    add_websocket(app, host, access.policy, config)
    add_metrics_route(app, host)
    add_static_files(app)
    instrument_app(app)  # a span per request, when tracing is on (webhost/observability/tracing.py)

    # The audit export masks the configuration's secrets and the input values of the people it shows.
    # The running configuration's secrets (a reload may add some), the deployment secret and the database password.
    fixed = [value for value in (settings.secret, parts.storage.password) if value]
    masks = [(config, parts.redactor)]

    def configured() -> Redactor:
        if masks[0][0] is not host.config:
            masks[0] = (host.config, host.config.redactor().with_values(fixed))
        return masks[0][1]

    parts.audit.mask = lambda user: configured().with_values(
        host.input_redactor(None if user is None else {user}).values
    )
    guarded = gate(app, access, settings, parts.people, follow.seen)
    reloader = Reloader(settings.config, follow)
    return HostApp(SecurityHeaders(guarded, page_csp(settings)), host.tabs, parts.journal, reload=reloader.reload)
