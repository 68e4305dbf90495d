"""Surviving a replica, in-process: host A stops cleanly (the order `Server.shutdown` uses: the journal
is told first, then the tabs go), host B opens on the same data folder and secret, and a tab there gets
A's input round asked again, or A's legacy question reported lost (subprocess replicas, SIGKILL and the
running-call case: tests/integration/test_survive_replica.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.inprocess import InProcessHost, in_process_host, sdk_server
from webhost.app import HostApp

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


def elicit() -> dict[str, Any]:
    return {"elicit": sdk_server("elicit")}


def stopping(host: InProcessHost) -> HostApp:
    app = host.app
    assert isinstance(app, HostApp) and app.journal is not None
    app.journal.stopping = True
    return app


async def test_a_round_of_a_stdio_server_left_by_a_stopped_host_is_reported_interrupted(
    tmp_path: Path, database_url: str
) -> None:
    """The in-process servers are configured as stdio servers, which die with their host: a round they asked
    is not asked again on the next host (an HTTP server's is: tests/integration/test_survive_replica.py)."""
    async with in_process_host(tmp_path, elicit(), database_url=database_url) as a:
        async with a.tab() as tab:
            await tab.wait_connected("elicit")
            tab.start_request(
                "tools/call", {"server": "elicit", "name": "multi_round", "arguments": {"rounds": 2}, "callId": "m"}
            )
            first = await tab.wait_notification("elicitation/request")
            await tab.request(
                "elicitation/respond", {"id": first["id"], "action": "accept", "content": {"answer": "A"}}
            )
            await tab.wait_notification("elicitation/request", lambda p: p["message"] == "Round 2 of 2")
            app = stopping(a)
            assert app.journal is not None
            await app.journal.flush()

    async with in_process_host(tmp_path, elicit(), database_url=database_url) as b, b.tab() as tab:
        outcome = await tab.wait_notification("calls/outcome")
        assert outcome["callId"] == "m"
        assert "stdio servers are not shared" in outcome["error"]["message"]
        assert (await tab.request("session/info"))["pending"] == []


async def test_a_legacy_question_left_by_a_stopped_host_is_reported_lost(tmp_path: Path, database_url: str) -> None:
    async with in_process_host(tmp_path, elicit(), database_url=database_url, legacy=frozenset({"elicit"})) as a:
        async with a.tab() as tab:
            assert (await tab.wait_connected("elicit"))["era"] == "legacy"
            tab.start_request("tools/call", {"server": "elicit", "name": "form_defaults", "callId": "f"})
            await tab.wait_notification("elicitation/request")
            app = stopping(a)
            assert app.journal is not None
            await app.journal.flush()

    async with (
        in_process_host(tmp_path, elicit(), database_url=database_url, legacy=frozenset({"elicit"})) as b,
        b.tab() as tab,
    ):
        lost = await tab.wait_notification("calls/outcome")
        assert lost["callId"] == "f" and lost["reason"] == "question-lost"
        assert "lost when webhost restarted" in lost["error"]["message"]
        assert not [n for n in tab.notifications if n["method"] == "elicitation/request"]
