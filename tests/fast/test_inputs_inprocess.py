"""Input requests in-process against tests/servers/elicit.py: forms, URL consent, -32042, sampling, roots, refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.fast import connected_tab, error_of, json_text
from tests.support.inprocess import AsgiWsClient, sdk_server
from tests.support.process import RpcError, json_result, start_tool_call
from webhost.demo.server import mcp as demo_server

pytestmark = [
    pytest.mark.anyio,
    # elicit.py ignores this warning when imported; pytest restores the filters after each test.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ERAS = pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "legacy"])


def elicit() -> dict[str, Any]:
    return {"elicit": sdk_server("elicit")}


def era(legacy: bool) -> frozenset[str]:
    return frozenset({"elicit"}) if legacy else frozenset()


async def refusal(tab: AsgiWsClient) -> str:
    entry = await tab.wait_notification(
        "activity", lambda p: p["entry"]["kind"] == "error" and p["entry"]["method"] == "elicitation/create"
    )
    summary: str = entry["entry"]["summary"]
    return summary


@ERAS
async def test_a_form_answer_is_validated_before_it_reaches_the_server(tmp_path: Path, legacy: bool) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(legacy)) as tab:
        call = start_tool_call(tab, "elicit", "form_defaults", "c-form")
        request = await tab.wait_notification("elicitation/request")
        assert request["mode"] == "form" and request["state"] == "form" and request["server"] == "elicit"
        assert request["origin"] == {
            "method": "tools/call",
            "name": "form_defaults",
            "server": "elicit",
            "callId": "c-form",
        }
        assert request["requestedSchema"]["properties"]["age"]["type"] == "integer"
        assert {f["name"] for f in request["fields"]} >= {"name", "age", "tier"}
        assert (await tab.request("session/info"))["pending"][0]["id"] == request["id"]
        with pytest.raises(RpcError) as invalid:
            await tab.request(
                "elicitation/respond", {"id": request["id"], "action": "accept", "content": {"age": "not a number"}}
            )
        assert invalid.value.code == -32602
        assert [e["field"] for e in invalid.value.data["errors"]] == ["age"]
        with pytest.raises(RpcError, match="not shown in an app"):
            await tab.request(
                "elicitation/respond", {"id": request["id"], "action": "accept", "content": {}, "frameId": "f-nope"}
            )
        content = {"name": "Grace", "age": 40, "score": 1.5, "tier": "basic", "subscribed": False}
        assert (
            await tab.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": content})
            == {}
        )
        assert await json_result(tab, call) == {"action": "accept", "content": content}
        resolved = await tab.wait_notification("elicitation/resolved")
        assert resolved == {"id": request["id"], "outcome": "accept"}
        with pytest.raises(RpcError, match="unknown or was already answered"):
            await tab.request("elicitation/respond", {"id": request["id"], "action": "decline"})


@ERAS
async def test_a_declined_form_is_declined_upstream(tmp_path: Path, legacy: bool) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(legacy)) as tab:
        call = start_tool_call(tab, "elicit", "form_full", "c-form")
        request = await tab.wait_notification("elicitation/request")
        assert await tab.request("elicitation/fallback", {"id": request["id"]}) == {"fellBack": False}
        await tab.request("elicitation/respond", {"id": request["id"], "action": "decline"})
        assert await json_result(tab, call) == {"action": "decline"}


@ERAS
async def test_a_schema_outside_the_subset_is_refused_to_the_server_and_never_shown(
    tmp_path: Path, legacy: bool
) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(legacy)) as tab:
        response = await tab.request_raw(
            "tools/call", {"server": "elicit", "name": "hostile_schema", "arguments": {}, "callId": "c-hostile"}
        )
        assert "outside the allowed subset" in await refusal(tab)
        assert not [n for n in tab.notifications if n["method"] == "elicitation/request"]
        # The server sees the refusal: an error (legacy: a failed call; 2026: the round is refused).
        failed = response.get("error") or response["result"]
        assert failed.get("isError", True)


@ERAS
async def test_url_consent_accept_and_a_non_http_url_refused(tmp_path: Path, legacy: bool) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(legacy)) as tab:
        call = start_tool_call(tab, "elicit", "url_mode", "c-url", {"url": "https://example.com/sign-in?x=1"})
        request = await tab.wait_notification("elicitation/request")
        assert request["mode"] == "url" and request["phase"] == "consent"
        assert request["url"] == "https://example.com/sign-in?x=1" and request["host"] == "example.com"
        assert request["parts"]["host"] == "example.com"
        assert (request["elicitationId"] is not None) == legacy
        await tab.request("elicitation/respond", {"id": request["id"], "action": "accept"})
        assert (await json_result(tab, call))["action"] == "accept"

        response = await tab.request_raw(
            "tools/call",
            {"server": "elicit", "name": "url_mode", "arguments": {"url": "javascript:alert(1)"}, "callId": "c-js"},
        )
        assert "refused the URL elicitation" in await refusal(tab)
        assert "error" in response or response["result"].get("isError")
        assert not [n for n in tab.notifications if n["method"] == "elicitation/request"]


async def test_legacy_url_required_runs_the_url_step_then_retries_the_call(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(True)) as tab:
        call = start_tool_call(tab, "elicit", "url_required", "c-req", {"complete_after": 1.0})
        consent = await tab.wait_notification("elicitation/request")
        assert consent["phase"] == "consent" and consent["elicitationId"].startswith("auth-")
        assert consent["origin"]["callId"] == "c-req"
        await tab.request("elicitation/respond", {"id": consent["id"], "action": "accept"})
        # The server's notifications/elicitation/complete ends the waiting step by itself. (On a machine so busy
        # that the consent took longer than the server's second, the completion came first and no step waits:
        # the next test's case.)
        assert (await json_result(tab, call))["authorised"] is True
        waiting = [n["params"] for n in tab.notifications if n["method"] == "elicitation/request"]
        assert [step["phase"] for step in waiting] in ([], ["waiting"])
        if waiting:
            step_id = waiting[0]["id"]
            resolved = await tab.wait_notification("elicitation/resolved", lambda p: p["id"] == step_id)
            assert resolved["outcome"] == "completed"


async def test_a_url_step_the_server_completes_before_the_consent_is_not_waited_for(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(True)) as tab:
        call = start_tool_call(tab, "elicit", "url_required", "c-early", {"complete_after": 0, "flow": "early"})
        consent = await tab.wait_notification("elicitation/request")
        assert consent["phase"] == "consent" and consent["elicitationId"].startswith("early-")
        # The server says the step is complete while the person has not answered yet (logged after it is handled).
        await tab.wait_notification("activity", lambda p: p["entry"]["method"] == "notifications/elicitation/complete")
        await tab.request("elicitation/respond", {"id": consent["id"], "action": "accept"})
        assert (await json_result(tab, call))["authorised"] is True  # retried at once: no card waits for Done
        assert not [n for n in tab.notifications if n["method"] == "elicitation/request"]  # nothing after the consent


async def test_legacy_url_required_stops_when_the_server_asks_for_the_same_step_again(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(True)) as tab:
        call = start_tool_call(tab, "elicit", "url_required_loop", "c-loop")
        consent = await tab.wait_notification("elicitation/request")
        await tab.request("elicitation/respond", {"id": consent["id"], "action": "accept"})
        waiting = await tab.wait_notification("elicitation/request", lambda p: p["phase"] == "waiting")
        await tab.request("elicitation/respond", {"id": waiting["id"], "action": "accept"})
        error = error_of(await tab.wait_response(call))
        assert error["code"] == -32800 and "same URL step" in error["message"]
        assert error["data"] == {"elicitationId": "loop-1"}


async def test_legacy_url_required_declined_is_not_retried(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(True)) as tab:
        call = start_tool_call(tab, "elicit", "url_required_loop", "c-loop")
        consent = await tab.wait_notification("elicitation/request")
        await tab.request("elicitation/respond", {"id": consent["id"], "action": "decline"})
        error = error_of(await tab.wait_response(call))
        assert error["code"] == -32800 and "declined" in error["message"]


@ERAS
async def test_sampling_is_answered_by_the_person(tmp_path: Path, legacy: bool) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(legacy)) as tab:
        call = start_tool_call(tab, "elicit", "sampling", "c-sample", {"prompt": "Say hi"})
        request = await tab.wait_notification("elicitation/request")
        assert request["mode"] == "sampling" and request["kind"] == "sampling"
        assert request["request"]["messages"][0]["content"]["text"] == "Say hi"
        with pytest.raises(RpcError) as empty:
            await tab.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": {}})
        assert empty.value.data["errors"] == [{"field": "text", "message": "write a reply (text) or decline"}]
        await tab.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": {"text": "Hi!"}})
        reply = await json_result(tab, call)
        assert reply["content"] == {"type": "text", "text": "Hi!"} and reply["model"] == "webhost-person"


async def test_declined_sampling_is_an_error_to_the_server(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(True)) as tab:
        call = start_tool_call(tab, "elicit", "sampling", "c-sample")
        request = await tab.wait_notification("elicitation/request")
        await tab.request("elicitation/respond", {"id": request["id"], "action": "decline"})
        error = error_of(await tab.wait_response(call))
        # The server got our JSON-RPC error (-1) and let it propagate out of its tool.
        assert error["data"]["upstreamCode"] == -1 and "declined the sampling request" in error["message"]


@ERAS
async def test_roots_come_from_the_configuration(tmp_path: Path, legacy: bool) -> None:
    roots = [{"uri": "file:///srv/project", "name": "project"}, {"uri": "file:///tmp"}]
    async with connected_tab(tmp_path, elicit(), legacy=era(legacy), webhost_options={"roots": roots}) as tab:
        result = await tab.request(
            "tools/call", {"server": "elicit", "name": "roots", "arguments": {}, "callId": "c-roots"}
        )
        assert json_text(result) == ["file:///srv/project", "file:///tmp"]
        entry = await tab.wait_notification("activity", lambda p: p["entry"]["method"] == "roots/list")
        assert entry["entry"]["summary"] == "2 root(s) configured"


async def test_without_configured_roots_the_server_is_told_there_are_none(tmp_path: Path) -> None:
    # Since issue 25 (item 5): webhost advertises roots to every server, so "none" is an empty list, not an error.
    async with connected_tab(tmp_path, elicit(), legacy=era(True)) as tab:
        result = await tab.request(
            "tools/call", {"server": "elicit", "name": "roots", "arguments": {}, "callId": "c-roots"}
        )
        assert json_text(result) == []
        entry = await tab.wait_notification("activity", lambda p: p["entry"]["method"] == "roots/list")
        assert entry["entry"]["summary"] == "0 root(s) configured"


async def test_an_app_hint_the_server_did_not_negotiate_is_ignored(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(True)) as tab:
        call = start_tool_call(tab, "elicit", "app_hint", "c-hint")
        request = await tab.wait_notification("elicitation/request")
        assert request["mode"] == "form" and "app" not in request
        ignored = await tab.wait_notification("activity", lambda p: "app hint ignored" in p["entry"]["summary"])
        assert ignored["entry"]["direction"] == "local"
        await tab.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": {"answer": "42"}})
        assert await json_result(tab, call) == {"action": "accept", "content": {"answer": "42"}}


@ERAS
async def test_cancelling_the_call_releases_its_input_request(tmp_path: Path, legacy: bool) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(legacy)) as tab:
        call = start_tool_call(tab, "elicit", "form_full", "c-form")
        request = await tab.wait_notification("elicitation/request")
        assert await tab.request("tools/cancel", {"callId": "c-form"}) == {"cancelled": True}
        resolved = await tab.wait_notification("elicitation/resolved", lambda p: p["id"] == request["id"])
        assert resolved["outcome"] == "released"
        assert error_of(await tab.wait_response(call))["code"] == -32800
        assert (await tab.request("session/info"))["pending"] == []


@ERAS
async def test_disconnecting_the_server_releases_its_input_requests(tmp_path: Path, legacy: bool) -> None:
    async with connected_tab(tmp_path, elicit(), legacy=era(legacy)) as tab:
        call = start_tool_call(tab, "elicit", "form_full", "c-form")
        request = await tab.wait_notification("elicitation/request")
        await tab.request("servers/disconnect", {"server": "elicit"})
        resolved = await tab.wait_notification("elicitation/resolved", lambda p: p["id"] == request["id"])
        assert resolved["outcome"] == "released"
        assert "error" in await tab.wait_response(call)
        with pytest.raises(RpcError, match="unknown or was already answered"):
            await tab.request("elicitation/respond", {"id": request["id"], "action": "decline"})


@ERAS
async def test_an_app_rendered_request_falls_back_to_the_form_with_nothing_lost(tmp_path: Path, legacy: bool) -> None:
    async with connected_tab(
        tmp_path, {"demo": demo_server}, legacy=frozenset({"demo"}) if legacy else frozenset()
    ) as tab:
        call = start_tool_call(tab, "demo", "pick_color", "c-pick")
        request = await tab.wait_notification("elicitation/request")
        assert request["mode"] == "app" and request["app"]["purpose"] == "elicitation"
        assert "elicitation" in request["app"]["hostCapabilities"]
        frame = request["app"]["frameId"]
        with pytest.raises(RpcError, match="bound to another app instance"):
            await tab.request(
                "elicitation/respond", {"id": request["id"], "action": "accept", "content": {"color": "#16a34a"}}
            )
        assert await tab.request("elicitation/fallback", {"id": request["id"], "reason": "handshake timed out"}) == {
            "fellBack": True
        }
        again = await tab.wait_notification("elicitation/request", lambda p: p["id"] == request["id"])
        assert again["mode"] == "form" and again["state"] == "fallback" and again["app"] is None
        assert again["fallbackReason"] == "handshake timed out"
        assert again["requestedSchema"] == request["requestedSchema"]
        with pytest.raises(RpcError, match="no such app frame"):
            await tab.request("apps/event", {"frameId": frame, "kind": "log"})
        assert await tab.request("elicitation/fallback", {"id": request["id"]}) == {"fellBack": False}
        await tab.request(
            "elicitation/respond", {"id": request["id"], "action": "accept", "content": {"color": "#16a34a"}}
        )
        result = (await tab.wait_response(call))["result"]
        assert result["content"][0]["text"] == "You picked Fern (#16a34a)."


async def test_an_invalid_answer_from_the_app_sends_the_request_back_to_the_form(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, {"demo": demo_server}) as tab:
        call = start_tool_call(tab, "demo", "pick_color", "c-pick")
        request = await tab.wait_notification("elicitation/request")
        frame = request["app"]["frameId"]
        with pytest.raises(RpcError) as invalid:
            await tab.request(
                "elicitation/respond",
                {"id": request["id"], "frameId": frame, "action": "accept", "content": {"color": 7}},
            )
        assert invalid.value.code == -32602 and invalid.value.data["errors"]
        again = await tab.wait_notification("elicitation/request", lambda p: p["id"] == request["id"])
        assert again["state"] == "fallback" and "did not match" in again["fallbackReason"]
        await tab.request("elicitation/respond", {"id": request["id"], "action": "decline"})
        assert "result" in await tab.wait_response(call)
