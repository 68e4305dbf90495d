"""The log level per (person, server) (issue 25, item 2): on 2026-07-28, where `logging/setLevel` is gone
(SEP-2575), `logging/setLevel` from the page keeps the level and every request carries it in
`_meta["io.modelcontextprotocol/logLevel"]`; before, it is the server's `logging/setLevel`, given again after a
reconnect. The server state says which way the server takes it. tests/servers/workbench.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.server import MCPServer

from tests.support.fast import connected_host, connected_tab, json_text, text
from tests.support.inprocess import sdk_server

pytestmark = pytest.mark.anyio

LEVEL_KEY = "io.modelcontextprotocol/logLevel"


def workbench() -> dict[str, MCPServer[Any]]:
    return {"workbench": sdk_server("workbench")}


async def received_level(tab: Any) -> Any:
    called = await tab.request("tools/call", {"server": "workbench", "name": "request_meta", "callId": "m"})
    return json_text(called).get(LEVEL_KEY)


async def test_a_2026_server_gets_the_person_s_level_with_every_request(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, workbench()) as tab:
        state = await tab.wait_connected("workbench")
        assert state["logLevel"] == {"level": "debug", "chosen": False, "via": "request"}
        assert await received_level(tab) == "debug"

        assert await tab.request("logging/setLevel", {"server": "workbench", "level": "error"}) == {}
        state = next(s for s in (await tab.request("servers/list"))["servers"] if s["name"] == "workbench")
        assert state["logLevel"] == {"level": "error", "chosen": True, "via": "request"}
        assert await received_level(tab) == "error"
        prompt = await tab.request("prompts/get", {"server": "workbench", "name": "request_meta"})
        assert json.loads(prompt["messages"][0]["content"]["text"])[LEVEL_KEY] == "error"
        # The page's own _meta travels beside it.
        called = await tab.request(
            "tools/call",
            {"server": "workbench", "name": "request_meta", "callId": "t", "_meta": {"traceparent": "00-a-b-01"}},
        )
        assert json_text(called)[LEVEL_KEY] == "error" and json_text(called)["traceparent"] == "00-a-b-01"

        # The server sends only the messages at or above it: the emergency one is the last it sends.
        tab.notifications.clear()
        await tab.request("tools/call", {"server": "workbench", "name": "log_each", "callId": "l"})
        await tab.wait_notification("server/log", lambda p: p["level"] == "emergency", consume=False)
        levels = [n["params"]["level"] for n in tab.notifications if n["method"] == "server/log"]
        assert levels == ["error", "critical", "alert", "emergency"]


async def test_the_level_is_kept_per_person_and_server_across_a_reconnect(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, workbench()) as tab:
        await tab.request("logging/setLevel", {"server": "workbench", "level": "warning"})
        await tab.request("servers/reconnect", {"server": "workbench"})
        await tab.wait_connected("workbench")
        assert await received_level(tab) == "warning"


async def test_a_legacy_server_gets_logging_set_level_and_again_after_a_reconnect(tmp_path: Path) -> None:
    module = __import__("workbench")
    async with connected_host(tmp_path, workbench(), legacy=frozenset({"workbench"})) as (_, tab):
        state = await tab.wait_connected("workbench")
        assert state["logLevel"] == {"level": None, "chosen": False, "via": "setLevel"}
        assert await tab.request("logging/setLevel", {"server": "workbench", "level": "critical"}) == {}
        assert text(await tab.request("tools/call", {"server": "workbench", "name": "level", "callId": "a"})) == (
            "critical"
        )
        assert await received_level(tab) is None  # nothing per request before 2026-07-28
        state = next(s for s in (await tab.request("servers/list"))["servers"] if s["name"] == "workbench")
        assert state["logLevel"] == {"level": "critical", "chosen": True, "via": "setLevel"}

        module.state["level"] = "debug"  # the server forgets it with its session
        tab.notifications.clear()
        await tab.request("servers/reconnect", {"server": "workbench"})
        await tab.wait_connected("workbench")
        await tab.wait_notification(
            "activity",
            lambda p: (
                p["entry"]["method"] == "logging/setLevel"
                and p["entry"]["kind"] == "response"
                and "kept from before" in p["entry"]["summary"]
            ),
        )
        assert text(await tab.request("tools/call", {"server": "workbench", "name": "level", "callId": "b"})) == (
            "critical"
        )
