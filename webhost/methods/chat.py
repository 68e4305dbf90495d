"""The chat (contract §8, §8.1): models, conversations, sending, stopping, retrying, editing and regenerating
(branches), export, search, what the model saw, app context.

Every conversation belongs to the person of the tab (the workspace's chat); ids from the page only
ever look up that person's own conversations.
"""

from __future__ import annotations

import time
from typing import Any

from webhost.chat import export
from webhost.chat.attachments import CHUNK_CHARS, attachments_of, send_with_attachments
from webhost.chat.search import MAX_QUERY
from webhost.chat.tool_choice import ToolChoice
from webhost.errors import InvalidParams
from webhost.session import BrowserSession

from . import _params

ID_LENGTH = 64
USAGE_DAYS = 30


def _conversation(params: dict[str, Any]) -> str:
    return _params.string(params, "conversationId", max_length=ID_LENGTH)


def _optional(params: dict[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    return _params.string(params, key, max_length=ID_LENGTH)


async def info(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    return session.workspace.chat.info()


async def list_conversations(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    return {"conversations": await session.workspace.chat.conversations()}


async def open_conversation(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    return await session.workspace.chat.open(_conversation(params))


async def send(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    text = params.get("text")
    if not isinstance(text, str):
        raise InvalidParams("params.text must be a string")
    tools = None if params.get("tools") is None else ToolChoice.parse(params["tools"])
    conversation, model = _optional(params, "conversationId"), _optional(params, "model")
    given = params.get("attachments") or []
    if not isinstance(given, list) or not all(isinstance(a, dict) and isinstance(a.get("id"), str) for a in given):
        raise InvalidParams('params.attachments must be a list of {"id", "name"}')
    if not given:
        return await session.workspace.chat.send(conversation, text, model, tools=tools)
    return await send_with_attachments(session.workspace.chat, conversation, text, model, given, tools=tools)


async def attach(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """Start sending a file for the composer (docs/chat.md "Attachments"); its chunks follow."""
    size = params.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise InvalidParams("params.size must be a non-negative integer")
    name = _params.string(params, "name", max_length=1000)
    return {"id": attachments_of(session.workspace.chat).start(name, size, tab=session.id)}


async def attach_chunk(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """A chunk of the file (base64); the last one answers with what the file became."""
    data = _params.string(params, "data", max_length=CHUNK_CHARS)
    upload = _params.string(params, "id", max_length=ID_LENGTH)
    kept = await attachments_of(session.workspace.chat).chunk(upload, data, params.get("last") is True)
    return {"attachment": kept}


async def attach_remove(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    await attachments_of(session.workspace.chat).remove(_params.string(params, "id", max_length=ID_LENGTH))
    return {}


async def retry(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    return await session.workspace.chat.retry(_conversation(params), _optional(params, "model"))


async def edit(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    text = params.get("text")
    if not isinstance(text, str):
        raise InvalidParams("params.text must be a string")
    message_id = _params.string(params, "messageId", max_length=ID_LENGTH)
    return await session.workspace.chat.edit(_conversation(params), message_id, text, _optional(params, "model"))


async def regenerate(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    message_id = _params.string(params, "messageId", max_length=ID_LENGTH)
    return await session.workspace.chat.regenerate(_conversation(params), message_id, _optional(params, "model"))


async def branch(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """Show another version of a message (1-based `index` among its versions)."""
    index = params.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        raise InvalidParams("params.index must be an integer")
    message_id = _params.string(params, "messageId", max_length=ID_LENGTH)
    await session.workspace.chat.show_version(_conversation(params), message_id, index)
    return {}


async def export_conversation(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """The branch shown as a file's text (the page makes the download)."""
    fmt = params.get("format")
    if fmt not in ("md", "json"):
        raise InvalidParams('params.format must be "md" or "json"')
    active = await session.workspace.chat.opened(_conversation(params))
    summary, messages = active.summary(), active.shown_json()
    text = export.as_markdown(summary, messages) if fmt == "md" else export.as_json(summary, messages)
    media = "text/markdown" if fmt == "md" else "application/json"
    return {"filename": export.filename(active.title, fmt), "mediaType": media, "text": text}


async def search(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    query = _params.string(params, "query", max_length=MAX_QUERY)
    return {"query": query, "results": await session.workspace.chat.search.search(query)}


async def stop(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    return {"stopped": session.workspace.chat.stop(_conversation(params))}


async def rename(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    await session.workspace.chat.rename(_conversation(params), _params.string(params, "title", max_length=1000))
    return {}


async def delete(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    await session.workspace.chat.delete(_conversation(params))
    return {}


async def requests(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    message_id = _params.string(params, "messageId", max_length=ID_LENGTH)
    return {"requests": await session.workspace.chat.requests(_conversation(params), message_id)}


async def remove_context(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    instance = _params.string(params, "instance", max_length=ID_LENGTH)
    await session.workspace.chat.remove_context(_conversation(params), instance)
    return {}


async def sample(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """Write the reply to a sampling request this tab was asked with the person's chosen model; the page then
    sends it as the person's answer (`elicitation/respond`), so the server gets it as any reply."""
    request_id = _params.string(params, "id", max_length=200)
    pending = session.inputs.get(request_id) if session.asked_here(request_id) else None
    view = pending.view if pending is not None else None
    if view is None or view.get("kind") != "sampling":
        raise InvalidParams("this sampling request is unknown or was already answered", {"id": request_id})
    request = view.get("request")
    return await session.workspace.chat.sample(_optional(params, "model"), request if isinstance(request, dict) else {})


async def usage(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """Tokens per person and model over the last 30 days: an admin sees everyone's, a member their own."""
    since = time.strftime("%Y-%m-%d", time.gmtime(time.time() - USAGE_DAYS * 86400))
    people = None if session.person.is_admin else [session.person.id]
    return {
        "since": since,
        "usage": await session.workspace.chat.store.usage_totals(since, people),
        "everyone": people is None,
    }


METHODS = {
    "chat/info": info,
    "chat/list": list_conversations,
    "chat/open": open_conversation,
    "chat/send": send,
    "chat/attach": attach,
    "chat/attach/chunk": attach_chunk,
    "chat/attach/remove": attach_remove,
    "chat/retry": retry,
    "chat/stop": stop,
    "chat/edit": edit,
    "chat/regenerate": regenerate,
    "chat/branch": branch,
    "chat/export": export_conversation,
    "chat/search": search,
    "chat/rename": rename,
    "chat/delete": delete,
    "chat/requests": requests,
    "chat/context/remove": remove_context,
    "chat/usage": usage,
    "chat/sample": sample,
}
