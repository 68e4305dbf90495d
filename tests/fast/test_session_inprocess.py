"""The session, the WebSocket and the page handlers in-process, against SDK servers over memory streams."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.inprocess import in_process_host, sdk_server
from tests.support.process import RpcError

pytestmark = pytest.mark.anyio


async def test_tools_listed_and_called_through_the_websocket(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}) as host, host.tab() as tab:
        state = await tab.wait_connected("basic")
        assert state["era"] in ("modern", "legacy")
        tools = (await tab.request("tools/list", {"server": "basic"}))["tools"]
        assert "echo" in {t["name"] for t in tools}
        result = await tab.request(
            "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": "hi"}, "callId": "c-1"}
        )
        assert result["content"][0]["text"] == "hi"
        with pytest.raises(RpcError) as missing:
            await tab.request("tools/call", {"server": "nope", "name": "echo", "callId": "c-2"})
        assert missing.value.code == -32602
