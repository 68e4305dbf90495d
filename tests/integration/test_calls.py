"""Tool calls through webhost against a real stdio server, in both protocol eras."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.support.process import RpcError, WsClient, connected, run_webhost, stdio_server

pytestmark = pytest.mark.anyio

ERAS = {"modern": ("2026-07-28", []), "legacy": ("2025-11-25", ["--legacy"])}


@pytest.fixture(params=sorted(ERAS), scope="module")
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def host(era: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    servers = {"basic": stdio_server("basic", *ERAS[era][1])}
    with run_webhost(tmp_path_factory.mktemp(era), servers, webhost_options={"timeouts": {"call": 6}}) as running:
        yield running


@pytest.fixture(scope="module")
async def ws(host: Any) -> AsyncIterator[WsClient]:
    async with connected(host, "basic") as client:
        yield client


async def call(ws: WsClient, name: str, arguments: dict[str, Any], call_id: str, **kw: Any) -> Any:
    return await ws.request(
        "tools/call", {"server": "basic", "name": name, "arguments": arguments, "callId": call_id}, **kw
    )


async def test_the_negotiated_era_is_reported(ws: WsClient, era: str) -> None:
    state = await ws.wait_connected("basic")
    assert state["protocolVersion"] == ERAS[era][0] and state["era"] == era


async def test_text_and_structured_content_come_back_as_sent(ws: WsClient) -> None:
    result = await call(ws, "stats", {"numbers": [1, 2, 3]}, "c-stats")
    assert result["structuredContent"]["count"] == 3
    assert result["isError"] is False


async def test_progress_notifications_carry_the_call_id(ws: WsClient) -> None:
    result = await call(ws, "slow", {"steps": 3, "delay": 0.05}, "c-progress")
    assert result["content"][0]["text"] == "done after 3 steps" and result["isError"] is False
    seen = [n["params"] for n in ws.notifications if n["method"] == "progress"]
    assert [p["progress"] for p in seen if p["callId"] == "c-progress"] == [1, 2, 3]


async def test_a_call_can_be_cancelled_and_the_server_keeps_working(ws: WsClient) -> None:
    pending = ws.start_request("tools/call", {"server": "basic", "name": "hang", "arguments": {}, "callId": "c-h"})
    await ws.wait_notification(
        "activity",
        lambda p: (
            p["entry"]["method"] == "tools/call" and p["entry"]["summary"] == "hang" and p["entry"]["kind"] == "request"
        ),
    )
    assert (await ws.request("tools/cancel", {"callId": "c-h"}))["cancelled"] is True
    response = await ws.wait_response(pending)
    assert response["error"]["code"] == -32800
    assert (await call(ws, "echo", {"text": "still here"}, "c-after"))["content"][0]["text"] == "still here"


async def test_a_call_that_hangs_past_the_timeout_fails_clearly(ws: WsClient) -> None:
    with pytest.raises(RpcError) as failure:
        await call(ws, "hang", {}, "c-timeout")
    assert failure.value.code == -32001 and "timed out after 6 s" in str(failure.value.message)


async def test_a_tool_error_is_a_result_and_a_json_rpc_error_is_an_error(ws: WsClient) -> None:
    result = await call(ws, "fail", {}, "c-fail")
    assert result["isError"] is True and result["content"][0]["type"] == "text"
    with pytest.raises(RpcError) as failure:
        await call(ws, "rpc_error", {"code": -32010, "message": "nope"}, "c-rpc")
    assert failure.value.code == -32000 and failure.value.data["upstreamCode"] == -32010


async def test_ten_megabytes_of_text_go_through_intact(ws: WsClient) -> None:
    size = 10 * 1024 * 1024
    result = await call(ws, "big", {"size_bytes": size}, "c-big", timeout=60)
    text = result["content"][0]["text"]
    assert len(text) == size and text.startswith("0123456789abc")


async def test_binary_content_goes_through_intact(ws: WsClient) -> None:
    result = await call(ws, "binary", {"image_bytes": 3 * 1024 * 1024, "blob_bytes": 1024}, "c-bin", timeout=60)
    kinds = [block["type"] for block in result["content"]]
    assert kinds == ["image", "audio", "resource", "text"]
    assert len(base64.b64decode(result["content"][0]["data"])) == 3 * 1024 * 1024
    assert base64.b64decode(result["content"][1]["data"])[:4] == b"RIFF"
    assert len(base64.b64decode(result["content"][2]["resource"]["blob"])) == 1024


async def test_resources_templates_and_prompts(ws: WsClient) -> None:
    resources = (await ws.request("resources/list", {"server": "basic"}))["resources"]
    assert resources
    first = resources[0]["uri"]
    contents = (await ws.request("resources/read", {"server": "basic", "uri": first}))["contents"]
    assert contents[0]["uri"] == first
    templates = (await ws.request("resources/templates/list", {"server": "basic"}))["resourceTemplates"]
    assert templates
    prompts = (await ws.request("prompts/list", {"server": "basic"}))["prompts"]
    got = await ws.request(
        "prompts/get",
        {
            "server": "basic",
            "name": prompts[0]["name"],
            "arguments": {a["name"]: "x" for a in prompts[0].get("arguments", [])},
        },
    )
    assert got["messages"]


async def test_log_messages_and_stderr_reach_the_activity_log(ws: WsClient) -> None:
    await call(ws, "log", {"message": "hello-log", "level": "warning"}, "c-log")
    await call(ws, "stderr", {"text": "hello-stderr"}, "c-err")
    log = await ws.wait_notification("server/log", lambda p: p["data"] == "hello-log")
    assert log["level"] == "warning"
    await ws.wait_notification(
        "activity",
        lambda p: p["entry"]["kind"] == "stderr" and p["entry"]["summary"].startswith("hello-stderr"),
        timeout=5,
    )


async def test_list_changed_is_pushed(ws: WsClient) -> None:
    await call(ws, "add_tool", {"name": "fresh_tool"}, "c-add")
    await ws.wait_notification("list/changed", lambda p: p["list"] == "tools")
    tools = (await ws.request("tools/list", {"server": "basic"}))["tools"]
    assert "fresh_tool" in {t["name"] for t in tools}


async def test_every_request_and_response_is_in_the_activity_log_with_its_duration(ws: WsClient) -> None:
    await call(ws, "echo", {"text": "x"}, "c-act")
    entries = [n["params"]["entry"] for n in ws.notifications if n["method"] == "activity"]
    request = [e for e in entries if e["method"] == "tools/call" and e["kind"] == "request" and e["summary"] == "echo"]
    response = [
        e for e in entries if e["method"] == "tools/call" and e["kind"] == "response" and e["summary"] == "echo"
    ]
    assert request and response and response[-1]["durationMs"] >= 0
