"""A `ChatRequest` as the body of an Anthropic Messages request (streamed), in the SDK's typed params.

How each part is placed:
- the system prompt is the top-level `system` (left out when empty);
- user text and images are `text` and `image` (base64 source) blocks; empty texts are left out (the
  API refuses empty text blocks);
- an assistant message is its text block, then a `tool_use` block per call, `input` parsed from the
  call's arguments (an object; arguments that are not a JSON object, as a cut-off answer can leave
  them, become `{}`, partial JSON is closed first);
- a tool result is a `tool_result` block (its text and images inside, `is_error` when it failed) in
  a user message; consecutive messages of one role are merged into one (the API wants the roles to
  alternate, and all results of one answer's calls in the next user message);
- tools are `{name, description, input_schema, eager_input_streaming: true}`: the per-tool form of
  fine-grained tool streaming (the `fine-grained-tool-streaming-2025-05-14` beta header became this
  field of the generally available API), so arguments stream as they are written instead of being
  buffered per parameter. Servers that ignore it buffer; the adapter handles both.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal, cast

from jiter import from_json

from webhost.chat.providers.messages import (
    AssistantMessage,
    Block,
    ChatRequest,
    TextBlock,
    UserMessage,
    usable,
)

if TYPE_CHECKING:  # the SDK's types, for annotations only: the SDK itself loads with the wire (anthropic_stream.py)
    from anthropic.types import (
        ContentBlockParam,
        ImageBlockParam,
        MessageParam,
        TextBlockParam,
        ToolParam,
        ToolResultBlockParam,
    )

ImageType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]


def anthropic_messages(request: ChatRequest) -> list[MessageParam]:
    turns: list[tuple[Literal["user", "assistant"], list[ContentBlockParam]]] = []
    for message in request.messages:
        role: Literal["user", "assistant"]
        blocks: list[ContentBlockParam]
        if isinstance(message, UserMessage):
            role, blocks = "user", list(_blocks(message.content))
        elif isinstance(message, AssistantMessage):
            role = "assistant"
            blocks = [{"type": "text", "text": message.text}] if message.text else []
            blocks += [
                {"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input(call.arguments)}
                for call in message.tool_calls
            ]
        else:
            result: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": message.tool_call_id}
            content = _blocks(message.content)
            if content:
                result["content"] = content
            if message.is_error:
                result["is_error"] = True
            role, blocks = "user", [result]
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    messages: list[MessageParam] = []
    for role, blocks in turns:
        if role == "user":
            messages.append({"role": "user", "content": blocks})
        else:
            messages.append({"role": "assistant", "content": blocks})
    return messages


def anthropic_tools(request: ChatRequest) -> list[ToolParam]:
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.input_schema,
            "eager_input_streaming": True,
        }
        for tool in request.tools
    ]


def anthropic_body(request: ChatRequest) -> dict[str, Any]:
    """The exact JSON body `AnthropicProvider.stream` sends (its SDK call is built from the same parts)."""
    body: dict[str, Any] = {"model": request.model, "max_tokens": request.max_tokens}
    body["messages"] = anthropic_messages(request)
    if request.system:
        body["system"] = request.system
    if request.tools:
        body["tools"] = anthropic_tools(request)
    body["stream"] = True
    return body


def tool_input(arguments: str) -> dict[str, object]:
    """A call's arguments as the object `tool_use.input` must be."""
    try:
        value = json.loads(arguments)
    except ValueError:
        try:
            value = from_json(arguments.encode(), partial_mode="trailing-strings")
        except ValueError:
            return {}
    return cast(dict[str, object], value) if isinstance(value, dict) else {}


def _blocks(blocks: tuple[Block, ...]) -> list[TextBlockParam | ImageBlockParam]:
    out: list[TextBlockParam | ImageBlockParam] = []
    for block in usable(blocks):
        if isinstance(block, TextBlock):
            if block.text:
                out.append({"type": "text", "text": block.text})
        else:
            media = cast(ImageType, block.mime_type)  # usable() let only these four through
            out.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": block.data}})
    return out


__all__ = ["anthropic_body", "anthropic_messages", "anthropic_tools", "tool_input"]
