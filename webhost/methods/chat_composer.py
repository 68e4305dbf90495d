"""MCP in the chat's composer (contract §8.1): `@` lists and attaches the servers' resources, `/` lists the
servers' prompts and runs one into the conversation (webhost/chat/resource_mentions.py, prompt_run.py).

Each goes through the person's own connections (`session.connection`: only servers they may use)."""

from __future__ import annotations

from typing import Any

from webhost.chat.prompt_run import run_prompt
from webhost.chat.resource_mentions import KINDS, attach_resource, composer_items
from webhost.chat.tool_choice import ToolChoice
from webhost.errors import InvalidParams
from webhost.session import BrowserSession

from . import _params
from .chat import ID_LENGTH


async def items(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """`{kind: "resources" | "prompts"}`: what `@` or `/` offers, from every connected server."""
    kind = params.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:  # a list or an object is not hashable: not a lookup
        raise InvalidParams('params.kind must be "resources" or "prompts"')
    return {"items": await composer_items(session.connections, session.catalogue, str(kind))}


async def attach(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """`{server, uri, name?}`: read the resource and keep it as a draft attachment (kind "resource")."""
    connection = session.connection(params)
    uri = _params.string(params, "uri", max_length=8192)
    name = params.get("name") if isinstance(params.get("name"), str) else None
    return {"attachment": await attach_resource(session.workspace.chat, connection, uri, name)}


async def run(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """`{server, name, arguments, conversationId?, model?, tools?}`: the prompt's messages into the conversation."""
    connection = session.connection(params)
    name = _params.string(params, "name")
    arguments = _params.optional_object(params, "arguments")
    if not all(isinstance(v, str) for v in arguments.values()):
        raise InvalidParams("prompt arguments must be strings")
    conversation = params.get("conversationId")
    if conversation is not None:
        conversation = _params.string(params, "conversationId", max_length=ID_LENGTH)
    model = params.get("model")
    if model is not None:
        model = _params.string(params, "model", max_length=ID_LENGTH)
    tools = None if params.get("tools") is None else ToolChoice.parse(params["tools"])
    return await run_prompt(
        session.workspace.chat, connection, name, arguments, conversation_id=conversation, model_id=model, tools=tools
    )


METHODS = {"chat/composer/items": items, "chat/attach/resource": attach, "chat/prompt/run": run}
