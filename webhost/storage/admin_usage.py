"""What the admin view reads: the people webhost has seen and their tokens per day and model (never any text)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from .conversations import chat_usage
from .db import Storage, people


async def known_people(storage: Storage) -> list[dict[str, Any]]:
    """Everyone who signed in at least once, with the groups of their last sign-in."""
    query = sa.select(people).order_by(people.c.id)
    async with storage.read() as db:
        rows = (await db.execute(query)).mappings().all()
    return [
        {
            "id": r["id"],
            "name": r["name"],
            "email": r["email"],
            "role": r["role"],
            "groups": [str(g) for g in (r["groups"] or [])],
            "firstSeen": float(r["first_seen"]),
            "lastSeen": float(r["last_seen"]),
        }
        for r in rows
    ]


async def daily_usage(storage: Storage, since_day: str, until_day: str) -> list[dict[str, Any]]:
    """Tokens per person, day and model in [since_day, until_day] (UTC days, `YYYY-MM-DD`)."""
    query = (
        sa.select(
            chat_usage.c.person_id,
            chat_usage.c.day,
            chat_usage.c.model_id,
            sa.func.sum(chat_usage.c.input_tokens).label("input"),
            sa.func.sum(chat_usage.c.output_tokens).label("output"),
        )
        .where(chat_usage.c.day >= since_day, chat_usage.c.day <= until_day)
        .group_by(chat_usage.c.person_id, chat_usage.c.day, chat_usage.c.model_id)
        .order_by(chat_usage.c.person_id, chat_usage.c.day, chat_usage.c.model_id)
    )
    async with storage.read() as db:
        rows = (await db.execute(query)).mappings().all()
    return [
        {
            "person": r["person_id"],
            "day": r["day"],
            "model": r["model_id"],
            "input": int(r["input"]),
            "output": int(r["output"]),
        }
        for r in rows
    ]
