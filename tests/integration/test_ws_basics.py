"""The WebSocket JSON-RPC surface against a real stdio MCP server started by webhost."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.process import RpcError, run_webhost, stdio_server

pytestmark = pytest.mark.anyio


async def test_tool_call_round_trip_through_a_real_stdio_server(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"basic": stdio_server("basic")}) as host:
        async with host.connect() as ws:
            state = await ws.wait_connected("basic")
            assert state["protocolVersion"] == "2026-07-28"
            tools = (await ws.request("tools/list", {"server": "basic"}))["tools"]
            assert "add" in {t["name"] for t in tools}
            result = await ws.request(
                "tools/call", {"server": "basic", "name": "add", "arguments": {"a": 2, "b": 3}, "callId": "c1"}
            )
            assert result["content"][0]["text"] == "5"


async def test_malformed_frames_get_json_rpc_errors_and_the_socket_stays_open(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"basic": stdio_server("basic")}) as host:
        async with host.connect() as ws:
            await ws.send_raw("not json{")
            await ws.send_raw("[1, 2]")
            await ws.send_raw('{"jsonrpc": "1.0", "id": 5, "method": "servers/list"}')
            with pytest.raises(RpcError) as unknown:
                await ws.request("no/such/method")
            assert unknown.value.code == -32601
            with pytest.raises(RpcError) as missing:
                await ws.request("tools/list", {})
            assert missing.value.code == -32602
            assert (await ws.request("servers/list"))["servers"][0]["name"] == "basic"
