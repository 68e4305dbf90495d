"""Opening the database: what a start leaves in the data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from webhost.storage.db import Storage
from webhost.storage.urls import database_url

pytestmark = pytest.mark.anyio


async def test_a_clean_start_and_stop_leave_no_migration_lock_file(tmp_path: Path) -> None:
    """The lock file SQLite migrations take (`webhost.sqlite3.migrating`) used to stay after every start."""
    for _ in range(2):  # the second start finds the schema current
        storage = Storage(database_url(None, tmp_path))
        await storage.start()
        await storage.close()
    assert sorted(p.name for p in tmp_path.iterdir() if "migrating" in p.name) == []
    assert (tmp_path / "webhost.sqlite3").exists()
