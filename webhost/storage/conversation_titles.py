"""A conversation's title, sealed like its messages: it is the first line of the person's first message or the
model's summary of it, so it says what the conversation is about (webhost/storage/conversations.py uses these).

The clear `title` column is empty in rows this version writes. A title there was written by a previous version
(before migration 0014, or by one of its replicas during a rolling upgrade): it is the newest, read as it is,
and sealed when webhost starts (`seal_clear_titles`).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.chat_seal import ChatSeal
from webhost.storage.chat_tables import chat_conversations
from webhost.storage.db import Storage
from webhost.storage.portable import fit

MAX_TITLE = 200
SEAL_AT_ONCE = 500  # clear titles sealed per transaction at start


def sealed_title(seal: ChatSeal, person_id: str, conversation_id: str, title: str) -> dict[str, Any]:
    """The columns that store `title`: sealed, and the clear column emptied."""
    return {"title": "", "sealed_title": seal.seal(person_id, conversation_id, "title", fit(title, MAX_TITLE))}


def opened_title(seal: ChatSeal, person_id: str, conversation_id: str, clear: str, sealed: bytes | None) -> str:
    """The title of a row ("" when its seal does not open: another secret, or tampered with)."""
    if clear or sealed is None:
        return clear
    title = seal.open(person_id, conversation_id, "title", bytes(sealed))
    return title if isinstance(title, str) else ""


async def replace_title_if(
    db: AsyncConnection, seal: ChatSeal, person_id: str, conversation_id: str, was: str, values: dict[str, Any]
) -> bool:
    """Write `values` only while the conversation's title is still `was` (a title the model wrote never replaces
    the person's rename). The title is sealed, so it is compared here, and the row is written only if its title
    columns are still the ones read (each seal is new: a rename in between changes them)."""
    columns = chat_conversations.c
    mine = (columns.person_id == person_id, columns.id == conversation_id)
    row = (await db.execute(sa.select(columns.title, columns.sealed_title).where(*mine))).first()
    if row is None or opened_title(seal, person_id, conversation_id, row.title, row.sealed_title) != fit(
        was, MAX_TITLE
    ):
        return False
    unchanged = columns.sealed_title.is_(None) if row.sealed_title is None else columns.sealed_title == row.sealed_title
    done = await db.execute(
        chat_conversations.update().where(*mine, columns.title == row.title, unchanged).values(**values)
    )
    return bool(done.rowcount == 1)


async def seal_clear_titles(storage: Storage, seal: ChatSeal) -> int:
    """Seal the titles a previous version wrote in the clear; how many. Run at start, by every replica: a row is
    written only while its clear title is still the one read, so two replicas starting together agree."""
    columns = chat_conversations.c
    done = 0
    while True:
        query = sa.select(columns.id, columns.person_id, columns.title).where(columns.title != "").limit(SEAL_AT_ONCE)
        async with storage.read() as db:
            rows = (await db.execute(query)).all()
        if not rows:
            return done

        async def work(db: AsyncConnection, rows: Any = rows) -> int:
            sealed = 0
            for row in rows:
                result = await db.execute(
                    chat_conversations.update()
                    .where(columns.id == row.id, columns.title == row.title)
                    .values(**sealed_title(seal, row.person_id, row.id, row.title))
                )
                sealed += result.rowcount
            return sealed

        sealed = await storage.write(work)
        if not sealed:  # each one was rewritten meanwhile (an older replica): the next start seals them
            return done
        done += sealed
