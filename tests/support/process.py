"""Test support for the subprocess suites: start `webhost serve` as a real process, talk to it like the page."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import websockets
from websockets.asyncio.client import ClientConnection

from tests.support.chat_options import scripted_chat
from webhost.testing.host import Webhost as KitWebhost
from webhost.testing.host import free_port as free_port  # one copy, shared with the kit
from webhost.testing.host import start_webhost

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "servers"
PEERS = ROOT / "tests" / "peers"
PEER_BIN = PEERS / "node_modules" / ".bin"
PYTHON = sys.executable
# How long a test waits for an answer, a notification or a state before it fails: a bound that only turns a hang
# into a failure naming what was awaited, far above what any wait takes on a loaded machine (pytest-timeout's 120 s
# per test is the last one). Tests wait for events, never for a time.
WAIT = 60.0


def stdio_server(script: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """A config entry running one of our test servers (tests/servers/SCRIPT.py) over stdio."""
    entry: dict[str, Any] = {"command": PYTHON, "args": [str(SERVERS / f"{script}.py"), *args]}
    if env:
        entry["env"] = env
    return entry


def peer_server(bin_name: str, *args: str) -> dict[str, Any]:
    return {"command": str(PEER_BIN / bin_name), "args": list(args), "cwd": str(PEERS)}


def peers_installed() -> bool:
    return (PEER_BIN / "mcp-server-everything").exists()


@dataclass
class Webhost(KitWebhost):
    """A running `webhost serve` subprocess (the kit's), tagged with the marker its server processes carry."""

    marker: str = ""

    @classmethod
    def of(cls, host: KitWebhost, marker: str) -> Webhost:
        return cls(**{f.name: getattr(host, f.name) for f in dataclasses.fields(host)}, marker=marker)

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, headers={"Authorization": f"Bearer {self.token}"})

    def connect(self) -> WsClient:
        return WsClient(self.ws_url, self.token, self.base_url)


def marked_env(marker: str) -> dict[str, str]:
    """An env entry that tags every server process this webhost starts, to find leftovers."""
    return {"WEBHOST_TEST_MARKER": marker}


def processes_with_marker(marker: str) -> list[int]:
    """PIDs whose environment carries the marker (Linux /proc; we run as the same user)."""
    found = []
    needle = f"WEBHOST_TEST_MARKER={marker}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                status = (entry / "status").read_text()
                if "State:\tZ" not in status:
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def wait_for_no_processes(marker: str, timeout: float = 60.0) -> list[int]:
    """The marked processes still alive once none are, or after `timeout` (which only a leak reaches)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = processes_with_marker(marker)
        if not left:
            return []
        time.sleep(0.1)
    return processes_with_marker(marker)


@contextlib.contextmanager
def run_webhost(
    tmp_path: Path,
    servers: dict[str, Any] | None,
    *,
    webhost_options: dict[str, Any] | None = None,
    extra_args: list[str] | None = None,
    env: dict[str, str] | None = None,
    port: int | None = None,
    inputs: list[dict[str, Any]] | None = None,
    data_dir: Path | None = None,
    token: str | None = None,
) -> Iterator[Webhost]:
    """Start `python -m webhost serve` on free ports (or on `port`); `servers=None` runs the embedded demo;
    `inputs` is the configuration's top-level "inputs" list. Replicas share a `data_dir` (database and
    secret) and a `token`."""
    marker = secrets.token_hex(8)
    document: dict[str, Any] | None = None
    if servers is not None:
        for entry in servers.values():
            if "command" in entry:
                entry.setdefault("env", {}).update(marked_env(marker))
        document = {"mcpServers": servers}
        if webhost_options:
            document["webhost"] = scripted_chat(webhost_options)
        if inputs is not None:
            document["inputs"] = inputs
    with start_webhost(
        document,
        directory=tmp_path,
        token=token,
        args=["--log-level", "info", *(extra_args or [])],
        env=env,
        port=port,
        data_dir=data_dir or tmp_path / f"data-{marker}",
        cwd=ROOT,
        stop_timeout=15,
        # No time limit of its own: a busy machine only makes the start slower; a hang is pytest-timeout's.
        start_timeout=math.inf,
    ) as host:
        yield Webhost.of(host, marker)


def notifications_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A received notification as the tests read it: webhost coalesces activity entries into one `activity`
    frame holding `{"entries": [...]}` (webhost/outbox.py); each entry is recorded as its own
    `activity` notification with `{"entry": ...}`, in order, so tests look entries up one by one."""
    if message.get("method") == "activity" and isinstance(message.get("params", {}).get("entries"), list):
        return [
            {"jsonrpc": "2.0", "method": "activity", "params": {"entry": entry}}
            for entry in message["params"]["entries"]
        ]
    return [message]


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code: Any = error.get("code")
        self.message: Any = error.get("message")
        self.data: Any = error.get("data")


class WsClient:
    """An async JSON-RPC client for /ws, the way the page uses it."""

    def __init__(self, url: str, token: str, origin: str) -> None:
        self.url, self.token, self.origin = url, token, origin
        self.notifications: list[dict[str, Any]] = []
        self._responses: dict[Any, dict[str, Any]] = {}
        self._next_id = 0
        self._ws: ClientConnection | None = None
        self._changed = anyio.Event()
        self._tg: Any = None

    async def __aenter__(self) -> WsClient:
        self._ws = await websockets.connect(
            self.url,
            additional_headers={"Authorization": f"Bearer {self.token}"},
            origin=self.origin,  # type: ignore[arg-type]
            max_size=None,
            open_timeout=10,
        )
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._reader)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._ws is not None
        await self._ws.close()
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)

    async def _reader(self) -> None:
        assert self._ws is not None
        with contextlib.suppress(websockets.ConnectionClosed):
            async for text in self._ws:
                message = json.loads(text)
                if "id" in message and ("result" in message or "error" in message):
                    self._responses[message["id"]] = message
                else:
                    self.notifications.extend(notifications_of(message))
                self._changed.set()
                self._changed = anyio.Event()

    async def send_raw(self, text: str) -> None:
        assert self._ws is not None
        await self._ws.send(text)

    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = WAIT) -> Any:
        response = await self.request_raw(method, params, timeout=timeout)
        if "error" in response:
            raise RpcError(response["error"])
        return response["result"]

    async def request_raw(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = WAIT) -> Any:
        self._next_id += 1
        request_id = self._next_id
        await self.send_raw(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}))
        return await self.wait_response(request_id, timeout=timeout)

    def start_request(self, method: str, params: dict[str, Any] | None = None) -> int:
        """Send without waiting (for calls that will be cancelled or answered later)."""
        self._next_id += 1
        request_id = self._next_id
        assert self._tg is not None
        self._tg.start_soon(
            self.send_raw, json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        )
        return request_id

    async def wait_response(self, request_id: Any, *, timeout: float = WAIT) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while request_id not in self._responses:
                await self._changed.wait()
        return self._responses.pop(request_id)

    async def wait_notification(
        self, method: str, predicate: Any = None, *, timeout: float = WAIT, consume: bool = True
    ) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while True:
                for index, message in enumerate(self.notifications):
                    if message.get("method") == method and (predicate is None or predicate(message["params"])):
                        if consume:
                            del self.notifications[index]
                        params: dict[str, Any] = message["params"]
                        return params
                await self._changed.wait()

    async def wait_connected(self, server: str, *, timeout: float = WAIT) -> dict[str, Any]:
        """Wait until the server is connected (or fail with its error)."""
        with anyio.fail_after(timeout):
            while True:
                servers = (await self.request("servers/list"))["servers"]
                state = next(s for s in servers if s["name"] == server)
                if state["status"] == "connected":
                    return dict(state)
                if state["status"] == "error":
                    raise AssertionError(f"{server} failed: {state['error']}")
                await anyio.sleep(0.05)

    async def wait_status(self, server: str, status: str, *, timeout: float = WAIT) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while True:
                servers = (await self.request("servers/list"))["servers"]
                state = next(s for s in servers if s["name"] == server)
                if state["status"] == status:
                    return dict(state)
                await anyio.sleep(0.05)


@contextlib.contextmanager
def http_process(
    args: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    log_path: Path,
    path: str = "/mcp",
    port: int | None = None,
) -> Iterator[str]:
    """Run an HTTP MCP server subprocess on a free port, or on `port` (given as PORT and {port} in args); yield
    its URL."""
    port = port or free_port()
    argv = [a.replace("{port}", str(port)) for a in args]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            argv,
            cwd=cwd or ROOT,
            env={**os.environ, "PORT": str(port), **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        # Until it listens, or it ended: no time limit of its own (a busy machine only makes it later).
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{argv[0]} exited early:\n{log_path.read_text(errors='replace')}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@contextlib.asynccontextmanager
async def connected(host: Webhost, *servers: str) -> AsyncIterator[WsClient]:
    """A browser session (WebSocket) with the named servers connected."""
    async with host.connect() as client:
        for name in servers:
            await client.wait_connected(name)
        yield client


def start_tool_call(ws: WsClient, server: str, name: str, call_id: str, arguments: dict[str, Any] | None = None) -> int:
    """Send tools/call without waiting (the answer may need input requests answered first)."""
    return ws.start_request(
        "tools/call", {"server": server, "name": name, "arguments": arguments or {}, "callId": call_id}
    )


async def json_result(ws: WsClient, request_id: int, timeout: float = WAIT) -> Any:
    """The JSON in the first text block of a tool result (our test servers answer that way)."""
    response = await ws.wait_response(request_id, timeout=timeout)
    assert "result" in response, response
    return json.loads(response["result"]["content"][0]["text"])
