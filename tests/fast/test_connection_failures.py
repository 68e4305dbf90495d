"""A server that cannot start, never answers or goes away: its status says why, and the others keep working."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client._memory import InMemoryTransport
from mcp.shared.message import SessionMessage

from tests.support.fast import text
from tests.support.inprocess import AsgiWsClient, in_process_host, sdk_server
from tests.support.process import RpcError
from webhost.upstream.client_factory import Transport

pytestmark = pytest.mark.anyio


def missing_command() -> Transport:
    @asynccontextmanager
    async def transport() -> AsyncIterator[Any]:
        raise FileNotFoundError(2, "No such file or directory", "/opt/nowhere/server")
        yield  # pragma: no cover

    return transport()


def silent() -> Transport:
    """Accepts what the client sends and never answers."""

    @asynccontextmanager
    async def transport() -> AsyncIterator[Any]:
        to_client, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)
        to_server, sink = anyio.create_memory_object_stream[SessionMessage](math.inf)
        async with to_client, from_server, to_server, sink:
            yield from_server, to_server

    return transport()


class Ending:
    """A real server whose connection the test ends (as a server process that exits would)."""

    def __init__(self) -> None:
        self.end = anyio.Event()

    def __call__(self) -> Transport:
        return self._transport()

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        async with InMemoryTransport(sdk_server("elicit")) as (read, write):
            to_client, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)

            async def pump() -> None:
                async with to_client, anyio.create_task_group() as inner:

                    async def stop() -> None:
                        await self.end.wait()
                        inner.cancel_scope.cancel()  # the client's read stream ends here

                    inner.start_soon(stop)
                    async for item in read:
                        await to_client.send(item)
                    inner.cancel_scope.cancel()

            async with anyio.create_task_group() as tg:
                tg.start_soon(pump)
                yield from_server, write
                tg.cancel_scope.cancel()


async def status(tab: AsgiWsClient, server: str, wanted: str) -> dict[str, Any]:
    state = await tab.wait_notification(
        "servers/status", lambda p: p["server"]["name"] == server and p["server"]["status"] == wanted
    )
    server_state: dict[str, Any] = state["server"]
    return server_state


async def test_a_server_that_cannot_start_is_an_error_and_the_others_still_work(tmp_path: Path) -> None:
    async with (
        in_process_host(tmp_path, {"basic": sdk_server("basic")}, broken={"gone": missing_command}) as host,
        host.tab() as tab,
    ):
        state = await status(tab, "gone", "error")
        assert state["error"] == "command not found: /opt/nowhere/server"
        await tab.wait_connected("basic")
        with pytest.raises(RpcError) as refused:
            await tab.request("tools/list", {"server": "gone"})
        assert refused.value.code == -32002
        assert refused.value.data == {
            "server": "gone",
            "status": "error",
            "reason": "command not found: /opt/nowhere/server",
        }
        echoed = await tab.request(
            "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": "ok"}, "callId": "c-1"}
        )
        assert text(echoed) == "ok"
        entry = await tab.wait_notification(
            "activity",
            lambda p: (
                p["entry"]["kind"] == "status" and p["entry"]["server"] == "gone" and "error" in p["entry"]["summary"]
            ),
        )
        assert entry["entry"]["summary"] == "error: command not found: /opt/nowhere/server"


async def test_a_server_that_never_answers_times_out_connecting(tmp_path: Path) -> None:
    options = {"timeouts": {"connect": 0.2}}
    async with (
        in_process_host(tmp_path, {}, broken={"mute": silent}, webhost_options=options) as host,
        host.tab() as tab,
    ):
        state = await status(tab, "mute", "error")
        assert state["error"] == "timed out connecting after 0.2 s"


async def test_disconnecting_a_server_that_is_still_connecting_stops_it(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}, broken={"mute": silent}) as host, host.tab() as tab:
        [state] = (await tab.request("servers/list"))["servers"]
        assert state["status"] == "connecting"
        answer = await tab.request("servers/disconnect", {"server": "mute"})
        assert answer["server"]["status"] == "disconnected" and answer["server"]["error"] is None


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_a_server_that_goes_away_releases_its_input_requests_and_says_so(tmp_path: Path) -> None:
    ending = Ending()
    async with in_process_host(tmp_path, {}, broken={"elicit": ending}) as host, host.tab() as tab:
        await tab.wait_connected("elicit")
        call = tab.start_request(
            "tools/call", {"server": "elicit", "name": "form_full", "arguments": {}, "callId": "c-form"}
        )
        request = await tab.wait_notification("elicitation/request")
        ending.end.set()
        state = await status(tab, "elicit", "error")
        assert state["error"] == "the server closed the connection"
        resolved = await tab.wait_notification("elicitation/resolved", lambda p: p["id"] == request["id"])
        assert resolved["outcome"] == "released"
        assert "error" in await tab.wait_response(call)
        # Reconnecting brings it back.
        await tab.request("servers/reconnect", {"server": "elicit"})
        await status(tab, "elicit", "connected")
