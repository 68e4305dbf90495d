"""Servers, tools, resources and prompts through the page's WebSocket, in-process against tests/servers/basic.py."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from mcp.server import MCPServer

from tests.support.fast import connected_host, connected_tab, error_of, text
from tests.support.inprocess import in_process_host, sdk_server
from tests.support.process import RpcError
from webhost import __version__
from webhost.workspace import MAX_ACTIVITY_DATA

pytestmark = pytest.mark.anyio


def basic() -> dict[str, MCPServer[Any]]:
    return {"basic": sdk_server("basic")}


async def test_session_info_names_the_version_the_session_and_the_sandbox(tmp_path: Path) -> None:
    async with connected_host(tmp_path, basic()) as (host, tab):
        info = await tab.request("session/info")
        assert info["version"] == __version__
        assert info["sessionId"].startswith("s-")
        assert info["sandbox"] == {
            "domain": host.settings.sandbox_domain,
            "port": host.settings.sandbox_port_for_browsers(),
            "scheme": host.settings.sandbox_scheme,
        }
        assert info["pending"] == []
        async with host.tab() as other:
            assert (await other.request("session/info"))["sessionId"] != info["sessionId"]


async def test_servers_list_describes_each_connected_server_without_secrets(tmp_path: Path) -> None:
    entries = {"basic": {"command": "in-process", "env": {"API_KEY": "s3cret-value"}}}
    async with in_process_host(tmp_path, basic(), entries=entries) as host, host.tab() as tab:
        await tab.wait_connected("basic")
        [state] = (await tab.request("servers/list"))["servers"]
        assert state["name"] == "basic" and state["transport"] == "stdio" and state["status"] == "connected"
        assert state["error"] is None and state["era"] == "modern"
        assert state["serverInfo"]["name"] == "basic"
        assert "tools" in state["capabilities"]
        assert state["instructions"].startswith("Core MCP primitives")
        assert "s3cret-value" not in json.dumps(state)


async def test_disconnect_reports_the_status_and_requests_then_fail_as_not_connected(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic()) as tab:
        answer = await tab.request("servers/disconnect", {"server": "basic"})
        assert answer["server"]["status"] == "disconnected"
        await tab.wait_notification("servers/status", lambda p: p["server"]["status"] == "disconnected")
        with pytest.raises(RpcError) as refused:
            await tab.request(
                "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": "x"}, "callId": "c-1"}
            )
        assert refused.value.code == -32002
        assert refused.value.data == {"server": "basic", "status": "disconnected", "reason": None}


async def test_reconnect_connects_again_and_forgets_the_cached_listing(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic()) as tab:
        before = {t["name"] for t in (await tab.request("tools/list", {"server": "basic"}))["tools"]}
        assert "echo" in before
        tab.notifications.clear()
        await tab.request("servers/reconnect", {"server": "basic"})
        await tab.wait_notification("servers/status", lambda p: p["server"]["status"] == "connecting")
        await tab.wait_notification("servers/status", lambda p: p["server"]["status"] == "connected")
        after = await tab.request("tools/list", {"server": "basic"})
        assert {t["name"] for t in after["tools"]} >= before


async def test_tools_list_refreshes_the_catalogue_unless_told_not_to(tmp_path: Path) -> None:
    def listed_upstream(p: dict[str, Any]) -> bool:
        return bool(p["entry"]["method"] == "tools/list" and p["entry"]["direction"] == "in")

    async with connected_tab(tmp_path, basic()) as tab:
        listed = await tab.request("tools/list", {"server": "basic"})
        await tab.wait_notification("activity", listed_upstream)
        tab.notifications.clear()
        assert await tab.request("tools/list", {"server": "basic", "refresh": False}) == listed  # the catalogue's
        assert await tab.request("tools/list", {"server": "basic", "refresh": True}) == listed  # the server's
        await tab.wait_notification("activity", listed_upstream)
        # One request went to the server, the refreshing one (its activity came after anything the first sent).
        entries = [n["params"]["entry"] for n in tab.notifications if n["method"] == "activity"]
        assert [e["direction"] for e in entries if e["method"] == "tools/list"] == ["out"]
        with pytest.raises(RpcError, match="params.refresh must be a boolean"):
            await tab.request("tools/list", {"server": "basic", "refresh": "yes"})


async def test_server_params_are_checked(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic()) as tab:
        for params in ({}, {"server": 3}, {"server": "nope"}):
            with pytest.raises(RpcError) as refused:
                await tab.request("servers/reconnect", params)
            assert refused.value.code == -32602
        with pytest.raises(RpcError, match="params.name must be a non-empty string"):
            await tab.request("tools/call", {"server": "basic", "name": "", "callId": "c"})
        with pytest.raises(RpcError, match="params.arguments must be an object"):
            await tab.request("tools/call", {"server": "basic", "name": "echo", "arguments": [1], "callId": "c"})
        with pytest.raises(RpcError, match="params.callId"):
            await tab.request("tools/call", {"server": "basic", "name": "echo", "arguments": {}})


async def test_tools_carry_what_the_backend_computed_for_the_page(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic()) as tab:
        tools = {t["name"]: t for t in (await tab.request("tools/list", {"server": "basic"}))["tools"]}
        assert tools["echo"]["webhost"] == {"resourceUri": None, "visibility": ["model", "app"], "appOnly": False}
        assert tools["stats"]["outputSchema"]["type"] == "object"


async def test_a_failing_tool_is_a_result_and_a_json_rpc_error_keeps_the_servers_code(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic()) as tab:
        failed = await tab.request(
            "tools/call", {"server": "basic", "name": "fail", "arguments": {"message": "boom"}, "callId": "c-fail"}
        )
        assert failed["isError"] is True and text(failed) == "Error executing tool fail"
        with pytest.raises(RpcError) as broke:
            await tab.request(
                "tools/call",
                {
                    "server": "basic",
                    "name": "rpc_error",
                    "arguments": {"code": -32099, "message": "teapot"},
                    "callId": "c-rpc",
                },
            )
        assert broke.value.code == -32000
        assert broke.value.message == "basic: teapot"
        assert broke.value.data == {
            "server": "basic",
            "method": "tools/call",
            "upstreamCode": -32099,
            "upstreamData": {"tool": "rpc_error"},
        }
        entry = await tab.wait_notification(
            "activity", lambda p: p["entry"]["kind"] == "error" and p["entry"]["method"] == "tools/call"
        )
        assert entry["entry"]["direction"] == "in" and entry["entry"]["summary"] == "basic: teapot"


async def test_a_server_that_answers_cancelled_is_a_cancelled_call(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic()) as tab:
        with pytest.raises(RpcError) as cancelled:
            await tab.request(
                "tools/call",
                {
                    "server": "basic",
                    "name": "rpc_error",
                    "arguments": {"code": -32800, "message": "stopped"},
                    "callId": "c",
                },
            )
        assert cancelled.value.code == -32800 and cancelled.value.data["upstreamCode"] == -32800


async def test_a_call_past_the_call_timeout_is_32001_with_the_seconds(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic(), webhost_options={"timeouts": {"call": 0.3}}) as tab:
        with pytest.raises(RpcError) as timed_out:
            await tab.request("tools/call", {"server": "basic", "name": "hang", "arguments": {}, "callId": "c-h"})
        assert timed_out.value.code == -32001
        assert timed_out.value.data == {"server": "basic", "timeoutSeconds": 0.3}
        assert "timed out after 0.3 s" in str(timed_out.value.message)
        # The connection survives a timed-out call.
        echoed = await tab.request(
            "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": "ok"}, "callId": "c-e"}
        )
        assert text(echoed) == "ok"


async def test_progress_reaches_the_page_with_the_call_id(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic()) as tab:
        result = await tab.request(
            "tools/call",
            {"server": "basic", "name": "slow", "arguments": {"steps": 2, "delay": 0.01}, "callId": "c-slow"},
        )
        assert text(result) == "done after 2 steps"
        last = await tab.wait_notification("progress", lambda p: p["progress"] == 2)
        assert last == {"callId": "c-slow", "progress": 2, "total": 2, "message": "step 2 of 2"}


async def test_cancel_answers_the_call_with_32800_and_an_unknown_call_is_not_cancelled(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic()) as tab:
        assert await tab.request("tools/cancel", {"callId": "never-started"}) == {"cancelled": False}
        running = tab.start_request(
            "tools/call", {"server": "basic", "name": "hang", "arguments": {}, "callId": "c-hang"}
        )
        await tab.wait_notification("activity", lambda p: p["entry"]["summary"] == "hang")
        with pytest.raises(RpcError, match="already running"):
            await tab.request(
                "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": "x"}, "callId": "c-hang"}
            )
        assert await tab.request("tools/cancel", {"callId": "c-hang"}) == {"cancelled": True}
        error = error_of(await tab.wait_response(running))
        assert error["code"] == -32800 and error["data"] == {"callId": "c-hang"}
        assert await tab.request("tools/cancel", {"callId": "c-hang"}) == {"cancelled": False}


async def test_resources_templates_and_reads(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic()) as tab:
        resources = {r["uri"]: r for r in (await tab.request("resources/list", {"server": "basic"}))["resources"]}
        assert resources["basic://text"]["mimeType"] == "text/plain"
        templates = (await tab.request("resources/templates/list", {"server": "basic"}))["resourceTemplates"]
        assert [t["uriTemplate"] for t in templates] == ["basic://items/{item_id}"]
        item = await tab.request("resources/read", {"server": "basic", "uri": "basic://items/7"})
        assert json.loads(item["contents"][0]["text"]) == {"id": "7", "name": "Item 7"}
        blob = await tab.request("resources/read", {"server": "basic", "uri": "basic://blob"})
        assert base64.b64decode(blob["contents"][0]["blob"]) == bytes(range(256))
        with pytest.raises(RpcError) as missing:
            await tab.request("resources/read", {"server": "basic", "uri": "basic://nothing-here"})
        assert missing.value.code == -32000 and missing.value.data["method"] == "resources/read"
        with pytest.raises(RpcError, match="params.uri"):
            await tab.request("resources/read", {"server": "basic"})


async def test_prompts_are_listed_and_rendered_with_string_arguments_only(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic()) as tab:
        prompts = {p["name"]: p for p in (await tab.request("prompts/list", {"server": "basic"}))["prompts"]}
        assert [a["name"] for a in prompts["summarize"]["arguments"]] == ["text", "style"]
        rendered = await tab.request("prompts/get", {"server": "basic", "name": "greet", "arguments": {"name": "Ada"}})
        assert "greeting for Ada" in rendered["messages"][0]["content"]["text"]
        with pytest.raises(RpcError) as refused:
            await tab.request("prompts/get", {"server": "basic", "name": "greet", "arguments": {"name": 3}})
        assert refused.value.code == -32602 and "must be strings" in str(refused.value.message)
        with pytest.raises(RpcError) as unknown:
            await tab.request("prompts/get", {"server": "basic", "name": "no_such_prompt", "callId": "p-1"})
        assert unknown.value.code == -32000


async def test_large_activity_data_is_clipped_to_a_preview_but_the_result_is_whole(tmp_path: Path) -> None:
    size = 4 * MAX_ACTIVITY_DATA
    async with connected_tab(tmp_path, basic()) as tab:
        result = await tab.request(
            "tools/call", {"server": "basic", "name": "big", "arguments": {"size_bytes": size}, "callId": "c-big"}
        )
        assert len(text(result)) == size
        response = await tab.wait_notification(
            "activity", lambda p: p["entry"]["kind"] == "response" and p["entry"]["method"] == "tools/call"
        )
        entry = response["entry"]
        assert entry["data"]["truncated"] is True
        preview = entry["data"]["preview"]["content"][0]["text"]
        assert preview.endswith(f"… ({size} characters)") and len(preview) < 400
        assert entry["durationMs"] >= 0 and entry["server"] == "basic" and entry["direction"] == "in"


async def test_small_activity_data_is_kept_whole(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic()) as tab:
        await tab.request(
            "tools/call", {"server": "basic", "name": "add", "arguments": {"a": 2, "b": 3}, "callId": "c-add"}
        )
        request = await tab.wait_notification(
            "activity", lambda p: p["entry"]["kind"] == "request" and p["entry"]["method"] == "tools/call"
        )
        assert request["entry"]["data"] == {"arguments": {"a": 2, "b": 3}}
        assert request["entry"]["direction"] == "out" and request["entry"]["summary"] == "add"


# basic.py ignores this warning when imported; pytest restores the filters after the test that imported it.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_legacy_server_log_and_list_changed_reach_the_page(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, basic(), legacy=frozenset({"basic"})) as tab:
        await tab.request(
            "tools/call",
            {
                "server": "basic",
                "name": "log",
                "arguments": {"message": "hello log", "level": "warning"},
                "callId": "c-log",
            },
        )
        log = await tab.wait_notification("server/log")
        assert log["server"] == "basic" and log["level"] == "warning" and log["data"] == "hello log"
        assert log["logger"] == "basic"
        entry = await tab.wait_notification("activity", lambda p: p["entry"]["method"] == "notifications/message")
        assert entry["entry"]["summary"] == "[warning] hello log"

        await tab.request("tools/list", {"server": "basic"})  # cached now
        await tab.request(
            "tools/call",
            {"server": "basic", "name": "add_tool", "arguments": {"name": "legacy_new"}, "callId": "c-add"},
        )
        changed = await tab.wait_notification("list/changed")
        assert changed == {"server": "basic", "list": "tools"}
        names = {t["name"] for t in (await tab.request("tools/list", {"server": "basic"}))["tools"]}
        assert "legacy_new" in names
