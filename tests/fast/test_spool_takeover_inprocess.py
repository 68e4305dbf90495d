"""Rows a SIGKILLed webhost still owed the database (webhost/storage/spool.py), taken over by the next start: each
stored once, also a row that committed in the instant before its settled mark reached the spool file (such a
row is given back and was stored a second time: the audit log counted 9 app call outcomes for 8)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.audit import database_file
from tests.support.inprocess import in_process_host, sdk_server

pytestmark = pytest.mark.anyio


def rows(data_dir: Path, table: str) -> list[dict[str, Any]]:
    db = sqlite3.connect(database_file(data_dir))
    db.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in db.execute(f"SELECT * FROM {table} ORDER BY id")]
    finally:
        db.close()


async def taken_over(data_dir: Path) -> None:
    """Until the writers have taken over the killed process's spool files (in the background, after start-up: a
    taken-over file is removed once its rows are stored)."""
    with anyio.fail_after(30):
        while list((data_dir / "spool").glob("*-0123456789abcdef.jsonl")):
            await anyio.sleep(0.02)


def left_by_a_killed_process(data_dir: Path, kind: str, owed: list[dict[str, Any]]) -> None:
    """A spool file as a SIGKILL leaves it: rows added, none marked settled, no process holding its lock."""
    folder = data_dir / "spool"
    folder.mkdir(mode=0o700, exist_ok=True)
    lines = [json.dumps({"n": n, "row": row}) for n, row in enumerate(owed, start=1)]
    (folder / f"{kind}-0123456789abcdef.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


async def test_a_row_committed_just_before_the_kill_is_stored_once_and_a_row_still_owed_is_stored(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}) as host, host.tab() as tab:
        await tab.wait_connected("basic")
        await tab.request(
            "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": "hi"}, "callId": "c-1"}
        )
        await tab.wait_notification("history/added", lambda p: p["entry"]["callId"] == "c-1")

    history = [{k: v for k, v in row.items() if k != "id"} for row in rows(data_dir, "call_history")]
    committed = next(row for row in history if row["call_id"] == "c-1")
    outcome = {
        "ts": time.time() - 1.5,  # recent: retention keeps it
        "session": "tab-1",
        "server": "apps",
        "frame": "f-1",
        "kind": "app.tools/call",
        "decision": "allowed",
        "summary": "app_only_ping",
        "detail": None,
        "user_id": "token",
        "user_name": None,
    }
    db = sqlite3.connect(database_file(data_dir))
    with db:  # the outcome row's commit, just before the kill
        db.execute(
            f"INSERT INTO audit ({', '.join(outcome)}) VALUES ({', '.join('?' * len(outcome))})", [*outcome.values()]
        )
    db.close()
    left_by_a_killed_process(data_dir, "history", [committed, {**committed, "call_id": "c-owed"}])
    left_by_a_killed_process(data_dir, "audit", [outcome, {**outcome, "summary": "owed"}])

    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}) as again, again.tab() as tab:
        await tab.wait_connected("basic")
        await taken_over(data_dir)
        stored = [row["call_id"] for row in rows(data_dir, "call_history")]
        assert stored.count("c-1") == 1 and stored.count("c-owed") == 1
        summaries = [(row["ts"], row["summary"]) for row in rows(data_dir, "audit")]
        assert summaries.count((outcome["ts"], "app_only_ping")) == 1
        assert summaries.count((outcome["ts"], "owed")) == 1
    assert list((data_dir / "spool").glob("*.jsonl")) == []  # taken over, then stopped cleanly: nothing owed
