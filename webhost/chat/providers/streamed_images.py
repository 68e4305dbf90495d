"""An attached image goes into the model request's body as it is sent, not as one more copy in memory.

Both SDKs build the whole JSON body in memory, and an image is base64 inside it: a 5 MB image became its base64
as bytes, then as a string, a `data:` URL, the SDK's JSON string and its bytes, several times the image at once
in webhost's memory (bench/chat.py row 8). So an attached image's block carries its bytes (`ImageBlock.raw`) and,
where the base64 would be, a placeholder naming it; the wire body and the SDK's JSON hold only the placeholder.
A request hook of the SDK's HTTP client (`client_hooks`) gives the request a body that writes the JSON around each
placeholder and the image's base64 in its place, a slice at a time, with the exact Content-Length. The images of
the request being sent are known through a context variable set around the SDK's call (`images_sent`): the
hook runs in that call's task. A placeholder's random part is new for each image, so text that looks like one is
never replaced.
"""

from __future__ import annotations

import base64
import contextlib
import re
import secrets
from collections.abc import AsyncIterator, Iterator
from contextvars import ContextVar
from typing import Any

import httpx2

from webhost.chat.providers.messages import ChatRequest, ImageBlock, ToolResult, UserMessage

_PLACEHOLDER = re.compile(rb"webhost-image:[0-9a-f]{32}:([0-9]{1,12})")
_SLICE = 3 * 16 * 1024  # bytes of an image encoded at a time: 64 KiB of base64
_SENDING: ContextVar[dict[bytes, bytes] | None] = ContextVar("webhost_images_sent", default=None)


def base64_length(size: int) -> int:
    return 4 * ((size + 2) // 3)


def streamed_image(raw: bytes, mime_type: str) -> ImageBlock:
    """An image block whose base64 is written into the request body as it is sent."""
    placeholder = f"webhost-image:{secrets.token_hex(16)}:{base64_length(len(raw))}"
    return ImageBlock(placeholder, mime_type, raw=raw)


def placeholder_length(data: str) -> int | None:
    """The base64 length an image's placeholder stands for (None: `data` is base64 itself)."""
    found = _PLACEHOLDER.fullmatch(data.encode("ascii", "replace"))
    return int(found.group(1)) if found else None


@contextlib.contextmanager
def images_sent(request: ChatRequest) -> Iterator[None]:
    """Around the SDK's call that sends `request`: its streamed images, for the request hook."""
    found: dict[bytes, bytes] = {}
    for message in request.messages:
        if isinstance(message, UserMessage | ToolResult):
            for block in message.content:
                if isinstance(block, ImageBlock) and block.raw is not None:
                    found[block.data.encode("ascii")] = block.raw
    token = _SENDING.set(found or None)
    try:
        yield
    finally:
        _SENDING.reset(token)


def client_hooks() -> dict[str, Any]:
    """The SDK's HTTP client's `event_hooks`: each request's placeholders become the images' base64."""
    return {"request": [_stream_images]}


async def _stream_images(request: httpx2.Request) -> None:
    sending = _SENDING.get()
    if not sending:
        return
    try:
        body = request.content  # the SDK's JSON, with the placeholders
    except httpx2.RequestNotRead:  # a streamed upload of the SDK's own: no JSON to look into
        return
    pieces: list[bytes] = []  # JSON, image, JSON, image, ..., JSON
    start, total = 0, 0
    for found in _PLACEHOLDER.finditer(body):
        raw = sending.get(found.group(0))
        if raw is None:
            continue
        pieces += [body[start : found.start()], raw]
        total += found.start() - start + base64_length(len(raw))
        start = found.end()
    if not pieces:
        return
    pieces.append(body[start:])
    total += len(body) - start
    request.stream = _WithImages(pieces)
    request.headers["Content-Length"] = str(total)


class _WithImages(httpx2.AsyncByteStream):
    """The body: the JSON's pieces as they are, and each image's base64 in slices (anew for each send)."""

    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for index, piece in enumerate(self._pieces):
            if index % 2 == 0:
                if piece:
                    yield piece
                continue
            view = memoryview(piece)
            for at in range(0, len(view), _SLICE):
                yield base64.b64encode(view[at : at + _SLICE])
