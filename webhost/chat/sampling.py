"""A server's `sampling/createMessage` answered by the person's chosen model (issue: sampling by the model).

The person sees the request as before and chooses "Answer with MODEL": its messages and system prompt go
to the model without tools, and the text it answers is the reply (sampling is deprecated in the
2026-07-28 revision, SEP-2577, but servers of the earlier ones still ask).
"""

from __future__ import annotations

from typing import Any

from webhost.chat.providers import Provider
from webhost.chat.providers.events import TextDelta, Usage
from webhost.chat.providers.messages import AssistantMessage, Block, ChatRequest, ImageBlock, TextBlock, UserMessage

MAX_MESSAGES = 100


def sampling_request(model: str, max_tokens: int, params: dict[str, Any]) -> ChatRequest:
    """The model request for a sampling request's params (text and image content; other blocks named)."""
    messages: list[UserMessage | AssistantMessage] = []
    raw = params.get("messages")
    for item in raw[:MAX_MESSAGES] if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        content = item.get("content")
        blocks = [b for b in (content if isinstance(content, list) else [content]) if isinstance(b, dict)]
        if item.get("role") == "assistant":
            text = "".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
            messages.append(AssistantMessage(text=text))
        else:
            messages.append(UserMessage(content=tuple(_block(b) for b in blocks) or (TextBlock(""),)))
    asked = params.get("maxTokens")
    limit = min(max_tokens, asked) if isinstance(asked, int) and asked > 0 else max_tokens
    system = params.get("systemPrompt")
    return ChatRequest(
        model=model,
        system=system if isinstance(system, str) else "",
        messages=tuple(messages),
        tools=(),
        max_tokens=limit,
    )


def _block(block: dict[str, Any]) -> Block:
    if block.get("type") == "text":
        return TextBlock(str(block.get("text") or ""))
    if block.get("type") == "image" and isinstance(block.get("data"), str):
        return ImageBlock(data=block["data"], mime_type=str(block.get("mimeType") or "image/png"))
    return TextBlock(f"[{block.get('type')} content]")


async def answer(provider: Provider, request: ChatRequest) -> tuple[str, int, int]:
    """The model's text for the request, and the tokens it reported (in, out)."""
    text: list[str] = []
    used_in = used_out = 0
    async for event in provider.stream(request):
        if isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, Usage):
            used_in += event.input_tokens
            used_out += event.output_tokens
    return "".join(text), used_in, used_out
