"""`webhost reload` and SIGHUP (issue 29 item 5): a running `webhost serve` re-reads its configuration file without
a restart. New servers and access rules apply to new requests, a removed server stops for everyone (its process
ends, the page is told), a bad file is refused with one line and the running configuration kept; on two
replicas sharing one PostgreSQL, each replica reloads when told (each is signalled: docs/admin.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.support.postgres import Postgres
from tests.support.process import ROOT, Webhost, WsClient, free_port, processes_with_marker, run_webhost, stdio_server
from tests.support.reload import reload_cli
from tests.support.team import start_replicas

pytestmark = pytest.mark.anyio


def edit(host: Webhost, change: Any) -> None:
    """Rewrite the configuration file: `change` edits its document (the entries kept stay byte-for-byte equal)."""
    assert host.config_path is not None
    document = json.loads(host.config_path.read_text())
    change(document)
    host.config_path.write_text(json.dumps(document))


def servers_of(host: Webhost) -> list[str]:
    with host.http() as api:
        return [s["name"] for s in api.get("/api/servers").json()["servers"]]


async def listed(ws: WsClient) -> list[str]:
    return [s["name"] for s in (await ws.request("servers/list"))["servers"]]


async def test_reload_adds_removes_refuses_a_bad_file_and_follows_sighup(tmp_path: Path) -> None:
    servers = {"basic": stdio_server("basic"), "payroll": stdio_server("basic")}
    with run_webhost(tmp_path, servers) as host:
        assert (host.data_dir / f"webhost-{host.port}.pid").read_text().strip() == str(host.proc.pid)
        async with host.connect() as ws:
            await ws.wait_connected("payroll")
            running = ws.start_request(
                "tools/call", {"server": "payroll", "name": "hang", "arguments": {}, "callId": "c-hang"}
            )
            await ws.wait_notification("activity", lambda p: p["entry"]["summary"] == "hang")
            await ws.wait_connected("basic")
            first_processes = set(processes_with_marker(host.marker))  # basic's and payroll's

            def swap(document: dict[str, Any]) -> None:
                document["mcpServers"]["extra"] = document["mcpServers"].pop("payroll")

            edit(host, swap)
            done = await anyio.to_thread.run_sync(reload_cli, host)
            assert done.returncode == 0, done.stderr
            assert done.stdout.strip().endswith("2 server(s); added extra; removed payroll"), done.stdout
            assert (await ws.wait_notification("servers/changed")) == {"servers": ["basic", "extra"]}
            # The removed server's running call ended and its connection closed; the new one connects.
            error = (await ws.wait_response(running))["error"]
            assert error["code"] == -32800
            await ws.wait_connected("extra")
            assert first_processes - set(processes_with_marker(host.marker)), "payroll's process is still running"
            assert await listed(ws) == ["basic", "extra"]
            assert servers_of(host) == ["basic", "extra"]
            with pytest.raises(Exception, match="payroll"):
                await ws.request("tools/list", {"server": "payroll"})

            # A bad file: one line, status 1, and the running configuration stays.
            good = host.config_path.read_text() if host.config_path else ""
            assert host.config_path is not None
            host.config_path.write_text('{"mcpServers": {"basic": {"command": 7}}}')
            refused = await anyio.to_thread.run_sync(reload_cli, host)
            assert refused.returncode == 1 and refused.stdout == ""
            assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
            assert "refused, the running configuration is kept" in refused.stderr and "command" in refused.stderr
            assert servers_of(host) == ["basic", "extra"]

            # SIGHUP itself (what `webhost reload` sends): an access rule the token's person is not in.
            host.config_path.write_text(good)
            edit(
                host,
                lambda d: d.setdefault("webhost", {}).update({"access": {"servers": {"extra": {"groups": ["x"]}}}}),
            )
            host.proc.send_signal(signal.SIGHUP)
            assert (await ws.wait_notification("servers/changed")) == {"servers": ["basic"]}
            assert servers_of(host) == ["basic"]
            # Of this webhost's server processes only basic's are left: payroll's and extra's stopped.
            left = set(processes_with_marker(host.marker))
            assert left and left < first_processes
    assert not (host.data_dir / f"webhost-{host.port}.pid").exists()  # removed when it stopped


async def test_reload_without_a_running_webhost_says_so(tmp_path: Path) -> None:
    port = free_port()
    done = subprocess.run(
        [sys.executable, "-m", "webhost", "reload", "--port", str(port), "--data-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert done.returncode == 2 and f"no webhost serves port {port}" in done.stderr


async def test_two_replicas_each_reload_when_told(tmp_path: Path, postgres: Postgres) -> None:
    servers = {"basic": stdio_server("basic"), "payroll": stdio_server("basic")}
    with start_replicas(tmp_path, postgres.new_database(), servers, free_port()) as (replicas, _token, _secret):
        first, second = replicas
        async with first.connect() as one, second.connect() as two:
            for ws in (one, two):
                await ws.wait_connected("payroll")

            def drop(document: dict[str, Any]) -> None:
                del document["mcpServers"]["payroll"]

            # Told one at a time: the first follows the file, the second still serves its running configuration.
            edit(first, drop)
            done = await anyio.to_thread.run_sync(reload_cli, first)
            assert done.returncode == 0, done.stderr
            assert (await one.wait_notification("servers/changed")) == {"servers": ["basic"]}
            assert servers_of(first) == ["basic"] and servers_of(second) == ["basic", "payroll"]
            assert await listed(two) == ["basic", "payroll"]

            edit(second, drop)
            done = await anyio.to_thread.run_sync(reload_cli, second)
            assert done.returncode == 0, done.stderr
            assert (await two.wait_notification("servers/changed")) == {"servers": ["basic"]}
            assert servers_of(second) == ["basic"]
        with httpx.Client(base_url=second.base_url, headers={"authorization": f"Bearer {second.token}"}) as api:
            assert api.get("/healthz").status_code == 200
