"""One malformed item is an error on that item, not a failed list; a result whose structured content breaks the
tool's outputSchema is still shown, with the validator's message (tests/servers/faulty.py `bad_items`, real
stdio, both protocol eras: upstream/lenient.py and sdk_workarounds.py 4. and 5.)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.process import connected, run_webhost, stdio_server

pytestmark = pytest.mark.anyio


def invalid(items: list[dict[str, Any]]) -> dict[str, str]:
    return {
        str(item.get("uri") or item.get("uriTemplate") or item["name"]): item["webhost"]["invalid"]
        for item in items
        if "invalid" in item.get("webhost", {})
    }


@pytest.mark.parametrize("era", ["2026-07-28", "legacy"])
async def test_a_malformed_item_is_an_error_on_that_item_and_a_broken_output_schema_still_shows(
    tmp_path: Path, era: str
) -> None:
    entry = stdio_server("faulty", "bad_items", *(["--legacy"] if era == "legacy" else []))
    with run_webhost(tmp_path, {"bad": entry}) as host:
        async with connected(host, "bad") as ws:
            tools = (await ws.request("tools/list", {"server": "bad"}))["tools"]
            assert [t["name"] for t in tools] == ["echo", "broken", "(item 3)", "typed"]
            problems = invalid(tools)
            assert set(problems) == {"broken", "(item 3)"}
            assert problems["broken"].startswith("inputSchema")
            assert problems["(item 3)"].startswith("name")
            assert "invalid" not in tools[0]["webhost"] and tools[0]["inputSchema"]["required"] == ["text"]

            resources = (await ws.request("resources/list", {"server": "bad"}))["resources"]
            assert [r["uri"] for r in resources] == ["faulty://good", "(item 2)", "faulty://also"]
            assert set(invalid(resources)) == {"(item 2)", "faulty://also"}
            assert resources[1]["name"] == "no-uri"
            templates = (await ws.request("resources/templates/list", {"server": "bad"}))["resourceTemplates"]
            assert invalid(templates).keys() == {"(item 2)"}
            prompts = (await ws.request("prompts/list", {"server": "bad"}))["prompts"]
            assert invalid(prompts).keys() == {"bad-args"}

            # The good tools still work, and the listing taught the SDK the output schema it checks.
            echo = await ws.request(
                "tools/call", {"server": "bad", "name": "echo", "arguments": {"text": "hi"}, "callId": "c-1"}
            )
            assert echo["content"][0]["text"] == "hi" and "webhost" not in echo
            typed = await ws.request("tools/call", {"server": "bad", "name": "typed", "arguments": {}, "callId": "c-2"})
            assert typed["structuredContent"] == {"n": "seven"}
            assert "'seven' is not of type 'integer'" in typed["webhost"]["outputSchemaError"]
