"""`webhost backup PATH` and `webhost restore PATH` as an operator runs them, on both engines: the previous
release's data (tests/fixtures/upgrade), migrated, backed up, wiped, restored and read back whole through webhost's
storage; the deployment secret's role (restore under another secret refused, nothing written); a database that
already holds data is never restored over; a SQLite backup restores into PostgreSQL."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.fixtures.upgrade.rebuild import HERE, SECRET, Fixture
from tests.support import upgrade
from tests.support.postgres import Postgres
from tests.support.process import ROOT, WAIT
from webhost.apps.origins import secret_from_text
from webhost.storage import audit, backup
from webhost.storage.db import Storage

pytestmark = pytest.mark.anyio

ENGINES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def webhost(
    command: str, path: Path, url: str, data: Path, secret: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WEBHOST_DATABASE_URL": url}
    env.pop("WEBHOST_SECRET", None)
    if secret is not None:
        env["WEBHOST_SECRET"] = secret
    return subprocess.run(
        [sys.executable, "-m", "webhost", command, str(path), "--data-dir", str(data)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def empty_database(engine: str, folder: Path, postgres: Postgres | None) -> str:
    if engine == "sqlite":
        folder.mkdir(parents=True, exist_ok=True)
        return f"sqlite+aiosqlite:///{folder / 'restored.sqlite3'}"
    assert postgres is not None
    return postgres.new_database()


async def migrated_release(engine: str, tmp_path: Path, postgres: Postgres | None) -> str:
    """The previous release's database, migrated by this tree: what a deployment has after its upgrade."""
    url = upgrade.load(Fixture(HERE), engine, tmp_path / "release", postgres)
    storage = Storage(url)
    try:
        await storage.start()
    finally:
        await storage.close()
    return url


def data_folder(tmp_path: Path) -> Path:
    """The deployment's data folder, holding the secret the fixture's rows are sealed under."""
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "secret").write_text(SECRET.read_text())
    return data


@pytest.mark.parametrize("engine", ENGINES)
async def test_backup_wipe_restore_reads_everything_back_and_needs_the_same_secret(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    postgres: Postgres | None = request.getfixturevalue("postgres") if engine == "postgresql" else None
    url = await migrated_release(engine, tmp_path, postgres)
    data, backup_file = data_folder(tmp_path), tmp_path / "webhost.backup"
    before, newest = await upgrade.snapshot(url), await newest_audit_id(url)

    made = webhost("backup", backup_file, url, data)
    assert made.returncode == 0, made.stderr
    assert "which is not in the backup: keep it too" in made.stdout  # the backup says what else it needs
    with gzip.open(backup_file, "rt") as file:
        header = json.loads(file.readline())
    assert "not in this file" in header["note"] and SECRET.read_text().strip() not in backup_file.read_bytes().decode(
        "latin-1"
    )
    assert oct(backup_file.stat().st_mode & 0o777) == "0o600"

    target = empty_database(engine, tmp_path / "wiped", postgres)  # the wiped database: a new, empty one
    other = webhost("restore", backup_file, target, data, secret="another-deployment-secret-" + "x" * 20)
    assert other.returncode == 2 and "Traceback" not in other.stderr
    assert len(other.stderr.strip().splitlines()) == 1, other.stderr
    assert "was made under another deployment secret" in other.stderr
    assert await upgrade.snapshot(target) == {}  # nothing written: not even the schema

    over = webhost("restore", backup_file, url, data)  # onto the database it came from, which holds data
    assert over.returncode == 2 and len(over.stderr.strip().splitlines()) == 1, over.stderr
    assert "already holds data (" in over.stderr and "restore into an empty database" in over.stderr

    missing = webhost("restore", backup_file, target, tmp_path / "no-secret-here")
    assert missing.returncode == 2 and "no deployment secret" in missing.stderr, missing.stderr

    restored = webhost("restore", backup_file, target, data)
    assert restored.returncode == 0, restored.stderr
    assert await upgrade.snapshot(target) == before  # every row, every column, ids and sealed bytes alike
    await upgrade.migrated_and_read(target, Fixture(HERE).content)

    storage = Storage(target)  # the next audit row gets the next id (PostgreSQL's sequence moved past the rows)
    try:
        ids = await storage.write(lambda db: audit.insert_rows(db, [{"ts": 1.0, "kind": "after-restore"}]))
    finally:
        await storage.close()
    assert ids == [newest + 1]


async def newest_audit_id(url: str) -> int:
    storage = Storage(url)
    try:
        async with storage.read() as db:
            return int((await db.execute(sa.select(sa.func.max(audit.audit.c.id)))).scalar_one())
    finally:
        await storage.close()


async def test_a_sqlite_backup_restores_into_postgresql(postgres: Postgres, tmp_path: Path) -> None:
    url = await migrated_release("sqlite", tmp_path, None)
    data, backup_file = data_folder(tmp_path), tmp_path / "webhost.backup"
    assert webhost("backup", backup_file, url, data).returncode == 0
    target = postgres.new_database()
    restored = webhost("restore", backup_file, target, data)
    assert restored.returncode == 0, restored.stderr
    await upgrade.migrated_and_read(target, Fixture(HERE).content)


def with_header(source: Path, target: Path, **changes: object) -> Path:
    """A copy of a backup with header fields changed (as another release, or a damaged file, has them)."""
    with gzip.open(source, "rt") as file:
        header, rows = json.loads(file.readline()), file.read()
    with gzip.open(target, "wt") as out:
        out.write(json.dumps({**header, **changes}) + "\n" + rows)
    return target


async def test_restore_refuses_a_newer_release_backup_another_schema_or_another_file(tmp_path: Path) -> None:
    url = await migrated_release("sqlite", tmp_path, None)
    secret = secret_from_text(SECRET.read_text())
    source = Storage(url)
    try:
        made = tmp_path / "made.backup"
        await backup.backup(source, made, secret=secret, webhost_version="test")
    finally:
        await source.close()
    target = Storage(empty_database("sqlite", tmp_path / "target", None))
    try:
        newer = with_header(made, tmp_path / "newer.backup", revision="0042_from_the_future", webhost="9.0.0")
        with pytest.raises(
            backup.BackupProblem, match=r"made by a newer webhost \(schema revision 0042_from_the_future"
        ):
            await backup.restore(target, newer, secret=secret)
        await target.start()  # an empty database a webhost started on: at head, no rows
        older = with_header(made, tmp_path / "older.backup", revision="0008")
        with pytest.raises(backup.BackupProblem, match="has the schema of revision .*, the backup that of 0008"):
            await backup.restore(target, older, secret=secret)
        (tmp_path / "not.backup").write_text("SELECT 1;\n")
        with pytest.raises(backup.BackupProblem, match="is not a webhost backup"):
            await backup.restore(target, tmp_path / "not.backup", secret=secret)
        cut = tmp_path / "cut.backup"
        cut.write_bytes(made.read_bytes()[: made.stat().st_size * 2 // 3])  # a copy that stopped part way
        with pytest.raises(backup.BackupProblem, match=r"cut.backup is damaged \(EOFError: .*nothing was restored"):
            await backup.restore(target, cut, secret=secret)
        assert not any((await upgrade.row_counts(target.url)).values())  # its rows were rolled back
        await backup.restore(target, made, secret=secret)  # the same schema, no rows: restored
        nowhere = Storage(f"sqlite+aiosqlite:///{tmp_path / 'missing.sqlite3'}")
        with pytest.raises(backup.BackupProblem, match="there is no database at "):
            await backup.backup(nowhere, tmp_path / "nothing.backup", secret=secret, webhost_version="test")
        await nowhere.close()
        assert not (tmp_path / "missing.sqlite3").exists()
    finally:
        await target.close()
    await upgrade.migrated_and_read(empty_database("sqlite", tmp_path / "target", None), Fixture(HERE).content)


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_backup_is_one_snapshot_while_webhost_writes(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row another connection commits after the backup counted the tables, before it wrote them, is not in it:
    the counts and the rows agree (restore checks them) and the restored database is the one at the snapshot."""
    postgres: Postgres | None = request.getfixturevalue("postgres") if engine == "postgresql" else None
    url = await migrated_release(engine, tmp_path, postgres)
    secret = secret_from_text(SECRET.read_text())
    before = await upgrade.snapshot(url)
    writer, reader = Storage(url), Storage(url)
    write_rows = backup._write_rows
    meanwhile: list[int] = []

    async def rows_after_a_write(db: AsyncConnection, table: sa.Table, out: IO[str]) -> None:
        if not meanwhile:  # the only seam: between the snapshot's first read and its rows
            meanwhile.extend(await writer.write(lambda c: audit.insert_rows(c, [{"ts": 2.0, "kind": "meanwhile"}])))
        await write_rows(db, table, out)

    monkeypatch.setattr(backup, "_write_rows", rows_after_a_write)
    try:
        await backup.backup(reader, tmp_path / "during.backup", secret=secret, webhost_version="test")
    finally:
        await writer.close()
        await reader.close()
    assert meanwhile  # the write happened, and committed, during the backup
    target = Storage(empty_database(engine, tmp_path / "snapshot", postgres))
    try:
        await backup.restore(target, tmp_path / "during.backup", secret=secret)
    finally:
        await target.close()
    assert await upgrade.snapshot(target.url) == before
