"""The audit log survives what is written into it: sizes, floods, bad rows, formulas, a full disk, a
read-only database. Each test that is not about SQLite's own files runs on both engines (`database_url`)."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.audit import audit_log, database_file, on_storage, on_writer
from tests.support.postgres import Postgres
from webhost.audit import RATE_LIMITED, AuditLimits, AuditLog, AuditUnavailable, fit_detail

pytestmark = pytest.mark.anyio

GENEROUS = AuditLimits(frame_burst=10_000, person_burst=10_000, person_burst_bytes=1 << 30)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def log(tmp_path: Path, database_url: str) -> AsyncIterator[AuditLog]:
    async with audit_log(tmp_path, GENEROUS, url=database_url) as audit:
        yield audit


def walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


# -- 1. oversized details are stored as valid JSON, truncated per field ------------------------


async def test_a_70_kb_tool_call_detail_is_stored_as_valid_json_with_the_big_field_marked(log: AuditLog) -> None:
    arguments = {"query": "x" * 70_000, "limit": 5, "note": "kept"}
    await log.record("app.tools/call", session="s-1", frame="f-1", summary="search", detail={"arguments": arguments})
    (entry,) = await log.entries()
    stored = entry["detail"]["arguments"]
    assert stored["limit"] == 5 and stored["note"] == "kept"
    assert stored["query"]["truncated"] is True and stored["query"]["bytes"] == 70_000
    assert stored["query"]["preview"].startswith("xxxx")
    ((raw,),) = await on_storage(log, "SELECT detail FROM audit")
    assert len(raw.encode()) <= GENEROUS.max_row_bytes
    json.loads(raw)
    # ... and every export still works afterwards.
    assert len(await log.entries(limit=10)) == 1
    assert "search" in await log.export_csv()


@pytest.mark.parametrize(
    "detail",
    [
        {"content": [{"type": "text", "text": "é" * 40_000}] * 3, "role": "user"},
        {"blocks": list(range(50_000))},
        {str(i): "z" * 300 for i in range(5_000)},
        {"deep": json.loads("[" * 500 + "]" * 500)},
        {"nan": float("nan"), "inf": float("inf"), "object": object()},
        {"surrogate": "\ud800" * 30_000},
    ],
    ids=["big-message", "long-array", "many-keys", "deep", "non-json-values", "lone-surrogates"],
)
def test_any_detail_is_stored_as_one_valid_json_document_within_the_cap(detail: dict[str, Any]) -> None:
    text = fit_detail(detail, 16_000)
    assert len(text.encode()) <= 16_000
    json.loads(text)  # a complete document, never cut in the middle
    assert "NaN" not in text and "Infinity" not in text


async def test_a_detail_that_fits_is_stored_unchanged(log: AuditLog) -> None:
    detail = {"arguments": {"a": [1, 2, {"b": "c"}]}, "ms": 1.5}
    await log.record("app.tools/call", detail=detail)
    assert (await log.entries())[0]["detail"] == detail
    assert not any(isinstance(v, dict) and v.get("truncated") for v in walk((await log.entries())[0]["detail"]))


async def test_nul_and_lone_surrogates_in_labels_and_summaries_are_stored_replaced(log: AuditLog) -> None:
    await log.record("app.message", server="de\x00mo", summary="a\x00b\ud800c", decision="\udfff")
    (entry,) = await log.entries()
    assert (entry["server"], entry["summary"], entry["decision"]) == ("de\ufffdmo", "a\ufffdb\ufffdc", "\ufffd")


# -- 1. rows that do not parse are read back marked, never as an exception -----------------------


async def test_rows_written_cut_by_an_older_version_are_returned_marked_unreadable(log: AuditLog) -> None:
    await log.record("app.open", summary="before")
    old = json.dumps({"arguments": {"q": "y" * 70_000}})[:65536]  # what the old code stored
    insert = "INSERT INTO audit (ts, kind, summary, detail) VALUES (:ts, :kind, :summary, :detail)"
    await on_storage(log, insert, {"ts": 1, "kind": "app.message", "summary": "cut", "detail": old})
    await on_storage(log, insert, {"ts": 3, "kind": "x", "summary": "nan", "detail": '{"v": NaN}'})
    summaries = {"before", "cut", "nan", "after"}
    if log.storage.dialect == "sqlite":  # a BLOB in a TEXT column: only SQLite (and so only 0.1's file) has one
        db = sqlite3.connect(str(log.storage.engine.url.database))
        db.execute("INSERT INTO audit (ts, kind, summary, detail) VALUES (2, 'x', 'blob', ?)", (b"\xff\xfe{",))
        db.commit()
        db.close()
        summaries.add("blob")
    await log.record("app.open", summary="after")
    entries = {e["summary"]: e for e in await log.entries()}
    assert set(entries) == summaries
    cut = entries["cut"]["detail"]
    assert cut["unreadable"] is True and cut["bytes"] == 65536 and cut["raw"].startswith('{"arguments"')
    if "blob" in entries:
        assert entries["blob"]["detail"]["unreadable"] is True
    assert entries["nan"]["detail"] == {"v": "NaN"}
    json.dumps(await log.entries(), allow_nan=False)  # what JSONResponse needs
    rows = list(csv.reader(io.StringIO(await log.export_csv())))
    assert len(rows) == len(summaries) + 1


# -- 3. CSV export neutralises formulas ----------------------------------------------------------


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
async def test_csv_cells_that_start_like_a_formula_are_prefixed_with_a_quote(log: AuditLog, start: str) -> None:
    await log.record("app.message", server="demo", summary=f'{start}HYPERLINK("http://evil")', decision=f"{start}1")
    header, row = list(csv.reader(io.StringIO(await log.export_csv())))
    cells = dict(zip(header, row, strict=True))
    assert cells["summary"] == f'\'{start}HYPERLINK("http://evil")'
    assert cells["decision"] == f"'{start}1"
    assert cells["server"] == "demo"


async def test_csv_keeps_ordinary_cells_as_they_are(log: AuditLog) -> None:
    await log.record("app.open", summary="plain text", detail={"a": 1})
    header, row = list(csv.reader(io.StringIO(await log.export_csv())))
    cells = dict(zip(header, row, strict=True))
    assert cells["summary"] == "plain text" and json.loads(cells["detail"]) == {"a": 1}


# -- 2. write budgets per frame and per person ---------------------------------------------------


async def test_a_flooding_frame_is_coalesced_into_one_rate_limited_row(tmp_path: Path, database_url: str) -> None:
    clock = Clock()
    limits = AuditLimits(frame_rows_per_second=2, frame_burst=5, person_burst=1000, person_burst_bytes=1 << 30)
    async with audit_log(tmp_path, limits, clock=clock, url=database_url) as audit:
        for i in range(1000):
            await audit.record(
                "app.message", session="s-1", frame="f-1", summary=f"m{i}", detail={"text": "q" * 10_000}
            )
        assert len(await audit.entries()) == 5
        clock.now += 2  # two seconds later: one more token each second, and the drops are written first
        await audit.record("app.message", session="s-1", frame="f-1", summary="later")
        entries = await audit.entries()
        assert [e["summary"] for e in entries[:2]] == ["later", "rate limited: 995 rows dropped"]
        dropped = entries[1]
        assert dropped["kind"] == RATE_LIMITED and dropped["frame"] == "f-1"
        assert dropped["detail"]["dropped"] == 995 and dropped["detail"]["kinds"] == {"app.message": 995}
        # Another frame of the same person has its own budget.
        await audit.record("app.message", session="s-1", frame="f-2", summary="other frame")
        assert (await audit.entries())[0]["summary"] == "other frame"


async def test_a_person_has_a_byte_budget_across_frames(tmp_path: Path, database_url: str) -> None:
    clock = Clock()
    limits = AuditLimits(
        max_row_bytes=16_384,
        frame_burst=1000,
        person_burst=1000,
        person_bytes_per_second=10_000,
        person_burst_bytes=100_000,
    )
    async with audit_log(tmp_path, limits, clock=clock, url=database_url) as audit:
        for i in range(100):
            await audit.record("app.message", session="s-1", frame=f"f-{i}", detail={"text": "w" * 15_000})
        written = await audit.entries(limit=1000)
        assert 5 <= len(written) <= 7  # about 100 KB of 15 KB rows
    # closing wrote what was still owed
    async with audit_log(tmp_path, limits, clock=clock, url=database_url) as reopened:
        last = (await reopened.entries())[0]
        assert last["kind"] == RATE_LIMITED and last["session"] == "s-1"
        assert last["detail"]["dropped"] == 100 - len(written)
        ((stored,),) = await on_storage(reopened, "SELECT sum(length(detail)) FROM audit")
    assert stored < 150_000


async def test_rows_without_a_frame_or_person_are_not_limited(tmp_path: Path, database_url: str) -> None:
    async with audit_log(
        tmp_path, AuditLimits(frame_burst=1, person_burst=1), clock=Clock(), url=database_url
    ) as audit:
        for _ in range(20):
            await audit.record("host.start")
        assert len(await audit.entries()) == 20


async def test_rows_noted_without_waiting_are_stored_in_order_before_a_later_read(log: AuditLog) -> None:
    for i in range(300):
        if i % 3 == 0:
            await log.record("app.message", frame="f-1", summary=str(i))
        else:
            log.note("app.close", frame="f-1", summary=str(i))
    entries = await log.entries(limit=1000)  # a read waits for the writes queued before it
    assert [e["summary"] for e in reversed(entries)] == [str(i) for i in range(300)]
    assert [e["id"] for e in entries] == sorted((e["id"] for e in entries), reverse=True)


# -- 2. retention -------------------------------------------------------------------------------


async def test_retention_and_the_row_cap_apply_at_start_and_periodically(tmp_path: Path, database_url: str) -> None:
    now = 1_700_000_000.0
    async with audit_log(tmp_path, GENEROUS, wall_clock=lambda: now - 100 * 86400, url=database_url) as first:
        await first.record("old", summary="100 days ago")
    clock = Clock()
    limits = AuditLimits(retention_days=30, max_rows=3)
    async with audit_log(tmp_path, limits, clock=clock, wall_clock=lambda: now, url=database_url) as audit:
        assert await audit.entries() == []  # applied at start
        for i in range(10):
            await audit.record("new", summary=str(i))
        assert len(await audit.entries()) == 10
        clock.now += 61  # the next write after a minute prunes
        await audit.record("new", summary="10")
        assert [e["summary"] for e in await audit.entries()] == ["10", "9", "8"]


# -- 4. file modes and an unwritable database ------------------------------------------------------


async def test_the_database_and_its_wal_and_shm_files_are_created_owner_only(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        async with audit_log(tmp_path / "data", GENEROUS) as audit:
            await audit.record("app.open", detail={"a": 1})
            name = database_file(tmp_path / "data").name
            for file in (name, f"{name}-wal", f"{name}-shm"):
                mode = stat.S_IMODE((tmp_path / "data" / file).stat().st_mode)
                assert mode == 0o600, (file, oct(mode))
    finally:
        os.umask(previous)


async def test_an_existing_database_readable_by_others_is_tightened(tmp_path: Path) -> None:
    path = database_file(tmp_path)
    sqlite3.connect(path).close()
    path.chmod(0o644)
    async with audit_log(tmp_path, GENEROUS):
        pass
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.fixture
async def sqlite_log(tmp_path: Path) -> AsyncIterator[AuditLog]:
    async with audit_log(tmp_path, GENEROUS) as audit:
        yield audit


async def test_a_full_database_raises_audit_unavailable_and_reads_keep_working(sqlite_log: AuditLog) -> None:
    log = sqlite_log  # SQLite's max_page_count stands for a full disk
    await log.record("app.open", summary="before")
    ((pages,),) = await on_writer(log, "PRAGMA page_count")
    await on_writer(log, f"PRAGMA max_page_count = {pages}")
    with pytest.raises(AuditUnavailable) as failed:
        for _ in range(50):
            await log.record("app.message", detail={"text": "f" * 15_000})
    assert failed.value.code == -32003
    assert "audit log is unavailable" in failed.value.message
    assert (await log.entries())[-1]["summary"] == "before"
    assert (await log.export_csv()).startswith("id,ts,session")


READ_ONLY = {
    "sqlite": ("PRAGMA query_only = ON", "PRAGMA query_only = OFF"),
    "postgresql": (
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
    ),
}


async def test_a_read_only_database_raises_audit_unavailable(log: AuditLog) -> None:
    read_only, read_write = READ_ONLY[log.storage.dialect]
    await on_writer(log, read_only)
    with pytest.raises(AuditUnavailable, match="audit log is unavailable"):
        await log.record("app.message", summary="x")
    with pytest.raises(AuditUnavailable):
        await log.set_permission("bob", "demo", "camera", True)
    assert await log.granted_permissions("bob", "demo") == set()
    # A row noted without waiting fails alone: the log is still there for the next one.
    log.note("app.close", summary="lost")
    await on_writer(log, read_write)
    await log.record("app.message", summary="stored again")
    assert [e["summary"] for e in await log.entries()] == ["stored again"]


async def test_a_closed_log_refuses_rows_that_would_wait(tmp_path: Path) -> None:
    async with audit_log(tmp_path, GENEROUS) as audit:
        pass
    with pytest.raises(AuditUnavailable, match="not open"):
        await audit.record("app.open")


async def test_a_writer_connection_the_database_dropped_is_opened_again(tmp_path: Path, postgres: Postgres) -> None:
    """A PostgreSQL restart or failover ends the writer's connection: the next row is stored on a new one,
    not refused."""
    async with audit_log(tmp_path, GENEROUS, url=postgres.new_database()) as log:
        await log.record("app.open", summary="before")
        ((pid,),) = await on_writer(log, "SELECT pg_backend_pid()")
        ((ended,),) = await on_storage(log, "SELECT pg_terminate_backend(:pid)", {"pid": pid})
        assert ended is True
        await log.record("app.open", summary="after")
        assert [e["summary"] for e in await log.entries()] == ["after", "before"]
