"""App-rendered elicitation (SEP-3118) over MRTR, through the WebSocket: binding, validation, fallback."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.support.process import RpcError, WsClient, run_webhost, stdio_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with run_webhost(tmp_path_factory.mktemp("app-elicit"), {"mrtr": stdio_server("mrtr_raw")}) as running:
        yield running


@pytest.fixture(scope="module")
async def ws(host: Any) -> AsyncIterator[WsClient]:
    async with host.connect() as client:
        state = await client.wait_connected("mrtr")
        assert state["era"] == "modern"
        yield client


def pick(ws: WsClient, tool: str, call_id: str) -> int:
    return ws.start_request("tools/call", {"server": "mrtr", "name": tool, "arguments": {}, "callId": call_id})


async def text(ws: WsClient, request_id: int) -> str:
    response = await ws.wait_response(request_id)
    assert "result" in response, response
    return str(response["result"]["content"][0]["text"])


async def test_the_request_is_shown_in_a_fresh_app_bound_to_it(ws: WsClient) -> None:
    pending = pick(ws, "pick_color", "c1")
    request = await ws.wait_notification("elicitation/request")
    assert request["mode"] == "app"
    app = request["app"]
    assert app["resourceUri"] == "ui://mrtr/picker.html" and app["purpose"] == "elicitation"
    assert app["hostCapabilities"]["elicitation"] == {}
    assert request["request"]["method"] == "elicitation/create"
    assert request["request"]["params"]["_meta"]["ui"]["resourceUri"] == "ui://mrtr/picker.html"
    assert request["requestedSchema"]["required"] == ["color"]  # kept for the fallback form

    with pytest.raises(RpcError) as misrouted:
        await ws.request(
            "elicitation/respond",
            {"id": request["id"], "frameId": "f-someone-else", "action": "accept", "content": {"color": "#16a34a"}},
        )
    assert "bound to another app instance" in str(misrouted.value.message)
    with pytest.raises(RpcError):  # nor may the native form answer while the app holds it
        await ws.request(
            "elicitation/respond", {"id": request["id"], "action": "accept", "content": {"color": "#16a34a"}}
        )
    await ws.request(
        "elicitation/respond",
        {"id": request["id"], "frameId": app["frameId"], "action": "accept", "content": {"color": "#16a34a"}},
    )
    assert await text(ws, pending) == "You picked Fern (#16a34a)."
    with pytest.raises(RpcError):  # the instance is gone with the request
        await ws.request("apps/request", {"frameId": app["frameId"], "method": "ui/message", "params": {}})


async def test_concurrent_requests_get_distinct_bindings_for_the_same_resource(ws: WsClient) -> None:
    first, second = pick(ws, "pick_color", "c2"), pick(ws, "pick_color", "c3")
    one = await ws.wait_notification("elicitation/request")
    two = await ws.wait_notification("elicitation/request")
    assert one["app"]["frameId"] != two["app"]["frameId"]
    with pytest.raises(RpcError):
        await ws.request(
            "elicitation/respond",
            {"id": one["id"], "frameId": two["app"]["frameId"], "action": "accept", "content": {"color": "#e11d48"}},
        )
    await ws.request("elicitation/respond", {"id": one["id"], "frameId": one["app"]["frameId"], "action": "decline"})
    await ws.request(
        "elicitation/respond",
        {"id": two["id"], "frameId": two["app"]["frameId"], "action": "accept", "content": {"color": "#2563eb"}},
    )
    results = {await text(ws, first), await text(ws, second)}
    assert results == {"No colour picked (decline).", "You picked Cobalt (#2563eb)."}


async def test_an_invalid_answer_from_the_app_falls_back_to_the_native_form(ws: WsClient) -> None:
    pending = pick(ws, "pick_bad_answer", "c4")
    request = await ws.wait_notification("elicitation/request")
    with pytest.raises(RpcError) as invalid:
        await ws.request(
            "elicitation/respond",
            {
                "id": request["id"],
                "frameId": request["app"]["frameId"],
                "action": "accept",
                "content": {"color": "purple", "x": 1},
            },
        )
    assert invalid.value.code == -32602
    fallback = await ws.wait_notification("elicitation/request", lambda p: p["id"] == request["id"])
    assert fallback["mode"] == "form" and "did not match" in fallback["fallbackReason"]
    await ws.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": {"color": "#eab308"}})
    assert await text(ws, pending) == "You picked Sunflower (#eab308)."


async def test_the_page_can_report_that_the_app_cannot_serve(ws: WsClient) -> None:
    pending = pick(ws, "pick_no_capability", "c5")
    request = await ws.wait_notification("elicitation/request")
    fell = await ws.request("elicitation/fallback", {"id": request["id"], "reason": "the app lacks the capability"})
    assert fell == {"fellBack": True}
    fallback = await ws.wait_notification("elicitation/request", lambda p: p["id"] == request["id"])
    assert fallback["mode"] == "form" and fallback["fallbackReason"] == "the app lacks the capability"
    await ws.request("elicitation/respond", {"id": request["id"], "action": "cancel"})
    assert await text(ws, pending) == "No colour picked (cancel)."


async def test_a_missing_app_resource_goes_straight_to_the_form_with_the_reason(ws: WsClient) -> None:
    pending = pick(ws, "pick_missing_resource", "c6")
    request = await ws.wait_notification("elicitation/request")
    assert request["mode"] == "form" and "could not be loaded" in request["fallbackReason"]
    await ws.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": {"color": "#e11d48"}})
    assert await text(ws, pending) == "You picked Raspberry (#e11d48)."


async def test_an_app_bound_to_a_request_cannot_rerun_the_operation_that_asked(ws: WsClient) -> None:
    pending = pick(ws, "pick_color", "c7")
    request = await ws.wait_notification("elicitation/request")
    frame = request["app"]["frameId"]
    with pytest.raises(RpcError) as refused:
        await ws.request(
            "apps/request",
            {"frameId": frame, "method": "tools/call", "params": {"name": "pick_color", "arguments": {}}},
        )
    assert refused.value.code == -32003 and "cannot retry" in str(refused.value.message)
    await ws.request("elicitation/respond", {"id": request["id"], "frameId": frame, "action": "cancel"})
    assert await text(ws, pending) == "No colour picked (cancel)."
