"""`webhost.servers.NAME.protocol` (issue 25, item 6): negotiate the era, or speak one era only, through the
page's WebSocket against the SDK's dual-era server in process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.server import MCPServer

from tests.support.fast import connected_tab, text
from tests.support.inprocess import in_process_host, sdk_server
from webhost.config import ConfigError, parse_config

pytestmark = pytest.mark.anyio


def workbench() -> dict[str, MCPServer[Any]]:
    return {"workbench": sdk_server("workbench")}


def choosing(protocol: str) -> dict[str, Any]:
    return {"servers": {"workbench": {"protocol": protocol}}}


async def test_auto_negotiates_the_newest_era_and_says_it_chose_auto(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, workbench()) as tab:
        state = await tab.wait_connected("workbench")
        assert (state["protocolChoice"], state["era"], state["protocolVersion"]) == ("auto", "modern", "2026-07-28")


async def test_legacy_speaks_initialize_to_a_server_that_speaks_both(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, workbench(), webhost_options=choosing("legacy")) as tab:
        state = await tab.wait_connected("workbench")
        assert (state["protocolChoice"], state["era"]) == ("legacy", "legacy")
        assert state["protocolVersion"] < "2026-07-28"
        assert state["capabilities"]["tools"] is not None
        # The legacy vocabulary works: ping is answered.
        assert (await tab.request("servers/ping", {"server": "workbench"}))["ms"] >= 0


async def test_2026_07_28_adopts_the_server_s_own_discover_answer(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, workbench(), webhost_options=choosing("2026-07-28")) as tab:
        state = await tab.wait_connected("workbench")
        assert (state["protocolChoice"], state["era"], state["protocolVersion"]) == (
            "2026-07-28",
            "modern",
            "2026-07-28",
        )
        # Its real capabilities, not the empty ones the SDK's pinned mode starts from.
        assert "tools" in state["capabilities"] and "prompts" in state["capabilities"]
        level = await tab.request("tools/call", {"server": "workbench", "name": "level", "callId": "c-1"})
        assert text(level)


async def test_2026_07_28_against_a_legacy_only_server_says_why_it_did_not_connect(tmp_path: Path) -> None:
    async with (
        in_process_host(
            tmp_path, workbench(), legacy=frozenset({"workbench"}), webhost_options=choosing("2026-07-28")
        ) as host,
        host.tab() as tab,
    ):
        state = await tab.wait_status("workbench", "error")
        assert "did not answer server/discover" in state["error"]
        assert "webhost.servers.workbench.protocol" in state["error"]
        # The same server with "auto" falls back to initialize (the test server answers discover "not found").
    async with connected_tab(tmp_path, workbench(), legacy=frozenset({"workbench"})) as tab:
        assert (await tab.wait_connected("workbench"))["era"] == "legacy"


def test_an_unknown_choice_is_a_configuration_error() -> None:
    document = '{"mcpServers": {"a": {"command": "x"}}, "webhost": {"servers": {"a": {"protocol": "2025-11-25"}}}}'
    with pytest.raises(ConfigError) as refused:
        parse_config(document, "webhost.json", {})
    assert str(refused.value) == ('webhost.json: webhost.servers.a.protocol: must be "auto", "2026-07-28" or "legacy"')
