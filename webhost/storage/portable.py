"""SQL that differs between the two engines, written once: an insert that updates the row it meets.

SQLite and PostgreSQL both have `INSERT ... ON CONFLICT (key) DO UPDATE`; SQLAlchemy builds it from
each dialect's own `insert`, which is why the caller hands over the connection it runs on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection


def upsert_statement(
    dialect: str, table: sa.Table, values: Mapping[str, Any], key: Iterable[str], keep: Iterable[str] = ()
) -> sa.Executable:
    """Insert `values`; where a row with the same `key` columns exists, update it instead, leaving the
    `keep` columns (e.g. a first-seen time) as they were."""
    key = tuple(key)
    if dialect == "postgresql":
        insert: Any = postgresql.insert(table)
    elif dialect == "sqlite":
        insert = sqlite.insert(table)
    else:
        raise ValueError(f"no upsert for the {dialect} dialect")
    statement = insert.values(**values)
    kept = set(keep) | set(key)
    update = {name: statement.excluded[name] for name in values if name not in kept}
    if not update:
        done: sa.Executable = statement.on_conflict_do_nothing(index_elements=list(key))
    else:
        done = statement.on_conflict_do_update(index_elements=list(key), set_=update)
    return done


async def upsert(
    db: AsyncConnection, table: sa.Table, values: Mapping[str, Any], key: Iterable[str], keep: Iterable[str] = ()
) -> None:
    await db.execute(upsert_statement(db.dialect.name, table, values, key, keep))
