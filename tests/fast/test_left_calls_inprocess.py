"""A tool call outlives its tab (a reload): the person's next tab is told it runs, sees its progress, its input
requests and its ending (workspace/left_calls.py), and may cancel it. tests/servers/gated.py ends a call when
the test opens its gate, so nothing here waits on a clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.fast import text
from tests.support.inprocess import in_process_host, sdk_server
from tests.support.process import start_tool_call
from webhost.demo.server import mcp as demo_server

pytestmark = pytest.mark.anyio

ERAS = pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "legacy"])


def gated() -> dict[str, Any]:
    return {"gated": sdk_server("gated")}


async def test_a_reload_leaves_the_call_running_and_the_new_tab_gets_its_progress_and_result(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, gated()) as host:
        async with host.tab() as first:  # the page reloads: its socket closes before the new one opens
            await first.wait_connected("gated")
            start_tool_call(first, "gated", "wait_at_gate", "c-left", {"gate": "reload"})
            await first.wait_notification("progress", lambda p: p["callId"] == "c-left")
            old_tab = (await first.request("session/info"))["sessionId"]
            assert (await first.request("calls/running"))["calls"] == []  # its own call is not "left"

        async with host.tab() as tab:
            await tab.wait_connected("gated")
            running = (await tab.request("calls/running"))["calls"]
            assert len(running) == 1
            call = running[0]
            assert {k: call[k] for k in ("callId", "tab", "method", "server", "name", "arguments")} == {
                "callId": "c-left",
                "tab": old_tab,
                "method": "tools/call",
                "server": "gated",
                "name": "wait_at_gate",
                "arguments": {"gate": "reload"},
            }
            assert call["progress"]["message"] == "waiting at gate reload"
            assert isinstance(call["startedAt"], float)
            note = await tab.wait_notification("activity", lambda p: "still running" in str(p["entry"].get("summary")))
            assert note["entry"]["server"] == "gated" and note["entry"]["method"] == "tools/call"

            opened = await tab.request(
                "tools/call", {"server": "gated", "name": "open_gate", "arguments": {"gate": "reload"}, "callId": "c-1"}
            )
            assert text(opened) == "opened gate reload"
            ending = await tab.wait_notification("calls/outcome", lambda p: p["callId"] == "c-left")
            assert ending["reattached"] is True and ending["tab"] == old_tab and ending["name"] == "wait_at_gate"
            assert text(ending["result"]) == "passed gate reload"
            stored = await tab.wait_notification("history/added", lambda p: p["entry"]["callId"] == "c-left")
            assert stored["entry"]["status"] == "ok" and stored["entry"]["tab"] == old_tab
            assert (await tab.request("calls/running"))["calls"] == []


async def test_the_new_tab_cancels_a_call_the_old_one_left(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, gated()) as host:
        async with host.tab() as first:
            await first.wait_connected("gated")
            start_tool_call(first, "gated", "wait_at_gate", "c-left", {"gate": "never-opened"})
            await first.wait_notification("progress", lambda p: p["callId"] == "c-left")
            old_tab = (await first.request("session/info"))["sessionId"]

        async with host.tab() as tab:
            assert [c["callId"] for c in (await tab.request("calls/running"))["calls"]] == ["c-left"]
            # Without its tab, the call id alone names none of this tab's calls.
            assert await tab.request("tools/cancel", {"callId": "c-left"}) == {"cancelled": False}
            assert await tab.request("tools/cancel", {"callId": "c-left", "tab": old_tab}) == {"cancelled": True}
            ending = await tab.wait_notification("calls/outcome", lambda p: p["callId"] == "c-left")
            assert ending["error"]["code"] == -32800
            stored = await tab.wait_notification("history/added", lambda p: p["entry"]["callId"] == "c-left")
            assert stored["entry"]["status"] == "cancelled"
            assert await tab.request("tools/cancel", {"callId": "c-left", "tab": old_tab}) == {"cancelled": False}


async def test_a_tab_ended_on_purpose_takes_its_calls_with_it(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, gated()) as host, host.tab() as first:
        await first.wait_connected("gated")
        pending = start_tool_call(first, "gated", "wait_at_gate", "c-ended", {"gate": "ended"})
        await first.wait_notification("progress", lambda p: p["callId"] == "c-ended")
        async with host.tab() as other:
            mine = (await first.request("session/info"))["sessionId"]
            await other.request("sessions/end", {"sessionId": mine})
            await first.closed.wait()
            assert pending not in first._responses  # the socket closed before any answer
            stored = await other.wait_notification("history/added", lambda p: p["entry"]["callId"] == "c-ended")
            assert stored["entry"]["status"] == "cancelled"
            assert (await other.request("calls/running"))["calls"] == []


@ERAS
async def test_an_input_request_of_a_left_call_is_asked_in_the_new_tab(tmp_path: Path, legacy: bool) -> None:
    async with in_process_host(
        tmp_path, {"demo": demo_server}, legacy=frozenset({"demo"}) if legacy else frozenset()
    ) as host:
        async with host.tab() as first:
            await first.wait_connected("demo")
            start_tool_call(first, "demo", "register_user", "c-reg")
            asked = await first.wait_notification("elicitation/request")

        async with host.tab() as tab:
            again = await tab.wait_notification("elicitation/request", lambda p: p["id"] == asked["id"])
            assert again["origin"]["callId"] == "c-reg"
            assert await tab.request("elicitation/respond", {"id": again["id"], "action": "decline"}) == {}
            ending = await tab.wait_notification("calls/outcome", lambda p: p["callId"] == "c-reg")
            assert text(ending["result"]) == "Registration declined."
