"""The audit log through the host on both engines (`database_url`): big app requests, floods, CSV export,
and a log that cannot be written (read-only on both; a full disk on SQLite, where a test can fill one)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from tests.support.audit import audit_log as open_log
from tests.support.audit import on_storage, on_writer, writer_connection
from tests.support.inprocess import AsgiWsClient, InProcessHost, in_process_host
from tests.support.process import RpcError
from webhost.audit import RATE_LIMITED, AuditLog
from webhost.demo.server import mcp as demo_server

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def demo(
    tmp_path: Path, audit: dict[str, Any] | None = None, *, url: str | None = None
) -> AsyncIterator[tuple[InProcessHost, AsgiWsClient]]:
    options = {"audit": audit} if audit else None
    async with (
        in_process_host(tmp_path, {"demo": demo_server}, webhost_options=options, database_url=url) as host,
        host.tab() as tab,
    ):
        await tab.wait_connected("demo")
        yield host, tab


async def open_dashboard(tab: AsgiWsClient) -> str:
    frame: dict[str, Any] = await tab.request("apps/open", {"server": "demo", "tool": "show_dashboard"})
    return str(frame["frameId"])


def audit_log(host: InProcessHost) -> AuditLog:
    """The host's own audit log (under the ASGI middlewares, on the FastAPI app's state)."""
    app: Any = host.app
    while not hasattr(app, "state"):
        app = app.app
    log: AuditLog = app.state.host.audit
    return log


def truncated_fields(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        if value.get("truncated") is True:
            return [value]
        return [m for v in value.values() for m in truncated_fields(v)]
    if isinstance(value, list):
        return [m for v in value for m in truncated_fields(v)]
    return []


BIG = "b" * 70_000


@pytest.mark.parametrize(
    ("method", "params", "kind"),
    [
        (
            "tools/call",
            {"name": "count_slowly", "arguments": {"steps": 1, "delay": 0, "padding": BIG}},
            "app.tools/call",
        ),
        ("ui/message", {"role": "user", "content": [{"type": "text", "text": BIG}]}, "app.message"),
    ],
    ids=["tools-call", "ui-message"],
)
async def test_a_70_kb_app_request_is_audited_truncated_and_every_export_keeps_working(
    tmp_path: Path, method: str, params: dict[str, Any], kind: str, database_url: str
) -> None:
    async with demo(tmp_path, url=database_url) as (host, tab):
        frame = await open_dashboard(tab)
        try:
            await tab.request("apps/request", {"frameId": frame, "method": method, "params": params})
        except RpcError:
            pass  # the server may refuse the extra argument; what matters is what was audited
        await tab.request(
            "apps/request",
            {
                "frameId": frame,
                "method": "ui/message",
                "params": {"role": "user", "content": [{"type": "text", "text": "after"}]},
            },
        )
        listed = (await tab.request("audit/list", {"server": "demo"}))["entries"]
        (row,) = [e for e in listed if e["kind"] == kind and e["frame"] == frame and "b" * 100 in str(e["detail"])]
        (marker,) = truncated_fields(row["detail"])
        assert marker["bytes"] == 70_000 and marker["preview"].startswith("bbbb")
        assert any(e["summary"] == "after" for e in listed)
        async with host.http() as http:
            exported = await http.get("/api/audit")
            assert exported.status_code == 200
            assert any(e["summary"] == "after" for e in exported.json()["entries"])
            as_csv = await http.get("/api/audit", params={"format": "csv"})
            assert as_csv.status_code == 200
            assert any(r[7] == "after" for r in csv.reader(io.StringIO(as_csv.text)))


async def test_a_row_an_older_version_cut_mid_json_does_not_break_the_exports(
    tmp_path: Path, database_url: str
) -> None:
    async with demo(tmp_path, url=database_url) as (host, tab):
        await on_storage(
            audit_log(host),
            "INSERT INTO audit (ts, kind, server, summary, detail) VALUES (1, 'app.message', 'demo', 'old', :detail)",
            {"detail": '{"content": [{"type": "text", "text": "' + "o" * 65_000},
        )
        listed = (await tab.request("audit/list", {"server": "demo"}))["entries"]
        (old,) = [e for e in listed if e["summary"] == "old"]
        assert old["detail"]["unreadable"] is True and old["detail"]["raw"].startswith('{"content"')
        async with host.http() as http:
            assert (await http.get("/api/audit")).status_code == 200
            assert (await http.get("/api/audit", params={"format": "csv"})).status_code == 200


async def test_a_flooding_app_is_coalesced_into_one_rate_limited_row(tmp_path: Path, database_url: str) -> None:
    async with demo(tmp_path, {"frameRowsPerSecond": 1, "frameBurst": 5}, url=database_url) as (host, tab):
        frame = await open_dashboard(tab)
        for i in range(200):
            await tab.request(
                "apps/request",
                {
                    "frameId": frame,
                    "method": "ui/message",
                    "params": {"content": [{"type": "text", "text": f"{i} " + "m" * 5000}]},
                },
            )
        listed = [e for e in (await tab.request("audit/list", {"limit": 1000}))["entries"] if e["frame"] == frame]
        assert len(listed) <= 10, [e["summary"][:20] for e in listed]
    # Stopping the host writes what the budget still owes: one row that counts the dropped ones.
    async with open_log(tmp_path / "data", url=database_url) as log:
        rows = [e for e in await log.entries(limit=1000) if e["frame"] == frame]
        ((stored,),) = await on_storage(log, "SELECT sum(length(detail)) FROM audit")
    (dropped,) = [e for e in rows if e["kind"] == RATE_LIMITED]
    written = [e for e in rows if e["kind"] != RATE_LIMITED]
    assert dropped["summary"] == f"rate limited: {dropped['detail']['dropped']} rows dropped"
    assert dropped["detail"]["kinds"]["app.message"] >= 190
    assert dropped["detail"]["dropped"] + len(written) == 202  # open + 200 messages + close
    assert stored < 200_000  # not the 1 MB the 200 messages were


async def test_the_csv_export_neutralises_formulas_an_app_sends(tmp_path: Path, database_url: str) -> None:
    async with demo(tmp_path, url=database_url) as (host, tab):
        frame = await open_dashboard(tab)
        await tab.request(
            "apps/request",
            {
                "frameId": frame,
                "method": "ui/message",
                "params": {"content": [{"type": "text", "text": "=cmd|' /C calc'!A0"}]},
            },
        )
        async with host.http() as http:
            text = (await http.get("/api/audit", params={"format": "csv"})).text
    header, *rows = list(csv.reader(io.StringIO(text)))
    summaries = [dict(zip(header, row, strict=True))["summary"] for row in rows]
    assert "'=cmd|' /C calc'!A0" in summaries
    assert not any(s.startswith(("=", "+", "-", "@")) for s in summaries)


async def fill_to_the_brim(log: AuditLog) -> None:
    """The writer's connection may not grow the file, and every page is used (filler rows, then smaller ones)."""
    ((pages,),) = await on_writer(log, "PRAGMA page_count")
    await on_writer(log, f"PRAGMA max_page_count = {pages}")
    for size in (50_000, 5000, 500, 50, 5, 0):
        for _ in range(1000):
            try:
                await on_writer(log, f"INSERT INTO audit (ts, kind, detail) VALUES (0, 'filler', '{'f' * size}')")
            except OperationalError:
                await (await writer_connection(log)).rollback()
                break


async def make_read_only(log: AuditLog) -> None:
    if log.storage.dialect == "postgresql":
        await on_writer(log, "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    else:
        await on_writer(log, "PRAGMA query_only = ON")


@pytest.mark.parametrize(
    ("break_log", "engine"),
    [
        (fill_to_the_brim, "sqlite"),
        (make_read_only, "sqlite"),
        pytest.param(make_read_only, "postgresql", marks=pytest.mark.postgres),
    ],
    ids=["disk-full", "read-only", "read-only-postgresql"],
)
async def test_an_app_action_that_cannot_be_audited_is_refused_not_run(
    tmp_path: Path, break_log: Callable[[AuditLog], Awaitable[None]], engine: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres").new_database() if engine == "postgresql" else None
    async with demo(tmp_path, url=url) as (host, tab):
        frame = await open_dashboard(tab)
        await break_log(audit_log(host))
        with pytest.raises(RpcError) as refused:
            await tab.request(
                "apps/request",
                {
                    "frameId": frame,
                    "method": "tools/call",
                    "params": {"name": "count_slowly", "arguments": {"steps": 1, "delay": 0}},
                },
            )
        assert refused.value.code == -32003 and "audit log is unavailable" in str(refused.value.message)
        assert not [
            n
            for n in tab.notifications
            if n.get("method") == "activity" and "count_slowly" in str(n["params"]["entry"].get("summary"))
        ]
        with pytest.raises(RpcError) as message_refused:
            await tab.request(
                "apps/request",
                {
                    "frameId": frame,
                    "method": "ui/message",
                    "params": {"content": [{"type": "text", "text": "unaudited"}]},
                },
            )
        assert message_refused.value.code == -32003
        assert not [n for n in tab.notifications if n.get("method") == "apps/conversation"]
        with pytest.raises(RpcError) as open_refused:
            await open_dashboard(tab)
        assert open_refused.value.code == -32003
        # The log still reads, and closing the frame still works.
        assert (await tab.request("audit/list", {}))["entries"]
        await tab.request("apps/close", {"frameId": frame})
        # The page's own calls are not audited and still run.
        result = await tab.request(
            "tools/call",
            {"server": "demo", "name": "count_slowly", "arguments": {"steps": 1, "delay": 0}, "callId": "c-page"},
        )
        assert result["content"][0]["text"] == "Counted to 1."


async def test_the_audit_view_masks_configured_secrets_in_what_apps_wrote_but_never_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit log shows what apps sent (a `ui/message`), with every configured secret masked in its summary and
    detail, in `audit/list` and both exports; the row's server keeps its name even when a configured value equals
    it (issue 24 item 1: before, the whole frame was masked, names included)."""
    monkeypatch.setenv("WH_AUDIT_SECRET", "audit-SECRET-9")
    monkeypatch.setenv("WH_AUDIT_NAME", "demo")
    entries = {"demo": {"command": "in-process", "env": {"KEY": "${WH_AUDIT_SECRET}", "NAME": "${WH_AUDIT_NAME}"}}}
    async with (
        in_process_host(tmp_path, {"demo": demo_server}, entries=entries) as host,
        host.tab() as tab,
    ):
        await tab.wait_connected("demo")
        frame = await open_dashboard(tab)
        text = "leaked audit-SECRET-9 here"
        params = {"role": "user", "content": [{"type": "text", "text": text}]}
        await tab.request("apps/request", {"frameId": frame, "method": "ui/message", "params": params})
        listed = (await tab.request("audit/list", {}))["entries"]
        async with host.http() as http:
            exported = (await http.get("/api/audit")).json()["entries"]
            csv_text = (await http.get("/api/audit", params={"format": "csv"})).text
    for entries_seen in (listed, exported):
        [message] = [e for e in entries_seen if e["kind"] == "app.message"]
        assert message["server"] == "demo"
        assert "audit-SECRET-9" not in json.dumps(message) and "***" in json.dumps(message)
    assert "audit-SECRET-9" not in csv_text and ",demo," in csv_text
