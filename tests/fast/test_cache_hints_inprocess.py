"""Caching hints and dropped tools (issue 25, item 9): a 2026-07-28 server's `ttlMs`/`cacheScope` (SEP-2549)
reach the page on its lists, reads and `server/discover`; a tool the SDK must drop for an invalid `x-mcp-header`
annotation is listed with the reason instead of vanishing. tests/servers/cached.py, in both eras."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.server import MCPServer

from tests.support.fast import connected_tab, error_of, text
from tests.support.inprocess import sdk_server

pytestmark = pytest.mark.anyio


def cached() -> dict[str, MCPServer[Any]]:
    sdk_server("basic")  # puts tests/servers on sys.path
    return {"cached": sdk_server("cached")}


async def test_a_2026_server_s_hints_reach_the_page_and_a_dropped_tool_says_why(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, cached()) as tab:
        state = await tab.wait_connected("cached")
        assert state["cacheHints"]["server/discover"] == {"ttlMs": 3_600_000, "cacheScope": "public"}
        listed = await tab.request("tools/list", {"server": "cached"})
        assert listed["cacheHint"] == {"ttlMs": 60_000, "cacheScope": "public"}
        tools = {tool["name"]: tool for tool in listed["tools"]}
        assert set(tools) == {"region", "bad_header"}
        dropped = tools["bad_header"]["webhost"]
        assert dropped["dropped"] == "x-mcp-header"
        assert "not a header!" in dropped["invalid"] and "RFC 9110 token" in dropped["invalid"]
        assert "invalid" not in tools["region"]["webhost"]
        # A dropped tool is refused, never sent (the conformance suite's http-invalid-tool-headers checks it).
        refused = error_of(
            await tab.request_raw("tools/call", {"server": "cached", "name": "bad_header", "callId": "d"})
        )
        assert refused["code"] == -32602 and "x-mcp-header" in refused["message"]
        called = await tab.request(
            "tools/call", {"server": "cached", "name": "region", "arguments": {"region": "eu"}, "callId": "c"}
        )
        assert text(called) == "region eu"
        await tab.wait_notification(
            "activity", lambda p: p["entry"]["method"] == "tools/call" and p["entry"]["summary"] == "region"
        )
        sent = [n["params"]["entry"] for n in tab.notifications if n["method"] == "activity"]
        assert not [e for e in sent if e["method"] == "tools/call" and e["summary"] == "bad_header"]
        resources = await tab.request("resources/list", {"server": "cached"})
        assert resources["cacheHint"] == {"ttlMs": 30_000, "cacheScope": "private"}
        read = await tab.request("resources/read", {"server": "cached", "uri": "cached://note"})
        assert (read["ttlMs"], read["cacheScope"]) == (5_000, "private")
        prompts = await tab.request("prompts/list", {"server": "cached"})
        assert prompts["cacheHint"] == {"ttlMs": 0, "cacheScope": "private"}  # the SDK's default: stale at once
        state = next(s for s in (await tab.request("servers/list"))["servers"] if s["name"] == "cached")
        assert state["cacheHints"]["tools/list"] == {"ttlMs": 60_000, "cacheScope": "public"}


async def test_before_2026_there_are_no_hints_and_no_header_rule(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, cached(), legacy=frozenset({"cached"})) as tab:
        state = await tab.wait_connected("cached")
        assert state["era"] == "legacy" and state["cacheHints"] == {}
        listed = await tab.request("tools/list", {"server": "cached"})
        assert listed["cacheHint"] is None
        assert {tool["name"] for tool in listed["tools"]} == {"region", "bad_header"}
        assert not any(tool["webhost"].get("invalid") for tool in listed["tools"])
        read = await tab.request("resources/read", {"server": "cached", "uri": "cached://note"})
        assert "ttlMs" not in read
