"""What an app may do: every request out of an app frame is judged here, in the backend, and audited.

The frame's server is the instance's binding, never a value from the request; a tool whose
visibility lacks "app" is refused; the per-server approval policy (allow, ask, deny) decides the
rest; links open only for http(s) and only after consent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from webhost.approvals import ApprovalBroker
from webhost.apps.instances import AppInstance
from webhost.apps.meta import tool_visibility
from webhost.audit import AuditLog, AuditUnavailable
from webhost.catalogue import Catalogue
from webhost.config import WebhostOptions
from webhost.errors import InvalidParams, PolicyRefused, WebhostError
from webhost.pending import Publish
from webhost.upstream.connection import Connection

MAX_MESSAGES = 200
logger = logging.getLogger(__name__)

Handler = Callable[["AppPolicy", AppInstance, Connection, dict[str, Any]], Awaitable[dict[str, Any]]]
LISTINGS = {"resources/list": ("resources", "resources"),
            "resources/templates/list": ("resourceTemplates", "resourceTemplates"),
            "prompts/list": ("prompts", "prompts")}


class AppPolicy:
    """Judges and runs the requests of one session's app frames."""

    def __init__(
        self,
        *,
        session_id: str,
        options: WebhostOptions,
        audit: AuditLog,
        approvals: ApprovalBroker,
        catalogue: Catalogue,
        notify: Publish,
    ) -> None:
        self.session_id = session_id
        self.options = options
        self.audit = audit
        self.approvals = approvals
        self.catalogue = catalogue
        self.notify = notify

    async def handle(
        self, instance: AppInstance, connection: Connection, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        handler = HANDLERS.get(method)
        if handler is None:
            self.audit.record("app.refused", session=self.session_id, server=instance.server,
                              frame=instance.frame_id, decision="refused", summary=f"unsupported method {method}"[:200])
            raise PolicyRefused(f"apps may not call {method!r} through webhost", {"method": method})
        async with instance.request_slot():
            return await handler(self, instance, connection, params)

    def _base(self, instance: AppInstance) -> dict[str, Any]:
        return {"session": self.session_id, "server": instance.server, "frame": instance.frame_id}


async def call_tool(
    policy: AppPolicy, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if not isinstance(name, str) or not name or not isinstance(arguments, dict):
        raise InvalidParams("tools/call needs a tool name and an arguments object")
    audit = policy.audit
    base = policy._base(instance)
    tool = await policy.catalogue.tool(connection, name)
    if tool is None:
        audit.record("app.tools/call", **base, decision="refused", summary=f"{name}: no such tool on this server",
                     detail={"tool": name})
        raise PolicyRefused(f"{instance.server} has no tool named {name!r}", {"tool": name})
    if "app" not in tool_visibility(tool.get("_meta")):
        audit.record("app.tools/call", **base, decision="refused", summary=f"{name}: not visible to apps",
                     detail={"tool": name, "visibility": tool_visibility(tool.get("_meta"))})
        raise PolicyRefused(f"tool {name!r} is not callable by apps (visibility lacks \"app\")", {"tool": name})
    if instance.purpose == "elicitation" and name in instance.origin_tools:
        audit.record("app.tools/call", **base, decision="refused", summary=f"{name}: an app answering an input "
                     "request may not re-run the operation that asked", detail={"tool": name})
        raise PolicyRefused("an app bound to an input request cannot retry the server's operation", {"tool": name})
    decision = policy.options.policy(instance.server).decision_for(name)
    if decision == "ask":
        answer, remembered = await policy.approvals.ask(
            instance.server, "tool-call", f"The app wants to call {name}",
            {"tool": name, "arguments": arguments, "resourceUri": instance.resource_uri},
            frame=instance.frame_id, subject=name)
        decision = answer
        if not remembered:
            audit.record("approval", **base, decision=answer, summary=f"tools/call {name}")
    if decision == "deny":
        audit.record("app.tools/call", **base, decision="denied", summary=name, detail={"arguments": arguments})
        raise PolicyRefused(f"calling {name!r} from this app was denied", {"tool": name})
    meta = params.get("_meta")
    progress_token = meta.get("progressToken") if isinstance(meta, dict) else None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if progress_token is not None:
            policy.notify("apps/progress", {"frameId": instance.frame_id, "progressToken": progress_token,
                                            "progress": progress, "total": total, "message": message})

    # The intent is written before the call: a call that cannot be audited is refused (AuditUnavailable).
    audit.record("app.tools/call.intent", **base, decision="allowed", summary=name, detail={"arguments": arguments})
    started = time.monotonic()
    try:
        result = await connection.call_tool(name, arguments, on_progress=on_progress, summary=f"{name} (from app)",
                                            data={"app": instance.frame_id})
    except WebhostError as exc:
        _record_outcome(audit, "app.tools/call", **base, decision="allowed", summary=f"{name}: failed: {exc.message}",
                        detail={"arguments": arguments, "ms": round((time.monotonic() - started) * 1000, 1)})
        raise
    _record_outcome(audit, "app.tools/call", **base, decision="allowed", summary=name,
                    detail={"arguments": arguments, "isError": bool(result.get("isError")),
                            "ms": round((time.monotonic() - started) * 1000, 1)})
    return result


def _record_outcome(audit: AuditLog, kind: str, **row: Any) -> None:
    """The outcome of an action that already ran (its intent is on record): a failed write is logged, not
    turned into an error, since the action cannot be undone and its answer would be lost."""
    try:
        audit.record(kind, **row)
    except AuditUnavailable as exc:
        logger.error("%s (outcome of %s not recorded)", exc.message, kind)


async def read_resource(
    policy: AppPolicy, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise InvalidParams("resources/read needs a uri")
    policy.audit.record("app.resources/read", **policy._base(instance), decision="allowed", summary=uri[:300])
    return await connection.read_resource(uri, summary=f"{uri} (from app)")


def _listing(method: str) -> Handler:
    """Read-only listings of the frame's own server, answered as the page would get them."""
    kind, key = LISTINGS[method]

    async def handler(
        policy: AppPolicy, instance: AppInstance, connection: Connection, params: dict[str, Any]
    ) -> dict[str, Any]:
        return {key: await policy.catalogue.listing(connection, kind)}

    return handler


async def open_link(
    policy: AppPolicy, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    url = params.get("url")
    audit = policy.audit
    base = policy._base(instance)
    parts = urlsplit(url) if isinstance(url, str) else None
    scheme = parts.scheme.lower() if parts else ""
    credentials = bool(parts and (parts.username or parts.password))
    if not isinstance(url, str) or scheme not in ("http", "https") or credentials or len(url) > 8192:
        reason = "credentials in the URL" if credentials else f"scheme {scheme or '?'}:"
        audit.record("app.open-link", **base, decision="refused", summary=f"refused {reason}",
                     detail={"scheme": scheme})
        raise PolicyRefused("only http and https links without credentials can be opened", {"scheme": scheme})
    if policy.options.policy(instance.server).open_links == "allow":
        decision = "allow"
    else:
        decision, _ = await policy.approvals.ask(instance.server, "open-link", "The app wants to open a link",
                                                 {"url": url}, frame=instance.frame_id, subject=url)
    audit.record("app.open-link", **base, decision=decision, summary=url[:300])
    if decision != "allow":
        raise PolicyRefused("Link opening denied by user", {"url": url})
    return {"open": True, "url": url}


def _content_list(params: dict[str, Any]) -> list[Any]:
    content = params.get("content")
    if isinstance(content, dict):  # older apps send one block instead of an array
        return [content]
    if isinstance(content, list):
        return content
    return []


async def message(
    policy: AppPolicy, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    entry = {"role": params.get("role") if params.get("role") in ("user", "assistant") else "user",
             "content": _content_list(params)[:50], "ts": time.time()}
    policy.audit.record("app.message", session=policy.session_id, server=instance.server, frame=instance.frame_id,
                        decision="recorded", summary=_text_of(entry["content"])[:300], detail=entry)
    instance.messages = [*instance.messages, entry][-MAX_MESSAGES:]
    policy.notify("apps/conversation", {"frameId": instance.frame_id, "messages": instance.messages,
                                         "modelContext": instance.model_context})
    return {}


async def update_model_context(
    policy: AppPolicy, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    context = {"content": _content_list(params)[:50], "structuredContent": params.get("structuredContent"),
               "ts": time.time()}
    policy.audit.record("app.model-context", session=policy.session_id, server=instance.server,
                        frame=instance.frame_id, decision="recorded",
                        summary=_text_of(context["content"])[:300], detail=context)
    instance.model_context = context  # each update replaces the previous one, as a model would see it
    policy.notify("apps/conversation", {"frameId": instance.frame_id, "messages": instance.messages,
                                         "modelContext": instance.model_context})
    return {}


def _text_of(content: object) -> str:
    if not isinstance(content, list):
        return ""
    return " ".join(str(block.get("text", "")) for block in content if isinstance(block, dict))


HANDLERS: dict[str, Handler] = {
    "tools/call": call_tool,
    "resources/read": read_resource,
    "resources/list": _listing("resources/list"),
    "resources/templates/list": _listing("resources/templates/list"),
    "prompts/list": _listing("prompts/list"),
    "ui/open-link": open_link,
    "ui/message": message,
    "ui/update-model-context": update_model_context,
}
