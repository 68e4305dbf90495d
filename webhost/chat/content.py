"""What of an MCP tool result the model is given: its `content` only (SEP-1865: `structuredContent` and
`_meta` are for the app), as text and image blocks, cut to `maxToolResultChars` with a note.

Text content is given as it is; an image as an image block; an audio clip, an embedded resource and a
resource link as one line saying what it is (a resource's text is given as text). A server whose entry
says `modelSeesStructuredContent` also has its `structuredContent` given, as JSON text.
"""

from __future__ import annotations

from typing import Any

import orjson

from webhost.chat.providers.messages import Block, ImageBlock, TextBlock
from webhost.jsonsize import size_at_most
from webhost.storage.bounded_json import shortened

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # base64 characters of one image given to the model
MAX_BLOCKS = 100


def model_content(result: dict[str, Any], *, limit: int, structured: bool = False) -> tuple[Block, ...]:
    """The blocks the model is given for a tool result, within `limit` characters of text."""
    blocks: list[Block] = []
    budget = limit
    cut = 0
    items = result.get("content")
    for item in items if isinstance(items, list) else []:
        if len(blocks) >= MAX_BLOCKS:
            cut += 1
            continue
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "image" and isinstance(item.get("data"), str) and len(item["data"]) <= MAX_IMAGE_BYTES:
            blocks.append(ImageBlock(data=item["data"], mime_type=str(item.get("mimeType") or "image/png")))
            continue
        text = _as_text(item)
        if text is None:
            continue
        if len(text) > budget:
            cut += len(text) - budget
            text = text[:budget]
        budget -= len(text)
        if text:
            blocks.append(TextBlock(text))
    if structured and "structuredContent" in result:
        text = "structuredContent: " + orjson.dumps(result["structuredContent"]).decode()
        if len(text) > budget:
            cut += len(text) - budget
            text = text[:budget]
        if text:
            blocks.append(TextBlock(text))
    if cut:
        blocks.append(TextBlock(f"[webhost: the result was cut to {limit} characters; {cut} more were left out]"))
    if not blocks:
        blocks.append(TextBlock("(the tool returned no content)"))
    return tuple(blocks)


def _as_text(item: dict[str, Any]) -> str | None:
    kind = item.get("type")
    if kind == "text":
        return str(item.get("text") or "")
    if kind == "image":
        return f"[an image ({item.get('mimeType') or 'unknown type'}) too large to give to the model]"
    if kind == "audio":
        return f"[an audio clip ({item.get('mimeType') or 'unknown type'})]"
    if kind == "resource" and isinstance(item.get("resource"), dict):
        resource = item["resource"]
        if isinstance(resource.get("text"), str):
            return f"[resource {resource.get('uri')}]\n{resource['text']}"
        return f"[a binary resource {resource.get('uri')} ({resource.get('mimeType') or 'unknown type'})]"
    if kind == "resource_link":
        return f"[a link to the resource {item.get('uri')} ({item.get('name') or ''})]"
    return None


def error_content(message: str) -> tuple[Block, ...]:
    return (TextBlock(message),)


STORED_RESULT_BYTES = 256 * 1024  # a tool result as a conversation keeps it (the page and the turn saw it whole)
STORED_STRING_CHARS = 64 * 1024


def stored_result(result: dict[str, Any]) -> dict[str, Any]:
    """A tool result as the conversation stores it: as it was when small, else with long text cut, big images
    and audio replaced by a line saying what they were, and `webhost.cut` set (docs/chat.md)."""
    if size_at_most(result, STORED_RESULT_BYTES):
        return result
    kept: list[Any] = []
    items = result.get("content")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        data = item.get("data")
        if item.get("type") in ("image", "audio") and isinstance(data, str) and len(data) > STORED_STRING_CHARS:
            kind = f"{item.get('type')} ({item.get('mimeType') or 'unknown type'}"
            line = f"[{kind}, {len(data)} base64 characters) not kept]"
            kept.append({"type": "text", "text": line})
        else:
            kept.append(shortened(item, STORED_STRING_CHARS)[0])
    out: dict[str, Any] = {**result, "content": kept, "webhost": {**(result.get("webhost") or {}), "cut": True}}
    if "structuredContent" in result:
        out["structuredContent"] = shortened(result["structuredContent"], STORED_STRING_CHARS)[0]
    return out
