"""The page's request `_meta` (issue 25, item 3): `tools/call`, `prompts/get` and `resources/read` pass it on to
the server in both eras; the protocol's own keys and `progressToken` are refused. tests/servers/workbench.py
answers the `_meta` it received."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.server import MCPServer

from tests.support.fast import connected_tab, json_text
from tests.support.inprocess import sdk_server
from tests.support.process import RpcError

pytestmark = pytest.mark.anyio

TRACE = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "com.example.mcp/run": 7}


def workbench() -> dict[str, MCPServer[Any]]:
    return {"workbench": sdk_server("workbench")}


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_the_page_s_meta_reaches_the_server_on_each_request_that_takes_it(tmp_path: Path, era: str) -> None:
    legacy = frozenset({"workbench"}) if era == "legacy" else frozenset()
    async with connected_tab(tmp_path, workbench(), legacy=legacy) as tab:
        assert (await tab.wait_connected("workbench"))["era"] == era
        called = await tab.request(
            "tools/call", {"server": "workbench", "name": "request_meta", "callId": "c-1", "_meta": TRACE}
        )
        received = json_text(called)
        assert {key: received[key] for key in TRACE} == TRACE
        prompt = await tab.request("prompts/get", {"server": "workbench", "name": "request_meta", "_meta": TRACE})
        received = json.loads(prompt["messages"][0]["content"]["text"])
        assert {key: received[key] for key in TRACE} == TRACE
        read = await tab.request(
            "resources/read", {"server": "workbench", "uri": "wb://request-meta/x", "_meta": TRACE}
        )
        received = json.loads(read["contents"][0]["text"])
        assert {key: received[key] for key in TRACE} == TRACE
        # Without one, nothing of the page's is sent.
        plain = json_text(
            await tab.request("tools/call", {"server": "workbench", "name": "request_meta", "callId": "c-2"})
        )
        assert "traceparent" not in plain
        # The activity log shows what was sent.
        entry = await tab.wait_notification(
            "activity", lambda p: p["entry"]["method"] == "tools/call" and (p["entry"].get("data") or {}).get("_meta")
        )
        assert entry["entry"]["data"]["_meta"] == TRACE


@pytest.mark.parametrize(
    "meta",
    [
        {"io.modelcontextprotocol/logLevel": "error"},
        {"io.modelcontextprotocol/protocolVersion": "2025-11-25"},
        {"dev.mcp/anything": 1},
        {"org.modelcontextprotocol.api/x": 1},
        {"progressToken": "mine"},
    ],
)
async def test_reserved_keys_are_refused_before_anything_is_sent(tmp_path: Path, meta: dict[str, Any]) -> None:
    async with connected_tab(tmp_path, workbench()) as tab:
        for method, params in (
            ("tools/call", {"name": "request_meta", "callId": "c-1"}),
            ("prompts/get", {"name": "request_meta"}),
            ("resources/read", {"uri": "wb://request-meta/x"}),
        ):
            with pytest.raises(RpcError) as refused:
                await tab.request(method, {"server": "workbench", **params, "_meta": meta})
            assert refused.value.code == -32602, method
            assert refused.value.data == {"reserved": list(meta)}


async def test_a_meta_that_is_not_an_object_or_too_large_is_refused(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, workbench()) as tab:
        for meta in (["traceparent"], "traceparent", {"big": "x" * 17_000}):
            with pytest.raises(RpcError) as refused:
                await tab.request(
                    "tools/call", {"server": "workbench", "name": "request_meta", "callId": "c", "_meta": meta}
                )
            assert refused.value.code == -32602
