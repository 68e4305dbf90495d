"""Audit rows name their person: the columns, the migration of an older file, the budget per person, who reads what."""

from __future__ import annotations

import csv
import io
import sqlite3
from pathlib import Path

import pytest

from webhost.audit import COLUMNS, RATE_LIMITED, AuditLimits, AuditLog, visible_user
from webhost.errors import PolicyRefused
from webhost.people import Person

ADA = Person(id="ada", name="Ada Lovelace", role="admin")
BOB = Person(id="bob", name="Bob", role="member")
CARL = Person(id="carl", name="Carl", role="member")
GENEROUS = AuditLimits(frame_burst=10_000, person_burst=10_000, person_burst_bytes=1 << 30)

OLD_SCHEMA = """
CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, session TEXT, server TEXT, frame TEXT,
                    kind TEXT NOT NULL, decision TEXT, summary TEXT, detail TEXT);
CREATE INDEX audit_server ON audit(server, id);
CREATE INDEX audit_ts ON audit(ts);
INSERT INTO audit (ts, session, server, kind, summary, detail)
    VALUES (strftime('%s', 'now'), 's-old', 'demo', 'app.open', 'old', '{"a": 1}');
"""


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_every_row_carries_the_person_and_both_exports_include_the_columns(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.sqlite3", GENEROUS)
    log.record("app.open", person=BOB, session="s-1", server="demo", summary="bob's")
    log.record("host.start", summary="nobody's")
    entries = {e["summary"]: e for e in log.entries()}
    assert (entries["bob's"]["user_id"], entries["bob's"]["user_name"]) == ("bob", "Bob")
    assert (entries["nobody's"]["user_id"], entries["nobody's"]["user_name"]) == (None, None)
    header, *rows = list(csv.reader(io.StringIO(log.export_csv())))
    assert header == list(COLUMNS) and header[-2:] == ["user_id", "user_name"]
    assert header[7] == "summary"  # the older columns keep their places
    cells = {dict(zip(header, r, strict=True))["summary"]: dict(zip(header, r, strict=True)) for r in rows}
    assert cells["bob's"]["user_id"] == "bob" and cells["bob's"]["user_name"] == "Bob"
    log.close()


def test_an_older_database_is_migrated_in_place_and_its_rows_stay_readable(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    db.commit()
    db.close()
    log = AuditLog(path, GENEROUS)
    log.record("app.open", person=ADA, session="s-new", summary="new")
    old, new = sorted(log.entries(), key=lambda e: e["id"])
    assert old["summary"] == "old" and old["detail"] == {"a": 1} and old["user_id"] is None
    assert new["user_id"] == "ada" and new["user_name"] == "Ada Lovelace"
    assert [e["summary"] for e in log.entries(user="ada")] == ["new"]
    assert "old" in log.export_csv()
    log.close()
    columns = {row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(audit)")}
    assert {"user_id", "user_name"} <= columns
    AuditLog(path, GENEROUS).close()  # a second start finds the columns and adds nothing


def test_the_person_budget_is_keyed_by_the_person_across_their_tabs(tmp_path: Path) -> None:
    clock = Clock()
    limits = AuditLimits(frame_burst=1000, person_rows_per_second=1, person_burst=5, person_burst_bytes=1 << 30)
    log = AuditLog(tmp_path / "a.sqlite3", limits, clock=clock)
    for i in range(20):  # two tabs of one person share one budget
        log.record("app.message", person=BOB, session=f"s-{i % 2}", frame=f"f-{i % 2}", summary=f"b{i}")
    for i in range(3):  # another person's budget is their own
        log.record("app.message", person=CARL, session="s-carl", frame="f-carl", summary=f"c{i}")
    assert len(log.entries(user="bob")) == 5
    assert len(log.entries(user="carl")) == 3
    clock.now += 2
    log.record("app.message", person=BOB, session="s-0", frame="f-0", summary="later")
    latest, dropped = log.entries(user="bob")[:2]
    assert latest["summary"] == "later"
    assert dropped["kind"] == RATE_LIMITED and dropped["detail"]["dropped"] == 15
    assert dropped["detail"]["budget"] == "person" and dropped["user_name"] == "Bob"
    log.close()


def test_who_reads_which_rows() -> None:
    assert visible_user(ADA, None) is None  # everyone's
    assert visible_user(ADA, "bob") == "bob"
    assert visible_user(BOB, None) == "bob"
    assert visible_user(BOB, "bob") == "bob"
    with pytest.raises(PolicyRefused) as refused:
        visible_user(BOB, "carl")
    assert refused.value.code == -32003
