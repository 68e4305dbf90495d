"""An attached image's base64 is written into the model request's body as it is sent
(webhost/chat/providers/streamed_images.py): the body the server reads is the JSON with each image's base64 in
its placeholder's place, with the exact Content-Length, whatever the image's size; anything else is untouched."""

from __future__ import annotations

import base64
import json
import os

import httpx2
import pytest

from webhost.chat.providers.messages import ChatRequest, TextBlock, ToolResult, UserMessage
from webhost.chat.providers.streamed_images import client_hooks, images_sent, placeholder_length, streamed_image

pytestmark = pytest.mark.anyio


async def sent_through_hook(request: ChatRequest, body: object) -> tuple[bytes, int]:
    """What a server reads when `body` is posted during `request`'s send: the bytes and the Content-Length."""
    seen: list[tuple[bytes, int]] = []

    async def server(incoming: httpx2.Request) -> httpx2.Response:
        # As a transport writes it to the socket: the request's stream (its `content` stays what the SDK built).
        assert isinstance(incoming.stream, httpx2.AsyncByteStream)
        written = b"".join([piece async for piece in incoming.stream])
        seen.append((written, int(incoming.headers["Content-Length"])))
        return httpx2.Response(200)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(server), event_hooks=client_hooks()) as client:
        with images_sent(request):
            await client.post("http://model.test/v1/chat/completions", content=json.dumps(body).encode())
    [answer] = seen
    return answer


async def test_each_placeholder_becomes_its_images_base64_with_the_exact_length() -> None:
    big = os.urandom(200_001)  # several slices, not a multiple of 3
    small = b"\x89PNG tiny"
    first, second = streamed_image(big, "image/png"), streamed_image(small, "image/jpeg")
    assert placeholder_length(first.data) == len(base64.b64encode(big)) and placeholder_length("aGk=") is None
    request = ChatRequest(
        model="m",
        system="",
        messages=(UserMessage((TextBlock("look"), first)), ToolResult("call-1", (second,))),
        tools=(),
    )
    lookalike = "webhost-image:" + "0" * 32 + ":12"  # text shaped like a placeholder, of no image sent
    body = {
        "messages": [
            {"content": [{"type": "text", "text": lookalike}, {"url": f"data:image/png;base64,{first.data}"}]},
            {"source": {"type": "base64", "data": second.data}},
        ]
    }
    received, length = await sent_through_hook(request, body)
    assert length == len(received)
    parsed = json.loads(received)
    assert parsed["messages"][0]["content"][0]["text"] == lookalike
    assert base64.b64decode(parsed["messages"][0]["content"][1]["url"].split(",", 1)[1]) == big
    assert base64.b64decode(parsed["messages"][1]["source"]["data"]) == small


async def test_a_request_without_streamed_images_is_sent_as_the_sdk_built_it() -> None:
    plain = ChatRequest(model="m", system="", messages=(UserMessage((TextBlock("hi"),)),), tools=())
    image = streamed_image(b"abc", "image/png")
    body = {"messages": [{"text": image.data}]}  # a placeholder of an image not in the request being sent
    received, length = await sent_through_hook(plain, body)
    assert json.loads(received) == body and length == len(received)
