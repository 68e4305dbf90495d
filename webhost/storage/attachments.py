"""The chat's attachments (docs/chat.md "Attachments"): what a person attached to a message, sealed.

A row is made when the person attaches a file (a draft: no conversation yet) and given its conversation
when the message is sent; it goes with the conversation. Its content (an image's bytes, a text's UTF-8)
is sealed with the chat's key (`BytesSeal`), bound to the person and the attachment, so the database
alone reads none of it, and kept in a table of its own (`chat_attachment_content`: the update that gives a
sent attachment its conversation would make SQLite rewrite the whole file with its row); its name lives only in
the sealed message that refers to it. In the clear: its kind, type and size, which the per-person bound (`used`)
sums. A file on its way in is spooled, sealed, in `temp_dir` (storage/upload_spool.py) until it is prepared and
kept here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.chat_seal import BytesSeal, ChatSeal
from webhost.storage.db import Storage, metadata

SEAL_KIND = "attachment"

chat_attachments = sa.Table(
    "chat_attachments",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("person_id", sa.String(255), nullable=False),
    sa.Column("conversation_id", sa.String(64)),  # None: attached in the composer, not sent yet
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("mime_type", sa.String(200), nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("sealed", sa.LargeBinary),  # empty: the content is in chat_attachment_content (migration 0015)
    sa.Index("chat_attachments_person", "person_id", "conversation_id"),
)
# The content, apart from the row that an attachment's send updates: SQLite rewrites a whole row on an update.
chat_attachment_content = sa.Table(
    "chat_attachment_content",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("person_id", sa.String(255), nullable=False),
    sa.Column("sealed", sa.LargeBinary, nullable=False),
)


@dataclass(frozen=True)
class StoredAttachment:
    id: str
    conversation_id: str | None
    kind: str
    mime_type: str
    size: int


class AttachmentStore:
    def __init__(self, storage: Storage, seal: ChatSeal, *, temp_dir: Path | None = None) -> None:
        self.storage = storage
        self.seal = BytesSeal(seal)
        self.temp_dir = temp_dir  # where uploads are spooled (None: the system's temporary folder)

    async def add(
        self, person_id: str, attachment: StoredAttachment, content: bytes, now: float, *, bound: int
    ) -> bool:
        """Keep a draft attachment; False (nothing kept) when the person's attachments would pass `bound` bytes."""
        sealed = self.seal.seal(person_id, attachment.id, SEAL_KIND, content)

        async def work(db: AsyncConnection) -> bool:
            if await _used(db, person_id) + attachment.size > bound:
                return False
            await db.execute(
                chat_attachments.insert().values(
                    id=attachment.id,
                    person_id=person_id,
                    conversation_id=attachment.conversation_id,
                    kind=attachment.kind,
                    mime_type=attachment.mime_type,
                    size=attachment.size,
                    created_at=now,
                )
            )
            content = {"id": attachment.id, "person_id": person_id, "sealed": sealed}
            await db.execute(chat_attachment_content.insert().values(**content))
            return True

        return await self.storage.write(work)

    async def used(self, person_id: str) -> int:
        """Bytes of the person's attachments, sent or not."""
        async with self.storage.read() as db:
            return await _used(db, person_id)

    async def get(self, person_id: str, attachment_ids: list[str]) -> list[StoredAttachment]:
        """The person's attachments among these ids (another person's are not found)."""
        if not attachment_ids:
            return []
        query = sa.select(*_columns()).where(
            chat_attachments.c.person_id == person_id, chat_attachments.c.id.in_(attachment_ids)
        )
        async with self.storage.read() as db:
            rows = (await db.execute(query)).mappings().all()
        return [_stored(row) for row in rows]

    async def content(self, person_id: str, attachment_id: str) -> bytes | None:
        query = sa.select(chat_attachment_content.c.sealed).where(
            chat_attachment_content.c.person_id == person_id, chat_attachment_content.c.id == attachment_id
        )
        async with self.storage.read() as db:
            sealed = (await db.execute(query)).scalar()
        return None if sealed is None else self.seal.open(person_id, attachment_id, SEAL_KIND, bytes(sealed))

    async def send(self, person_id: str, conversation_id: str, attachment_ids: list[str]) -> int:
        """Give these drafts of the person their conversation; how many were drafts."""

        async def work(db: AsyncConnection) -> int:
            done = await db.execute(
                chat_attachments.update()
                .where(
                    chat_attachments.c.person_id == person_id,
                    chat_attachments.c.id.in_(attachment_ids),
                    chat_attachments.c.conversation_id.is_(None),
                )
                .values(conversation_id=conversation_id)
            )
            return int(done.rowcount)

        return await self.storage.write(work)

    async def remove_draft(self, person_id: str, attachment_id: str) -> bool:
        async def work(db: AsyncConnection) -> bool:
            done = await db.execute(
                chat_attachments.delete().where(
                    chat_attachments.c.person_id == person_id,
                    chat_attachments.c.id == attachment_id,
                    chat_attachments.c.conversation_id.is_(None),
                )
            )
            if done.rowcount != 1:
                return False
            content = chat_attachment_content.c
            await db.execute(
                chat_attachment_content.delete().where(content.person_id == person_id, content.id == attachment_id)
            )
            return True

        return await self.storage.write(work)


async def delete_conversation_attachments(db: AsyncConnection, person_id: str, conversation_id: str) -> None:
    """The attachments of a conversation being deleted, with their content (inside its transaction)."""
    mine = (chat_attachments.c.person_id == person_id, chat_attachments.c.conversation_id == conversation_id)
    await db.execute(
        chat_attachment_content.delete().where(
            chat_attachment_content.c.id.in_(sa.select(chat_attachments.c.id).where(*mine))
        )
    )
    await db.execute(chat_attachments.delete().where(*mine))


def _columns() -> tuple[sa.Column[object], ...]:
    c = chat_attachments.c
    return (c.id, c.conversation_id, c.kind, c.mime_type, c.size)


def _stored(row: sa.RowMapping) -> StoredAttachment:
    return StoredAttachment(row["id"], row["conversation_id"], row["kind"], row["mime_type"], int(row["size"]))


async def _used(db: AsyncConnection, person_id: str) -> int:
    query = sa.select(sa.func.coalesce(sa.func.sum(chat_attachments.c.size), 0)).where(
        chat_attachments.c.person_id == person_id
    )
    return int((await db.execute(query)).scalar() or 0)
