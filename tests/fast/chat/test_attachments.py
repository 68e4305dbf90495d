"""Attachments in the chat (contract §8.1, docs/chat.md "Attachments"): what a file becomes, the sealed
store on both engines with its per-person bound, and a sent image reaching the model as an image block on
both wires, through webhost's page WebSocket in-process with the scripted endpoint over a real socket."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from PIL import Image

from tests.support.images import png
from tests.support.inprocess import AsgiWsClient, in_process_host, sdk_server
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from webhost.chat.attachment_files import IMAGE_BYTES, LONG_EDGE, AttachmentRefused, prepare
from webhost.chat.attachments import attachment_blocks
from webhost.chat.providers.anthropic_body import anthropic_body
from webhost.chat.providers.messages import ChatRequest, ImageBlock, UserMessage
from webhost.chat.providers.openai_body import openai_body
from webhost.chat.providers.streamed_images import placeholder_length
from webhost.chat.wire_images import without_image_data
from webhost.people import Person
from webhost.storage.attachments import StoredAttachment, chat_attachment_content, chat_attachments
from webhost.storage.conversations import ChatSeal, ConversationStore
from webhost.storage.db import Storage

pytestmark = pytest.mark.anyio


def pdf(text: str) -> bytes:
    """A one-page PDF with `text` in Helvetica, written by hand (offsets computed) so pypdf reads a real file."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_file_becomes_an_image_a_text_or_is_refused_with_one_line() -> None:
    small = png(40, 30)
    assert prepare("dot.png", small, text_chars=100).content == small  # taken as it is: not re-encoded
    big = prepare("noise.png", png(2400, 1200, noise=True), text_chars=100)
    with Image.open(io.BytesIO(big.content)) as scaled:
        assert big.kind == "image" and max(scaled.size) <= LONG_EDGE and len(big.content) <= IMAGE_BYTES
    assert prepare("notes.md", b"# Plan\nsoon", text_chars=100).content == b"# Plan\nsoon"
    read = prepare("report.pdf", pdf("Quarterly figures rose"), text_chars=100)
    assert (read.kind, read.mime_type, read.content) == ("text", "application/pdf", b"Quarterly figures rose")
    with pytest.raises(AttachmentRefused, match=r"long\.txt has 101 characters of text; a file may have at most 100"):
        prepare("long.txt", b"x" * 101, text_chars=100)
    with pytest.raises(AttachmentRefused, match="only images"):
        prepare("tool.bin", b"\x00\x01\x02binary", text_chars=100)
    with pytest.raises(AttachmentRefused, match="could not be read as a PDF"):
        prepare("broken.pdf", b"%PDF-1.4 nothing", text_chars=100)


def test_a_transparent_image_to_scale_stays_a_png_with_its_transparency() -> None:
    rgba = Image.new("RGBA", (2000, 300), (10, 200, 10, 0))
    rgba.paste((200, 10, 10, 255), (0, 0, 1000, 300))  # half clear, half opaque red
    palette = rgba.convert("P")  # a palette image whose transparency is in its info
    palette.info["transparency"] = palette.getpixel((1500, 150))
    for image in (rgba, palette):
        out = io.BytesIO()
        image.save(out, "PNG")
        kept = prepare("logo.png", out.getvalue(), text_chars=100)
        assert (kept.kind, kept.mime_type) == ("image", "image/png")
        with Image.open(io.BytesIO(kept.content)) as scaled:
            assert max(scaled.size) == LONG_EDGE and scaled.mode == "RGBA"
            alpha = scaled.getchannel("A")
            assert (alpha.getpixel((10, 10)), alpha.getpixel((LONG_EDGE - 10, 10))) == (255, 0)


def test_an_attached_image_is_an_image_block_on_both_wires_and_kept_out_of_the_recorded_request() -> None:
    ref = {"id": "a-1", "name": "dot.png", "kind": "image", "mimeType": "image/png"}
    blocks = attachment_blocks(ref, png(4, 4), vision=True)
    request = ChatRequest(model="m", system="", messages=(UserMessage(blocks),), tools=())
    data = base64.b64encode(png(4, 4)).decode()
    # In the wire body, where the base64 goes, the placeholder the request's body replaces as it is sent (the
    # bytes the endpoint receives: test_an_image_goes_to_a_model_with_vision_and_is_refused_for_one_without).
    image = blocks[1]
    assert isinstance(image, ImageBlock) and image.raw == png(4, 4) and placeholder_length(image.data) == len(data)
    [openai_message] = openai_body(request, official=False)["messages"]
    url = f"data:image/png;base64,{image.data}"
    assert openai_message["content"][1] == {"type": "image_url", "image_url": {"url": url}}
    [anthropic_message] = anthropic_body(request)["messages"]
    source = {"type": "base64", "media_type": "image/png", "data": image.data}
    assert anthropic_message["content"][1] == {"type": "image", "source": source}
    recorded = without_image_data(anthropic_body(request))
    assert recorded["messages"][0]["content"][1]["source"]["data"] == f"[{len(data)} base64 characters]"
    recorded = without_image_data(openai_body(request, official=False))
    assert (
        recorded["messages"][0]["content"][1]["image_url"]["url"]
        == f"data:image/png;base64,[{len(data)} base64 characters]"
    )
    assert attachment_blocks(ref, png(4, 4), vision=False)[0].text.startswith("[an image, dot.png, which")  # type: ignore[union-attr]


async def test_attachments_are_sealed_bounded_per_person_and_go_with_their_conversation(database_url: str) -> None:
    storage = Storage(database_url)
    await storage.start()
    try:
        store = ConversationStore(storage, ChatSeal(b"k" * 32))
        box = store.attachments
        secret = b"the secret plans for the garden"
        draft = StoredAttachment("a-1", None, "text", "text/plain", len(secret))
        assert await box.add("ada", draft, secret, 1.0, bound=100)
        assert not await box.add(
            "ada", StoredAttachment("a-2", None, "text", "text/plain", 80), b"x" * 80, 1.0, bound=100
        )
        assert await box.used("ada") == len(secret) and await box.used("bob") == 0
        async with storage.read() as db:
            [sealed] = (await db.execute(sa.select(chat_attachment_content.c.sealed))).scalars().all()
            # The content is kept apart from the row a send updates (SQLite rewrites a whole row on an update).
            assert (await db.execute(sa.select(chat_attachments.c.sealed))).scalars().all() == [None]
        assert b"garden" not in bytes(sealed)
        assert await box.content("ada", "a-1") == secret and await box.content("bob", "a-1") is None
        assert await box.get("bob", ["a-1"]) == []
        await store.create("ada", "c-1", "Plans", "m", 1.0)
        assert await box.send("ada", "c-1", ["a-1"]) == 1
        assert not await box.remove_draft("ada", "a-1")  # sent: it goes with the conversation only
        assert await box.add("ada", StoredAttachment("a-3", None, "text", "text/plain", 5), b"draft", 1.0, bound=100)
        assert await box.remove_draft("ada", "a-3") and await box.content("ada", "a-3") is None
        await store.delete("ada", "c-1")
        assert await box.used("ada") == 0 and await box.content("ada", "a-1") is None
        async with storage.read() as db:  # the content went with its conversation and with the removed draft
            assert (await db.execute(sa.select(sa.func.count()).select_from(chat_attachment_content))).scalar() == 0
    finally:
        await storage.close()


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


async def attach(tab: AsgiWsClient, name: str, data: bytes, chunk: int = 4096) -> dict[str, Any]:
    upload = (await tab.request("chat/attach", {"name": name, "size": len(data)}))["id"]
    for start in range(0, len(data), chunk):
        piece = base64.b64encode(data[start : start + chunk]).decode()
        last = start + chunk >= len(data)
        answer = await tab.request("chat/attach/chunk", {"id": upload, "data": piece, "last": last})
    return dict(answer["attachment"])


async def answer_done(tab: AsgiWsClient, sent: dict[str, Any]) -> None:
    """Until the answer to a `chat/send` is done."""
    await tab.wait_notification(
        "chat/event",
        lambda p: (
            p.get("type") == "message" and p["message"]["id"] == sent["answerId"] and p["message"]["status"] == "done"
        ),
    )


async def test_an_image_goes_to_a_model_with_vision_and_is_refused_for_one_without(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    for key in ("eyes", "eyes-a"):
        endpoint.script(key, [{"events": [{"text": "A red square."}]}])
    base = {"api": "openai", "baseUrl": endpoint.openai_base_url, "apiKey": "k"}
    anthropic = {"api": "anthropic", "baseUrl": endpoint.anthropic_base_url, "apiKey": "k"}
    models = [
        {"id": "eyes", "model": "eyes", "vision": True, **base},
        {"id": "blind", "model": "blind", **base},
        {"id": "eyes-a", "model": "eyes-a", "vision": True, **anthropic},
    ]
    red = png(64, 64, noise=True)
    async with in_process_host(
        tmp_path, {"basic": sdk_server("basic")}, webhost_options={"chat": {"models": models}}
    ) as host:
        async with host.tab(person=Person(id="ada", name="Ada", role="member")) as tab:
            image = await attach(tab, "red.png", red)
            assert image["kind"] == "image" and image["mimeType"] == "image/png"
            with pytest.raises(Exception, match="blind does not take images: remove red.png"):
                await tab.request("chat/send", {"text": "what is it?", "model": "blind", "attachments": [image]})
            sent = await tab.request("chat/send", {"text": "what is it?", "model": "eyes", "attachments": [image]})
            await answer_done(tab, sent)
            [request] = (
                await tab.request(
                    "chat/requests", {"conversationId": sent["conversationId"], "messageId": sent["answerId"]}
                )
            )["requests"]
            user = request["body"]["messages"][-1]
            assert user["content"][0] == {"type": "text", "text": "[attached image red.png]"}
            assert user["content"][1]["image_url"]["url"].startswith("data:image/png;base64,[")
            opened = await tab.request("chat/open", {"conversationId": sent["conversationId"]})
            assert opened["messages"][0]["attachments"] == [{**image}]
            with pytest.raises(Exception, match="no longer attached"):  # a sent attachment is not sent twice
                await tab.request("chat/send", {"text": "again", "model": "eyes", "attachments": [image]})
            # The endpoint received the image's base64 whole (written into the body as it was sent), on both wires.
            [received] = [r for r in endpoint.requests("eyes") if "image" in str(r["body"]["messages"][-1])]
            url = received["body"]["messages"][-1]["content"][1]["image_url"]["url"]
            assert url.startswith("data:image/png;base64,") and base64.b64decode(url.split(",", 1)[1]) == red
            again = await attach(tab, "red.png", red)
            answered = await tab.request("chat/send", {"text": "and now?", "model": "eyes-a", "attachments": [again]})
            await answer_done(tab, answered)
            [received] = [r for r in endpoint.requests("eyes-a") if "image" in str(r["body"]["messages"][-1])]
            source = received["body"]["messages"][-1]["content"][1]["source"]
            assert source["media_type"] == "image/png" and base64.b64decode(source["data"]) == red
