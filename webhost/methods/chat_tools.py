"""What the model may use in a conversation (contract §8.1 `[data-testid="chat-tools"]`): the picker's
servers and tools, and the person's choice, kept with the conversation (webhost/chat/tool_choice.py)."""

from __future__ import annotations

from typing import Any

from webhost.chat.tool_choice import ToolChoice
from webhost.session import BrowserSession

from . import _params
from .chat import ID_LENGTH


async def tools(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """`{conversationId?}`: without one, a new conversation's default."""
    conversation = params.get("conversationId")
    if conversation is not None:
        conversation = _params.string(params, "conversationId", max_length=ID_LENGTH)
    return await session.workspace.chat.tool_picker(conversation)


async def set_tools(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    conversation = _params.string(params, "conversationId", max_length=ID_LENGTH)
    await session.workspace.chat.set_tool_choice(conversation, ToolChoice.parse(params.get("tools")))
    return await session.workspace.chat.tool_picker(conversation)


METHODS = {"chat/tools": tools, "chat/tools/set": set_tools}
