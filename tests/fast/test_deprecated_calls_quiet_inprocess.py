"""The legacy-era calls webhost makes on purpose (issue 31 item 11) leave no `MCPDeprecationWarning` behind: on a
pre-2026 server `logging/setLevel`, `resources/subscribe`/`unsubscribe`, `notifications/roots/list_changed` and
`ping` are the protocol, and the SDK's warning on each used to go to webhost's log. tests/servers/workbench.py."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPDeprecationWarning

import webhost
from tests.support.fast import connected_tab
from tests.support.inprocess import sdk_server

pytestmark = pytest.mark.anyio


async def test_the_legacy_calls_webhost_makes_on_purpose_warn_nothing(tmp_path: Path) -> None:
    servers = {"workbench": sdk_server("workbench")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # every warning recorded, however often (the suite's own filter ignores these)
        async with connected_tab(tmp_path, servers, legacy=frozenset({"workbench"})) as tab:
            await tab.wait_connected("workbench")
            assert await tab.request("logging/setLevel", {"server": "workbench", "level": "error"}) == {}
            await tab.request("resources/subscribe", {"server": "workbench", "uri": "wb://counter"})
            await tab.request("resources/unsubscribe", {"server": "workbench", "uri": "wb://counter"})
            roots = [{"uri": "file:///home/ada/notes", "name": "notes"}]
            await tab.request("roots/set", {"scope": "mine", "roots": roots})
            assert (await tab.request("servers/ping", {"server": "workbench"}))["ms"] >= 0
            await tab.request("servers/reconnect", {"server": "workbench"})  # the level is given again
            await tab.wait_connected("workbench")
            roots_sent = await tab.request("tools/call", {"server": "workbench", "name": "roots", "callId": "r"})
    assert "notes" in str(roots_sent)  # the roots reached the server
    # The server runs in this process too, and its own deprecated calls warn where they are made (tests/servers).
    webhost_code = str(Path(webhost.__file__).parent)
    deprecations = [
        f"{w.filename}:{w.lineno}: {w.message}"
        for w in caught
        if issubclass(w.category, MCPDeprecationWarning) and w.filename.startswith(webhost_code)
    ]
    assert deprecations == []
