"""App frames and their requests in-process: the in-flight count, close during a request, the re-run guard."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.inprocess import SECRET, AsgiWsClient, in_process_host
from tests.support.process import RpcError
from webhost.apps.proxy_token import verify_proxy_config
from webhost.demo.server import mcp as demo_server

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def demo_tab(tmp_path: Path, *, legacy: bool = False) -> AsyncIterator[AsgiWsClient]:
    async with (
        in_process_host(tmp_path, {"demo": demo_server}, legacy=frozenset({"demo"}) if legacy else frozenset()) as host,
        host.tab() as tab,
    ):
        state = await tab.wait_connected("demo")
        assert state["era"] == ("legacy" if legacy else "modern")
        yield tab


async def open_dashboard(tab: AsgiWsClient) -> dict[str, Any]:
    frame: dict[str, Any] = await tab.request("apps/open", {"server": "demo", "tool": "show_dashboard"})
    return frame


async def test_a_frame_closed_while_its_request_runs_still_gets_the_answer(tmp_path: Path) -> None:
    async with demo_tab(tmp_path) as tab:
        frame = await open_dashboard(tab)
        running = tab.start_request(
            "apps/request",
            {
                "frameId": frame["frameId"],
                "method": "tools/call",
                "params": {"name": "count_slowly", "arguments": {"steps": 3, "delay": 0.1}},
            },
        )
        await tab.wait_notification("activity", lambda p: p["entry"]["summary"] == "count_slowly (from app)")
        await tab.request("apps/close", {"frameId": frame["frameId"], "reason": "closed by the test"})
        response = await tab.wait_response(running)
        assert response.get("result", {}).get("content", [{}])[0].get("text") == "Counted to 3.", response
        with pytest.raises(RpcError, match="no such app frame"):
            await tab.request("apps/request", {"frameId": frame["frameId"], "method": "ui/message", "params": {}})


async def test_an_app_has_at_most_32_requests_in_flight_and_each_finished_one_frees_a_slot(tmp_path: Path) -> None:
    async with demo_tab(tmp_path) as tab:
        frame = await open_dashboard(tab)
        slow = [
            tab.start_request(
                "apps/request",
                {
                    "frameId": frame["frameId"],
                    "method": "tools/call",
                    "params": {"name": "count_slowly", "arguments": {"steps": 1, "delay": 1}},
                },
            )
            for _ in range(32)
        ]
        for _ in range(32):  # each of the 32 reached the server (and so holds its slot)
            await tab.wait_notification(
                "activity",
                lambda p: p["entry"]["summary"] == "count_slowly (from app)" and p["entry"]["kind"] == "request",
            )
        with pytest.raises(RpcError, match="too many requests in flight") as refused:
            await tab.request("apps/request", {"frameId": frame["frameId"], "method": "ui/message", "params": {}})
        assert refused.value.data == {"limit": 32}
        for request_id in slow:
            assert "result" in await tab.wait_response(request_id)
        assert (
            await tab.request(
                "apps/request",
                {"frameId": frame["frameId"], "method": "ui/message", "params": {"role": "user", "content": []}},
            )
            == {}
        )


@pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "legacy"])
async def test_an_app_bound_to_an_input_request_cannot_rerun_the_call_that_asked(tmp_path: Path, legacy: bool) -> None:
    async with demo_tab(tmp_path, legacy=legacy) as tab:
        call = tab.start_request(
            "tools/call", {"server": "demo", "name": "pick_color", "arguments": {}, "callId": "c-pick"}
        )
        request = await tab.wait_notification("elicitation/request")
        assert request["mode"] == "app" and request["state"] == "app"
        assert request["origin"]["callId"] == "c-pick"
        frame = request["app"]["frameId"]
        with pytest.raises(RpcError) as refused:
            await tab.request(
                "apps/request",
                {"frameId": frame, "method": "tools/call", "params": {"name": "pick_color", "arguments": {}}},
            )
        assert refused.value.code == -32003 and "cannot retry" in str(refused.value.message)
        await tab.request(
            "elicitation/respond",
            {"id": request["id"], "frameId": frame, "action": "accept", "content": {"color": "#16a34a"}},
        )
        result = await tab.wait_response(call)
        assert result["result"]["content"][0]["text"] == "You picked Fern (#16a34a).", result
        resolved = await tab.wait_notification("elicitation/resolved", lambda p: p["id"] == request["id"])
        assert resolved["outcome"] == "accept"


async def test_apps_warm_answers_a_warm_frame_url_on_the_servers_own_origin_that_carries_no_app(
    tmp_path: Path,
) -> None:
    async with demo_tab(tmp_path) as tab:
        answer = await tab.request("apps/warm", {"server": "demo", "tool": "show_dashboard"})
        frame = await open_dashboard(tab)
    assert answer["warm"] is True
    warm = answer["frame"]
    assert warm["origin"] == frame["origin"]
    assert warm["url"].startswith(frame["origin"] + "/warm?p=")
    # The open's App document is on the same origin, under the open's own token (the proxy URL's).
    assert frame["appUrl"] == frame["proxyUrl"].replace("/proxy?p=", "/app?p=", 1)
    token = warm["url"].split("?p=", 1)[1]
    assert token not in frame["proxyUrl"]  # the warm token is not an App's
    config = verify_proxy_config(SECRET, token, now=0)
    assert config.csp == "default-src 'none'" and config.allow == ""


async def test_apps_warm_prepares_the_app_under_the_token_its_open_signs_and_the_open_confirms_only_its_key(
    tmp_path: Path,
) -> None:
    async with demo_tab(tmp_path) as tab:
        plain = await tab.request("apps/warm", {"server": "demo", "tool": "show_dashboard"})
        answer = await tab.request("apps/warm", {"server": "demo", "tool": "show_dashboard", "prepare": True})
        prepared = answer["prepared"]
        confirmed = await tab.request(
            "apps/open", {"server": "demo", "tool": "show_dashboard", "prepared": prepared["key"]}
        )
        await tab.request("apps/warm", {"server": "demo", "tool": "show_dashboard", "prepare": True})
        other = await tab.request("apps/open", {"server": "demo", "tool": "show_dashboard", "prepared": "0" * 32})
        unasked = await tab.request("apps/open", {"server": "demo", "tool": "show_dashboard"})
        held = await tab.request(
            "apps/warm", {"server": "demo", "tool": "show_dashboard", "prepare": True, "have": prepared["key"]}
        )
    # The page that holds this App prepared is told so, without its HTML again.
    assert held["prepared"] == {"key": prepared["key"], "unchanged": True}
    assert "prepared" not in plain  # only when the page asks for it
    assert prepared["server"] == "demo" and prepared["resourceUri"] == confirmed["resourceUri"]
    assert prepared["origin"] == confirmed["origin"] and prepared["sandbox"] == confirmed["sandbox"]
    assert prepared["appUrl"].startswith(confirmed["origin"] + "/app?p=")
    # The prepared document's token carries exactly the policy the open signs (and no permission).
    ahead = verify_proxy_config(SECRET, prepared["appUrl"].split("?p=", 1)[1], now=0)
    at_open = verify_proxy_config(SECRET, confirmed["appUrl"].split("?p=", 1)[1], now=0)
    assert (ahead.label, ahead.csp, ahead.allow, ahead.sandbox) == (
        at_open.label,
        at_open.csp,
        at_open.allow,
        at_open.sandbox,
    )
    assert ahead.allow == ""
    # Confirmed: the page has the HTML; a normal descriptor otherwise (frame id, token, audit as always).
    assert confirmed["prepared"] is True and confirmed["html"] == "" and confirmed["frameId"]
    assert other["html"] == unasked["html"] == prepared["html"] != ""
    assert "prepared" not in other and "prepared" not in unasked
