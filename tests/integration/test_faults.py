"""Servers that misbehave get a clear message on that server or that call; everything else keeps working."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import anyio
import pytest

from tests.helpers import (
    PYTHON,
    RpcError,
    processes_with_marker,
    run_webhost,
    start_tool_call,
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


async def test_one_session_crashing_its_server_does_not_touch_another_session(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"crashes": faulty("crash_on_call")}) as host:
        async with host.connect() as alice, host.connect() as bob:
            await alice.wait_connected("crashes")
            await bob.wait_connected("crashes")
            with pytest.raises(RpcError):
                await alice.request("tools/call", {"server": "crashes", "name": "echo", "arguments": {"text": "x"},
                                                   "callId": "c"})
            await alice.wait_status("crashes", "error")
            assert (await bob.wait_connected("crashes"))["status"] == "connected"
            tools = await bob.request("tools/list", {"server": "crashes"})
            assert tools["tools"]


async def test_no_process_is_left_when_a_tab_closes(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"a": stdio_server("basic"), "b": faulty("normal")}) as host:
        async with host.connect() as ws:
            await ws.wait_connected("a")
            await ws.wait_connected("b")
            assert len(processes_with_marker(host.marker)) >= 2
        assert wait_for_no_processes(host.marker) == []


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


# A server written by hand (no SDK): on `tools/call` it sends the request named by the tool, waits (bounded) for
# webhost's answer and returns that answer, or null, as the tool's text.
ASKS_BADLY = r"""
import json, select, sys
ASKS = {
    "params_not_object": {"method": "sampling/createMessage", "params": "garbage"},
    "params_a_list": {"method": "elicitation/create", "params": ["garbage"]},
    "elicit_invalid": {"method": "elicitation/create", "params": {"message": 5, "requestedSchema": "nope"}},
    "sampling_invalid": {"method": "sampling/createMessage", "params": {"messages": "garbage", "maxTokens": "x"}},
}

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

def answer_to(request_id, seconds=5.0):
    while select.select([sys.stdin], [], [], seconds)[0]:
        line = sys.stdin.readline()
        if not line:
            return None
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            return message
    return None

for line in sys.stdin:
    message = json.loads(line)
    message_id, method = message.get("id"), message.get("method")
    if message_id is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "asks-badly", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in ASKS]}
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": "ask-1", **ASKS[message["params"]["name"]]})
        result = {"content": [{"type": "text", "text": json.dumps(answer_to("ask-1"))}]}
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": message_id, "error": {"code": -32601, "message": "Method not found"}})
        continue
    send({"jsonrpc": "2.0", "id": message_id, "result": result})
"""


async def test_a_malformed_server_request_is_answered_with_invalid_params(tmp_path: Path) -> None:
    """Today a request whose params are not an object failed JSON-RPC parsing and was never answered."""
    script = tmp_path / "asks_badly.py"
    script.write_text(ASKS_BADLY, encoding="utf-8")
    with run_webhost(tmp_path, {"asks": {"command": PYTHON, "args": [str(script)]}}) as host:
        async with host.connect() as ws:
            await ws.wait_connected("asks")
            for ask in ("params_not_object", "params_a_list", "elicit_invalid", "sampling_invalid"):
                result = await ws.request("tools/call", {"server": "asks", "name": ask, "arguments": {},
                                                         "callId": ask}, timeout=15)
                answer = json.loads(result["content"][0]["text"])
                assert answer is not None, f"{ask}: webhost left the server's request unanswered"
                assert answer["id"] == "ask-1" and answer["error"]["code"] == -32602, (ask, answer)
            assert (await ws.request("tools/list", {"server": "asks"}))["tools"]  # the connection lives on


async def test_sigterm_answers_the_calls_in_flight_and_exits_0(tmp_path: Path) -> None:
    """Today uvicorn closed the sockets at once (1012): the page's pending requests never got an answer."""
    with run_webhost(tmp_path, {"a": stdio_server("basic")}) as host:
        async with host.connect() as ws:
            await ws.wait_connected("a")
            call = start_tool_call(ws, "a", "slow", "slow-1", {"steps": 100, "delay": 0.2})
            await ws.wait_notification("progress", timeout=10)  # the call is running upstream
            host.proc.send_signal(signal.SIGTERM)
            response = await ws.wait_response(call, timeout=10)
            assert response["error"] == {"code": -32000, "message": "webhost is stopping",
                                         "data": {"method": "tools/call"}}
            with anyio.fail_after(10):
                while host.proc.poll() is None:
                    await anyio.sleep(0.05)
        assert host.proc.returncode == 0, host.log()
        assert wait_for_no_processes(host.marker) == []
