"""webhost's stdio transport against real processes: big results, garbage, exits, and no process left behind."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import TextContent

import webhost.upstream.stdio as stdio
from tests.support.process import PYTHON, SERVERS
from webhost.upstream.stdio import LineSplitter, stdio_transport

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(sys.platform == "win32", reason="POSIX transport")]

# A hang guard for waits on real processes, far above any of the transport's own bounds.
GUARD = 30


def server(script: str, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=PYTHON, args=[str(SERVERS / f"{script}.py"), *args])


def script(tmp_path: Path, name: str, body: str, *args: str) -> StdioServerParameters:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return StdioServerParameters(command=PYTHON, args=[str(path), *args])


def all_gone(pids: list[int], bound: float = GUARD) -> bool:
    """Whether every pid is gone within a bound that only a leak reaches (a killed process can take a moment to
    leave under load)."""
    deadline = time.monotonic() + bound
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie (an orphan's reaper may be slow or absent in containers)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: fall back to a signal probe
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return "State:\tZ" not in status


async def read_pids(path: Path, count: int) -> list[int]:
    with anyio.fail_after(GUARD):
        while True:
            words = path.read_text().split() if path.exists() else []
            if len(words) == count:
                return [int(word) for word in words]
            await anyio.sleep(0.02)


# Spawns a grandchild, records both pids, then serves as `faulty.py normal`.
FAMILY = """
    import os, runpy, subprocess, sys
    pids_file, faulty = sys.argv[1], sys.argv[2]
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL)
    with open(pids_file + ".tmp", "w") as out:
        out.write(f"{os.getpid()} {child.pid}")
    os.replace(pids_file + ".tmp", pids_file)
    sys.argv = [faulty, "normal"]
    runpy.run_path(faulty, run_name="__main__")
"""


async def test_a_10_mb_result_arrives_intact_and_is_read_in_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    splitters: list[LineSplitter] = []

    class Recorded(LineSplitter):
        def __init__(self) -> None:
            super().__init__()
            splitters.append(self)

    monkeypatch.setattr(stdio, "LineSplitter", Recorded)
    size = 10 * 1024 * 1024
    async with Client(stdio_transport(server("basic"))) as client:
        result = await client.call_tool("big", {"size_bytes": size})
    line = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_0123456789abcdefghijklmnopqrstuv\n"
    expected = (line * (size // len(line) + 1))[:size]
    assert isinstance(result.content[0], TextContent)
    assert result.content[0].text == expected
    [splitter] = splitters
    assert splitter.fed > 2 * size  # the JSON line escapes every newline of the text
    assert splitter.scanned == splitter.fed
    assert splitter.copied <= 2 * splitter.fed


async def test_garbage_on_stdout_is_surfaced_and_the_session_continues() -> None:
    surfaced: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            surfaced.append(message)

    async with Client(stdio_transport(server("faulty", "garbage")), message_handler=on_message) as client:
        for text in ("through the noise", "and again"):
            result = await client.call_tool("echo", {"text": text})
            assert isinstance(result.content[0], TextContent)
            assert result.content[0].text == text
    assert surfaced
    assert all(isinstance(exc, ValueError) for exc in surfaced)


async def test_utf8_split_across_reads_is_decoded(tmp_path: Path) -> None:
    params = script(
        tmp_path,
        "split",
        """
        import json, sys, time
        raw = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "h\u00e9llo \U0001f600"}}, ensure_ascii=False).encode()
        cut = raw.index("\u00e9".encode()) + 1
        sys.stdout.buffer.write(raw[:cut]); sys.stdout.flush()
        time.sleep(0.2)
        sys.stdout.buffer.write(raw[cut:] + b"\\n"); sys.stdout.flush()
        sys.stdin.read()
    """,
    )
    async with stdio_transport(params) as (read_stream, _write_stream):
        with anyio.fail_after(GUARD):
            message = await read_stream.receive()
    assert not isinstance(message, Exception)
    assert message.message.model_dump()["params"]["data"] == "h\u00e9llo \U0001f600"


async def test_server_and_its_children_are_gone_after_the_client_exits(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    params = script(tmp_path, "family", FAMILY, str(pids_file), str(SERVERS / "faulty.py"))
    exits: list[int] = []
    async with Client(stdio_transport(params, on_exit=exits.append)) as client:
        await client.list_tools()
        pids = await read_pids(pids_file, 2)
        assert all(alive(pid) for pid in pids)
    # The server exits cleanly on stdin EOF; the grandchild would outlive it without the group kill.
    assert all_gone(pids)
    assert exits == []  # an exit that shutdown caused is not reported


async def test_server_and_its_children_are_gone_after_the_owner_is_cancelled(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    params = script(tmp_path, "family", FAMILY, str(pids_file), str(SERVERS / "faulty.py"))
    connected = anyio.Event()

    async def own() -> None:
        async with Client(stdio_transport(params)) as client:
            await client.list_tools()
            connected.set()
            await anyio.sleep_forever()

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(own)
            await connected.wait()
            pids = await read_pids(pids_file, 2)
            assert all(alive(pid) for pid in pids)
            tg.cancel_scope.cancel()
    assert all_gone(pids)


async def test_a_server_ignoring_sigterm_is_killed_with_its_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stdio, "PROCESS_TERMINATION_TIMEOUT", 0.2)
    monkeypatch.setattr(stdio, "FORCE_KILL_TIMEOUT", 0.3)
    pids_file = tmp_path / "pids"
    # SIG_IGN survives exec, so the grandchild ignores SIGTERM too; neither leaves on stdin EOF.
    params = script(
        tmp_path,
        "stubborn",
        """
        import os, signal, subprocess, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen(["sleep", "300"])
        with open(sys.argv[1] + ".tmp", "w") as out:
            out.write(f"{os.getpid()} {child.pid}")
        os.replace(sys.argv[1] + ".tmp", sys.argv[1])
        sys.stdin.read()
        while True:
            time.sleep(1)
    """,
        str(pids_file),
    )
    exits: list[int] = []
    with anyio.fail_after(GUARD):
        async with stdio_transport(params, on_exit=exits.append):
            pids = await read_pids(pids_file, 2)
    assert all_gone(pids)
    assert exits == []


async def test_exit_at_start_reports_its_status(tmp_path: Path) -> None:
    exits: list[int] = []
    with (tmp_path / "stderr").open("w") as errlog:
        with pytest.raises(Exception) as failed:  # the SDK wraps "connection closed" in groups
            async with Client(stdio_transport(server("faulty", "exit_at_start"), errlog, on_exit=exits.append)):
                pass
    assert "Connection closed" in repr(failed.value)
    assert exits == [3]


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polling"])
async def test_a_crash_mid_session_is_reported_while_the_client_is_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pidfd: bool
) -> None:
    if not pidfd:
        monkeypatch.setattr(stdio, "_open_pidfd", lambda pid: None)
    exits: list[int] = []
    exited = anyio.Event()

    def on_exit(returncode: int) -> None:
        exits.append(returncode)
        exited.set()

    with (tmp_path / "stderr").open("w") as errlog:
        async with Client(stdio_transport(server("faulty", "crash_on_call"), errlog, on_exit=on_exit)) as client:
            with pytest.raises(MCPError):
                await client.call_tool("echo", {"text": "x"})
            with anyio.fail_after(GUARD):
                await exited.wait()  # before the Client exits: the watcher, not shutdown, reported it
    assert exits == [1]


async def test_a_raising_exit_callback_is_logged_and_shutdown_completes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def on_exit(returncode: int) -> None:
        raise RuntimeError("callback bug")

    params = script(tmp_path, "quits", "import sys; sys.exit(7)\n")
    with anyio.fail_after(GUARD):
        async with stdio_transport(params, on_exit=on_exit) as (read_stream, _write_stream):
            with pytest.raises(anyio.EndOfStream):
                await read_stream.receive()
    assert "on_exit callback" in caplog.text


@pytest.mark.parametrize("supervised", [True, False], ids=["supervised", "unsupervised"])
async def test_exit_is_reported_even_while_a_child_holds_stdout_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, supervised: bool
) -> None:
    monkeypatch.setattr(stdio, "SUPERVISE", supervised)
    pids_file = tmp_path / "pids"
    # The grandchild inherits stdout, so the reader sees no EOF: only the exit watcher can tell.
    params = script(
        tmp_path,
        "orphaning",
        """
        import os, subprocess, sys
        child = subprocess.Popen(["sleep", "300"])
        with open(sys.argv[1] + ".tmp", "w") as out:
            out.write(f"{os.getpid()} {child.pid}")
        os.replace(sys.argv[1] + ".tmp", sys.argv[1])
        sys.exit(5)
        """,
        str(pids_file),
    )
    exits: list[int] = []
    exited = anyio.Event()

    def on_exit(returncode: int) -> None:
        exits.append(returncode)
        exited.set()

    with anyio.fail_after(GUARD):
        async with stdio_transport(params, on_exit=on_exit):
            await exited.wait()
            pids = await read_pids(pids_file, 2)
            # The supervisor kills the leftovers as the server exits; without it they live until shutdown.
            assert alive(pids[1]) != supervised
    assert exits == [5]
    assert all_gone(pids)


async def test_a_request_that_cannot_be_encoded_fails_alone_and_the_connection_lives_on() -> None:
    """A lone surrogate in arguments (no UTF-8 for it) fails that request; today it ended the whole connection."""
    with anyio.fail_after(GUARD):
        async with Client(stdio_transport(server("basic")), mode="legacy") as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("echo", {"text": "bad \ud800 text"})
            assert refused.value.code == -32602 and "could not encode" in refused.value.error.message
            result = await client.call_tool("echo", {"text": "still here"})
            assert isinstance(result.content[0], TextContent) and result.content[0].text == "still here"


@pytest.mark.skipif(sys.platform != "linux", reason="the supervisor is Linux only")
async def test_a_grandchild_that_left_the_group_is_gone_after_shutdown(tmp_path: Path) -> None:
    """The group kill cannot reach a `setsid()` grandchild; the supervisor, its subreaper, can."""
    pids_file = tmp_path / "pids"
    params = script(
        tmp_path,
        "escaping",
        """
        import os, subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(300)"])
        with open(sys.argv[1] + ".tmp", "w") as out:
            out.write(f"{os.getpid()} {child.pid}")
        os.replace(sys.argv[1] + ".tmp", sys.argv[1])
        sys.stdin.read()
        """,
        str(pids_file),
    )
    with anyio.fail_after(GUARD):
        async with stdio_transport(params):
            pids = await read_pids(pids_file, 2)
            assert all(alive(pid) for pid in pids)
    assert all_gone(pids)
