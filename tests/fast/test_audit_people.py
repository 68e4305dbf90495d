"""Audit rows name their person: the columns, the budget per person, who reads what, each person's own
remembered permissions, and the audit file of 0.1 imported once (into either engine: `database_url`)."""

from __future__ import annotations

import csv
import io
import sqlite3
import time
from pathlib import Path

import anyio
import pytest

from tests.support.audit import audit_log, on_storage
from webhost.audit import COLUMNS, LEGACY_FILE, RATE_LIMITED, AuditLimits, visible_user
from webhost.errors import PolicyRefused
from webhost.people import TOKEN_PERSON_ID, Person

pytestmark = pytest.mark.anyio

ADA = Person(id="ada", name="Ada Lovelace", role="admin")
BOB = Person(id="bob", name="Bob", role="member")
CARL = Person(id="carl", name="Carl", role="member")
GENEROUS = AuditLimits(frame_burst=10_000, person_burst=10_000, person_burst_bytes=1 << 30)

# The file 0.1 wrote before rows named their person (webhost/audit.py with sqlite3), and after.
OLDEST_SCHEMA = """
CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, session TEXT, server TEXT, frame TEXT,
                    kind TEXT NOT NULL, decision TEXT, summary TEXT, detail TEXT);
CREATE INDEX audit_server ON audit(server, id);
CREATE INDEX audit_ts ON audit(ts);
CREATE TABLE granted_permissions (server TEXT NOT NULL, permission TEXT NOT NULL, granted INTEGER NOT NULL,
                                  ts REAL NOT NULL, PRIMARY KEY (server, permission));
"""
PERSON_COLUMNS = "ALTER TABLE audit ADD COLUMN user_id TEXT; ALTER TABLE audit ADD COLUMN user_name TEXT;"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_every_row_carries_the_person_and_both_exports_include_the_columns(
    tmp_path: Path, database_url: str
) -> None:
    async with audit_log(tmp_path, GENEROUS, url=database_url) as log:
        await log.record("app.open", person=BOB, session="s-1", server="demo", summary="bob's")
        await log.record("host.start", summary="nobody's")
        entries = {e["summary"]: e for e in await log.entries()}
        assert (entries["bob's"]["user_id"], entries["bob's"]["user_name"]) == ("bob", "Bob")
        assert (entries["nobody's"]["user_id"], entries["nobody's"]["user_name"]) == (None, None)
        header, *rows = list(csv.reader(io.StringIO(await log.export_csv())))
    assert header == list(COLUMNS) and header[-2:] == ["user_id", "user_name"]
    assert header[7] == "summary"  # the older columns keep their places
    cells = {dict(zip(header, r, strict=True))["summary"]: dict(zip(header, r, strict=True)) for r in rows}
    assert cells["bob's"]["user_id"] == "bob" and cells["bob's"]["user_name"] == "Bob"


def write_old_file(path: Path, *, with_people: bool) -> None:
    """An audit file as 0.1 left it: rows (one cut mid-JSON, one a blob), a remembered permission."""
    hour_ago = time.time() - 3600  # within the retention period
    db = sqlite3.connect(path)
    db.executescript(OLDEST_SCHEMA + (PERSON_COLUMNS if with_people else ""))
    person = ", user_id, user_name" if with_people else ""
    values = ", 'bob', 'Bob'" if with_people else ""
    db.execute(
        f"INSERT INTO audit (ts, session, server, kind, summary, detail{person}) "
        f"VALUES (?, 's-old', 'demo', 'app.open', 'first', '{{\"a\": 1}}'{values})",
        (hour_ago + 0.5,),
    )
    db.execute(
        "INSERT INTO audit (ts, kind, server, summary, detail) VALUES (?, 'app.message', 'demo', 'cut', ?)",
        (hour_ago + 1, '{"content": "' + "o" * 5000),
    )
    db.execute("INSERT INTO audit (ts, kind, summary, detail) VALUES (?, 'x', 'blob', ?)", (hour_ago + 2, b"\xff{"))
    db.execute("INSERT INTO granted_permissions VALUES ('demo', 'camera', 1, 1700000000)")
    db.execute("INSERT INTO granted_permissions VALUES ('demo', 'microphone', 0, 1700000000)")
    db.commit()
    db.close()


@pytest.mark.parametrize("with_people", [False, True], ids=["before-people", "with-people"])
async def test_the_audit_file_of_0_1_is_imported_once_in_order_and_kept_aside(
    tmp_path: Path, with_people: bool, database_url: str
) -> None:
    old = tmp_path / LEGACY_FILE
    write_old_file(old, with_people=with_people)
    (written,) = sqlite3.connect(old).execute("SELECT ts FROM audit WHERE summary = 'first'").fetchone()
    async with audit_log(tmp_path, GENEROUS, legacy_file=old, url=database_url) as log:
        await log.record("app.open", person=ADA, session="s-new", summary="new")
        entries = await log.entries()
        assert [e["summary"] for e in entries] == ["new", "blob", "cut", "first"]  # newest first, old order kept
        first = entries[-1]
        assert first["ts"] == written and first["server"] == "demo" and first["detail"] == {"a": 1}
        assert first["user_id"] == ("bob" if with_people else None)
        assert entries[2]["detail"]["unreadable"] is True and entries[1]["detail"]["unreadable"] is True
        assert [e["summary"] for e in await log.entries(user="ada")] == ["new"]
        assert "first" in await log.export_csv()
        # 0.1's grants had no person: they are the token person's now, and nobody else's.
        assert await log.granted_permissions(TOKEN_PERSON_ID, "demo") == {"camera"}
        assert await log.granted_permissions("bob", "demo") == set()
    assert not old.exists() and (tmp_path / f"{LEGACY_FILE}.imported").is_file()
    # A second start imports nothing again: the file was set aside.
    async with audit_log(tmp_path, GENEROUS, legacy_file=old, url=database_url) as log:
        assert [e["summary"] for e in await log.entries()] == ["new", "blob", "cut", "first"]
        assert await on_storage(log, "SELECT count(*) FROM audit") == [(4,)]


async def test_an_old_file_that_cannot_be_read_is_left_alone_and_the_log_works(
    tmp_path: Path, database_url: str
) -> None:
    old = tmp_path / LEGACY_FILE
    old.write_bytes(b"this is not a database" * 100)
    async with audit_log(tmp_path, GENEROUS, legacy_file=old, url=database_url) as log:
        await log.record("app.open", summary="new")
        assert [e["summary"] for e in await log.entries()] == ["new"]
    assert old.is_file()  # kept where it was, for a person to look at


async def test_remembered_permissions_are_each_persons_own(tmp_path: Path, database_url: str) -> None:
    async with audit_log(tmp_path, GENEROUS, url=database_url) as log:
        await log.set_permission("bob", "demo", "camera", True)
        await log.set_permission("bob", "demo", "microphone", True)
        await log.set_permission("bob", "demo", "microphone", False)  # changed their mind: replaced
        assert await log.granted_permissions("bob", "demo") == {"camera"}
        assert await log.granted_permissions("carl", "demo") == set()
        assert await log.granted_permissions("bob", "other") == set()


async def test_the_person_budget_is_keyed_by_the_person_across_their_tabs(tmp_path: Path, database_url: str) -> None:
    clock = Clock()
    limits = AuditLimits(frame_burst=1000, person_rows_per_second=1, person_burst=5, person_burst_bytes=1 << 30)
    async with audit_log(tmp_path, limits, clock=clock, url=database_url) as log:
        for i in range(20):  # two tabs of one person share one budget
            await log.record("app.message", person=BOB, session=f"s-{i % 2}", frame=f"f-{i % 2}", summary=f"b{i}")
        for i in range(3):  # another person's budget is their own
            await log.record("app.message", person=CARL, session="s-carl", frame="f-carl", summary=f"c{i}")
        assert len(await log.entries(user="bob")) == 5
        assert len(await log.entries(user="carl")) == 3
        clock.now += 2
        await log.record("app.message", person=BOB, session="s-0", frame="f-0", summary="later")
        latest, dropped = (await log.entries(user="bob"))[:2]
        assert latest["summary"] == "later"
        assert dropped["kind"] == RATE_LIMITED and dropped["detail"]["dropped"] == 15
        assert dropped["detail"]["budget"] == "person" and dropped["user_name"] == "Bob"


def test_who_reads_which_rows() -> None:
    assert visible_user(ADA, None) is None  # everyone's
    assert visible_user(ADA, "bob") == "bob"
    assert visible_user(BOB, None) == "bob"
    assert visible_user(BOB, "bob") == "bob"
    with pytest.raises(PolicyRefused) as refused:
        visible_user(BOB, "carl")
    assert refused.value.code == -32003


async def test_replicas_remembering_the_same_grant_at_once_keep_one(tmp_path: Path, database_url: str) -> None:
    """Each replica has its own audit writer: the same person's grant stored by several at once is one row."""
    async with (
        audit_log(tmp_path, GENEROUS, url=database_url) as a,
        audit_log(tmp_path, GENEROUS, url=database_url) as b,
        audit_log(tmp_path, GENEROUS, url=database_url) as c,
    ):
        for granted in (True, False, True):
            async with anyio.create_task_group() as tg:
                for log in (a, b, c):
                    tg.start_soon(log.set_permission, "bob", "demo", "camera", granted)
        assert await a.granted_permissions("bob", "demo") == {"camera"}
        assert await on_storage(a, "SELECT count(*) FROM granted_permissions") == [(1,)]
