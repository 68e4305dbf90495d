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


class PingsWaitBehindCalls:
    """In front of the server: every `ping` is held until `release` (a busy server's ping, queued behind the calls
    it is answering), and `pings` counts them; every other request goes through at once."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.pings = 0
        self.seen = [anyio.Event(), anyio.Event()]  # the first and the second ping arrived
        self.release = anyio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if b'"method":"ping"' in body.replace(b" ", b""):
            self.pings += 1
            self.seen[min(self.pings, 2) - 1].set()
            await self.release.wait()
        delivered = False

        async def replay() -> Any:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def test_a_busy_server_whose_ping_waits_behind_its_answers_is_not_declared_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under load (200 sessions on one shared server, issue 24) a ping could time out while the server kept
    answering calls; the connection was then ended under every call in flight ("Connection closed")."""
    monkeypatch.setattr(liveness, "KEEP_ALIVE_SECONDS", 0.2)
    monkeypatch.setattr(liveness, "PING_TIMEOUT_SECONDS", 2.0)
    port = free_port()
    entries = {"remote": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}
    front = PingsWaitBehindCalls(remote_app())
    async with serving(front, port, timeout_graceful_shutdown=1):
        async with in_process_host(tmp_path, {}, entries=entries) as host, host.tab() as tab:
            await tab.wait_connected("remote")
            await front.seen[0].wait()  # idle: the keep-alive pinged, and the ping waits
            asked = anyio.current_time()
            calls = 0
            # The server answers calls all through the ping's timeout, and past it.
            while calls < 3 or anyio.current_time() < asked + liveness.PING_TIMEOUT_SECONDS + 0.5:
                result = await tab.request(
                    "tools/call",
                    {"server": "remote", "name": "echo", "arguments": {"text": f"c{calls}"}, "callId": f"c{calls}"},
                )
                assert result["content"][0]["text"] == f"c{calls}"
                calls += 1
            await front.seen[1].wait()  # quiet again: the next ping, on the same connection
            assert (await tab.request("servers/list"))["servers"][0]["status"] == "connected"
            # The connection never left `connected` (a drop would have been told as `error`, then `connecting`).
            told = [n["params"]["server"]["status"] for n in tab.notifications if n["method"] == "servers/status"]
            assert "error" not in told and "connecting" not in told[told.index("connected") :]
            front.release.set()
