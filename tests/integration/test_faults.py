"""Servers that misbehave get a clear message on that server or that call; everything else keeps working."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from tests.support.process import (
    PYTHON,
    WAIT,
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
        "slow": faulty("slow_start", "120"),
    }
    # A connect bound a loaded machine cannot reach for a good server (3 s was, under two CPU burners).
    options = {"timeouts": {"connect": 10, "call": 5}}
    with run_webhost(tmp_path, servers, webhost_options=options) as host:
        async with host.connect() as ws:
            await ws.wait_connected("good")
            exits = await ws.wait_status("exits", "error")
            assert "exited with status 3" in exits["error"] or "closed" in exits["error"]
            missing = await ws.wait_status("missing", "error")
            assert missing["error"] == "command not found: /nonexistent/definitely-not-here"
            slow = await ws.wait_status("slow", "error")
            assert slow["error"] == "timed out connecting after 10 s"

            await ws.wait_connected("garbage")
            echoed = await ws.request(
                "tools/call",
                {"server": "garbage", "name": "echo", "arguments": {"text": "through the noise"}, "callId": "g"},
            )
            assert "through the noise" in echoed["content"][0]["text"]

            await ws.wait_connected("no-type")
            with pytest.raises(RpcError) as invalid:
                await ws.request(
                    "tools/call", {"server": "no-type", "name": "echo", "arguments": {"text": "x"}, "callId": "n"}
                )
            assert "invalid result" in str(invalid.value.message)

            await ws.wait_connected("crashes")
            with pytest.raises(RpcError) as crashed:
                await ws.request(
                    "tools/call", {"server": "crashes", "name": "echo", "arguments": {"text": "x"}, "callId": "c"}
                )
            assert crashed.value.code in (-32000, -32002)
            state = await ws.wait_status("crashes", "error")
            assert state["error"].startswith("the server exited with status 1")

            # The healthy server never noticed.
            result = await ws.request(
                "tools/call", {"server": "good", "name": "echo", "arguments": {"text": "ok"}, "callId": "ok"}
            )
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
    assert states["exits"]["error"] == (
        "the server exited with status 3 (stderr: faulty: exiting at start with status 3 (mode exit_at_start))"
    )
    assert states["node"]["error"] == (
        "the server exited with status 1 (stderr: Error: Cannot find module '/srv/missing/index.js')"
    )
    assert states["traceback"]["error"] == (
        "the server exited with status 1 (stderr: ModuleNotFoundError: No module named 'definitely_not_a_module')"
    )
    assert states["no-cwd"]["error"] == f"working directory not found: {tmp_path / 'no-such-folder'}"


async def test_a_failed_server_can_be_reconnected_from_the_page(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"crashes": faulty("crash_on_call")}) as host:
        async with host.connect() as ws:
            await ws.wait_connected("crashes")
            with pytest.raises(RpcError):
                await ws.request(
                    "tools/call", {"server": "crashes", "name": "echo", "arguments": {"text": "x"}, "callId": "c"}
                )
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
                await first.request(
                    "tools/call", {"server": "crashes", "name": "echo", "arguments": {"text": "x"}, "callId": "c"}
                )
            await first.wait_status("crashes", "error")
            await second.wait_status("crashes", "error")
            await second.request("servers/reconnect", {"server": "crashes"})
            assert (await first.wait_connected("crashes"))["status"] == "connected"
            tools = await second.request("tools/list", {"server": "crashes"})
            assert tools["tools"]


async def test_no_process_is_left_when_a_tab_closes(tmp_path: Path) -> None:
    with run_webhost(
        tmp_path, {"a": stdio_server("basic"), "b": faulty("normal")}, webhost_options={"timeouts": {"idle": 0}}
    ) as host:
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
            with anyio.fail_after(WAIT):
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
                result = await ws.request(
                    "tools/call", {"server": "asks", "name": ask, "arguments": {}, "callId": ask}, timeout=15
                )
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
            await ws.wait_notification("progress")  # the call is running upstream
            host.proc.send_signal(signal.SIGTERM)
            response = await ws.wait_response(call)
            assert response["error"] == {
                "code": -32005,
                "message": "webhost is stopping",
                "data": {"method": "tools/call"},
            }
            with anyio.fail_after(WAIT):
                while host.proc.poll() is None:
                    await anyio.sleep(0.05)
        assert host.proc.returncode == 0, host.log()
        assert wait_for_no_processes(host.marker) == []


# Serves as `faulty.py normal`, but first starts a grandchild that leaves the process group (`setsid()`), records
# both pids, and never leaves on end of input: after stdin closes it sleeps on.
STUBBORN_FAMILY = r"""
import os, runpy, subprocess, sys, time
pids_file, faulty, escape = sys.argv[1], sys.argv[2], sys.argv[3] == "setsid"
pids = [os.getpid()]
if escape:
    child = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(300)"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pids.append(child.pid)
with open(pids_file + ".tmp", "w") as out:
    out.write(" ".join(map(str, pids)))
os.replace(pids_file + ".tmp", pids_file)
sys.argv = [faulty, "normal"]
runpy.run_path(faulty, run_name="__main__")
while True:
    time.sleep(1)
"""


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


async def _read_pids(path: Path, count: int) -> list[int]:
    with anyio.fail_after(WAIT):
        while len(words := (path.read_text().split() if path.exists() else [])) != count:
            await anyio.sleep(0.02)
    return [int(word) for word in words]


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death supervisor is Linux only")
async def test_sigkill_of_webhost_takes_its_servers_and_their_escaped_children_along(tmp_path: Path) -> None:
    """Today the servers were orphaned: one ignoring end of input and a `setsid()` grandchild lived on."""
    script = tmp_path / "stubborn_family.py"
    script.write_text(STUBBORN_FAMILY, encoding="utf-8")
    faulty_py = str(Path(stdio_server("faulty")["args"][0]))
    servers = {
        "escapes": {"command": PYTHON, "args": [str(script), str(tmp_path / "escapes.pids"), faulty_py, "setsid"]},
        "stays": {"command": PYTHON, "args": [str(script), str(tmp_path / "stays.pids"), faulty_py, "-"]},
    }
    with run_webhost(tmp_path, servers) as host:
        async with host.connect() as ws:
            await ws.wait_connected("escapes")
            await ws.wait_connected("stays")
            pids = await _read_pids(tmp_path / "escapes.pids", 2) + await _read_pids(tmp_path / "stays.pids", 1)
            assert all(_alive(pid) for pid in pids)
            host.proc.send_signal(signal.SIGKILL)
            with anyio.fail_after(WAIT):
                while host.proc.poll() is None:
                    await anyio.sleep(0.05)
        with anyio.fail_after(WAIT):
            while any(_alive(pid) for pid in pids):
                await anyio.sleep(0.05)
        assert wait_for_no_processes(host.marker) == []


# Ignores SIGTERM (before anything else) and end of input; records its pid, then serves as `faulty.py normal`.
DEAF_SERVER = r"""
import os, runpy, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
pids_file, faulty = sys.argv[1], sys.argv[2]
with open(pids_file + ".tmp", "w") as out:
    out.write(str(os.getpid()))
os.replace(pids_file + ".tmp", pids_file)
sys.argv = [faulty, "normal"]
runpy.run_path(faulty, run_name="__main__")
signal.pause()
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death supervisor is Linux only")
async def test_a_server_deaf_to_sigterm_and_end_of_input_is_gone_after_webhost_is_sigkilled(tmp_path: Path) -> None:
    """Its supervisor used to block for good on its wake-up pipe once the grace period ran out (3 of 3 alive
    after 22 s): the server outlived webhost, reparented to PID 1."""
    script = tmp_path / "deaf.py"
    script.write_text(DEAF_SERVER, encoding="utf-8")
    faulty_py = str(Path(stdio_server("faulty")["args"][0]))
    servers = {"deaf": {"command": PYTHON, "args": [str(script), str(tmp_path / "deaf.pids"), faulty_py]}}
    with run_webhost(tmp_path, servers) as host:
        async with host.connect() as ws:
            await ws.wait_connected("deaf")
            pids = await _read_pids(tmp_path / "deaf.pids", 1)
            host.proc.send_signal(signal.SIGKILL)
            with anyio.fail_after(WAIT):
                while host.proc.poll() is None:
                    await anyio.sleep(0.05)
        with anyio.fail_after(WAIT):
            while any(_alive(pid) for pid in pids):
                await anyio.sleep(0.05)
        assert wait_for_no_processes(host.marker) == []
