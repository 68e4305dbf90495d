"""A `ChatRequest` as the body of an OpenAI Chat Completions request (streamed), in the SDK's typed params.

How each part is placed:
- the system prompt is the first message, role "system" (every compatible server takes it);
- a user message whose blocks are all text is one string (older local servers take no parts list);
  with images it is a list of `text` and `image_url` parts, each image a `data:` URL;
- an assistant message carries its text (null when empty) and its `tool_calls`;
- a tool result is a role "tool" message holding its text; an error result's text starts with
  "Error: " (the wire has no error flag). The "tool" role takes no images, so the images of a run of
  consecutive tool results follow the whole run as one user message ("Images from tool calls ...")
  with `image_url` parts: a user message between two tool messages would break OpenAI's rule that all
  tool messages follow the assistant message that asked for them;
- tools are `{"type": "function", "function": {name, description, parameters}}`; none → no `tools` key;
- the token limit is `max_completion_tokens` for OpenAI's own API (its newer models refuse
  `max_tokens`) and `max_tokens` for every compatible server (some do not know the newer name).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webhost.chat.providers.messages import (
    AssistantMessage,
    Block,
    ChatRequest,
    ImageBlock,
    TextBlock,
    ToolResult,
    UserMessage,
    images,
    texts,
    usable,
)

if TYPE_CHECKING:  # the SDK's types, for annotations only: the SDK itself loads with the wire (openai_stream.py)
    from openai.types.chat import (
        ChatCompletionContentPartImageParam,
        ChatCompletionContentPartParam,
        ChatCompletionFunctionToolParam,
        ChatCompletionMessageFunctionToolCallParam,
        ChatCompletionMessageParam,
    )

STREAM_OPTIONS = {"include_usage": True}


def openai_messages(request: ChatRequest) -> list[ChatCompletionMessageParam]:
    out: list[ChatCompletionMessageParam] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    pending_images: list[tuple[str, list[ImageBlock]]] = []  # from the current run of tool results
    for message in request.messages:
        if not isinstance(message, ToolResult) and pending_images:
            out.append(_tool_images(pending_images))
            pending_images = []
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": _user_content(usable(message.content))})
        elif isinstance(message, AssistantMessage):
            calls: list[ChatCompletionMessageFunctionToolCallParam] = [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call in message.tool_calls
            ]
            if calls:
                out.append({"role": "assistant", "content": message.text or None, "tool_calls": calls})
            else:
                out.append({"role": "assistant", "content": message.text})
        else:
            content = usable(message.content)
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": _tool_text(message, content)})
            if found := images(content):
                pending_images.append((message.tool_call_id, found))
    if pending_images:
        out.append(_tool_images(pending_images))
    return out


def openai_tools(request: ChatRequest) -> list[ChatCompletionFunctionToolParam]:
    return [
        {
            "type": "function",
            "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
        }
        for tool in request.tools
    ]


def token_limit_key(official: bool) -> str:
    return "max_completion_tokens" if official else "max_tokens"


def openai_body(request: ChatRequest, *, official: bool) -> dict[str, Any]:
    """The JSON body `OpenAIProvider.stream` posts, as it is (and "What the model saw" shows)."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": openai_messages(request),
        token_limit_key(official): request.max_tokens,
        "stream": True,
        "stream_options": dict(STREAM_OPTIONS),
    }
    if request.tools:
        body["tools"] = openai_tools(request)
    return body


def _user_content(blocks: tuple[Block, ...]) -> str | list[ChatCompletionContentPartParam]:
    if not images(blocks):
        return "\n\n".join(texts(blocks))
    parts: list[ChatCompletionContentPartParam] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        else:
            parts.append(_image_part(block))
    return parts


def _image_part(block: ImageBlock) -> ChatCompletionContentPartImageParam:
    return {"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}}


def _tool_text(result: ToolResult, content: tuple[Block, ...]) -> str:
    text = "\n\n".join(texts(content))
    if not text and images(content):
        text = "(the result is an image, in the next message)"
    if result.is_error and not text.lower().startswith("error"):
        text = f"Error: {text}" if text else "Error"
    return text


def _tool_images(found: list[tuple[str, list[ImageBlock]]]) -> ChatCompletionMessageParam:
    ids = ", ".join(call_id for call_id, _ in found)
    parts: list[ChatCompletionContentPartParam] = [{"type": "text", "text": f"Images from tool calls {ids}:"}]
    parts += [_image_part(block) for _, blocks in found for block in blocks]
    return {"role": "user", "content": parts}


__all__ = ["STREAM_OPTIONS", "openai_body", "openai_messages", "openai_tools", "token_limit_key"]
