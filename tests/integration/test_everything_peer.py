"""The real third-party `@modelcontextprotocol/server-everything` from npm, over stdio, Streamable HTTP and SSE."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.process import (
    PEER_BIN,
    PEERS,
    WAIT,
    WsClient,
    http_process,
    peer_server,
    peers_installed,
    run_webhost,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.peers,
    pytest.mark.skipif(not peers_installed(), reason="npm peers missing: run scripts/install-test-deps"),
]


@contextlib.contextmanager
def everything(transport: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    if transport == "stdio":
        yield peer_server("mcp-server-everything", "stdio")
        return
    mode, path, kind = {"http": ("streamableHttp", "/mcp", "http"), "sse": ("sse", "/sse", "sse")}[transport]
    with http_process(
        [str(PEER_BIN / "mcp-server-everything"), mode],
        cwd=PEERS,
        path=path,
        log_path=tmp_path / f"everything-{mode}.log",
    ) as url:
        yield {"type": kind, "url": url}


async def tool_names(ws: WsClient, wanted: str) -> set[str]:
    # server-everything registers its capability-gated tools after initialization (list_changed).
    with anyio.fail_after(WAIT):
        while True:
            names = {t["name"] for t in (await ws.request("tools/list", {"server": "everything"}))["tools"]}
            if wanted in names:
                return names
            await anyio.sleep(0.2)


@pytest.mark.parametrize("transport", ["stdio", "http", "sse"])
async def test_tools_resources_prompts_logging_and_progress(transport: str, tmp_path: Path) -> None:
    with everything(transport, tmp_path) as entry, run_webhost(tmp_path, {"everything": entry}) as host:
        async with host.connect() as ws:
            state = await ws.wait_connected("everything")
            assert state["protocolVersion"] == "2025-11-25" and state["era"] == "legacy"
            names = await tool_names(ws, "trigger-elicitation-request")
            assert {"echo", "get-sum", "trigger-long-running-operation", "trigger-sampling-request"} <= names

            echoed = await ws.request(
                "tools/call", {"server": "everything", "name": "echo", "arguments": {"message": "hi"}, "callId": "e"}
            )
            assert "hi" in echoed["content"][0]["text"]

            image = await ws.request(
                "tools/call", {"server": "everything", "name": "get-tiny-image", "arguments": {}, "callId": "img"}
            )
            assert any(block["type"] == "image" for block in image["content"])

            await ws.request(
                "tools/call",
                {
                    "server": "everything",
                    "name": "trigger-long-running-operation",
                    "arguments": {"duration": 1, "steps": 4},
                    "callId": "long",
                },
                timeout=30,
            )
            progress = [
                n["params"] for n in ws.notifications if n["method"] == "progress" and n["params"]["callId"] == "long"
            ]
            assert [p["progress"] for p in progress] == [1, 2, 3, 4]

            resources = (await ws.request("resources/list", {"server": "everything"}))["resources"]
            assert any(r["uri"].startswith("demo://resource/static/document/") for r in resources)
            read = await ws.request("resources/read", {"server": "everything", "uri": resources[0]["uri"]})
            assert read["contents"][0]["text"]
            templates = (await ws.request("resources/templates/list", {"server": "everything"}))["resourceTemplates"]
            assert any("{resourceId}" in t["uriTemplate"] for t in templates)

            prompts = (await ws.request("prompts/list", {"server": "everything"}))["prompts"]
            simple = next(p for p in prompts if not any(a.get("required") for a in p.get("arguments", [])))
            got = await ws.request("prompts/get", {"server": "everything", "name": simple["name"]})
            assert got["messages"]

            await ws.request(
                "tools/call",
                {"server": "everything", "name": "toggle-simulated-logging", "arguments": {}, "callId": "log"},
            )
            log = await ws.wait_notification("server/log")
            assert log["server"] == "everything" and log["level"]
