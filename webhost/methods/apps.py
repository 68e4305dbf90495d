"""MCP Apps: open an app frame, relay the app's requests to the backend policy, close it, audit."""

from __future__ import annotations

from typing import Any

from webhost.apps.instances import AppInstance, ChatBinding
from webhost.apps.meta import tool_resource_uri
from webhost.apps.permissions import PERMISSIONS
from webhost.audit import visible_user
from webhost.errors import InvalidParams
from webhost.session import BrowserSession

from . import _params

CLOSED_BY_PERSON = "closed by the person"  # the page's reason when the person closes an app (apps/panel.js)
EVENT_KINDS = {"violation", "csp-violation", "log", "display-mode", "size", "lifecycle", "error"}


def _instance(session: BrowserSession, params: dict[str, Any]) -> AppInstance:
    frame_id = _params.string(params, "frameId", max_length=100)
    instance = session.apps.get(frame_id)
    if instance is None:
        raise InvalidParams("no such app frame in this session (closed or never opened)", {"frameId": frame_id})
    return instance


async def open_app(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    name = _params.string(params, "tool")
    tool = await session.catalogue.tool(connection, name)
    if tool is None:
        raise InvalidParams(f"{connection.name} has no tool named {name!r}", {"tool": name})
    uri = tool_resource_uri(tool.get("_meta"))
    if uri is None:
        raise InvalidParams(f"tool {name!r} has no app (no ui:// resourceUri)", {"tool": name})
    binding = await _chat_binding(session, params, connection.name, name)
    prepared = params.get("prepared")
    instance, descriptor = await session.apps.open(
        connection,
        uri,
        purpose="tool",
        tool=tool,
        prepared=prepared if isinstance(prepared, str) and len(prepared) <= 64 else None,
    )
    instance.chat = binding
    return descriptor


async def _chat_binding(session: BrowserSession, params: dict[str, Any], server: str, tool: str) -> ChatBinding | None:
    """An app opened for the model's tool call (`conversationId`, `callId`): that call must be the person's, of
    this tool, and no longer waiting for their approval (an app sees nothing before it)."""
    if params.get("conversationId") is None and params.get("callId") is None:
        return None
    conversation_id = _params.string(params, "conversationId", max_length=64)
    call_id = _params.string(params, "callId", max_length=64)
    await session.workspace.chat.check_app_call(conversation_id, call_id, server, tool)
    return ChatBinding(conversation_id, call_id)


async def warm_app(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """Read a tool's app resource ahead of its `apps/open` (webhost/apps/prefetch.py); nothing is opened."""
    connection = session.connection(params)
    name = _params.string(params, "tool")
    tool = await session.catalogue.tool(connection, name)
    uri = tool_resource_uri(tool.get("_meta")) if tool is not None else None
    if uri is None:
        return {"warm": False}
    # The proxy frame can load while the resource is read: the page keeps one ready per server origin.
    frame = session.apps.warm_frame(connection.name)
    warm = await session.apps.warm(connection, uri)
    answer: dict[str, Any] = {"warm": warm, "frame": frame}
    if warm and params.get("prepare") is True:
        have = params.get("have")
        answer["prepared"] = await session.apps.prepared(
            connection, uri, have=have if isinstance(have, str) and len(have) <= 64 else None
        )
    return answer


def _request_id(params: dict[str, Any], *, required: bool) -> str | int | None:
    value = params.get("requestId")
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int) or (isinstance(value, str) and len(value) > 200):
        raise InvalidParams("params.requestId must be the app's request id (a string or an integer)")
    return value


async def app_request(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    instance = _instance(session, params)
    method = _params.string(params, "method", max_length=100)
    inner = _params.optional_object(params, "params")
    return await session.app_policy.handle(
        instance, session.connections[instance.server], method, inner, _request_id(params, required=False)
    )


async def app_cancel(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """The app sent notifications/cancelled for one of its requests: cancel its backend work."""
    instance = _instance(session, params)
    return {"cancelled": session.app_policy.cancel(instance, _request_id(params, required=True) or 0)}


async def app_event(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    instance = _instance(session, params)
    kind = _params.string(params, "kind", max_length=40)
    if kind not in EVENT_KINDS:
        raise InvalidParams(f"unknown app event kind {kind!r}")
    detail = _params.optional_object(params, "detail")
    summary = str(detail.get("summary", kind))[:300]
    if kind in ("violation", "csp-violation", "error"):
        await session.audit.record(
            f"app.{kind}",
            person=session.person,
            session=session.id,
            server=instance.server,
            frame=instance.frame_id,
            decision="blocked" if kind != "error" else None,
            summary=summary,
            detail=detail,
        )
    problem = kind in ("violation", "csp-violation", "error")
    session.activity(
        instance.server,
        direction="in",
        kind="error" if problem else "notification",
        method=f"app/{kind}",
        summary=summary,
        data=detail,
    )
    return {}


async def close_app(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    instance = _instance(session, params)
    reason = str(params.get("reason", "closed"))[:100]
    session.apps.close(instance.frame_id, reason=reason)
    if instance.chat is not None and reason == CLOSED_BY_PERSON:
        # The person closed an app of a conversation: what it gave the model goes too (a reload keeps it).
        await session.workspace.chat.remove_context(instance.chat.conversation_id, instance.chat.call_id)
    return {}


async def conversation(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """The whole conversation of one frame (the `apps/conversation` notifications carry only changes)."""
    instance = _instance(session, params)
    return {"frameId": instance.frame_id, "messages": instance.messages, "modelContext": instance.model_context}


async def set_permission(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    permission = _params.string(params, "permission", max_length=40)
    if permission not in PERMISSIONS:
        raise InvalidParams(f"unknown permission {permission!r}")
    granted = params.get("granted") is True
    await session.audit.set_permission(session.person.id, connection.name, permission, granted)
    await session.audit.record(
        "app.permission",
        person=session.person,
        session=session.id,
        server=connection.name,
        decision="granted" if granted else "revoked",
        summary=permission,
    )
    return {"server": connection.name, "permission": permission, "granted": granted}


async def list_audit(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """The caller's own rows; an admin's view is everyone's (`user` narrows it to one person)."""
    server = params.get("server") if isinstance(params.get("server"), str) else None
    requested = params.get("user") if isinstance(params.get("user"), str) else None
    raw_limit = params.get("limit")
    limit = raw_limit if isinstance(raw_limit, int) else 500
    user = visible_user(session.person, requested)
    return {
        "entries": await session.audit.entries(server=server, user=user, limit=limit),
        "everyone": session.person.is_admin and user is None,
    }


async def respond_approval(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """A tab's own approval (an app's request), or one of its person's chat (any of their tabs may answer). For a
    link, `opened` says whether the page opened it within the person's click on Allow (a popup blocker stops it)."""
    approval_id = _params.string(params, "id", max_length=100)
    chat = session.workspace.chat.approvals
    broker = chat if chat.asks(approval_id) else session.approvals
    broker.respond(approval_id, params.get("decision"), params.get("remember", False), params.get("opened"))
    return {}


METHODS = {
    "apps/open": open_app,
    "apps/warm": warm_app,
    "apps/request": app_request,
    "apps/cancel": app_cancel,
    "apps/event": app_event,
    "apps/close": close_app,
    "apps/conversation": conversation,
    "apps/permission": set_permission,
    "audit/list": list_audit,
    "approvals/respond": respond_approval,
}
