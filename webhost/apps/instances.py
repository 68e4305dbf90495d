"""App instances: load a `ui://` resource from its own server and describe the sandboxed frame for it.

An instance is bound to one server (and, for app-rendered elicitation, to one input request);
every request that comes out of its frame is judged against that binding in the backend.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from webhost import __version__
from webhost.apps.csp import CspPolicy, build_policy
from webhost.apps.meta import AppResourceError, extract_app_html
from webhost.apps.origins import sandbox_label, sandbox_origin
from webhost.apps.permissions import (
    allow_attribute,
    effective_permissions,
    grant,
    requested_permissions,
)
from webhost.apps.proxy_token import DEFAULT_INNER_SANDBOX, issue_proxy_token, proxy_url
from webhost.errors import WebhostError
from webhost.upstream.results import to_wire

if TYPE_CHECKING:
    from webhost.session import BrowserSession
    from webhost.upstream.connection import Connection

APP_RESOURCE_ERROR = -32004
COMPAT_SCRIPT_SOURCES = {"eval": "'unsafe-eval'", "wasm": "'wasm-unsafe-eval'"}


class AppLoadError(WebhostError):
    code = APP_RESOURCE_ERROR


@dataclass
class AppInstance:
    frame_id: str
    server: str
    resource_uri: str
    purpose: Literal["tool", "elicitation"]
    origin: str
    csp: CspPolicy
    requested_permissions: set[str]
    granted_permissions: set[str]
    tool: dict[str, Any] | None = None
    input_request_id: str | None = None
    origin_tool: str | None = None  # for elicitation-bound apps: the tool whose call asked (never re-run by the app)
    messages: list[dict[str, Any]] = field(default_factory=list)
    model_context: dict[str, Any] | None = None
    created: float = field(default_factory=time.time)


def server_identity(connection: Connection) -> str:
    config = connection.config
    target = config.url if config.transport != "stdio" else " ".join([config.command or "", *config.args])
    return f"{config.name}\n{config.transport}\n{target}"


def origin_for(session: BrowserSession, connection: Connection) -> str:
    settings = session.host.settings
    label = sandbox_label(session.host.secret, server_identity(connection))
    return sandbox_origin(label, settings.sandbox_domain, settings.sandbox_port_for_browsers(),
                          settings.sandbox_scheme)


async def read_app_resource(session: BrowserSession, connection: Connection, uri: str) -> dict[str, Any]:
    if not uri.startswith("ui://"):
        raise AppLoadError(f"{uri!r} is not a ui:// resource", {"server": connection.name, "uri": uri})
    timeout = session.host.config.options.call_timeout
    result = await connection.request("resources/read", uri, lambda c: c.read_resource(uri, cache_mode="bypass"),
                                      timeout=timeout)
    if uri not in connection.resources:
        try:  # the listing entry is the fallback home of _meta.ui; best effort, bounded
            listing = await connection.request("resources/list", "resources/list",
                                               lambda c: c.list_resources(cache_mode="refresh"), timeout=10)
            connection.resources.update({r.uri: to_wire(r) for r in listing.resources})
        except WebhostError:
            pass
    return to_wire(result)


async def open_instance(
    session: BrowserSession,
    connection: Connection,
    uri: str,
    *,
    purpose: Literal["tool", "elicitation"],
    tool: dict[str, Any] | None = None,
    input_request_id: str | None = None,
) -> tuple[AppInstance, dict[str, Any]]:
    """Load the app and return its instance plus everything the page needs to build the frame."""
    read_result = await read_app_resource(session, connection, uri)
    try:
        resource = extract_app_html(read_result, uri, connection.resources.get(uri))
    except AppResourceError as exc:
        raise AppLoadError(exc.message, {"server": connection.name, "uri": uri}) from None
    settings = session.host.settings
    host_origins = settings.host_origins() + list(session.host.config.options.allowed_origins)
    policy = session.host.config.options.policy(connection.name)
    csp = build_policy(resource.csp_meta, frame_ancestors=host_origins)
    header = _with_compat(csp.header, policy.compat)
    requested = requested_permissions(resource.permissions_meta)
    approved = set(policy.permissions) | session.host.audit.granted_permissions(connection.name)
    granted = grant(requested, approved)
    origin = origin_for(session, connection)
    label = origin.split("//", 1)[1].split(".", 1)[0]
    token = issue_proxy_token(session.host.secret, label=label, csp=header, allow=allow_attribute(granted),
                              sandbox=DEFAULT_INNER_SANDBOX, host_origins=host_origins)
    instance = AppInstance(
        frame_id="f-" + secrets.token_urlsafe(10), server=connection.name, resource_uri=uri, purpose=purpose,
        origin=origin, csp=csp, requested_permissions=requested, granted_permissions=granted, tool=tool,
        input_request_id=input_request_id,
    )
    session.apps[instance.frame_id] = instance
    session.host.audit.record(
        "app.open", session=session.id, server=connection.name, frame=instance.frame_id,
        summary=f"{uri} ({'default CSP' if csp.is_default else 'CSP from metadata'})",
        detail={"resourceUri": uri, "purpose": purpose, "csp": header, "effectiveCsp": csp.effective,
                "rejected": csp.rejected, "requestedPermissions": sorted(requested),
                "grantedPermissions": sorted(granted), "origin": origin, "warnings": resource.warnings},
    )
    for rejected in csp.rejected:
        session.activity(connection.name, direction="local", kind="error", method="csp",
                         summary=f"dropped CSP source {rejected.get('value')!r} from {rejected.get('directive')}: "
                                 f"{rejected.get('reason')}")
    descriptor = {
        "frameId": instance.frame_id,
        "server": connection.name,
        "resourceUri": uri,
        "purpose": purpose,
        "origin": origin,
        "proxyUrl": proxy_url(origin, token),
        "html": resource.html,
        "csp": csp.effective,
        "cspHeader": header,
        "cspDefault": csp.is_default,
        "cspRejected": csp.rejected,
        "requestedPermissions": sorted(requested),
        "permissions": effective_permissions(granted),
        "allow": allow_attribute(granted),
        "sandbox": DEFAULT_INNER_SANDBOX,
        "prefersBorder": resource.prefers_border,
        "warnings": resource.warnings,
        "hostInfo": {"name": "webhost", "version": __version__},
        "hostCapabilities": host_capabilities(connection, csp, granted, elicitation=purpose == "elicitation"),
        "toolInfo": {"tool": _public_tool(tool)} if tool else None,
    }
    return instance, descriptor


def host_capabilities(
    connection: Connection, csp: CspPolicy, granted: set[str], *, elicitation: bool
) -> dict[str, Any]:
    server_caps = connection.info.capabilities or {}
    caps: dict[str, Any] = {
        "openLinks": {},
        "logging": {},
        "sandbox": {"csp": csp.effective, "permissions": effective_permissions(granted)},
        "updateModelContext": {"text": {}, "structuredContent": {}},
        "message": {"text": {}},
    }
    if "tools" in server_caps:
        caps["serverTools"] = {"listChanged": bool((server_caps.get("tools") or {}).get("listChanged"))}
    if "resources" in server_caps:
        caps["serverResources"] = {"listChanged": bool((server_caps.get("resources") or {}).get("listChanged"))}
    if elicitation:
        caps["elicitation"] = {}  # only on frames bound to an input request (SEP-3118)
    return caps


def _public_tool(tool: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in tool.items() if k != "webhost"}


def _with_compat(header: str, compat: frozenset[str]) -> str:
    """Add admin-approved script compatibility sources (never from server data)."""
    if not compat:
        return header
    directives = [d.strip() for d in header.split(";") if d.strip()]
    extra = [COMPAT_SCRIPT_SOURCES[flag] for flag in sorted(compat) if flag in COMPAT_SCRIPT_SOURCES]
    if "workers" in compat:
        extra.append("blob:")
        directives.append("worker-src 'self' blob:")
    return "; ".join(d + " " + " ".join(extra) if d.startswith("script-src") and extra else d for d in directives)
