"""A file on its way in (docs/chat.md "Attachments", issue 28): its chunks spooled to the data folder's temp/,
sealed, and the spool let go however the upload ends (kept, refused, removed, its tab closed); an image that
must be scaled comes out of the spool as it came out of the whole file's bytes."""

from __future__ import annotations

import base64
import io
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PIL import Image, _imaging

from tests.support.images import png
from tests.support.inprocess import in_process_host, sdk_server
from tests.support.open_files import open_in
from webhost.chat.attachment_files import IMAGE_BYTES, LONG_EDGE, AttachmentRefused, prepare
from webhost.chat.attachments import Attachments
from webhost.config.chat import ChatOptions
from webhost.errors import InvalidParams
from webhost.storage.conversations import ChatSeal, ConversationStore
from webhost.storage.db import Storage
from webhost.storage.upload_spool import UploadSpool

pytestmark = pytest.mark.anyio

SECRET = b"the secret plans for the garden, " * 40_000  # 1.3 MB: several chunks and spool blocks
CHUNK = 512 * 1024  # as the page sends them


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[ConversationStore]:
    storage = Storage(f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite3'}")
    await storage.start()
    try:
        yield ConversationStore(storage, ChatSeal(b"k" * 32), temp_dir=tmp_path / "temp")
    finally:
        await storage.close()


def attachments(store: ConversationStore, **options: int) -> Attachments:
    chat = ChatOptions.model_validate({"models": [], **options})
    return Attachments(lambda: store.attachments, "ada", lambda: chat)


async def sent(box: Attachments, name: str, data: bytes) -> dict[str, object]:
    upload = box.start(name, len(data))
    for start in range(0, len(data), CHUNK):
        answer = await box.chunk(upload, b64(data[start : start + CHUNK]), start + CHUNK >= len(data))
    assert answer is not None
    return answer


async def test_an_upload_is_on_disk_only_sealed_and_its_spool_goes_once_it_is_kept(
    tmp_path: Path, store: ConversationStore
) -> None:
    box, temp = attachments(store, maxAttachmentTextChars=len(SECRET)), tmp_path / "temp"
    upload = box.start("plans.txt", len(SECRET))
    await box.chunk(upload, b64(SECRET[:CHUNK]), False)
    await box.chunk(upload, b64(SECRET[CHUNK : 2 * CHUNK]), False)
    [fd] = open_in(temp)
    on_disk = os.pread(fd, os.fstat(fd).st_size, 0)
    assert len(on_disk) > 2 * CHUNK - 256 * 1024 and b"secret plans" not in on_disk  # what came, sealed
    assert list(temp.iterdir()) == []  # the file has no name
    kept = await box.chunk(upload, b64(SECRET[2 * CHUNK :]), True)
    assert kept == {"id": upload, "name": "plans.txt", "kind": "text", "mimeType": "text/plain"}
    assert open_in(temp) == []
    assert await store.attachments.content("ada", upload) == SECRET


async def test_the_spool_goes_when_the_upload_is_refused_removed_or_its_tab_closes(
    tmp_path: Path, store: ConversationStore
) -> None:
    box, temp = attachments(store, maxAttachmentTextChars=100), tmp_path / "temp"
    larger = box.start("plans.txt", 10)
    with pytest.raises(AttachmentRefused, match="plans.txt is larger than announced"):
        await box.chunk(larger, b64(SECRET[:11]), False)
    garbled = box.start("plans.txt", 10)
    with pytest.raises(InvalidParams, match="params.data must be base64"):
        await box.chunk(garbled, "not base64!", False)
    too_long = box.start("plans.txt", 101)
    with pytest.raises(AttachmentRefused, match="plans.txt has 101 characters of text; a file may have at most 100"):
        await box.chunk(too_long, b64(SECRET[:101]), True)
    assert open_in(temp) == []
    removed = box.start("plans.txt", 100)
    await box.chunk(removed, b64(SECRET[:50]), False)
    await box.remove(removed)
    assert open_in(temp) == []
    with pytest.raises(InvalidParams, match="no such upload"):
        await box.chunk(removed, b64(SECRET[50:100]), True)
    mine, theirs = box.start("a.txt", 100, tab="s-1"), box.start("b.txt", 100, tab="s-2")
    await box.chunk(mine, b64(SECRET[:50]), False)
    await box.chunk(theirs, b64(SECRET[:50]), False)
    box.drop_uploads("s-1")
    assert len(open_in(temp)) == 1
    assert await box.chunk(theirs, b64(SECRET[50:100]), True) is not None  # the other tab's goes on
    assert open_in(temp) == []


async def test_an_image_sent_in_chunks_is_scaled_as_from_its_whole_bytes(
    tmp_path: Path, store: ConversationStore
) -> None:
    noise = png(2000, 1000, noise=True)  # over the long edge: decoded, scaled, a JPEG
    kept = await sent(attachments(store), "noise.png", noise)
    content = await store.attachments.content("ada", str(kept["id"]))
    assert (kept["kind"], kept["mimeType"]) == ("image", "image/jpeg") and content is not None
    assert content == prepare("noise.png", noise, text_chars=10).content
    with Image.open(io.BytesIO(noise)) as whole:  # what the code before the spool did with it
        whole.thumbnail((LONG_EDGE, LONG_EDGE))
        out = io.BytesIO()
        whole.save(out, "JPEG", quality=85)
    assert content == out.getvalue()
    small = png(40, 30, noise=True)  # taken as it is, byte for byte
    kept = await sent(attachments(store), "dot.png", small)
    assert await store.attachments.content("ada", str(kept["id"])) == small
    assert open_in(tmp_path / "temp") == []


def test_an_image_that_needs_no_resizing_is_decoded_once_and_freed_before_it_is_kept(tmp_path: Path) -> None:
    # Within the long edge, over IMAGE_BYTES: decoded, then a JPEG at the same size.
    noise = png(1200, 1200, noise=True)
    with UploadSpool(tmp_path) as spool:
        spool.write(noise)
        spool.finish()
        _imaging.reset_stats()
        prepared = prepare("noise.png", spool, text_chars=10)
    stats = _imaging.get_stats()
    # Pillow's save() copied the whole image first when it had not been decoded yet (issue 28).
    assert stats["new_count"] == 1 and stats["freed_blocks"] == stats["allocated_blocks"] == 1
    assert prepared.mime_type == "image/jpeg" and len(prepared.content) <= IMAGE_BYTES < len(noise)


async def test_a_tab_closed_in_the_middle_of_an_upload_lets_its_spool_go(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}) as host:
        temp = host.settings.data_dir / "temp"
        async with host.tab() as tab:
            upload = (await tab.request("chat/attach", {"name": "plans.txt", "size": len(SECRET)}))["id"]
            await tab.request("chat/attach/chunk", {"id": upload, "data": b64(SECRET[:CHUNK]), "last": False})
            assert len(open_in(temp)) == 1
        assert open_in(temp) == []
        async with host.tab() as tab:  # the person's next tab cannot go on with it
            with pytest.raises(Exception, match="no such upload"):
                await tab.request("chat/attach/chunk", {"id": upload, "data": b64(SECRET[CHUNK : 2 * CHUNK])})
