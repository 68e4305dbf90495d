"""`webhost backup` and `webhost restore`: the whole database in one file, on either engine, and back.

A backup is gzipped JSON lines: a header (the format, the webhost version and schema revision that wrote it, each
table's columns and row count, and the fingerprint of the deployment secret), then one line per row, read in one
snapshot (PostgreSQL: a repeatable-read transaction; SQLite: one read transaction). The rows are as stored, so the
sealed ones (input values, OAuth tokens, chat, ID tokens, input rounds) stay sealed: they open only under the
deployment secret the backup was made with, which is NOT in the file. The fingerprint (an HMAC of the secret: it
does not give the secret away) lets `restore` refuse, before writing anything, a deployment with another secret.

`restore` fills an empty database: it migrates it to the backup's revision, inserts every row in one transaction,
and then migrates to this code's head, so a backup made by an older release restores into a newer one (across
engines too: SQLite to PostgreSQL and back).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import hmac
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import sqlalchemy as sa
from alembic.runtime.migration import MigrationContext
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.storage.db import Storage, StorageUnavailable, known_revisions
from webhost.storage.transactions import DatabaseUnavailable

FORMAT = "webhost-backup"
VERSION = 1
SKIPPED = {"alembic_version"}  # the revision is in the header; restore's migrations write it
BATCH = 500


class BackupProblem(Exception):
    """The backup cannot be made or restored; the message is one line saying why and what to do."""


def fingerprint(secret: bytes) -> str:
    """What tells two deployment secrets apart without revealing either."""
    return hmac.new(secret, b"webhost/backup-fingerprint/v1", hashlib.sha256).hexdigest()[:32]


@dataclass(frozen=True)
class Summary:
    revision: str
    rows: dict[str, int]


def _encoded(value: Any) -> Any:
    return base64.b64encode(bytes(value)).decode("ascii") if isinstance(value, (bytes, memoryview)) else value


async def backup(storage: Storage, path: Path, *, secret: bytes, webhost_version: str) -> Summary:
    """Write the whole database to `path` (replaced only once the backup is whole)."""
    try:
        return await _backup(storage, path, secret=secret, webhost_version=webhost_version)
    except sa.exc.SQLAlchemyError as exc:
        raise StorageUnavailable(f"database {storage.shown_url}: {storage.reason(exc)}") from None


async def _backup(storage: Storage, path: Path, *, secret: bytes, webhost_version: str) -> Summary:
    partial = path.with_name(f".{path.name}.partial")
    database = storage.engine.url.database
    if storage.dialect == "sqlite" and database and not Path(database).exists():  # connecting would create it
        raise BackupProblem(f"there is no database at {database} (a wrong --data-dir, or WEBHOST_DATABASE_URL?)")
    async with storage.engine.connect() as db:
        if storage.dialect == "postgresql":
            await db.execute(sa.text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"))
        else:
            await db.exec_driver_sql("BEGIN")  # pysqlite begins only before a write: one snapshot for every read
        revision = await _revision(db)
        tables = await db.run_sync(_reflect)
        header_tables: dict[str, Any] = {}
        for table in tables:
            count = int((await db.execute(sa.select(sa.func.count()).select_from(table))).scalar_one())
            binary = [c.name for c in table.columns if isinstance(c.type, sa.LargeBinary)]
            header_tables[table.name] = {"columns": [c.name for c in table.columns], "binary": binary, "rows": count}
        header = {
            "format": FORMAT,
            "version": VERSION,
            "webhost": webhost_version,
            "revision": revision,
            "engine": storage.dialect,
            "created_at": time.time(),
            "secret_fingerprint": fingerprint(secret),
            "note": "Sealed rows open only under the deployment secret this backup was made with (WEBHOST_SECRET or "
            "the data folder's `secret`), which is not in this file: keep it with the backup, apart from it.",
            "tables": header_tables,
        }
        partial.unlink(missing_ok=True)  # a crashed backup's
        try:
            # Owner-only from its first byte: the rows are sealed, but who signed in, and when, is not.
            with open(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as raw:
                with gzip.open(raw, "wt", encoding="utf-8") as out:
                    out.write(json.dumps(header) + "\n")
                    for table in tables:
                        await _write_rows(db, table, out)
            partial.replace(path)
        finally:
            partial.unlink(missing_ok=True)
        await db.rollback()
    return Summary(revision, {name: info["rows"] for name, info in header_tables.items()})


async def _write_rows(db: AsyncConnection, table: sa.Table, out: IO[str]) -> None:
    key = list(table.primary_key.columns) or list(table.columns)
    result = await db.stream(sa.select(table).order_by(*key))
    async for row in result:
        out.write(json.dumps({"t": table.name, "r": [_encoded(value) for value in row]}) + "\n")


def read_header(path: Path) -> dict[str, Any]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as source:
            header = json.loads(source.readline())
    except (OSError, EOFError, ValueError) as exc:
        raise BackupProblem(f"{path} is not a webhost backup ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BackupProblem(f"{path} is not a webhost backup")
    if header.get("version") != VERSION:
        raise BackupProblem(
            f"{path} is a webhost backup of format {header.get('version')}; this webhost reads {VERSION}"
        )
    return header


def _rows(path: Path) -> Iterator[tuple[str, list[Any]]]:
    with gzip.open(path, "rt", encoding="utf-8") as source:
        source.readline()
        for line in source:
            record = json.loads(line)
            yield record["t"], record["r"]


async def restore(storage: Storage, path: Path, *, secret: bytes) -> Summary:
    """Fill the empty database behind `storage` from the backup at `path`; refuse, writing nothing, when the
    secret differs from the backup's, the backup is a newer release's, or the database already holds rows."""
    header = read_header(path)
    if header["secret_fingerprint"] != fingerprint(secret):
        raise BackupProblem(
            f"{path} was made under another deployment secret: its sealed rows (input values, OAuth tokens, chat) "
            "would not open. Restore with the secret it was made under (WEBHOST_SECRET, or the data folder's "
            "`secret` file, as it was when the backup was made)"
        )
    revision = header["revision"]
    if revision not in known_revisions():
        raise BackupProblem(
            f"{path} was made by a newer webhost (schema revision {revision}, webhost {header['webhost']}): "
            "restore it with that release"
        )
    occupied, schema = await _occupied(storage)
    if occupied:
        raise BackupProblem(
            f"database {storage.shown_url} already holds data ({', '.join(occupied)}): restore into an empty database"
        )
    if schema not in (None, revision):  # empty, but migrated past (or to another branch than) the backup's schema
        raise BackupProblem(
            f"database {storage.shown_url} has the schema of revision {schema}, the backup that of {revision}: "
            "restore into a new database (webhost migrates it after the restore)"
        )
    await storage.start(to=revision)
    tables = header["tables"]
    rows = dict.fromkeys(tables, 0)

    async def work(db: AsyncConnection) -> None:
        schema = {table.name: table for table in await db.run_sync(_reflect)}
        missing = sorted(set(tables) - set(schema))
        if missing:
            raise BackupProblem(f"{path} has tables revision {revision} does not: {', '.join(missing)}")
        batch: list[dict[str, Any]] = []
        current: str | None = None
        for name, values in _rows(path):  # written table by table, parents first
            if name != current and batch:
                await db.execute(schema[current or name].insert(), batch)
                batch = []
            current = name
            info = tables[name]
            row = dict(zip(info["columns"], values, strict=True))
            for column in info["binary"]:
                if row[column] is not None:
                    row[column] = base64.b64decode(row[column])
            batch.append(row)
            rows[name] += 1
            if len(batch) >= BATCH:
                await db.execute(schema[name].insert(), batch)
                batch = []
        if batch and current is not None:
            await db.execute(schema[current].insert(), batch)
        if storage.dialect == "postgresql":
            await _advance_sequences(db, list(schema.values()))
        differ = {name: (rows[name], info["rows"]) for name, info in tables.items() if rows[name] != info["rows"]}
        if differ:  # raised in the transaction: nothing of it is kept
            raise BackupProblem(f"{path} is damaged: its rows do not agree with its header (rows, header): {differ}")

    try:
        await storage.write(work)
    except (EOFError, OSError, ValueError, KeyError) as exc:  # a file cut short or changed after its header was read
        raise BackupProblem(f"{path} is damaged ({type(exc).__name__}: {exc}); nothing was restored") from None
    except (DatabaseUnavailable, sa.exc.SQLAlchemyError) as exc:
        raise BackupProblem(f"database {storage.shown_url}: {storage.reason(exc)}; nothing was restored") from None
    await storage.start()  # on to this code's head
    return Summary(revision, rows)


async def _occupied(storage: Storage) -> tuple[list[str], str | None]:
    """The tables of the database that hold rows (alembic_version aside), and its schema's revision (None: none)."""
    try:
        async with storage.engine.connect() as db:
            tables = await db.run_sync(_reflect)
            counts = [
                (table.name, int((await db.execute(sa.select(sa.func.count()).select_from(table))).scalar_one()))
                for table in tables
            ]
            schema = await db.run_sync(lambda sync: MigrationContext.configure(sync).get_current_revision())
    except (OSError, sa.exc.SQLAlchemyError) as exc:
        raise StorageUnavailable(f"database {storage.shown_url}: {storage.reason(exc)}") from None
    return [f"{count} rows in {name}" for name, count in counts if count], schema


async def _advance_sequences(db: AsyncConnection, tables: list[sa.Table]) -> None:
    """Rows came with their ids: each serial column's sequence moves past them, or the next insert collides."""
    for table in tables:
        for column in table.primary_key.columns:
            found = await db.execute(
                sa.text("SELECT pg_get_serial_sequence(:t, :c)"), {"t": table.name, "c": column.name}
            )
            sequence = found.scalar()
            if sequence:
                newest = (await db.execute(sa.select(sa.func.max(column)))).scalar()
                await db.execute(sa.text("SELECT setval(:s, :v, false)"), {"s": sequence, "v": int(newest or 0) + 1})


def _reflect(connection: sa.Connection) -> list[sa.Table]:
    """The database's tables, parents before the tables whose foreign keys name them."""
    reflected = sa.MetaData()
    reflected.reflect(connection)
    return [table for table in reflected.sorted_tables if table.name not in SKIPPED]


async def _revision(db: AsyncConnection) -> str:
    try:
        revision = (await db.execute(sa.text("SELECT version_num FROM alembic_version"))).scalar()
    except sa.exc.SQLAlchemyError:
        revision = None
    if not revision:
        raise BackupProblem("the database has no webhost schema (start webhost on it once, or check the URL)")
    return str(revision)
