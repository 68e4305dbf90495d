"""What an app may do: every request out of an app frame is judged here, in the backend, and audited.

The frame's server is the instance's binding, never a value from the request; a tool whose
visibility lacks "app" is refused; the per-server approval policy (allow, ask, deny) decides the
rest; links open only for http(s) and only after consent.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from webhost.apps.instances import AppInstance
from webhost.apps.meta import tool_visibility
from webhost.errors import InvalidParams, PolicyRefused, WebhostError
from webhost.upstream.results import to_wire

if TYPE_CHECKING:
    from webhost.session import BrowserSession
    from webhost.upstream.connection import Connection

MAX_IN_FLIGHT = 32
MAX_MESSAGES = 200

Handler = Callable[["BrowserSession", AppInstance, "Connection", dict[str, Any]], Awaitable[dict[str, Any]]]


async def handle_app_request(
    session: BrowserSession, instance: AppInstance, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    handler = HANDLERS.get(method)
    if handler is None:
        session.host.audit.record("app.refused", session=session.id, server=instance.server,
                                  frame=instance.frame_id, decision="refused",
                                  summary=f"unsupported method {method}"[:200])
        raise PolicyRefused(f"apps may not call {method!r} through webhost", {"method": method})
    connection = session.connections[instance.server]
    in_flight = session.app_in_flight.get(instance.frame_id, 0)
    if in_flight >= MAX_IN_FLIGHT:
        raise PolicyRefused("too many requests in flight from this app", {"limit": MAX_IN_FLIGHT})
    session.app_in_flight[instance.frame_id] = in_flight + 1
    try:
        return await handler(session, instance, connection, params)
    finally:
        session.app_in_flight[instance.frame_id] -= 1


async def _tool_for(session: BrowserSession, connection: Connection, name: str) -> dict[str, Any] | None:
    if name not in connection.tools:
        from webhost.methods.tools import list_tools

        await list_tools(session, {"server": connection.name})
    return connection.tools.get(name)


async def call_tool(
    session: BrowserSession, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if not isinstance(name, str) or not name or not isinstance(arguments, dict):
        raise InvalidParams("tools/call needs a tool name and an arguments object")
    audit = session.host.audit
    base: dict[str, Any] = {"session": session.id, "server": instance.server, "frame": instance.frame_id}
    tool = await _tool_for(session, connection, name)
    if tool is None:
        audit.record("app.tools/call", **base, decision="refused", summary=f"{name}: no such tool on this server",
                     detail={"tool": name})
        raise PolicyRefused(f"{instance.server} has no tool named {name!r}", {"tool": name})
    if "app" not in tool_visibility(tool.get("_meta")):
        audit.record("app.tools/call", **base, decision="refused", summary=f"{name}: not visible to apps",
                     detail={"tool": name, "visibility": tool_visibility(tool.get("_meta"))})
        raise PolicyRefused(f"tool {name!r} is not callable by apps (visibility lacks \"app\")", {"tool": name})
    if instance.purpose == "elicitation" and name == instance.origin_tool:
        audit.record("app.tools/call", **base, decision="refused", summary=f"{name}: an app answering an input "
                     "request may not re-run the operation that asked", detail={"tool": name})
        raise PolicyRefused("an app bound to an input request cannot retry the server's operation", {"tool": name})
    decision = session.host.config.options.policy(instance.server).decision_for(name)
    if decision == "ask":
        answer, remembered = await session.approvals.ask(
            instance.server, "tool-call", f"The app wants to call {name}",
            {"tool": name, "arguments": arguments, "resourceUri": instance.resource_uri},
            frame=instance.frame_id, subject=name)
        decision = answer
        if not remembered:
            audit.record("approval", **base, decision=answer, summary=f"tools/call {name}")
    if decision == "deny":
        audit.record("app.tools/call", **base, decision="denied", summary=name, detail={"arguments": arguments})
        raise PolicyRefused(f"calling {name!r} from this app was denied", {"tool": name})
    progress_token = (params.get("_meta") or {}).get("progressToken") if isinstance(params.get("_meta"), dict) \
        else None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if progress_token is not None:
            session.notify("apps/progress", {"frameId": instance.frame_id, "progressToken": progress_token,
                                             "progress": progress, "total": total, "message": message})

    started = time.monotonic()
    try:
        result = await connection.request(
            "tools/call", f"{name} (from app)",
            lambda c: c.call_tool(name, arguments, progress_callback=on_progress),
            timeout=session.host.config.options.call_timeout, data={"arguments": arguments, "app": instance.frame_id})
    except WebhostError as exc:
        audit.record("app.tools/call", **base, decision="allowed", summary=f"{name}: failed: {exc.message}",
                     detail={"arguments": arguments, "ms": round((time.monotonic() - started) * 1000, 1)})
        raise
    audit.record("app.tools/call", **base, decision="allowed", summary=name,
                 detail={"arguments": arguments, "isError": bool(result.is_error),
                         "ms": round((time.monotonic() - started) * 1000, 1)})
    return to_wire(result)


async def read_resource(
    session: BrowserSession, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise InvalidParams("resources/read needs a uri")
    result = await connection.request("resources/read", f"{uri} (from app)",
                                      lambda c: c.read_resource(uri, cache_mode="bypass"),
                                      timeout=session.host.config.options.call_timeout)
    session.host.audit.record("app.resources/read", session=session.id, server=instance.server,
                              frame=instance.frame_id, decision="allowed", summary=uri[:300])
    return to_wire(result)


def _listing(method: str) -> Handler:
    """Read-only listings of the frame's own server, answered as the page would get them."""

    async def handler(
        session: BrowserSession, instance: AppInstance, connection: Connection, params: dict[str, Any]
    ) -> dict[str, Any]:
        from webhost.methods import prompts, resources

        target = {"resources/list": resources.list_resources, "resources/templates/list": resources.list_templates,
                  "prompts/list": prompts.list_prompts}[method]
        result: dict[str, Any] = await target(session, {"server": instance.server})
        return result

    return handler


async def open_link(
    session: BrowserSession, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    url = params.get("url")
    audit = session.host.audit
    base: dict[str, Any] = {"session": session.id, "server": instance.server, "frame": instance.frame_id}
    parts = urlsplit(url) if isinstance(url, str) else None
    scheme = parts.scheme.lower() if parts else ""
    credentials = bool(parts and (parts.username or parts.password))
    if not isinstance(url, str) or scheme not in ("http", "https") or credentials or len(url) > 8192:
        reason = "credentials in the URL" if credentials else f"scheme {scheme or '?'}:"
        audit.record("app.open-link", **base, decision="refused", summary=f"refused {reason}",
                     detail={"scheme": scheme})
        raise PolicyRefused("only http and https links without credentials can be opened", {"scheme": scheme})
    if session.host.config.options.policy(instance.server).open_links == "allow":
        decision = "allow"
    else:
        decision, _ = await session.approvals.ask(instance.server, "open-link", "The app wants to open a link",
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
    session: BrowserSession, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    entry = {"role": params.get("role") if params.get("role") in ("user", "assistant") else "user",
             "content": _content_list(params)[:50], "ts": time.time()}
    instance.messages = [*instance.messages, entry][-MAX_MESSAGES:]
    session.host.audit.record("app.message", session=session.id, server=instance.server, frame=instance.frame_id,
                              decision="recorded", summary=_text_of(entry["content"])[:300], detail=entry)
    session.notify("apps/conversation", {"frameId": instance.frame_id, "messages": instance.messages,
                                         "modelContext": instance.model_context})
    return {}


async def update_model_context(
    session: BrowserSession, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    context = {"content": _content_list(params)[:50], "structuredContent": params.get("structuredContent"),
               "ts": time.time()}
    instance.model_context = context  # each update replaces the previous one, as a model would see it
    session.host.audit.record("app.model-context", session=session.id, server=instance.server,
                              frame=instance.frame_id, decision="recorded",
                              summary=_text_of(context["content"])[:300], detail=context)
    session.notify("apps/conversation", {"frameId": instance.frame_id, "messages": instance.messages,
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
