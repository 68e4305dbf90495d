"""SQL that differs between the two engines, written once: an insert that updates the row it meets,
and text that both engines store.

SQLite and PostgreSQL both have `INSERT ... ON CONFLICT (key) DO UPDATE`; SQLAlchemy builds it from
each dialect's own `insert`, which is why the caller hands over the connection it runs on.

Text is where the engines differ most: PostgreSQL refuses a NUL character in `text` and a value
longer than a `varchar(N)`, which SQLite takes as it is, and neither driver can encode a lone
surrogate (which JSON from a browser or a server may carry). `fit` makes a value that came from
outside (a call id a page chose, a tool name a server chose) storable on both, so that one odd value
does not fail a batch written in one transaction, everyone's rows with it.
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


def fit(value: str, limit: int | None = None) -> str:
    """`value` as both engines store it: NUL and lone surrogates replaced by U+FFFD, cut to `limit` characters."""
    if not value.isascii() or "\x00" in value:
        value = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").replace("\x00", "\ufffd")
    return value if limit is None else value[:limit]


def fitted(table: sa.Table, values: Mapping[str, Any], columns: Iterable[str]) -> dict[str, Any]:
    """`values` with the named text columns `fit` to the table's column types (a String's length)."""
    out = dict(values)
    for name in columns:
        value = out.get(name)
        if isinstance(value, str):
            length = getattr(table.c[name].type, "length", None)
            out[name] = fit(value, length)
    return out


async def upsert(
    db: AsyncConnection, table: sa.Table, values: Mapping[str, Any], key: Iterable[str], keep: Iterable[str] = ()
) -> None:
    await db.execute(upsert_statement(db.dialect.name, table, values, key, keep))
