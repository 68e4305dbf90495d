"""Each person's call history in the database (webhost/storage/history.py), through the page's WebSocket:
kept across tabs and reloads, bounded, pruned, private to its person, and masked like everything else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.inprocess import AsgiWsClient, in_process_host, sdk_server
from tests.support.postgres import Postgres
from tests.support.process import RpcError
from webhost.people import Person
from webhost.storage import history

pytestmark = pytest.mark.anyio

ADA = Person(id="ada@example.com", name="Ada", role="member")
BOB = Person(id="bob@example.com", name="Bob", role="admin")


def servers() -> dict[str, Any]:
    return {"basic": sdk_server("basic")}


async def stored(tab: AsgiWsClient, call_id: str) -> dict[str, Any]:
    """The `history/added` entry for one of this tab's calls (written after the answer, by the writer task)."""
    params = await tab.wait_notification("history/added", lambda p: p["entry"]["callId"] == call_id)
    entry: dict[str, Any] = params["entry"]
    return entry


async def test_calls_reads_and_prompts_are_kept_and_a_new_tab_lists_them(tmp_path: Path, database_url: str) -> None:
    async with in_process_host(tmp_path, servers(), database_url=database_url) as host:
        async with host.tab() as tab, host.tab() as other:
            await tab.wait_connected("basic")
            await tab.request(
                "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": "hi"}, "callId": "c-1"}
            )
            echo = await stored(tab, "c-1")
            with pytest.raises(RpcError):
                await tab.request(
                    "tools/call", {"server": "basic", "name": "rpc_error", "arguments": {}, "callId": "c-2"}
                )
            await tab.request("tools/call", {"server": "basic", "name": "fail", "arguments": {}, "callId": "c-3"})
            await tab.request("resources/read", {"server": "basic", "uri": "basic://text", "callId": "r-1"})
            await tab.request(
                "prompts/get", {"server": "basic", "name": "greet", "arguments": {"name": "Ada"}, "callId": "p-1"}
            )
            await stored(tab, "p-1")
            # The other tab of the same person is told too: its history view shows calls made elsewhere.
            told = await other.wait_notification("history/added", lambda p: p["entry"]["callId"] == "c-1")
            assert told["entry"] == echo
        assert echo["kind"] == "tool" and echo["server"] == "basic" and echo["name"] == "echo"
        assert echo["arguments"] == {"text": "hi"} and echo["status"] == "ok"
        assert echo["durationMs"] >= 0 and echo["resultBytes"] > 0 and not echo["resultTruncated"]
        # A reload is a new tab: the history comes from the database, newest first.
        async with host.tab() as reloaded:
            listed = await reloaded.request("history/list")
            rows = [(e["kind"], e["name"], e["status"], e["callId"]) for e in listed["entries"]]
            assert rows == [
                ("prompt", "greet", "ok", "p-1"),
                ("resource", "basic://text", "ok", "r-1"),
                ("tool", "fail", "error", "c-3"),
                ("tool", "rpc_error", "error", "c-2"),
                ("tool", "echo", "ok", "c-1"),
            ]
            assert listed["keep"] == history.KEEP
            full = (await reloaded.request("history/get", {"id": echo["id"]}))["entry"]
            assert full["result"]["content"][0]["text"] == "hi"
            failed = (await reloaded.request("history/get", {"id": listed["entries"][3]["id"]}))["entry"]
            assert failed["result"]["error"]["message"]
            older = await reloaded.request("history/list", {"before": listed["entries"][1]["id"], "limit": 2})
            assert [e["callId"] for e in older["entries"]] == ["c-3", "c-2"]
            assert (await reloaded.request("history/clear"))["cleared"] == 5
            assert (await reloaded.request("history/list"))["entries"] == []


async def test_a_big_result_keeps_a_cut_copy_marked_truncated(tmp_path: Path, database_url: str) -> None:
    async with in_process_host(tmp_path, servers(), database_url=database_url) as host, host.tab() as tab:
        await tab.wait_connected("basic")
        big = "x" * (history.MAX_ARGUMENTS + 10)
        await tab.request(
            "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": big}, "callId": "c-big"}
        )
        entry = await stored(tab, "c-big")
        assert entry["argumentsTruncated"] and entry["arguments"] is None
        await tab.request(
            "tools/call", {"server": "basic", "name": "big", "arguments": {"size_bytes": 200_000}, "callId": "c-200k"}
        )
        entry = await stored(tab, "c-200k")
        assert entry["resultTruncated"] and entry["resultBytes"] > 200_000
        full = (await tab.request("history/get", {"id": entry["id"]}))["entry"]
        assert "result" not in full and len(full["preview"]) == history.MAX_RESULT


async def test_each_person_keeps_their_newest_entries(
    tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history, "KEEP", 3)
    monkeypatch.setattr(history, "PRUNE_EVERY", 1)
    async with in_process_host(tmp_path, servers(), database_url=database_url) as host, host.tab() as tab:
        await tab.wait_connected("basic")
        for n in range(5):
            await tab.request(
                "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": str(n)}, "callId": f"c-{n}"}
            )
            await stored(tab, f"c-{n}")
        listed = await tab.request("history/list")
        assert [e["arguments"]["text"] for e in listed["entries"]] == ["4", "3", "2"]


async def test_people_see_only_their_own_history_admins_too(tmp_path: Path, database_url: str) -> None:
    async with in_process_host(tmp_path, servers(), database_url=database_url, people=True) as host:
        async with host.tab(person=ADA) as ada, host.tab(person=BOB) as bob:
            await ada.wait_connected("basic")
            await ada.request(
                "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": "ada's"}, "callId": "c-a"}
            )
            entry = await stored(ada, "c-a")
            assert (await bob.request("history/list"))["entries"] == []
            with pytest.raises(RpcError, match="no history entry"):
                await bob.request("history/get", {"id": entry["id"]})
            assert (await bob.request("history/clear"))["cleared"] == 0
            assert [e["callId"] for e in (await ada.request("history/list"))["entries"]] == ["c-a"]
            assert not [n for n in bob.notifications if n["method"] == "history/added"]


async def test_history_params_are_checked(tmp_path: Path, database_url: str) -> None:
    async with in_process_host(tmp_path, servers(), database_url=database_url) as host, host.tab() as tab:
        for params in ({"id": "1"}, {"id": 0}, {"id": True}, {}):
            with pytest.raises(RpcError, match="params.id must be a positive integer"):
                await tab.request("history/get", params)
        with pytest.raises(RpcError, match="params.limit"):
            await tab.request("history/list", {"limit": -1})


async def test_ids_past_what_the_database_stores_are_refused_at_the_edge(tmp_path: Path, database_url: str) -> None:
    """2**63 used to reach the database (SQLite: an integer overflow) and come back as an internal error."""
    async with in_process_host(tmp_path, servers(), database_url=database_url) as host, host.tab() as tab:
        with pytest.raises(RpcError, match="params.id must be a positive integer up to 2\\*\\*63 - 1") as refused:
            await tab.request("history/get", {"id": 2**63})
        assert refused.value.code == -32602
        with pytest.raises(RpcError, match="params.before must be a positive integer") as refused:
            await tab.request("history/list", {"before": 2**63})
        assert refused.value.code == -32602
        assert (await tab.request("history/list", {"before": 2**63 - 1}))["entries"] == []


async def test_history_says_plainly_when_the_database_is_down(tmp_path: Path, postgres: Postgres) -> None:
    """An outage used to answer history/list with "internal error: ConnectionRefusedError"; now one line says
    the database is unavailable and why, and history works again once it is back."""
    url = postgres.new_database()
    name = url.rsplit("/", 1)[1]
    async with in_process_host(tmp_path, servers(), database_url=url) as host, host.tab() as tab:
        postgres.psql(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        postgres.psql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")
        try:
            with pytest.raises(RpcError) as down:
                await tab.request("history/list")
            assert down.value.code == -32603
            assert down.value.message.startswith("the database is unavailable: "), down.value.message
            assert "ref" not in down.value.data and down.value.data["reason"]
        finally:
            postgres.psql(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        assert (await tab.request("history/list"))["entries"] == []


async def test_calls_made_while_the_database_is_down_are_stored_once_it_is_back(
    tmp_path: Path, postgres: Postgres, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The writer used to drop a batch it could not write, for good; now the batch waits and is tried again."""
    monkeypatch.setattr(history, "RETRY_SECONDS", (0.05,), raising=False)
    url = postgres.new_database()
    name = url.rsplit("/", 1)[1]
    async with in_process_host(tmp_path, servers(), database_url=url) as host, host.tab() as tab:
        await tab.wait_connected("basic")
        postgres.psql(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        postgres.psql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")
        try:
            for index in range(3):
                params = {"server": "basic", "name": "echo", "arguments": {"text": "x"}, "callId": f"down-{index}"}
                await tab.request("tools/call", params)  # answered: nothing waits on the database
            with anyio.fail_after(30):  # the writer has met the outage (and not given the entries up)
                while "call history: " not in caplog.text:
                    await anyio.sleep(0.01)
        finally:
            postgres.psql(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        for index in range(3):
            await stored(tab, f"down-{index}")
        listed = (await tab.request("history/list"))["entries"]
        assert sorted(e["callId"] for e in listed) == ["down-0", "down-1", "down-2"]
