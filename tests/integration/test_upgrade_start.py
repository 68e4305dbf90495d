"""`webhost serve` at start, against a database other releases share: two replicas starting together on one empty
PostgreSQL migrate it once (the advisory lock in webhost/storage/db.py), and a database a newer release migrated
is refused with one line, nothing written."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import anyio
import pytest
import sqlalchemy as sa
from alembic.config import Config as AlembicConfig
from alembic.script import ScriptDirectory

from tests.support import upgrade
from tests.support.postgres import Postgres
from tests.support.process import ROOT, WAIT, free_port
from webhost.people import Person
from webhost.storage.db import MIGRATION_LOCK, MIGRATIONS, Storage
from webhost.testing.host import Webhost, stop_webhost, wait_healthy

pytestmark = pytest.mark.anyio

SECRET = "s" * 16 + "shared-by-both-replicas-0123456789"


@contextmanager
def replica(tmp_path: Path, name: str, database_url: str) -> Iterator[Webhost]:
    """`webhost serve` (the demo) on the shared database, started but not awaited; stopped on exit."""
    port, sandbox_port, data = free_port(), free_port(), tmp_path / f"data-{name}"
    log_path = tmp_path / f"{name}.log"
    env = {**os.environ, "WEBHOST_DATABASE_URL": database_url, "WEBHOST_SECRET": SECRET, "WEBHOST_TOKEN": "t" * 24}
    argv = [sys.executable, "-m", "webhost", "serve", "--port", str(port), "--sandbox-port", str(sandbox_port)]
    argv += ["--data-dir", str(data), "--log-level", "info"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    host = Webhost(proc, port, sandbox_port, "t" * 24, log_path, None, data)
    try:
        yield host
    finally:
        stop_webhost(host, 10.0, signal.SIGTERM)


async def waiting_for_the_lock(storage: Storage) -> int:
    async with storage.engine.connect() as db:
        query = sa.text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        return int((await db.execute(query)).scalar_one())


async def test_two_replicas_starting_together_on_an_empty_postgresql_migrate_it_once(
    postgres: Postgres, tmp_path: Path
) -> None:
    url = postgres.new_database()
    holder = Storage(url)
    try:
        # The test holds the migration lock first, so that both replicas are certainly inside `start` at once,
        # both waiting on it, however long each takes to start; then lets go.
        async with holder.engine.connect() as lock:
            await lock.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
            with ExitStack() as stack:
                hosts = [stack.enter_context(replica(tmp_path, name, url)) for name in ("a", "b")]
                with anyio.fail_after(WAIT):
                    while await waiting_for_the_lock(holder) < 2:
                        assert all(host.proc.poll() is None for host in hosts), [h.log() for h in hosts]
                        await anyio.sleep(0.05)
                await lock.execute(sa.text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
                for host in hosts:
                    await anyio.to_thread.run_sync(wait_healthy, host, WAIT)
                logs = [host.log() for host in hosts]
    finally:
        await holder.close()
    ran = [re.findall(r"Running upgrade (\S*) ?-> ([^,\s]+)", log) for log in logs]
    assert sorted(len(steps) for steps in ran) == [0, len(migrations())], logs  # one migrated, the other found head
    assert [step[1] for step in ran[0] + ran[1]] == migrations()


def migrations() -> list[str]:
    """This tree's revisions, first to head."""
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    return [script.revision for script in reversed(list(ScriptDirectory.from_config(config).walk_revisions()))]


@pytest.mark.parametrize("engine", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_a_database_a_newer_release_migrated_is_refused_with_one_line_and_left_alone(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    if engine == "sqlite":
        url = f"sqlite+aiosqlite:///{data / 'webhost.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres").new_database()
    storage = Storage(url)
    try:
        await storage.start()
        await storage.save_person(Person("ada", "Ada", None, "admin", ()), 1.0)
        async with storage.engine.begin() as db:  # as a newer release's migration leaves it
            await db.execute(sa.text("UPDATE alembic_version SET version_num = '0042_from_the_future'"))
    finally:
        await storage.close()
    before, files = await upgrade.snapshot(url), sorted(os.listdir(data))

    env = {**os.environ, "WEBHOST_DATABASE_URL": url, "WEBHOST_TOKEN": "t" * 24}
    result = subprocess.run(
        [sys.executable, "-m", "webhost", "serve", "--data-dir", str(data), "--port", str(free_port())]
        + ["--sandbox-port", str(free_port())],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith("webhost: database ")
    assert "at revision 0042_from_the_future, which this webhost does not know: a newer release wrote it" in (
        result.stderr
    )
    assert await upgrade.snapshot(url) == before
    assert sorted(os.listdir(data)) == files
