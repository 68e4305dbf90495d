"""A person's attachments in the chat (docs/chat.md "Attachments"): files sent from the composer in
chunks, prepared (attachment_files.py), kept sealed (webhost/storage/attachments.py), then named by the
message they are sent with and given to the model as blocks of that message.

The composer sends a file as `chat/attach` (its name and size) and `chat/attach/chunk`s of base64: each chunk
goes to the disk as it comes, sealed under a key that lives only in memory (storage/upload_spool.py), in a file
freed when the upload ends, however it ends (kept, refused, removed, or its tab gone: `drop_uploads`); an image
that must be scaled is decoded from there, so the file's bytes are never whole in memory beside its pixels
(issue 28). A message refers to its attachments by id, with their name, kind and type (`Message.attachments`);
their content is read from the store when a turn starts (`blocks`).
"""

from __future__ import annotations

import binascii
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from weakref import WeakKeyDictionary

import anyio

from webhost.chat.attachment_files import AttachmentRefused, Prepared, prepare
from webhost.chat.providers.messages import Block, TextBlock
from webhost.chat.providers.streamed_images import streamed_image
from webhost.chat.tool_choice import ToolChoice
from webhost.chat.transcript import Message, new_id
from webhost.config import WebhostOptions
from webhost.config.chat import ChatModel, ChatOptions
from webhost.errors import InvalidParams
from webhost.malloc import give_back
from webhost.people import Person
from webhost.storage.attachments import AttachmentStore, StoredAttachment
from webhost.storage.conversations import ConversationStore
from webhost.storage.upload_spool import UploadSpool

MAX_UPLOADS = 8  # files coming at once per person
MAX_PER_MESSAGE = 10
CHUNK_CHARS = 1024 * 1024  # base64 characters of one chunk (the page sends 512 KiB of file per chunk)
MAX_NAME = 255
GIVE_BACK_AFTER = 1024 * 1024  # bytes of a file after whose attach the freed memory is given back (11-15 ms)
MAX_SOURCE = 2048  # characters of a resource's URI (or server name) a message keeps


@dataclass
class Upload:
    name: str
    size: int  # as announced: the chunks may not pass it
    spool: UploadSpool  # what came so far, sealed on disk
    tab: str | None = None  # the tab sending it: gone, the upload goes too


class Attachments:
    """One person's uploads under way and the way from their stored attachments to the model."""

    def __init__(
        self, store: Callable[[], AttachmentStore], person_id: str, options: Callable[[], ChatOptions]
    ) -> None:
        self._store = store
        self._person = person_id
        self._options = options
        self._uploads: dict[str, Upload] = {}

    def start(self, name: str, size: int, *, tab: str | None = None) -> str:
        options = self._options()
        name = " ".join(name.split())[:MAX_NAME] or "file"
        if size > options.max_attachment_bytes:
            limit = megabytes(options.max_attachment_bytes)
            raise AttachmentRefused(f"{name} is {megabytes(size)}; a file may be at most {limit}")
        if len(self._uploads) >= MAX_UPLOADS:
            raise AttachmentRefused(f"{MAX_UPLOADS} files are already being attached: wait for them first")
        try:
            spool = UploadSpool(self._store().temp_dir)
        except OSError as exc:
            raise _not_kept(name, exc) from None
        upload_id = new_id("a-")
        self._uploads[upload_id] = Upload(name, size, spool, tab)
        return upload_id

    async def chunk(self, upload_id: str, data: str, last: bool) -> dict[str, Any] | None:
        """Add a chunk; on the last one, prepare and keep the file and say what it became."""
        upload = self._uploads.get(upload_id)
        if upload is None:
            raise InvalidParams("no such upload", {"id": upload_id})
        try:
            piece = binascii.a2b_base64(data, strict_mode=True)
        except (binascii.Error, ValueError):
            self._drop(upload_id)
            raise InvalidParams("params.data must be base64") from None
        if upload.spool.size + len(piece) > upload.size:
            self._drop(upload_id)
            raise AttachmentRefused(f"{upload.name} is larger than announced")
        try:
            upload.spool.write(piece)
            del piece
            if last:
                upload.spool.finish()
        except OSError as exc:
            self._drop(upload_id)
            raise _not_kept(upload.name, exc) from None
        if not last:
            return None
        del self._uploads[upload_id]
        with upload.spool:  # closed (the file freed) whatever happens from here
            return await self._keep(upload_id, upload)

    async def _keep(self, upload_id: str, upload: Upload) -> dict[str, Any]:
        options = self._options()
        try:
            # From the spool: a worker thread reads it, nothing else touches it (the upload is no longer listed).
            prepared = await anyio.to_thread.run_sync(
                _prepare, upload.name, upload.spool, options.max_attachment_text_chars
            )
        except OSError as exc:
            raise _not_kept(upload.name, exc) from None
        upload.spool.close()  # before the content is sealed: the disk is not held for the database's write
        stored = StoredAttachment(upload_id, None, prepared.kind, prepared.mime_type, len(prepared.content))
        bound = options.attachment_bytes_per_person
        kept = await self._store().add(self._person, stored, prepared.content, time.time(), bound=bound)
        del prepared
        if upload.size >= GIVE_BACK_AFTER:
            # What the file's frames, decode and seal freed goes back to the kernel now, in the worker threads'
            # arenas too, so that sending it (or anything next) starts from the memory before it (malloc.py).
            await anyio.to_thread.run_sync(give_back)
        if not kept:
            raise AttachmentRefused(
                f"{upload.name} does not fit: your attachments may take {megabytes(bound)} in all "
                "(deleting conversations frees their attachments)"
            )
        return {"id": upload_id, "name": upload.name, "kind": stored.kind, "mimeType": stored.mime_type}

    async def remove(self, attachment_id: str) -> None:
        if not self._drop(attachment_id):
            await self._store().remove_draft(self._person, attachment_id)

    def drop_uploads(self, tab: str | None = None) -> None:
        """The uploads that will get no more chunks: those of a tab that went, or all (None)."""
        for upload_id in [key for key, upload in self._uploads.items() if tab is None or upload.tab == tab]:
            self._drop(upload_id)

    def _drop(self, upload_id: str) -> bool:
        upload = self._uploads.pop(upload_id, None)
        if upload is not None:
            upload.spool.close()
        return upload is not None

    async def for_message(self, given: Sequence[dict[str, Any]], model: ChatModel) -> list[dict[str, Any]]:
        """The references a message keeps of its attachments (the person's drafts, named as the page named
        them); an image for a model without vision is refused before anything is sent."""
        if len(given) > MAX_PER_MESSAGE:
            raise AttachmentRefused(f"a message may have at most {MAX_PER_MESSAGE} attachments")
        names = {str(item["id"]): str(item.get("name") or "file")[:MAX_NAME] for item in given}
        # Where a resource came from (`@`, resource_mentions.py), as the page named it: the model is told.
        sources = {
            str(item["id"]): {
                key: str(item[key])[:MAX_SOURCE] for key in ("uri", "server") if isinstance(item.get(key), str)
            }
            for item in given
        }
        found = {a.id: a for a in await self._store().get(self._person, list(names))}
        refs: list[dict[str, Any]] = []
        for attachment_id, name in names.items():
            stored = found.get(attachment_id)
            if stored is None or stored.conversation_id is not None:
                raise AttachmentRefused(f"{name} is no longer attached: attach it again")
            if is_image(stored.kind, stored.mime_type) and not model.vision:
                label = model.label or model.id
                raise AttachmentRefused(f"{label} does not take images: remove {name}, or choose a model that does")
            ref = {"id": attachment_id, "name": name, "kind": stored.kind, "mimeType": stored.mime_type}
            refs.append({**ref, **sources[attachment_id]} if stored.kind == "resource" else ref)
        return refs

    async def sent(self, conversation_id: str, refs: Sequence[dict[str, Any]]) -> None:
        if refs:
            await self._store().send(self._person, conversation_id, [str(ref["id"]) for ref in refs])

    async def blocks(
        self, messages: Sequence[Message], known: Mapping[str, tuple[Block, ...]], *, vision: bool
    ) -> dict[str, tuple[Block, ...]]:
        """What the model is given of each attachment of these messages, by id (those `known` are not read again)."""
        out: dict[str, tuple[Block, ...]] = {}
        for message in messages:
            for ref in message.attachments:
                if str(ref["id"]) in known:
                    out[str(ref["id"])] = known[str(ref["id"])]
                    continue
                content = await self._store().content(self._person, str(ref["id"]))
                out[str(ref["id"])] = attachment_blocks(ref, content, vision=vision)
        return out


class ChatParts(Protocol):
    """What of a person's chat (runner.py `Chat`) their attachments go with."""

    options: WebhostOptions
    person: Person

    @property
    def store(self) -> ConversationStore: ...


class PersonChat(ChatParts, Protocol):
    async def send(
        self,
        conversation_id: str | None,
        text: str,
        model_id: str | None,
        *,
        tools: ToolChoice | None = None,
        attachments: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]: ...


# Each person's attachments beside their chat, for as long as the chat lives (the chat's own module is
# at its size limit; this keeps the attachments' state out of it).
_BESIDE: WeakKeyDictionary[Any, Attachments] = WeakKeyDictionary()


def attachments_of(chat: ChatParts) -> Attachments:
    found = _BESIDE.get(chat)
    if found is None:
        found = _BESIDE[chat] = Attachments(lambda: chat.store.attachments, chat.person.id, lambda: chat.options.chat)
    return found


def drop_uploads(chat: ChatParts, tab: str | None = None) -> None:
    """A tab went (or, None, the whole chat): the files it was sending are dropped, their spools freed."""
    found = _BESIDE.get(chat)
    if found is not None:
        found.drop_uploads(tab)


async def send_with_attachments(
    chat: PersonChat,
    conversation_id: str | None,
    text: str,
    model_id: str | None,
    given: Sequence[dict[str, Any]],
    *,
    tools: ToolChoice | None = None,
) -> dict[str, Any]:
    """`chat/send` with attachments: refused whole, before anything is sent, when one cannot go."""
    attachments = attachments_of(chat)
    model = chat.options.chat.model(model_id)  # None: the chat's own error for the unknown model follows
    refs = await attachments.for_message(given, model) if given and model is not None else []
    sent = await chat.send(conversation_id, text, model_id, tools=tools, attachments=refs)
    await attachments.sent(str(sent["conversationId"]), refs)
    return sent


def attachment_blocks(ref: dict[str, Any], content: bytes | None, *, vision: bool) -> tuple[Block, ...]:
    name = str(ref.get("name") or "file")
    if content is None:
        return (TextBlock(f"[attachment {name}: no longer readable]"),)
    # A resource of a server (`@`): said as such, with its URI and server, so the model can name it.
    what = f"resource {ref.get('uri')} of the server {ref.get('server')}" if ref.get("kind") == "resource" else None
    if is_image(str(ref.get("kind")), str(ref.get("mimeType"))):
        if not vision:
            return (TextBlock(f"[an image, {name}, which this model cannot be given]"),)
        return (
            TextBlock(f"[attached {what or 'image'}: {name}]" if what else f"[attached image {name}]"),
            streamed_image(content, str(ref["mimeType"])),  # its base64 is written as the request is sent
        )
    head = f"[attached {what}: {name}]" if what else f"[attached file {name}]"
    return (TextBlock(f"{head}\n{content.decode('utf-8', 'replace')}"),)


def is_image(kind: str, mime_type: str) -> bool:
    """An image block for the model: an image file, or a resource whose content is an image."""
    return kind == "image" or (kind == "resource" and mime_type.startswith("image/"))


def _prepare(name: str, spool: UploadSpool, text_chars: int) -> Prepared:
    return prepare(name, spool, text_chars=text_chars)


def _not_kept(name: str, exc: OSError) -> AttachmentRefused:
    """The disk refused the spool (full, or the data folder not writable): said as the one line of a refusal."""
    return AttachmentRefused(f"webhost could not keep {name} while it came ({exc.strerror or exc})")


def megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"
