"""App instances: load a `ui://` resource from its own server, describe the sandboxed frame, own the open frames.

An instance is bound to one server (and, for app-rendered elicitation, to one input request);
every request that comes out of its frame is judged against that binding in the backend.
`AppInstances` is the one owner of a session's open frames: opening, looking up, counting
each frame's requests in flight, and closing (whatever the order of close and answer).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

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
from webhost.apps.prefetch import AppPrefetch
from webhost.apps.proxy_token import DEFAULT_INNER_SANDBOX, app_document_url, issue_proxy_token, proxy_url, warm_url
from webhost.audit import AuditLog
from webhost.catalogue import Catalogue
from webhost.config import WebhostOptions
from webhost.errors import PolicyRefused, WebhostError
from webhost.people import Person
from webhost.upstream.connection import Connection

logger = logging.getLogger(__name__)

APP_RESOURCE_ERROR = -32004
COMPAT_SCRIPT_SOURCES = {"eval": "'unsafe-eval'", "wasm": "'wasm-unsafe-eval'"}
MAX_IN_FLIGHT = 32  # requests one app frame may have running at once
# The ui/message entries one frame keeps (its Conversation view), newest last: at most this many, and at most
# this many bytes of JSON together, so a frame holds a bounded amount of memory whatever it sends.
MAX_MESSAGES = 200
MAX_MESSAGES_BYTES = 1024 * 1024
Activity = Callable[..., None]


class AppLoadError(WebhostError):
    code = APP_RESOURCE_ERROR


@dataclass(frozen=True)
class Sandbox:
    """Where app frames are served: the deployment secret and the sandbox origin's parts."""

    secret: bytes
    domain: str
    port: int
    scheme: str
    host_origins: tuple[str, ...]

    def label(self, server: str) -> str:
        """The server's DNS label: from its configured name and the deployment secret only, so editing
        its command line or URL (a version pin, say) keeps its origin and its apps' storage."""
        return sandbox_label(self.secret, server)

    def origin(self, server: str) -> str:
        return sandbox_origin(self.label(server), self.domain, self.port, self.scheme)


@dataclass(frozen=True)
class ChatBinding:
    """An app opened for a tool call the model made: its conversation and that call (the app's instance id)."""

    conversation_id: str
    call_id: str


@dataclass(eq=False)
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
    # For elicitation-bound apps: tools whose call asked (or may have asked); the app never re-runs them.
    origin_tools: frozenset[str] = frozenset()
    messages: list[dict[str, Any]] = field(default_factory=list)
    message_sizes: list[int] = field(default_factory=list)  # each kept message's JSON size, in bytes
    model_context: dict[str, Any] | None = None
    chat: ChatBinding | None = None  # opened in a conversation: ui/message and model context go there
    created: float = field(default_factory=time.time)
    closed: bool = False
    in_flight: int = 0

    def keep_message(self, entry: dict[str, Any], size: int) -> None:
        """Keep one ui/message (`size`: its JSON in bytes, at most MAX_MESSAGES_BYTES); the oldest go first when
        the frame is over its count or its bytes. New lists each time: a listing being sent keeps its own."""
        messages, sizes = [*self.messages, entry], [*self.message_sizes, size]
        total = sum(sizes)
        while len(messages) > MAX_MESSAGES or total > MAX_MESSAGES_BYTES:
            messages.pop(0)
            total -= sizes.pop(0)
        self.messages, self.message_sizes = messages, sizes

    @asynccontextmanager
    async def request_slot(self) -> AsyncIterator[None]:
        """Count one request from this frame while it runs; refuse beyond the cap. Safe if the frame closes."""
        if self.in_flight >= MAX_IN_FLIGHT:
            raise PolicyRefused("too many requests in flight from this app", {"limit": MAX_IN_FLIGHT})
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1


@dataclass(frozen=True)
class _Loaded:
    """An App resource read and judged: everything an open signs and describes."""

    resource: Any
    csp: CspPolicy
    header: str
    requested: set[str]
    granted: set[str]
    origin: str
    token: str
    key: str


class AppInstances:
    def __init__(
        self,
        *,
        session_id: str,
        person: Person,
        sandbox: Sandbox,
        options: WebhostOptions,
        audit: AuditLog,
        catalogue: Catalogue,
        activity: Activity,
        on_close: Callable[[AppInstance], None],
        prefetch: AppPrefetch | None = None,
    ) -> None:
        self._session_id = session_id
        self._person = person
        self._prefetch = prefetch
        self._sandbox = sandbox
        self._options = options
        self._audit = audit
        self._catalogue = catalogue
        self._activity = activity
        self._on_close = on_close
        self._open: dict[str, AppInstance] = {}

    def get(self, frame_id: str) -> AppInstance | None:
        return self._open.get(frame_id)

    def close(self, frame_id: str, *, reason: str) -> None:
        """Close one frame (idempotent): its approvals are released, the close is audited."""
        instance = self._open.pop(frame_id, None)
        if instance is None:
            return
        instance.closed = True
        self._on_close(instance)
        # Not waited for: closing always completes (a failure is logged); the frame can do nothing more.
        self._audit.note(
            "app.close",
            person=self._person,
            session=self._session_id,
            server=instance.server,
            frame=frame_id,
            summary=reason,
        )

    def close_all(self, *, reason: str) -> None:
        for frame_id in list(self._open):
            self.close(frame_id, reason=reason)

    async def _read_app_resource(
        self, connection: Connection, uri: str, *, summary: str | None = None
    ) -> tuple[dict[str, Any], Any]:
        if not uri.startswith("ui://"):
            raise AppLoadError(f"{uri!r} is not a ui:// resource", {"server": connection.name, "uri": uri})
        result = await connection.client.read_resource(uri, summary=summary)
        return result, await self._catalogue.resource_entry(connection, uri)

    async def warm(self, connection: Connection, uri: str) -> bool:
        """Read an app's resource ahead of its `open` (kept in the workspace's `AppPrefetch` for one open)."""
        if self._prefetch is None or not uri.startswith("ui://"):
            return False
        return await self._prefetch.warm(
            connection.name, uri, lambda: self._read_app_resource(connection, uri, summary=f"{uri} (read ahead)")
        )

    def warm_frame(self, server: str) -> dict[str, str]:
        """Where the page may load a warm proxy frame for `server`'s origin ahead of an open (no App in it yet).

        Its token grants nothing an App could use: no permissions, and a policy under which the proxy script
        cannot even run if the URL is put to `/proxy`; the sandbox serves `/warm` under its own fixed policy.
        """
        origin = self._sandbox.origin(server)
        token = issue_proxy_token(
            self._sandbox.secret,
            label=self._sandbox.label(server),
            csp="default-src 'none'",
            host_origins=list(self._sandbox.host_origins),
        )
        return {"origin": origin, "url": warm_url(origin, token)}

    async def prepared(self, connection: Connection, uri: str, *, have: str | None = None) -> dict[str, Any] | None:
        """What the page may load an App from before its click (docs/security.md "Prepared Apps"), or None.

        Only an App that opens warm anyway (no permission granted, the same-origin inner sandbox) and whose
        read is kept: its token is the one `open` would sign, and `open` serves the prepared frame only
        when its own read of the resource gives the same key (same HTML, policy, permissions and sandbox).
        """
        if self._prefetch is None:
            return None
        kept = self._prefetch.peek(connection.name, uri)
        if kept is None:
            return None
        try:
            loaded = await self._load(connection, uri, kept)
        except AppLoadError:
            return None
        if loaded.granted:
            return None
        if have is not None and have == loaded.key:
            return {"key": loaded.key, "unchanged": True}  # the page holds this App prepared already
        return {
            "key": loaded.key,
            "server": connection.name,
            "resourceUri": uri,
            "origin": loaded.origin,
            "appUrl": app_document_url(loaded.origin, loaded.token),
            "sandbox": DEFAULT_INNER_SANDBOX,
            "html": loaded.resource.html,
        }

    async def _load(self, connection: Connection, uri: str, kept: tuple[dict[str, Any], Any] | None) -> _Loaded:
        read_result, listing_entry = kept if kept is not None else await self._read_app_resource(connection, uri)
        try:
            resource = extract_app_html(read_result, uri, listing_entry)
        except AppResourceError as exc:
            raise AppLoadError(exc.message, {"server": connection.name, "uri": uri}) from None
        host_origins = list(self._sandbox.host_origins)
        policy = self._options.policy(connection.name)
        csp = build_policy(resource.csp_meta, frame_ancestors=host_origins)
        header = _with_compat(csp.header, policy.compat, csp.effective.get("resourceDomains"))
        requested = requested_permissions(resource.permissions_meta)
        approved = set(policy.permissions) | await self._audit.granted_permissions(self._person.id, connection.name)
        granted = grant(requested, approved)
        token = issue_proxy_token(
            self._sandbox.secret,
            label=self._sandbox.label(connection.name),
            csp=header,
            allow=allow_attribute(granted),
            sandbox=DEFAULT_INNER_SANDBOX,
            host_origins=host_origins,
        )
        digest = hashlib.sha256()
        for part in (uri, resource.html, header, allow_attribute(granted), DEFAULT_INNER_SANDBOX):
            digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
        return _Loaded(
            resource,
            csp,
            header,
            requested,
            granted,
            self._sandbox.origin(connection.name),
            token,
            digest.hexdigest()[:32],
        )

    async def open(
        self,
        connection: Connection,
        uri: str,
        *,
        purpose: Literal["tool", "elicitation"],
        tool: dict[str, Any] | None = None,
        input_request_id: str | None = None,
        origin_tools: frozenset[str] = frozenset(),
        prepared: str | None = None,
    ) -> tuple[AppInstance, dict[str, Any]]:
        """Load the app and return its instance plus everything the page needs to build the frame.

        `prepared`: the key of an App the page loaded ahead (`prepared`); when this read gives the same
        key the descriptor says `"prepared": true` and leaves the HTML out (the page has it).
        """
        kept = await self._prefetch.take(connection.name, uri) if self._prefetch is not None else None
        loaded = await self._load(connection, uri, kept)
        resource, csp, header, requested, granted = (
            loaded.resource,
            loaded.csp,
            loaded.header,
            loaded.requested,
            loaded.granted,
        )
        origin, token = loaded.origin, loaded.token
        instance = AppInstance(
            frame_id="f-" + secrets.token_urlsafe(10),
            server=connection.name,
            resource_uri=uri,
            purpose=purpose,
            origin=origin,
            csp=csp,
            requested_permissions=requested,
            granted_permissions=granted,
            tool=tool,
            input_request_id=input_request_id,
            origin_tools=origin_tools,
        )
        # Audited before the frame exists: an app that cannot be audited is not opened.
        await self._audit.record(
            "app.open",
            person=self._person,
            session=self._session_id,
            server=connection.name,
            frame=instance.frame_id,
            summary=f"{uri} ({'default CSP' if csp.is_default else 'CSP from metadata'})",
            detail={
                "resourceUri": uri,
                "purpose": purpose,
                "csp": header,
                "effectiveCsp": csp.effective,
                "rejected": csp.rejected,
                "requestedPermissions": sorted(requested),
                "grantedPermissions": sorted(granted),
                "origin": origin,
                "warnings": resource.warnings,
            },
        )
        self._open[instance.frame_id] = instance
        for rejected in csp.rejected:
            self._activity(
                connection.name,
                direction="local",
                kind="error",
                method="csp",
                summary=f"dropped CSP source {rejected.get('value')!r} from {rejected.get('directive')}: "
                f"{rejected.get('reason')}",
            )
        descriptor = {
            "frameId": instance.frame_id,
            "server": connection.name,
            "resourceUri": uri,
            "purpose": purpose,
            "origin": origin,
            "proxyUrl": proxy_url(origin, token),
            "appUrl": app_document_url(origin, token),
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
            "toolInfo": {"tool": tool} if tool else None,
        }
        if prepared is not None and prepared == loaded.key and not granted:
            descriptor["html"] = ""
            descriptor["prepared"] = True
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
        "downloadFile": {},  # after the person's consent (an approval of kind "download")
    }
    if "tools" in server_caps:
        caps["serverTools"] = {"listChanged": bool((server_caps.get("tools") or {}).get("listChanged"))}
    if "resources" in server_caps:
        caps["serverResources"] = {"listChanged": bool((server_caps.get("resources") or {}).get("listChanged"))}
    if elicitation:
        caps["elicitation"] = {}  # only on frames bound to an input request (SEP-3118)
    return caps


def _with_compat(header: str, compat: frozenset[str], resource_domains: list[str] | None = None) -> str:
    """Add admin-approved compatibility sources (the flags come from the config, never from server data).

    - `eval` / `wasm`: `'unsafe-eval'` / `'wasm-unsafe-eval'` in script-src;
    - `workers`: `worker-src 'self' blob:` plus the app's declared (validated) resourceDomains, and
      `blob:` in script-src;
    - `blobWorkers`: `worker-src` also allows `blob:` (a worker built from a Blob, e.g. pdf.js);
    - `dataModules`: `data:` in script-src (a `data:` module script, e.g. the ext-apps server-pdf viewer).
    """
    if not compat:
        return header
    directives = [d.strip() for d in header.split(";") if d.strip()]
    extra = [COMPAT_SCRIPT_SOURCES[flag] for flag in sorted(compat) if flag in COMPAT_SCRIPT_SOURCES]
    workers: list[str] = []
    if "workers" in compat:
        extra.append("blob:")
        workers = ["'self'", "blob:", *(resource_domains or [])]
    if "blobWorkers" in compat:
        workers = workers or ["'self'", "blob:"]
    if "dataModules" in compat:
        extra.append("data:")
    if workers:
        directives.append("worker-src " + " ".join(dict.fromkeys(workers)))
    return "; ".join(d + " " + " ".join(extra) if d.startswith("script-src") and extra else d for d in directives)
