"""Servers that misbehave get a clear message on that server or that call; everything else keeps working."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from tests.helpers import (
    RpcError,
    processes_with_marker,
    run_webhost,
    stdio_server,
    wait_for_no_processes,
)

pytestmark = pytest.mark.anyio


def faulty(mode: str, *extra: str) -> dict[str, object]:
    return stdio_server("faulty", mode, *extra)


async def test_each_fault_stays_on_its_own_server(tmp_path: Path) -> None:
    servers = {
        "good": stdio_server("basic"),
        "exits": faulty("exit_at_start"),
        "missing": {"command": "/nonexistent/definitely-not-here"},
        "garbage": faulty("garbage"),
        "crashes": faulty("crash_on_call"),
        "no-type": faulty("no_result_type"),
        "slow": faulty("slow_start", "30"),
    }
    options = {"timeouts": {"connect": 3, "call": 5}}
    with run_webhost(tmp_path, servers, webhost_options=options) as host:
        async with host.connect() as ws:
            await ws.wait_connected("good")
            exits = await ws.wait_status("exits", "error")
            assert "exited with status 3" in exits["error"] or "closed" in exits["error"]
            missing = await ws.wait_status("missing", "error")
            assert missing["error"] == "command not found: /nonexistent/definitely-not-here"
            slow = await ws.wait_status("slow", "error", timeout=15)
            assert slow["error"] == "timed out connecting after 3 s"

            await ws.wait_connected("garbage")
            echoed = await ws.request("tools/call", {"server": "garbage", "name": "echo",
                                                     "arguments": {"text": "through the noise"}, "callId": "g"})
            assert "through the noise" in echoed["content"][0]["text"]

            await ws.wait_connected("no-type")
            with pytest.raises(RpcError) as invalid:
                await ws.request("tools/call", {"server": "no-type", "name": "echo", "arguments": {"text": "x"},
                                                "callId": "n"})
            assert "invalid result" in str(invalid.value.message)

            await ws.wait_connected("crashes")
            with pytest.raises(RpcError) as crashed:
                await ws.request("tools/call", {"server": "crashes", "name": "echo", "arguments": {"text": "x"},
                                                "callId": "c"})
            assert crashed.value.code in (-32000, -32002)
            state = await ws.wait_status("crashes", "error")
            assert state["error"].startswith("the server exited with status 1")

            # The healthy server never noticed.
            result = await ws.request("tools/call", {"server": "good", "name": "echo", "arguments": {"text": "ok"},
                                                     "callId": "ok"})
            assert result["content"][0]["text"] == "ok"
            with pytest.raises(RpcError) as not_connected:
                await ws.request("tools/list", {"server": "exits"})
            assert not_connected.value.code == -32002


NODE_CRASH = """node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module '/srv/missing/index.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.20.2
"""


async def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    python = sys.executable
    servers = {
        "exits": faulty("exit_at_start"),
        "node": {"command": python, "args": ["-c", f"import sys; sys.stderr.write({NODE_CRASH!r}); sys.exit(1)"]},
        "traceback": {"command": python, "args": ["-c", "import definitely_not_a_module"]},
        "no-cwd": {**stdio_server("basic"), "cwd": str(tmp_path / "no-such-folder")},
    }
    with run_webhost(tmp_path, servers) as host:
        async with host.connect() as ws:
            states = {name: await ws.wait_status(name, "error") for name in servers}
    assert states["exits"]["error"] == ("the server exited with status 3 "
                                        "(stderr: faulty: exiting at start with status 3 (mode exit_at_start))")
    assert states["node"]["error"] == ("the server exited with status 1 "
                                       "(stderr: Error: Cannot find module '/srv/missing/index.js')")
    assert states["traceback"]["error"] == ("the server exited with status 1 "
                                            "(stderr: ModuleNotFoundError: No module named 'definitely_not_a_module')")
    assert states["no-cwd"]["error"] == f"working directory not found: {tmp_path / 'no-such-folder'}"


async def test_a_failed_server_can_be_reconnected_from_the_page(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"crashes": faulty("crash_on_call")}) as host:
        async with host.connect() as ws:
            await ws.wait_connected("crashes")
            with pytest.raises(RpcError):
                await ws.request("tools/call", {"server": "crashes", "name": "echo", "arguments": {"text": "x"},
                                                "callId": "c"})
            await ws.wait_status("crashes", "error")
            state = (await ws.request("servers/reconnect", {"server": "crashes"}))["server"]
            assert state["status"] in ("connecting", "connected")
            await ws.wait_connected("crashes")


async def test_a_crash_reaches_every_tab_of_its_person_and_one_reconnect_serves_them_all(tmp_path: Path) -> None:
    """One connection per (person, server): the person's tabs share it, so they share its fate too."""
    with run_webhost(tmp_path, {"crashes": faulty("crash_on_call")}) as host:
        async with host.connect() as first, host.connect() as second:
            await first.wait_connected("crashes")
            await second.wait_connected("crashes")
            with pytest.raises(RpcError):
                await first.request("tools/call", {"server": "crashes", "name": "echo", "arguments": {"text": "x"},
                                                   "callId": "c"})
            await first.wait_status("crashes", "error")
            await second.wait_status("crashes", "error")
            await second.request("servers/reconnect", {"server": "crashes"})
            assert (await first.wait_connected("crashes"))["status"] == "connected"
            tools = await second.request("tools/list", {"server": "crashes"})
            assert tools["tools"]


async def test_no_process_is_left_when_a_tab_closes(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"a": stdio_server("basic"), "b": faulty("normal")},
                     webhost_options={"timeouts": {"idle": 0}}) as host:
        async with host.connect() as ws:
            await ws.wait_connected("a")
            await ws.wait_connected("b")
            assert len(processes_with_marker(host.marker)) >= 2
        assert wait_for_no_processes(host.marker) == []


async def test_a_reload_keeps_the_servers_and_the_idle_time_then_reaps_them(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"a": stdio_server("basic")}, webhost_options={"timeouts": {"idle": 2}}) as host:
        async with host.connect() as tab:
            await tab.wait_connected("a")
            before = processes_with_marker(host.marker)
            assert before
        async with host.connect() as reloaded:  # within the idle time: the same processes serve the new tab
            assert (await reloaded.wait_connected("a"))["status"] == "connected"
            assert processes_with_marker(host.marker) == before
        assert wait_for_no_processes(host.marker) == []  # after the idle time, nothing is left


async def test_no_process_is_left_when_a_server_is_disconnected(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"a": stdio_server("basic")}) as host:
        async with host.connect() as ws:
            await ws.wait_connected("a")
            state = (await ws.request("servers/disconnect", {"server": "a"}))["server"]
            assert state["status"] == "disconnected"
            assert wait_for_no_processes(host.marker) == []
            with pytest.raises(RpcError) as refused:
                await ws.request("tools/list", {"server": "a"})
            assert refused.value.code == -32002


async def test_no_process_is_left_when_webhost_stops(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"a": stdio_server("basic"), "b": stdio_server("basic", "--legacy")}) as host:
        async with host.connect() as ws:
            await ws.wait_connected("a")
            await ws.wait_connected("b")
            host.proc.send_signal(signal.SIGTERM)
            with anyio.fail_after(15):
                while host.proc.poll() is None:
                    await anyio.sleep(0.1)
        assert wait_for_no_processes(host.marker) == []
    assert os.environ.get("WEBHOST_TEST_MARKER") != host.marker
