"""What webhost answered before writing it down (each call's history entry, an app call's audit outcome) is not lost
when webhost is SIGKILLed a moment later: the next start stores what the spool still owed (storage/spool.py)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.process import WAIT, Webhost, WsClient, connected, run_webhost, stdio_server

pytestmark = pytest.mark.anyio

TOKEN = "t-write-behind-0123456789"
CALLS = 30
APP_CALLS = 8


def servers() -> dict[str, Any]:
    return {"apps": stdio_server("apps"), "basic": stdio_server("basic")}


async def killed(host: Webhost) -> None:
    host.proc.send_signal(signal.SIGKILL)
    with anyio.fail_after(WAIT):
        while host.proc.poll() is None:
            await anyio.sleep(0.02)


async def until(ws: WsClient, method: str, params: dict[str, Any], done: Any) -> list[dict[str, Any]]:
    """The entries `method` lists once `done(entries)` holds (the new start stores what was owed meanwhile)."""
    with anyio.fail_after(WAIT):
        while True:
            entries: list[dict[str, Any]] = (await ws.request(method, params))["entries"]
            if done(entries):
                return entries
            await anyio.sleep(0.1)


async def test_calls_answered_just_before_a_sigkill_are_in_the_history_and_the_audit_log(tmp_path: Path) -> None:
    """Before: 23 of 43 calls acknowledged in the last 3 s were missing from the history after a SIGKILL (SQLite),
    and an app call's outcome row now and then (6 of 44); their intent rows, written before the call, were there."""
    data_dir = tmp_path / "data"
    with run_webhost(tmp_path, servers(), data_dir=data_dir, token=TOKEN) as host:
        async with connected(host, "apps", "basic") as ws:
            for index in range(CALLS):
                arguments = {"text": f"k{index}"}
                params = {"server": "basic", "name": "echo", "arguments": arguments, "callId": f"k{index}"}
                await ws.request("tools/call", params)
            frame = await ws.request("apps/open", {"server": "apps", "tool": "bridge_probe"})
            for _ in range(APP_CALLS):
                request = {"name": "app_only_ping", "arguments": {}}
                params = {"frameId": frame["frameId"], "method": "tools/call", "params": request}
                await ws.request("apps/request", params)
            await killed(host)  # at once: every answer above was acknowledged, nothing waited for a write
    with run_webhost(tmp_path, servers(), data_dir=data_dir, token=TOKEN) as again:
        async with connected(again) as ws:
            wanted = {f"k{index}" for index in range(CALLS)}
            history = await until(ws, "history/list", {}, lambda e: wanted <= {x["callId"] for x in e})
            assert sorted(e["callId"] for e in history if e["callId"] in wanted) == sorted(wanted)  # each once
            rows = await until(
                ws,
                "audit/list",
                {"server": "apps"},
                lambda e: sum(row["kind"] == "app.tools/call" for row in e) >= APP_CALLS,
            )
            assert sum(row["kind"] == "app.tools/call.intent" for row in rows) == APP_CALLS
            assert sum(row["kind"] == "app.tools/call" for row in rows) == APP_CALLS
    assert list((data_dir / "spool").glob("*.jsonl")) == []  # taken over, then stopped cleanly: nothing owed
