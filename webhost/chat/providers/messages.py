"""The neutral request a provider turns into its wire format: no SDK types, immutable, JSON-free.

The turn loop builds a `ChatRequest` from the stored conversation; each wire module
(`openai_body`, `anthropic_body`) maps it to the exact JSON body its SDK sends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class ImageBlock:
    data: str  # base64, without a data: prefix; or the placeholder of an image written as it is sent (`raw`)
    mime_type: str
    # An attached image's bytes, whose base64 is written into the request body as it is sent (streamed_images.py)
    raw: bytes | None = field(default=None, repr=False, compare=False)


Block = TextBlock | ImageBlock


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model sent it (normalised, "{}" when empty)


@dataclass(frozen=True)
class UserMessage:
    content: tuple[Block, ...]


@dataclass(frozen=True)
class AssistantMessage:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class ToolResult:
    tool_call_id: str
    content: tuple[Block, ...]
    is_error: bool = False


Message = UserMessage | AssistantMessage | ToolResult


@dataclass(frozen=True)
class ChatRequest:
    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    max_tokens: int = 4096


def texts(blocks: tuple[Block, ...]) -> list[str]:
    """The non-empty texts among `blocks`, in order."""
    return [block.text for block in blocks if isinstance(block, TextBlock) and block.text]


def images(blocks: tuple[Block, ...]) -> list[ImageBlock]:
    return [block for block in blocks if isinstance(block, ImageBlock)]


# The image types both wires take. Another type (an SVG, a TIFF) goes as a line of text instead: an
# image the provider refuses would fail this request and every later one of the conversation.
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def usable(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """`blocks` with each image of a type the wires do not take replaced by a line saying so."""
    return tuple(
        TextBlock(f"(an image of type {block.mime_type or 'unknown'}, which the model cannot be given)")
        if isinstance(block, ImageBlock) and block.mime_type not in IMAGE_TYPES
        else block
        for block in blocks
    )


__all__ = [
    "IMAGE_TYPES",
    "AssistantMessage",
    "Block",
    "ChatRequest",
    "ImageBlock",
    "Message",
    "TextBlock",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "UserMessage",
    "images",
    "texts",
    "usable",
]
