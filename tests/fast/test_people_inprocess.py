"""One person's tabs share one connection per server; a server's question reaches the tab that caused it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client._memory import InMemoryTransport

from tests.support.inprocess import in_process_host
from tests.support.process import RpcError
from webhost.config import ServerConfig
from webhost.demo.server import mcp as demo_server

pytestmark = pytest.mark.anyio


def register(tab_request: object) -> dict[str, object]:
    return {"server": "demo", "name": "register_user", "arguments": {}, "callId": str(tab_request)}


async def test_two_tabs_of_one_person_share_one_connection_and_a_reload_keeps_it(tmp_path: Path) -> None:
    connects: list[ServerConfig] = []
    async with in_process_host(
        tmp_path, {"demo": demo_server}, connects=connects, webhost_options={"timeouts": {"idle": 5}}
    ) as host:
        async with host.tab() as first, host.tab() as second:
            await first.wait_connected("demo")
            await second.wait_connected("demo")
            assert len(connects) == 1
            ids = {(await t.request("session/info"))["sessionId"] for t in (first, second)}
            assert len(ids) == 2  # two tabs, one connection
        async with host.tab() as reloaded:
            assert (await reloaded.wait_connected("demo"))["status"] == "connected"
        assert len(connects) == 1  # the reload found the connection still open


def watched(closed: list[anyio.Event]) -> Callable[[], Any]:
    """The demo server in-process; each connection's event is set once webhost has closed its transport."""

    def transport() -> Any:
        done = anyio.Event()
        closed.append(done)

        @asynccontextmanager
        async def opened() -> AsyncIterator[Any]:
            try:
                async with InMemoryTransport(demo_server) as streams:
                    yield streams
            finally:
                done.set()

        return opened()

    return transport


async def test_after_the_idle_time_the_connection_closes_and_a_new_tab_opens_a_new_one(tmp_path: Path) -> None:
    connects: list[ServerConfig] = []
    closed: list[anyio.Event] = []
    async with in_process_host(
        tmp_path, {}, broken={"demo": watched(closed)}, connects=connects, webhost_options={"timeouts": {"idle": 0.05}}
    ) as host:
        async with host.tab() as tab:
            await tab.wait_connected("demo")
        await closed[0].wait()  # the idle time passed with no tab: webhost closed the connection
        async with host.tab() as later:
            await later.wait_connected("demo")
        assert len(connects) == 2


@pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "legacy"])
async def test_a_question_reaches_only_the_tab_whose_call_caused_it(tmp_path: Path, legacy: bool) -> None:
    async with (
        in_process_host(tmp_path, {"demo": demo_server}, legacy=frozenset({"demo"}) if legacy else frozenset()) as host,
        host.tab() as asking,
        host.tab() as other,
    ):
        await asking.wait_connected("demo")
        await other.wait_connected("demo")
        call = asking.start_request("tools/call", register("c-ask"))
        request = await asking.wait_notification("elicitation/request")
        assert request["origin"]["callId"] == "c-ask"
        assert (await other.request("session/info"))["pending"] == []
        with pytest.raises(RpcError) as refused:
            await other.request("elicitation/respond", {"id": request["id"], "action": "decline"})
        assert refused.value.code == -32602 and "unknown" in str(refused.value.message)
        assert not [n for n in other.notifications if n["method"] == "elicitation/request"]
        await asking.request("elicitation/respond", {"id": request["id"], "action": "decline"})
        assert "result" in await asking.wait_response(call)


async def test_a_legacy_question_no_single_tab_caused_goes_to_every_tab_and_the_first_answer_wins(
    tmp_path: Path,
) -> None:
    async with (
        in_process_host(tmp_path, {"demo": demo_server}, legacy=frozenset({"demo"})) as host,
        host.tab() as one,
        host.tab() as two,
    ):
        await one.wait_connected("demo")
        await two.wait_connected("demo")
        calls = [one.start_request("tools/call", register("c-one")), two.start_request("tools/call", register("c-two"))]
        seen_by_one = [await one.wait_notification("elicitation/request") for _ in range(2)]
        seen_by_two = [await two.wait_notification("elicitation/request") for _ in range(2)]
        assert {r["id"] for r in seen_by_one} == {r["id"] for r in seen_by_two}
        first, second = seen_by_one
        await two.request("elicitation/respond", {"id": first["id"], "action": "decline"})
        with pytest.raises(RpcError):  # already answered, by the other tab
            await one.request("elicitation/respond", {"id": first["id"], "action": "decline"})
        await one.request("elicitation/respond", {"id": second["id"], "action": "decline"})
        for tab, call in zip((one, two), calls, strict=True):
            assert "result" in await tab.wait_response(call)


async def test_user_values_expand_in_the_entry_for_each_person(tmp_path: Path) -> None:
    connects: list[ServerConfig] = []
    entry = {"command": "in-process", "env": {"WHO": "${user.id}", "NAME": "${user.name}"}, "headers": {}}
    async with (
        in_process_host(tmp_path, {"demo": demo_server}, entries={"demo": entry}, connects=connects) as host,
        host.tab() as tab,
    ):
        await tab.wait_connected("demo")
        user = (await tab.request("session/info"))["user"]
        assert user["role"] == "admin"
    assert dict(connects[0].env) == {"WHO": user["id"], "NAME": user["name"]}


async def test_a_calls_activity_goes_to_its_own_tab_and_the_servers_news_to_every_tab(tmp_path: Path) -> None:
    """With many tabs, each call's request and response entries would otherwise be sent to every one of them."""
    async with in_process_host(tmp_path, {"demo": demo_server}) as host, host.tab() as caller, host.tab() as other:
        await caller.wait_connected("demo")
        await other.wait_connected("demo")
        await caller.request(
            "tools/call",
            {"server": "demo", "name": "get_weather", "arguments": {"city": "Oslo"}, "callId": "c-weather"},
        )

        def calls(tab: object) -> list[dict[str, object]]:
            return [
                n["params"]["entry"]
                for n in tab.notifications  # type: ignore[attr-defined]
                if n["method"] == "activity" and n["params"]["entry"]["method"] == "tools/call"
            ]

        await caller.request("session/info")  # the call's entries follow its result (webhost/outbox.py)
        assert {e["kind"] for e in calls(caller)} == {"request", "response"}
        await other.request("session/info")  # a round trip: anything sent to `other` before it has arrived
        assert calls(other) == []
        await caller.request("servers/reconnect", {"server": "demo"})
        for tab in (caller, other):  # the server's own news (its status) reaches both
            await tab.wait_notification("activity", lambda p: p["entry"]["kind"] == "status")
