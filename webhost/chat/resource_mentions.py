"""`@` in the composer (docs/chat.md "Resources and prompts in the composer"): the resources (and resource
templates) of the person's connected servers, and one of them attached to the message as resource content.

The lists are the catalogue's (cached, dropped on `list_changed`), so typing `@` asks a server only the first
time. A chosen resource is read through the person's own connection (their identity, their sign-in) and kept
as any attachment (sealed, counted in their bound: attachments.py), of kind "resource": its text, or an
image's bytes. A server that refuses the read, or a resource that is neither text nor an image, is one line.
"""

from __future__ import annotations

import base64
import binascii
import logging
import time
from collections.abc import Mapping
from typing import Any

import anyio

from webhost.catalogue import Catalogue
from webhost.chat.attachment_files import AttachmentRefused, prepare
from webhost.chat.attachments import MAX_NAME, ChatParts, megabytes
from webhost.chat.transcript import new_id
from webhost.errors import WebhostError
from webhost.storage.attachments import StoredAttachment
from webhost.upstream.connection import Connection

logger = logging.getLogger(__name__)

MAX_ITEMS = 1000  # of one server's list, offered in the composer
MAX_TEXT = 2000  # characters of a listed item's description kept for the composer
KINDS = {"resources": ("resources", "resourceTemplates"), "prompts": ("prompts",)}
CAPABILITY = {"resources": "resources", "prompts": "prompts"}


async def composer_items(
    connections: Mapping[str, Connection], catalogue: Catalogue, kind: str
) -> list[dict[str, Any]]:
    """What `@` (kind "resources") or `/` (kind "prompts") offers: each connected server's items, by server."""
    connected = [
        c for c in connections.values() if c.status == "connected" and CAPABILITY[kind] in (c.info.capabilities or {})
    ]
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}

    async def list_one(connection: Connection, listing: str) -> None:
        try:
            found[(connection.name, listing)] = await catalogue.listing(connection, listing, refresh=False)
        except WebhostError as exc:  # that server's items are left out; the others are offered
            logger.info("chat: the %s of %s could not be listed: %s", listing, connection.name, exc.message)

    async with anyio.create_task_group() as tg:
        for connection in connected:
            for listing in KINDS[kind]:
                tg.start_soon(list_one, connection, listing)
    completes = {c.name for c in connected if "completions" in (c.info.capabilities or {})}
    items: list[dict[str, Any]] = []
    for (server, listing), entries in sorted(found.items()):
        for entry in entries[:MAX_ITEMS]:
            item = _item(server, listing, entry)
            if item is not None:
                items.append({**item, "completions": server in completes})
    return items


def _item(server: str, listing: str, entry: dict[str, Any]) -> dict[str, Any] | None:
    described = {
        "server": server,
        "name": str(entry.get("name") or ""),
        "title": str(entry.get("title") or entry.get("name") or ""),
        "description": str(entry.get("description") or "")[:MAX_TEXT],
    }
    if listing == "prompts":
        arguments = entry.get("arguments")
        kept = [
            {
                "name": str(a["name"]),
                "description": str(a.get("description") or ""),
                "required": bool(a.get("required")),
            }
            for a in (arguments if isinstance(arguments, list) else [])
            if isinstance(a, dict) and isinstance(a.get("name"), str)
        ]
        return {**described, "arguments": kept} if described["name"] else None
    if listing == "resourceTemplates":
        template = entry.get("uriTemplate")
        return {**described, "uriTemplate": template, "mimeType": entry.get("mimeType")} if template else None
    uri = entry.get("uri")
    return {**described, "uri": uri, "mimeType": entry.get("mimeType")} if isinstance(uri, str) else None


def resource_content(name: str, result: dict[str, Any], *, text_chars: int) -> tuple[str, bytes]:
    """The read resource as (type, content) an attachment keeps: its text contents together, or one image."""
    contents = [c for c in result.get("contents") or [] if isinstance(c, dict)]
    texts = [c for c in contents if isinstance(c.get("text"), str)]
    if texts:
        several = len(texts) > 1
        text = "\n\n".join((f"[{c.get('uri')}]\n" if several else "") + str(c["text"]) for c in texts)
        if len(text) > text_chars:
            raise AttachmentRefused(
                f"{name} has {len(text):,} characters of text; a resource may have at most {text_chars:,}"
            )
        mime = str(texts[0].get("mimeType") or "text/plain") if not several else "text/plain"
        return mime, text.encode()
    for item in contents:
        if isinstance(item.get("blob"), str):
            try:
                data = base64.b64decode(item["blob"], validate=True)
            except (binascii.Error, ValueError):
                raise AttachmentRefused(f"{name}: the server sent content that is not base64") from None
            prepared = prepare(name, data, text_chars=text_chars)  # an image, a PDF's text, UTF-8 text; else refused
            return prepared.mime_type, prepared.content
    raise AttachmentRefused(f"{name}: the server returned no content for it")


async def attach_resource(chat: ChatParts, connection: Connection, uri: str, name: str | None) -> dict[str, Any]:
    """Read the resource through the person's connection and keep it as a draft attachment of kind "resource"."""
    options = chat.options.chat
    label = " ".join((name or uri).split())[:MAX_NAME] or uri[:MAX_NAME]
    try:
        result = await connection.client.read_resource(uri)
    except WebhostError as exc:
        raise AttachmentRefused(f"{connection.name} refused to give {label}: {exc.message}") from None
    mime, content = await anyio.to_thread.run_sync(
        lambda: resource_content(label, result, text_chars=options.max_attachment_text_chars)
    )
    if len(content) > options.max_attachment_bytes:
        limit = megabytes(options.max_attachment_bytes)
        raise AttachmentRefused(f"{label} is {megabytes(len(content))}; an attachment may be at most {limit}")
    attachment_id = new_id("a-")
    stored = StoredAttachment(attachment_id, None, "resource", mime, len(content))
    bound = options.attachment_bytes_per_person
    if not await chat.store.attachments.add(chat.person.id, stored, content, time.time(), bound=bound):
        raise AttachmentRefused(
            f"{label} does not fit: your attachments may take {megabytes(bound)} in all "
            "(deleting conversations frees their attachments)"
        )
    return {
        "id": attachment_id,
        "name": label,
        "kind": "resource",
        "mimeType": mime,
        "uri": uri,
        "server": connection.name,
    }
