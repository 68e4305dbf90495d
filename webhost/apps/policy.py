"""What an app may do: every request out of an app frame is judged here, in the backend, and audited.

The frame's server is the instance's binding, never a value from the request; a tool whose
visibility lacks "app" is refused; the per-server approval policy (allow, ask, deny) decides the
rest; links open only for http(s) and only after consent; files are saved after consent (`downloads.py`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

import anyio

from webhost import jsontext
from webhost import tasks as task_calls
from webhost.approvals import ApprovalBroker
from webhost.apps.downloads import download_file
from webhost.apps.instances import MAX_MESSAGES_BYTES, AppInstance
from webhost.apps.meta import tool_visibility
from webhost.audit import AuditLog
from webhost.catalogue import Catalogue
from webhost.config import WebhostOptions
from webhost.errors import Cancelled, InvalidParams, PolicyRefused, WebhostError
from webhost.pending import Publish
from webhost.people import Person
from webhost.tasks import TaskBook, task_support
from webhost.upstream.connection import Connection

RequestId = str | int
logger = logging.getLogger(__name__)

Handler = Callable[["AppPolicy", AppInstance, Connection, dict[str, Any]], Awaitable[dict[str, Any]]]
LISTINGS = {
    "resources/list": ("resources", "resources"),
    "resources/templates/list": ("resourceTemplates", "resourceTemplates"),
    "prompts/list": ("prompts", "prompts"),
}


class ChatApps(Protocol):
    """Where an app opened in a conversation sends its messages and its model context (the person's chat)."""

    async def set_context(
        self, conversation_id: str, instance: str, server: str, app: str, params: dict[str, Any]
    ) -> dict[str, Any]: ...
    def denied_to_model(self, server: str, tool: str) -> bool: ...
    async def app_message(
        self, conversation_id: str, instance: str, server: str, app: str, text: str, *, frame: str | None
    ) -> dict[str, Any]: ...


class AppPolicy:
    """Judges and runs the requests of one session's app frames."""

    def __init__(
        self,
        *,
        session_id: str,
        person: Person,
        options: WebhostOptions,
        audit: AuditLog,
        approvals: ApprovalBroker,
        catalogue: Catalogue,
        notify: Publish,
        chat: ChatApps | None = None,
        tasks: TaskBook | None = None,
    ) -> None:
        self.chat = chat
        self.tasks = tasks  # the person's tasks: an app's call the server runs as a task is followed there
        self.session_id = session_id
        self.person = person
        self.options = options
        self.audit = audit
        self.approvals = approvals
        self.catalogue = catalogue
        self.notify = notify
        # Requests that can be cancelled, by (frame, the app's own request id).
        self._running: dict[tuple[str, RequestId], anyio.CancelScope] = {}

    async def handle(
        self,
        instance: AppInstance,
        connection: Connection,
        method: str,
        params: dict[str, Any],
        request_id: RequestId | None = None,
    ) -> dict[str, Any]:
        handler = HANDLERS.get(method)
        if handler is None:
            await self.audit.record(
                "app.refused",
                **self.audit_base(instance),
                decision="refused",
                summary=f"unsupported method {method}"[:200],
            )
            raise PolicyRefused(f"apps may not call {method!r} through webhost", {"method": method})
        key = None if request_id is None else (instance.frame_id, request_id)
        if key is not None and key in self._running:
            raise InvalidParams("this requestId is already running for this frame", {"requestId": request_id})
        with anyio.CancelScope() as scope:
            if key is not None:
                self._running[key] = scope
            try:
                async with instance.request_slot():
                    return await handler(self, instance, connection, params)
            finally:
                if key is not None:
                    self._running.pop(key, None)
        await self.audit.record("app.cancelled", **self.audit_base(instance), decision="cancelled", summary=method)
        raise Cancelled("the app cancelled the request", {"requestId": request_id})

    def cancel(self, instance: AppInstance, request_id: RequestId) -> bool:
        """Cancel one in-flight request of a frame (the upstream call gets notifications/cancelled)."""
        scope = self._running.get((instance.frame_id, request_id))
        if scope is None:
            return False
        scope.cancel()
        return True

    def audit_base(self, instance: AppInstance) -> dict[str, Any]:
        """The columns every row about this frame carries: whose tab, which server, which frame."""
        return {
            "person": self.person,
            "session": self.session_id,
            "server": instance.server,
            "frame": instance.frame_id,
        }


async def call_tool(
    policy: AppPolicy, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if not isinstance(name, str) or not name or not isinstance(arguments, dict):
        raise InvalidParams("tools/call needs a tool name and an arguments object")
    audit = policy.audit
    base = policy.audit_base(instance)
    tool = await policy.catalogue.tool(connection, name)
    if tool is None:
        await audit.record(
            "app.tools/call",
            **base,
            decision="refused",
            summary=f"{name}: no such tool on this server",
            detail={"tool": name},
        )
        raise PolicyRefused(f"{instance.server} has no tool named {name!r}", {"tool": name})
    if "app" not in tool_visibility(tool.get("_meta")):
        await audit.record(
            "app.tools/call",
            **base,
            decision="refused",
            summary=f"{name}: not visible to apps",
            detail={"tool": name, "visibility": tool_visibility(tool.get("_meta"))},
        )
        raise PolicyRefused(f'tool {name!r} is not callable by apps (visibility lacks "app")', {"tool": name})
    if instance.purpose == "elicitation" and name in instance.origin_tools:
        await audit.record(
            "app.tools/call",
            **base,
            decision="refused",
            summary=f"{name}: an app answering an input request may not re-run the operation that asked",
            detail={"tool": name},
        )
        raise PolicyRefused("an app bound to an input request cannot retry the server's operation", {"tool": name})
    if instance.chat is not None and policy.chat is not None and policy.chat.denied_to_model(instance.server, name):
        # An app the model's call opened acts for the model: what the model may not call, it may not call either.
        await audit.record(
            "app.tools/call",
            **base,
            decision="refused",
            summary=f"{name}: denied to the model (modelTools), so to the apps its calls open",
            detail={"tool": name, "conversationId": instance.chat.conversation_id},
        )
        raise PolicyRefused(
            f"tool {name!r} is denied to the model (modelTools), so an app opened by the model's call cannot call it",
            {"tool": name},
        )
    decision = policy.options.policy(instance.server).decision_for(name)
    if decision == "ask":
        answer, remembered = await policy.approvals.ask(
            instance.server,
            "tool-call",
            f"The app wants to call {name}",
            {"tool": name, "arguments": arguments, "resourceUri": instance.resource_uri},
            frame=instance.frame_id,
            subject=name,
        )
        decision = answer
        if not remembered:
            await audit.record("approval", **base, decision=answer, summary=f"tools/call {name}")
    if decision == "deny":
        await audit.record("app.tools/call", **base, decision="denied", summary=name, detail={"arguments": arguments})
        raise PolicyRefused(f"calling {name!r} from this app was denied", {"tool": name})
    meta = params.get("_meta")
    progress_token = meta.get("progressToken") if isinstance(meta, dict) else None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if progress_token is not None:
            policy.notify(
                "apps/progress",
                {
                    "frameId": instance.frame_id,
                    "progressToken": progress_token,
                    "progress": progress,
                    "total": total,
                    "message": message,
                },
            )

    # The intent is written before the call: a call that cannot be audited is refused (AuditUnavailable).
    await audit.record(
        "app.tools/call.intent", **base, decision="allowed", summary=name, detail={"arguments": arguments}
    )
    started = time.monotonic()
    try:
        # The server may run it as a task (webhost/tasks.py): the app gets the task's result once it ended.
        result = await task_calls.call_tool(
            policy.tasks,
            connection,
            name,
            arguments,
            support=task_support(tool) if connection.era == "legacy" else None,
            on_progress=on_progress,
            summary=f"{name} (from app)",
            data={"app": instance.frame_id},
        )
    except WebhostError as exc:
        _record_outcome(
            audit,
            "app.tools/call",
            **base,
            decision="allowed",
            summary=f"{name}: failed: {exc.message}",
            detail={"arguments": arguments, "ms": round((time.monotonic() - started) * 1000, 1)},
        )
        raise
    _record_outcome(
        audit,
        "app.tools/call",
        **base,
        decision="allowed",
        summary=name,
        detail={
            "arguments": arguments,
            "isError": bool(result.get("isError")),
            "ms": round((time.monotonic() - started) * 1000, 1),
        },
    )
    return result


def _record_outcome(audit: AuditLog, kind: str, **row: Any) -> None:
    """The outcome of an action that already ran (its intent is on record): not waited for, and a failed
    write is logged, not turned into an error, since the action cannot be undone and its answer would be lost."""
    audit.note(kind, **row)


async def read_resource(
    policy: AppPolicy, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise InvalidParams("resources/read needs a uri")
    await policy.audit.record(
        "app.resources/read", **policy.audit_base(instance), decision="allowed", summary=uri[:300]
    )
    return await connection.client.read_resource(uri, summary=f"{uri} (from app)")


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
    base = policy.audit_base(instance)
    parts = urlsplit(url) if isinstance(url, str) else None
    scheme = parts.scheme.lower() if parts else ""
    credentials = bool(parts and (parts.username or parts.password))
    if not isinstance(url, str) or scheme not in ("http", "https") or credentials or len(url) > 8192:
        reason = "credentials in the URL" if credentials else f"scheme {scheme or '?'}:"
        await audit.record(
            "app.open-link", **base, decision="refused", summary=f"refused {reason}", detail={"scheme": scheme}
        )
        raise PolicyRefused("only http and https links without credentials can be opened", {"scheme": scheme})
    if policy.options.policy(instance.server).open_links == "allow":
        decision, opened = "allow", None
    else:
        # The page opens the tab within the person's click on Allow (a browser opens new tabs only from a
        # person's action), and says whether it did: a popup blocker can stop it.
        answer = await policy.approvals.answer(
            instance.server,
            "open-link",
            "The app wants to open a link",
            {"url": url},
            frame=instance.frame_id,
            subject=url,
        )
        decision, opened = answer.decision, answer.opened
    detail = {"opened": opened} if opened is not None else None
    await audit.record("app.open-link", **base, decision=decision, summary=url[:300], detail=detail)
    if decision != "allow":
        raise PolicyRefused("Link opening denied by user", {"url": url})
    # `opened` absent: nobody clicked Allow now (the policy allows links, or the person said to remember), so
    # the page opens it itself and tells the app whether the browser let it.
    return {"open": True, "url": url, **({"opened": opened} if opened is not None else {})}


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
    entry = {
        "role": params.get("role") if params.get("role") in ("user", "assistant") else "user",
        "content": _content_list(params)[:50],
        "ts": time.time(),
    }
    if instance.chat is not None and policy.chat is not None:
        # In a conversation the message is the person's next turn, once they allow this app to send it; the
        # chat audits it (with the conversation, not the text: conversations are private).
        binding = instance.chat
        text = _text_of(entry["content"])
        if not text.strip():
            raise InvalidParams("ui/message: the message has no text")
        await policy.chat.app_message(
            binding.conversation_id,
            binding.call_id,
            instance.server,
            _app_name(instance),
            text,
            frame=instance.frame_id,
        )
        return {}
    size = len(jsontext.dumps(entry))
    if size > MAX_MESSAGES_BYTES:
        # Kept messages are bounded by bytes as well as by count: one this large cannot be kept at all.
        await policy.audit.record(
            "app.message", **policy.audit_base(instance), decision="refused", summary=f"too large: {size} bytes"
        )
        raise PolicyRefused(
            f"ui/message: the message is {size} bytes; an app's messages are kept up to {MAX_MESSAGES_BYTES}",
            {"limit": MAX_MESSAGES_BYTES, "size": size},
        )
    await policy.audit.record(
        "app.message",
        **policy.audit_base(instance),
        decision="recorded",
        summary=_text_of(entry["content"])[:300],
        detail=entry,
    )
    instance.keep_message(entry, size)
    # Only what changed: re-sending the whole conversation each time grows traffic with its square.
    policy.notify(
        "apps/conversation", {"frameId": instance.frame_id, "message": entry, "messageCount": len(instance.messages)}
    )
    return {}


async def update_model_context(
    policy: AppPolicy, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    context = {
        "content": _content_list(params)[:50],
        "structuredContent": params.get("structuredContent"),
        "ts": time.time(),
    }
    instance.model_context = context  # each update replaces the previous one, as a model would see it
    if instance.chat is not None and policy.chat is not None:
        binding = instance.chat
        await policy.audit.record(
            "chat.model-context",
            **policy.audit_base(instance),
            decision="recorded",
            summary=f"conversation {binding.conversation_id}",
            detail={"conversationId": binding.conversation_id, "instance": binding.call_id},
        )
        await policy.chat.set_context(
            binding.conversation_id, binding.call_id, instance.server, _app_name(instance), params
        )
        return {}
    await policy.audit.record(
        "app.model-context",
        **policy.audit_base(instance),
        decision="recorded",
        summary=_text_of(context["content"])[:300],
        detail=context,
    )
    policy.notify(
        "apps/conversation",
        {"frameId": instance.frame_id, "modelContext": context, "messageCount": len(instance.messages)},
    )
    return {}


def _app_name(instance: AppInstance) -> str:
    """The app as the page names it: its tool's title, else the tool's name, else the server."""
    tool = instance.tool or {}
    return str(tool.get("title") or tool.get("name") or instance.server)[:100]


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
    "ui/download-file": download_file,
}
