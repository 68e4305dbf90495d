"""Each person's conversations with the model (contract §8), in the database, sealed.

Every query names the person: nobody reads anyone else's conversations, admins included. A message's
body (its text, tool calls with arguments and bounded results), the exact requests sent to the model
and the apps' model contexts are sealed with AES-GCM under a key derived from the deployment secret
(`derive_key(secret, "chat/v1")`), bound to the person and the conversation, so the database alone
reads none of it, nor the title (storage/conversation_titles.py); the columns in the clear are what
listing and ordering need (ids, times, statuses, the model's id). An assistant message being streamed
carries the replica streaming it. Tokens used are kept per person,
day, model and conversation, without text, for budgets and the admins' totals.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.attachments import AttachmentStore, delete_conversation_attachments
from webhost.storage.chat_seal import ChatSeal as ChatSeal  # where the stores are built import it from here
from webhost.storage.chat_tables import chat_contexts, chat_conversations, chat_messages, chat_requests
from webhost.storage.chat_tables import chat_usage as chat_usage  # budgets and the admins' totals import it from here
from webhost.storage.conversation_titles import opened_title, replace_title_if, seal_clear_titles, sealed_title
from webhost.storage.db import Storage
from webhost.storage.portable import upsert

MAX_MESSAGES = 1000  # the newest a conversation is read with
KEEP_REQUESTS = 40  # the newest requests kept per conversation (each holds the whole conversation then)


@dataclass(frozen=True)
class Conversation:
    id: str
    title: str
    model_id: str
    created_at: float
    updated_at: float
    settings: dict[str, Any]
    leaf_id: str | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "model": self.model_id,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }


@dataclass(frozen=True)
class StoredMessage:
    id: str
    seq: int
    role: str
    status: str
    replica_id: str | None
    body: dict[str, Any]
    parent_id: str | None = None


def _stored_message(row: sa.RowMapping, body: dict[str, Any]) -> StoredMessage:
    return StoredMessage(row["id"], row["seq"], row["role"], row["status"], row["replica_id"], body, row["parent_id"])


class ConversationStore:
    def __init__(self, storage: Storage, seal: ChatSeal, *, temp_dir: Path | None = None) -> None:
        self.storage = storage
        self.seal = seal
        self.attachments = AttachmentStore(storage, seal, temp_dir=temp_dir)

    # -- conversations ----------------------------------------------------------------------------

    async def create(self, person_id: str, conversation_id: str, title: str, model_id: str, now: float) -> None:
        async def work(db: AsyncConnection) -> None:
            await db.execute(
                chat_conversations.insert().values(
                    id=conversation_id,
                    person_id=person_id,
                    **sealed_title(self.seal, person_id, conversation_id, title),
                    model_id=model_id,
                    created_at=now,
                    updated_at=now,
                )
            )

        await self.storage.write(work)

    async def listing(self, person_id: str, *, limit: int = 200) -> list[Conversation]:
        query = (
            sa.select(chat_conversations)
            .where(chat_conversations.c.person_id == person_id)
            .order_by(chat_conversations.c.updated_at.desc())
            .limit(limit)
        )
        async with self.storage.read() as db:
            rows = (await db.execute(query)).mappings().all()
        return [self._conversation(person_id, row) for row in rows]

    async def get(self, person_id: str, conversation_id: str) -> Conversation | None:
        query = sa.select(chat_conversations).where(
            chat_conversations.c.person_id == person_id, chat_conversations.c.id == conversation_id
        )
        async with self.storage.read() as db:
            row = (await db.execute(query)).mappings().first()
        return None if row is None else self._conversation(person_id, row)

    def _conversation(self, person_id: str, row: sa.RowMapping) -> Conversation:
        sealed = row["sealed_settings"]
        settings = self.seal.open(person_id, row["id"], "settings", bytes(sealed)) if sealed is not None else None
        return Conversation(
            id=row["id"],
            title=opened_title(self.seal, person_id, row["id"], row["title"], row["sealed_title"]),
            model_id=row["model_id"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            settings=settings if isinstance(settings, dict) else {},
            leaf_id=row["leaf_id"],
        )

    async def update(
        self,
        person_id: str,
        conversation_id: str,
        *,
        title: str | None = None,
        model_id: str | None = None,
        settings: dict[str, Any] | None = None,
        leaf_id: str | None = None,
        now: float | None = None,
        title_was: str | None = None,
    ) -> bool:
        """Change what is given; the conversation's time only with `now` (a rename or a branch shown is not
        activity: the list stays in the order of the conversations' last messages). With `title_was`, only
        while the title is still that one (a title the model wrote never replaces the person's rename)."""
        values: dict[str, Any] = {}
        if title is not None:
            values |= sealed_title(self.seal, person_id, conversation_id, title)
        if model_id is not None:
            values["model_id"] = model_id
        if settings is not None:
            values["sealed_settings"] = self.seal.seal(person_id, conversation_id, "settings", settings)
        if leaf_id is not None:
            values["leaf_id"] = leaf_id
        if now is not None:
            values["updated_at"] = now
        if not values:
            return True

        async def work(db: AsyncConnection) -> bool:
            if title_was is not None:
                return await replace_title_if(db, self.seal, person_id, conversation_id, title_was, values)
            where = [chat_conversations.c.person_id == person_id, chat_conversations.c.id == conversation_id]
            done = await db.execute(chat_conversations.update().where(*where).values(**values))
            return bool(done.rowcount == 1)

        return await self.storage.write(work)

    async def delete(self, person_id: str, conversation_id: str) -> bool:
        """The conversation and everything in it (the tokens it used stay counted, without it)."""

        async def work(db: AsyncConnection) -> bool:
            done = await db.execute(
                chat_conversations.delete().where(
                    chat_conversations.c.person_id == person_id, chat_conversations.c.id == conversation_id
                )
            )
            for table in (chat_messages, chat_requests, chat_contexts):
                await db.execute(
                    table.delete().where(table.c.person_id == person_id, table.c.conversation_id == conversation_id)
                )
            await delete_conversation_attachments(db, person_id, conversation_id)
            return bool(done.rowcount == 1)

        return await self.storage.write(work)

    # -- messages ---------------------------------------------------------------------------------

    async def save_message(
        self,
        person_id: str,
        conversation_id: str,
        message: dict[str, Any],
        *,
        seq: int,
        replica_id: str | None,
        now: float,
        parent_id: str | None = None,
        leaf_id: str | None = None,
    ) -> None:
        """Insert or replace one message (by its id), and mark the conversation as changed (and `leaf_id` as the
        end of the branch it shows, when given)."""
        row = {
            "id": str(message["id"]),
            "conversation_id": conversation_id,
            "person_id": person_id,
            "seq": seq,
            "role": str(message.get("role")),
            "status": str(message.get("status") or "done"),
            "replica_id": replica_id,
            "created_at": float(message.get("createdAt") or now),
            "updated_at": now,
            "sealed": self.seal.seal(person_id, conversation_id, "message", message),
            "parent_id": parent_id,
        }
        changed: dict[str, Any] = {"updated_at": now} if leaf_id is None else {"updated_at": now, "leaf_id": leaf_id}

        async def work(db: AsyncConnection) -> None:
            await upsert(db, chat_messages, row, key=["id"], keep=["created_at", "seq", "parent_id"])
            await db.execute(
                chat_conversations.update()
                .where(chat_conversations.c.person_id == person_id, chat_conversations.c.id == conversation_id)
                .values(**changed)
            )

        await self.storage.write(work)

    async def messages(self, person_id: str, conversation_id: str, *, limit: int = MAX_MESSAGES) -> list[StoredMessage]:
        query = (
            sa.select(chat_messages)
            .where(chat_messages.c.person_id == person_id, chat_messages.c.conversation_id == conversation_id)
            .order_by(chat_messages.c.seq.desc())
            .limit(limit)
        )
        async with self.storage.read() as db:
            rows = (await db.execute(query)).mappings().all()
        out: list[StoredMessage] = []
        for row in reversed(rows):
            body = self.seal.open(person_id, conversation_id, "message", bytes(row["sealed"]))
            if isinstance(body, dict):
                out.append(_stored_message(row, body))
        return out

    async def activity(self, person_id: str) -> dict[str, tuple[str, float]]:
        """Each of the person's conversations: its title and its last activity (what search keeps fresh by)."""
        columns = chat_conversations.c
        query = sa.select(columns.id, columns.title, columns.sealed_title, columns.updated_at).where(
            columns.person_id == person_id
        )
        async with self.storage.read() as db:
            rows = (await db.execute(query)).all()
        return {
            row.id: (opened_title(self.seal, person_id, row.id, row.title, row.sealed_title), row.updated_at)
            for row in rows
        }

    async def seal_clear_titles(self) -> int:
        """Seal the titles a previous version wrote in the clear (at start); how many."""
        return await seal_clear_titles(self.storage, self.seal)

    async def bodies(self, person_id: str, conversation_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """The messages of these conversations of the person's, opened, every branch, in the order written."""
        wanted = list(conversation_ids)
        out: dict[str, list[dict[str, Any]]] = {conversation_id: [] for conversation_id in wanted}
        for at in range(0, len(wanted), 500):  # bounded IN lists
            query = (
                sa.select(chat_messages.c.conversation_id, chat_messages.c.sealed)
                .where(
                    chat_messages.c.person_id == person_id, chat_messages.c.conversation_id.in_(wanted[at : at + 500])
                )
                .order_by(chat_messages.c.conversation_id, chat_messages.c.seq)
            )
            async with self.storage.read() as db:
                rows = (await db.execute(query)).all()
            for conversation_id, sealed in rows:
                body = self.seal.open(person_id, conversation_id, "message", bytes(sealed))
                if isinstance(body, dict):
                    out[conversation_id].append(body)
        return out

    async def delete_message(self, person_id: str, conversation_id: str, message_id: str) -> None:
        async def work(db: AsyncConnection) -> None:
            for table, column in ((chat_messages, chat_messages.c.id), (chat_requests, chat_requests.c.message_id)):
                await db.execute(
                    table.delete().where(
                        table.c.person_id == person_id,
                        table.c.conversation_id == conversation_id,
                        column == message_id,
                    )
                )

        await self.storage.write(work)

    # -- the requests sent to the model -------------------------------------------------------------

    async def save_request(
        self, person_id: str, conversation_id: str, message_id: str, step: int, body: dict[str, Any], now: float
    ) -> None:
        row = {
            "message_id": message_id,
            "step": step,
            "conversation_id": conversation_id,
            "person_id": person_id,
            "created_at": now,
            "sealed": self.seal.seal(person_id, conversation_id, "request", body),
        }

        async def work(db: AsyncConnection) -> None:
            await upsert(db, chat_requests, row, key=["message_id", "step"])
            kept = (
                sa.select(chat_requests.c.created_at)
                .where(chat_requests.c.conversation_id == conversation_id)
                .order_by(chat_requests.c.created_at.desc())
                .offset(KEEP_REQUESTS)
                .limit(1)
            )
            oldest_kept = (await db.execute(kept)).scalar()
            if oldest_kept is not None:
                await db.execute(
                    chat_requests.delete().where(
                        chat_requests.c.conversation_id == conversation_id, chat_requests.c.created_at <= oldest_kept
                    )
                )

        await self.storage.write(work)

    async def requests(self, person_id: str, conversation_id: str, message_id: str) -> list[dict[str, Any]]:
        query = (
            sa.select(chat_requests)
            .where(
                chat_requests.c.person_id == person_id,
                chat_requests.c.conversation_id == conversation_id,
                chat_requests.c.message_id == message_id,
            )
            .order_by(chat_requests.c.step)
        )
        async with self.storage.read() as db:
            rows = (await db.execute(query)).mappings().all()
        out = []
        for row in rows:
            body = self.seal.open(person_id, conversation_id, "request", bytes(row["sealed"]))
            if isinstance(body, dict):
                out.append({"step": row["step"], "sentAt": row["created_at"], "body": body})
        return out

    # -- app contexts -------------------------------------------------------------------------------

    async def save_context(
        self, person_id: str, conversation_id: str, instance: str, context: dict[str, Any], now: float
    ) -> None:
        row = {
            "conversation_id": conversation_id,
            "instance": instance,
            "person_id": person_id,
            "updated_at": now,
            "sealed": self.seal.seal(person_id, conversation_id, "context", context),
        }

        async def work(db: AsyncConnection) -> None:
            await upsert(db, chat_contexts, row, key=["conversation_id", "instance"])

        await self.storage.write(work)

    async def remove_context(self, person_id: str, conversation_id: str, instance: str) -> None:
        async def work(db: AsyncConnection) -> None:
            await db.execute(
                chat_contexts.delete().where(
                    chat_contexts.c.person_id == person_id,
                    chat_contexts.c.conversation_id == conversation_id,
                    chat_contexts.c.instance == instance,
                )
            )

        await self.storage.write(work)

    async def contexts(self, person_id: str, conversation_id: str) -> list[dict[str, Any]]:
        query = (
            sa.select(chat_contexts)
            .where(chat_contexts.c.person_id == person_id, chat_contexts.c.conversation_id == conversation_id)
            .order_by(chat_contexts.c.updated_at)
        )
        async with self.storage.read() as db:
            rows = (await db.execute(query)).mappings().all()
        opened = (self.seal.open(person_id, conversation_id, "context", bytes(row["sealed"])) for row in rows)
        return [value for value in opened if isinstance(value, dict)]

    # -- tokens -------------------------------------------------------------------------------------

    async def add_usage(
        self, person_id: str, day: str, model_id: str, conversation_id: str, input_tokens: int, output_tokens: int
    ) -> None:
        key = {"person_id": person_id, "day": day, "model_id": model_id, "conversation_id": conversation_id}

        async def work(db: AsyncConnection) -> None:
            updated = await db.execute(
                chat_usage.update()
                .where(*(chat_usage.c[name] == value for name, value in key.items()))
                .values(
                    input_tokens=chat_usage.c.input_tokens + input_tokens,
                    output_tokens=chat_usage.c.output_tokens + output_tokens,
                )
            )
            if updated.rowcount == 0:
                row = {**key, "input_tokens": input_tokens, "output_tokens": output_tokens}
                await upsert(db, chat_usage, row, key=list(key))

        await self.storage.write(work)

    async def usage_totals(self, since_day: str, people: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Tokens per person and model since a day (an admin's view: no conversation, no text)."""
        query = (
            sa.select(
                chat_usage.c.person_id,
                chat_usage.c.model_id,
                sa.func.sum(chat_usage.c.input_tokens).label("input"),
                sa.func.sum(chat_usage.c.output_tokens).label("output"),
            )
            .where(chat_usage.c.day >= since_day)
            .group_by(chat_usage.c.person_id, chat_usage.c.model_id)
            .order_by(chat_usage.c.person_id, chat_usage.c.model_id)
        )
        if people is not None:
            query = query.where(chat_usage.c.person_id.in_(list(people)))
        async with self.storage.read() as db:
            rows = (await db.execute(query)).mappings().all()
        return [
            {"person": r["person_id"], "model": r["model_id"], "input": int(r["input"]), "output": int(r["output"])}
            for r in rows
        ]
