"""A remote server that goes away while nothing is asked of it is noticed by the connection's keep-alive ping and
connected again once it is back (upstream/liveness.py); here on the legacy era, which has no listen stream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server import MCPServer

from tests.servers._support import _refuse_discover
from tests.support.asgi_server import serving
from tests.support.inprocess import in_process_host
from tests.support.process import free_port
from webhost.upstream import liveness

pytestmark = pytest.mark.anyio


def legacy_server() -> MCPServer:
    server = MCPServer("remote")

    @server.tool()
    def echo(text: str) -> str:
        return text

    server.middleware.insert(0, _refuse_discover)  # initialize only: no 2026-07-28 listen stream
    return server


def remote_app() -> Any:
    return legacy_server().streamable_http_app()


async def test_an_idle_remote_connection_notices_its_server_went_away_and_connects_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(liveness, "KEEP_ALIVE_SECONDS", 0.3)
    port = free_port()
    entries = {"remote": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}
    up, stop, gone = anyio.Event(), anyio.Event(), anyio.Event()

    async def first_server() -> None:
        async with serving(remote_app(), port, timeout_graceful_shutdown=1):
            up.set()
            await stop.wait()
        gone.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(first_server)
        await up.wait()
        async with in_process_host(tmp_path, {}, entries=entries) as host, host.tab() as tab:
            assert (await tab.wait_connected("remote"))["era"] == "legacy"
            stop.set()  # the server goes away; nothing is asked of it
            await gone.wait()
            state = await tab.wait_status("remote", "error")
            assert "connecting again in" in state["error"]
            async with serving(remote_app(), port, timeout_graceful_shutdown=1):
                await tab.wait_status("remote", "connected")
                result = await tab.request(
                    "tools/call", {"server": "remote", "name": "echo", "arguments": {"text": "back"}, "callId": "c"}
                )
                assert result["content"][0]["text"] == "back"
