"""Two people on one host: their own connections, input requests, approvals and audit rows; live sessions for admins."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.fast import apps_server
from tests.support.inprocess import AsgiWsClient, InProcessHost, in_process_host
from tests.support.process import RpcError
from webhost.config import ServerConfig
from webhost.demo.server import mcp as demo_server
from webhost.people import Person

pytestmark = pytest.mark.anyio

ADA = Person(id="ada", name="Ada", role="admin")
BOB = Person(id="bob", name="Bob", role="member")
CARL = Person(id="carl", name="Carl", role="member")


@asynccontextmanager
async def people_host(tmp_path: Path, **kwargs: Any) -> AsyncIterator[InProcessHost]:
    async with in_process_host(
        tmp_path,
        {"demo": demo_server, "apps": apps_server()},
        people=True,
        webhost_options={"servers": {"apps": {"appToolCalls": "ask"}}},
        **kwargs,
    ) as host:
        yield host


async def ready(*tabs: AsgiWsClient) -> None:
    for tab in tabs:
        await tab.wait_connected("demo")
        await tab.wait_connected("apps")


def register(call_id: str) -> dict[str, object]:
    return {"server": "demo", "name": "register_user", "arguments": {}, "callId": call_id}


async def refused(tab: AsgiWsClient, method: str, params: dict[str, Any]) -> int:
    with pytest.raises(RpcError) as error:
        await tab.request(method, params)
    code: int = error.value.code
    return code


async def test_two_people_at_once_each_get_their_own_connection_and_only_their_own_questions(tmp_path: Path) -> None:
    connects: list[ServerConfig] = []
    async with (
        people_host(tmp_path, connects=connects) as host,
        host.tab(person=BOB) as bob,
        host.tab(person=CARL) as carl,
    ):
        await ready(bob, carl)
        assert sorted(c.name for c in connects) == ["apps", "apps", "demo", "demo"]  # two connects per server
        assert (await bob.request("session/info"))["user"]["id"] == "bob"
        assert (await carl.request("session/info"))["user"]["id"] == "carl"
        bob_call = bob.start_request("tools/call", register("c-bob"))
        carl_call = carl.start_request("tools/call", register("c-carl"))
        bobs = await bob.wait_notification("elicitation/request", consume=False)
        carls = await carl.wait_notification("elicitation/request", consume=False)
        assert bobs["id"] != carls["id"]
        assert [p["id"] for p in (await bob.request("session/info"))["pending"]] == [bobs["id"]]
        assert [p["id"] for p in (await carl.request("session/info"))["pending"]] == [carls["id"]]
        assert [n["params"]["id"] for n in bob.notifications if n["method"] == "elicitation/request"] == [bobs["id"]]
        assert [n["params"]["id"] for n in carl.notifications if n["method"] == "elicitation/request"] == [carls["id"]]
        # Neither can answer the other's: to Carl's session, Bob's question does not exist.
        assert await refused(carl, "elicitation/respond", {"id": bobs["id"], "action": "decline"}) == -32602
        for tab, request, call in ((bob, bobs, bob_call), (carl, carls, carl_call)):
            await tab.request("elicitation/respond", {"id": request["id"], "action": "decline"})
            assert "result" in await tab.wait_response(call)


async def test_an_apps_approval_reaches_only_its_persons_tab_and_the_audit_rows_are_theirs(tmp_path: Path) -> None:
    async with (
        people_host(tmp_path) as host,
        host.tab(person=BOB) as bob,
        host.tab(person=CARL) as carl,
        host.tab(person=ADA) as ada,
    ):
        await ready(bob, carl, ada)
        frames = {}
        for tab, who in ((bob, "bob"), (carl, "carl")):
            frames[who] = (await tab.request("apps/open", {"server": "apps", "tool": "bridge_probe"}))["frameId"]
        running = bob.start_request(
            "apps/request",
            {
                "frameId": frames["bob"],
                "method": "tools/call",
                "params": {"name": "echo_app", "arguments": {"text": "hi"}},
            },
        )
        approval = await bob.wait_notification("approval/request")
        assert not [n for n in carl.notifications + ada.notifications if n["method"] == "approval/request"]
        assert await refused(carl, "approvals/respond", {"id": approval["id"], "decision": "allow"}) == -32602
        assert await refused(ada, "approvals/respond", {"id": approval["id"], "decision": "allow"}) == -32602
        await bob.request("approvals/respond", {"id": approval["id"], "decision": "allow"})
        assert "result" in await bob.wait_response(running)

        bobs_rows = (await bob.request("audit/list", {}))["entries"]
        carls_rows = (await carl.request("audit/list", {}))["entries"]
        assert {e["kind"] for e in bobs_rows} >= {"app.open", "approval", "app.tools/call"}
        assert {(e["user_id"], e["user_name"]) for e in bobs_rows} == {("bob", "Bob")}
        assert {e["user_id"] for e in carls_rows} == {"carl"} and {e["frame"] for e in carls_rows} == {frames["carl"]}
        everyone = await ada.request("audit/list", {})
        assert everyone["everyone"] is True and {"bob", "carl"} <= {e["user_id"] for e in everyone["entries"]}
        only_carl = (await ada.request("audit/list", {"user": "carl"}))["entries"]
        assert [e["id"] for e in only_carl] == [e["id"] for e in carls_rows]
        assert await refused(bob, "audit/list", {"user": "carl"}) == -32003

        async with host.http(person=BOB) as http:
            exported = (await http.get("/api/audit")).json()["entries"]
            assert exported and {e["user_id"] for e in exported} == {"bob"}
            assert (await http.get("/api/audit", params={"user": "carl"})).status_code == 403
            header, *rows = list(csv.reader(io.StringIO((await http.get("/api/audit", params={"format": "csv"})).text)))
            assert header[-2:] == ["user_id", "user_name"] and rows
            assert {tuple(r[-2:]) for r in rows} == {("bob", "Bob")}
        async with host.http(person=ADA) as http:
            assert {"bob", "carl"} <= {e["user_id"] for e in (await http.get("/api/audit")).json()["entries"]}
            assert {e["user_id"] for e in (await http.get("/api/audit", params={"user": "bob"})).json()["entries"]} == {
                "bob"
            }


async def test_a_member_lists_and_ends_only_their_own_tabs_an_admin_any(tmp_path: Path) -> None:
    async with (
        people_host(tmp_path) as host,
        host.tab(person=BOB) as bob,
        host.tab(person=BOB) as bob2,
        host.tab(person=CARL) as carl,
        host.tab(person=ADA) as ada,
    ):
        await ready(bob, bob2, carl, ada)
        ids = {
            name: (await tab.request("session/info"))["sessionId"]
            for name, tab in (("bob", bob), ("bob2", bob2), ("carl", carl), ("ada", ada))
        }
        mine = await bob.request("sessions/list")
        assert mine["everyone"] is False
        assert {s["sessionId"] for s in mine["sessions"]} == {ids["bob"], ids["bob2"]}
        assert {s["user"]["id"] for s in mine["sessions"]} == {"bob"}
        assert [s["current"] for s in mine["sessions"] if s["sessionId"] == ids["bob"]] == [True]
        everyone = await ada.request("sessions/list")
        assert everyone["everyone"] is True and {s["sessionId"] for s in everyone["sessions"]} == set(ids.values())
        (carls,) = [s for s in everyone["sessions"] if s["sessionId"] == ids["carl"]]
        assert carls["user"] == {"id": "carl", "name": "Carl", "role": "member"}
        assert carls["servers"] == ["apps", "demo"] and carls["started"] > 0

        # A member may not end another person's tab, nor learn whether an id is one.
        assert await refused(bob, "sessions/end", {"sessionId": ids["carl"]}) == -32003
        assert await refused(bob, "sessions/end", {"sessionId": "s-nobody"}) == -32003
        assert await refused(ada, "sessions/end", {"sessionId": "s-nobody"}) == -32602
        assert carl.close_code is None
        # ... but their own other tab, yes.
        await bob.request("sessions/end", {"sessionId": ids["bob2"], "reason": "tidying up"})
        await bob2.closed.wait()
        assert bob2.close_code == 4001 and bob2.close_reason == "tidying up (by Bob)"
        # An admin ends a member's tab; it closes with the reason, the rest stay.
        await ada.request("sessions/end", {"sessionId": ids["carl"]})
        await carl.closed.wait()
        assert carl.close_code == 4001 and carl.close_reason == "ended from the Sessions view (by Ada)"
        left = await ada.request("sessions/list")
        assert {s["sessionId"] for s in left["sessions"]} == {ids["bob"], ids["ada"]}
        assert (await bob.request("session/info"))["sessionId"] == ids["bob"]
