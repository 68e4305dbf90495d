"""Input requests through the WebSocket, bypassing the page: routing, answer-once, backend validation, MRTR.

Everything here is what a browser could send; the backend must hold the line on its own.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from tests.support.process import RpcError, WsClient, connected, json_result, run_webhost, start_tool_call, stdio_server

pytestmark = pytest.mark.anyio

ERAS = {"modern": [], "legacy": ["--legacy"]}
VALID = {
    "text": "hi there",
    "email": "ada@example.com",
    "count": 4,
    "agree": True,
    "color": "red",
    "ratio": 0.25,
    "size": "l",
    "tags": ["a", "b"],
    "meeting": "2026-11-29T10:00:00+01:00",
    "birthday": "1990-02-03",
    "website": "https://example.com/x",
    "legacy_enum": "y",
    "toppings": ["basil"],
}


@pytest.fixture(params=sorted(ERAS), scope="module")
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def host(era: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    options = {"timeouts": {"call": 2}, "roots": [{"uri": "file:///srv/project", "name": "project"}]}
    with run_webhost(
        tmp_path_factory.mktemp(era), {"elicit": stdio_server("elicit", *ERAS[era])}, webhost_options=options
    ) as running:
        yield running


@pytest.fixture(scope="module")
async def ws(host: Any) -> AsyncIterator[WsClient]:
    async with connected(host, "elicit") as client:
        yield client


def start(ws: WsClient, tool: str, call_id: str, arguments: dict[str, Any] | None = None) -> int:
    return start_tool_call(ws, "elicit", tool, call_id, arguments)


result_text = json_result


async def test_a_form_answer_is_validated_in_the_backend_before_it_reaches_the_server(ws: WsClient) -> None:
    pending = start(ws, "form_full", "c1")
    request = await ws.wait_notification("elicitation/request")
    assert request["server"] == "elicit" and request["mode"] == "form"
    assert request["origin"]["callId"] == "c1" and request["origin"]["name"] == "form_full"
    assert {f["name"] for f in request["fields"]} >= {"text", "email", "count", "tags", "toppings"}
    bad = {**VALID, "count": "4", "agree": "true", "email": "not-an-email", "tags": ["z"], "extra": 1}
    with pytest.raises(RpcError) as refused:
        await ws.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": bad})
    assert refused.value.code == -32602
    fields = {e["field"] for e in refused.value.data["errors"]}
    assert {"count", "agree", "email", "tags"} <= fields
    assert all("not-an-email" not in e["message"] for e in refused.value.data["errors"])
    await ws.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": VALID})
    result = await result_text(ws, pending)
    assert result["action"] == "accept"
    assert result["content"]["count"] == 4 and isinstance(result["content"]["count"], int)
    assert result["content"]["ratio"] == 0.25 and result["content"]["agree"] is True
    assert "maybe" not in result["content"]


async def test_an_input_request_is_answered_once(ws: WsClient) -> None:
    pending = start(ws, "form_defaults", "c2")
    request = await ws.wait_notification("elicitation/request")
    await ws.request("elicitation/respond", {"id": request["id"], "action": "decline"})
    with pytest.raises(RpcError) as again:
        await ws.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": {}})
    assert "already answered" in str(again.value.message)
    assert (await result_text(ws, pending))["action"] == "decline"
    resolved = await ws.wait_notification("elicitation/resolved", lambda p: p["id"] == request["id"])
    assert resolved["outcome"] == "decline"


async def test_cancel_is_distinct_from_decline(ws: WsClient) -> None:
    pending = start(ws, "form_defaults", "c3")
    request = await ws.wait_notification("elicitation/request")
    await ws.request("elicitation/respond", {"id": request["id"], "action": "cancel", "content": {"name": "x"}})
    result = await result_text(ws, pending)
    assert result["action"] == "cancel" and not result.get("content")


async def test_a_hostile_schema_is_refused_before_anything_is_drawn(ws: WsClient) -> None:
    pending = start(ws, "hostile_schema", "c4")
    response = await ws.wait_response(pending)
    assert not [n for n in ws.notifications if n["method"] == "elicitation/request"]
    entry = await ws.wait_notification("activity", lambda p: "outside the allowed subset" in p["entry"]["summary"])
    assert entry["entry"]["server"] == "elicit"
    assert "error" in response or response["result"]["isError"] is True


async def test_several_rounds_each_answered_on_its_own(ws: WsClient) -> None:
    pending = start(ws, "multi_round", "c5", {"rounds": 3})
    for index in range(1, 4):
        request = await ws.wait_notification("elicitation/request")
        assert request["message"] == f"Round {index} of 3"
        await ws.request(
            "elicitation/respond", {"id": request["id"], "action": "accept", "content": {"answer": f"a{index}"}}
        )
    result = await result_text(ws, pending)
    assert [a["content"]["answer"] for a in result["answers"]] == ["a1", "a2", "a3"]


async def test_concurrent_requests_are_pending_at_once_and_answered_separately(ws: WsClient) -> None:
    pending = start(ws, "concurrent", "c6")
    first = await ws.wait_notification("elicitation/request")
    second = await ws.wait_notification("elicitation/request")
    by_message = {first["message"]: first, second["message"]: second}
    await ws.request(
        "elicitation/respond", {"id": by_message["Second question"]["id"], "action": "accept", "content": {"answer": 7}}
    )
    await ws.request(
        "elicitation/respond",
        {"id": by_message["First question"]["id"], "action": "accept", "content": {"answer": "one"}},
    )
    result = await result_text(ws, pending)
    assert result["first"]["content"] == {"answer": "one"} and result["second"]["content"] == {"answer": 7}


async def test_time_spent_answering_does_not_count_against_the_call_timeout(ws: WsClient) -> None:
    pending = start(ws, "form_defaults", "c7")
    request = await ws.wait_notification("elicitation/request")
    await anyio.sleep(3)  # longer than the 2 s call timeout
    await ws.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": {}})
    assert (await result_text(ws, pending))["action"] == "accept"


async def test_cancelling_the_call_releases_its_input_request(ws: WsClient) -> None:
    pending = start(ws, "form_defaults", "c8")
    request = await ws.wait_notification("elicitation/request")
    await ws.request("tools/cancel", {"callId": "c8"})
    resolved = await ws.wait_notification("elicitation/resolved", lambda p: p["id"] == request["id"])
    assert resolved["outcome"] in ("released", "cancel")
    response = await ws.wait_response(pending)
    assert response["error"]["code"] == -32800


async def test_url_mode_asks_for_consent_and_shows_the_host(ws: WsClient) -> None:
    pending = start(ws, "url_mode", "c9")
    request = await ws.wait_notification("elicitation/request")
    assert request["mode"] == "url" and request["host"] == "example.com"
    assert request["url"] == "https://example.com/authorize?from=elicit"
    await ws.request("elicitation/respond", {"id": request["id"], "action": "accept"})
    assert (await result_text(ws, pending))["action"] == "accept"


async def test_sampling_is_answered_by_the_person(ws: WsClient) -> None:
    pending = start(ws, "sampling", "c10")
    request = await ws.wait_notification("elicitation/request")
    assert request["mode"] == "sampling" and request["request"]["maxTokens"] == 64
    await ws.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": {"text": "Hello"}})
    result = await result_text(ws, pending)
    assert result["content"] == {"type": "text", "text": "Hello"}


async def test_roots_come_from_the_configuration(ws: WsClient) -> None:
    response = await ws.wait_response(start(ws, "roots", "c11"))
    assert json.loads(response["result"]["content"][0]["text"]) == ["file:///srv/project"]


async def test_prompts_and_resources_can_ask_too(ws: WsClient) -> None:
    pending = ws.start_request("prompts/get", {"server": "elicit", "name": "ask_then_greet", "callId": "p1"})
    request = await ws.wait_notification("elicitation/request")
    assert request["origin"]["method"] == "prompts/get"
    await ws.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": {"answer": "Bo"}})
    prompt = (await ws.wait_response(pending))["result"]
    assert "Bo" in prompt["messages"][0]["content"]["text"]


async def test_a_closed_tab_leaves_its_call_and_request_to_the_next_and_a_cancel_there_releases_both(host: Any) -> None:
    async with host.connect() as ws:
        await ws.wait_connected("elicit")
        start(ws, "form_defaults", "c12")
        asked = await ws.wait_notification("elicitation/request")
        old_tab = (await ws.request("session/info"))["sessionId"]
    async with host.connect() as other:
        await other.wait_connected("elicit")
        # The call outlived its tab (a reload looks the same): the person's next tab is asked instead.
        assert [p["id"] for p in (await other.request("session/info"))["pending"]] == [asked["id"]]
        assert await other.request("tools/cancel", {"callId": "c12", "tab": old_tab}) == {"cancelled": True}
        ending = await other.wait_notification("calls/outcome", lambda p: p["callId"] == "c12")
        assert ending["error"]["code"] == -32800
        assert (await other.request("session/info"))["pending"] == []
        assert (await other.request("calls/running"))["calls"] == []


async def test_another_session_never_sees_the_request(host: Any) -> None:
    async with host.connect() as alice, host.connect() as bob:
        await alice.wait_connected("elicit")
        await bob.wait_connected("elicit")
        pending = start(alice, "form_defaults", "c13")
        request = await alice.wait_notification("elicitation/request")
        with pytest.raises(RpcError):
            await bob.request("elicitation/respond", {"id": request["id"], "action": "accept", "content": {}})
        # A round trip on bob's socket: anything sent to bob before it would have arrived first.
        assert (await bob.request("session/info"))["pending"] == []
        assert not [n for n in bob.notifications if n["method"] == "elicitation/request"]
        await alice.request("elicitation/respond", {"id": request["id"], "action": "decline"})
        assert (await result_text(alice, pending))["action"] == "decline"
