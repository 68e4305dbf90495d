"""LeftCalls on its own: a call whose tab went on running ends for every tab, or, with none open, for the next one."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from webhost.errors import UpstreamError
from webhost.workspace.left_calls import KEEP_UNHEARD, LeftCalls, RunningCall

pytestmark = pytest.mark.anyio


class Tabs:
    def __init__(self) -> None:
        self.open = 1
        self.told: list[tuple[str, dict[str, Any]]] = []
        self.done: list[str] = []

    def tell(self, method: str, params: dict[str, Any]) -> None:
        self.told.append((method, params))


def running(call_id: str, tab: str = "s-old") -> RunningCall:
    return RunningCall(
        tab=tab, call_id=call_id, server="s", name="t", arguments={}, started_at=1.0, cancel=lambda: False
    )


async def test_an_ending_no_tab_heard_waits_for_the_next_tab_and_is_handed_out_once() -> None:
    tabs = Tabs()
    gate = anyio.Event()
    request = anyio.CancelScope()  # the tab's request task, cancelled when the tab goes

    async def action() -> dict[str, Any]:
        await gate.wait()
        return {"content": []}

    async def wait_in_request(calls: LeftCalls) -> None:
        with request:
            await calls.run(running("c-1"), action)

    async with anyio.create_task_group() as tg:
        calls = LeftCalls(tg, tell_all=tabs.tell, has_tabs=lambda: tabs.open > 0, tab_done=tabs.done.append)
        tg.start_soon(wait_in_request, calls)
        await anyio.wait_all_tasks_blocked()
        assert calls.leave("s-old") == {"c-1"}
        request.cancel()
        tabs.open = 0  # the reload's gap: no tab of the person is open
        gate.set()
    assert [m for m, _ in tabs.told] == ["calls/left"]  # nobody to tell the ending to
    assert tabs.done == ["s-old"]
    (ending,) = calls.unheard()
    assert ending["callId"] == "c-1" and ending["reattached"] is True and ending["result"] == {"content": []}
    assert calls.unheard() == []


async def test_an_error_ends_for_every_tab_and_only_the_newest_endings_are_kept() -> None:
    tabs = Tabs()
    gate = anyio.Event()

    async def fails() -> dict[str, Any]:
        await gate.wait()
        raise UpstreamError("the server broke", {"server": "s"})

    async def in_request(calls: LeftCalls) -> None:
        with pytest.raises(UpstreamError):  # the tab's request, had it stayed, would have been answered with it
            await calls.run(running("c-err"), fails)

    async with anyio.create_task_group() as tg:
        calls = LeftCalls(tg, tell_all=tabs.tell, has_tabs=lambda: tabs.open > 0, tab_done=tabs.done.append)
        tg.start_soon(in_request, calls)
        await anyio.wait_all_tasks_blocked()
        calls.leave("s-old")
        gate.set()
    outcome = [p for m, p in tabs.told if m == "calls/outcome"]
    assert outcome == [
        {
            "callId": "c-err",
            "tab": "s-old",
            "method": "tools/call",
            "server": "s",
            "name": "t",
            "startedAt": 1.0,
            "reattached": True,
            "error": {"code": -32000, "message": "the server broke", "data": {"server": "s"}},
        }
    ]

    async def quick() -> dict[str, Any]:
        return {"content": []}

    async with anyio.create_task_group() as tg:
        calls = LeftCalls(tg, tell_all=tabs.tell, has_tabs=lambda: False, tab_done=tabs.done.append)
        for n in range(KEEP_UNHEARD + 3):
            call = running(f"c-{n}", tab=f"s-{n}")
            call.left = True  # as `leave` marks it
            await calls.run(call, quick)
    kept = [e["callId"] for e in calls.unheard()]
    assert kept == [f"c-{n}" for n in range(3, KEEP_UNHEARD + 3)]
