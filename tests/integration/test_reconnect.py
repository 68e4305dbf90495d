"""A remote server's connection that drops is connected again by itself, with back-off (upstream/connection.py)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import anyio
import pytest

from tests.support.process import PYTHON, SERVERS, RpcError, connected, free_port, http_process, run_webhost

pytestmark = pytest.mark.anyio

ECHO = {"server": "remote", "name": "echo"}


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_remote_server_that_restarts_is_connected_again_without_the_person_asking(
    tmp_path: Path, era: str
) -> None:
    port = free_port()
    args = [PYTHON, str(SERVERS / "basic.py"), "--http", "{port}", *(["--legacy"] if era == "legacy" else [])]
    with ExitStack() as first:
        url = first.enter_context(http_process(args, log_path=tmp_path / "first.log", port=port))
        with run_webhost(tmp_path, {"remote": {"type": "http", "url": url}}) as host:
            async with connected(host, "remote") as ws:
                assert (await ws.request("tools/call", {**ECHO, "arguments": {"text": "a"}, "callId": "1"}))["content"][
                    0
                ]["text"] == "a"
                first.close()  # the server goes away
                # The loss is seen (on the 2026-07-28 listen stream, or at the next request) and said, with the wait.
                with pytest.raises(RpcError):  # "not connected" or "Connection closed", by era
                    await ws.request("tools/call", {**ECHO, "arguments": {"text": "b"}, "callId": "2"})
                state = await ws.wait_status("remote", "error")
                assert "connecting again in" in state["error"]
                with http_process(args, log_path=tmp_path / "second.log", port=port):
                    await ws.wait_status("remote", "connected")
                    result = await ws.request("tools/call", {**ECHO, "arguments": {"text": "c"}, "callId": "3"})
                    assert result["content"][0]["text"] == "c"
                    tools = await ws.request("tools/list", {"server": "remote"})
                    assert "echo" in {tool["name"] for tool in tools["tools"]}


async def test_a_remote_server_that_cannot_be_reached_at_first_is_not_tried_again_by_itself(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with run_webhost(tmp_path, {"remote": {"type": "http", "url": url}}) as host:
        async with host.connect() as ws:
            state = await ws.wait_status("remote", "error")
            assert "connecting again" not in state["error"]
            await anyio.sleep(1.5)  # past the first two delays
            assert (await ws.wait_status("remote", "error"))["error"] == state["error"]
