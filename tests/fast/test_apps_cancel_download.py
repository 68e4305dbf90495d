"""An app's requests in-process: cancelling one upstream (apps/cancel), and ui/download-file after consent."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server import MCPServer
from mcp.server.apps import Apps

from tests.support.inprocess import AsgiWsClient, InProcessHost, in_process_host
from tests.support.process import WAIT, RpcError

pytestmark = pytest.mark.anyio

APP_URI = "ui://cancel/app.html"


class Seen:
    started = anyio.Event()
    cancelled = anyio.Event()


def cancel_server(seen: Seen) -> MCPServer:
    apps = Apps()

    @apps.tool(resource_uri=APP_URI, title="App", description="Has an app.")
    def show_app() -> str:
        return "app"

    @apps.tool(resource_uri=APP_URI, title="Wait", description="Waits until cancelled.")
    async def wait_forever() -> str:
        seen.started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            seen.cancelled.set()
            raise
        return "never"

    apps.add_html_resource(APP_URI, "<!doctype html><html><body>app</body></html>")
    server = MCPServer("cancel", version="1.0.0", extensions=[apps])

    @server.resource("file:///report.csv", name="report", mime_type="text/csv")
    def report() -> str:
        return "a,b\n1,2\n"

    return server


@asynccontextmanager
async def app_tab(tmp_path: Path, seen: Seen) -> AsyncIterator[tuple[InProcessHost, AsgiWsClient, str]]:
    async with in_process_host(tmp_path, {"cancel": cancel_server(seen)}) as host, host.tab() as tab:
        await tab.wait_connected("cancel")
        frame = await tab.request("apps/open", {"server": "cancel", "tool": "show_app"})
        yield host, tab, frame["frameId"]


async def test_an_app_cancelling_its_request_cancels_the_upstream_call(tmp_path: Path) -> None:
    seen = Seen()
    async with app_tab(tmp_path, seen) as (_, tab, frame):
        running = tab.start_request(
            "apps/request",
            {
                "frameId": frame,
                "method": "tools/call",
                "requestId": 7,
                "params": {"name": "wait_forever", "arguments": {}},
            },
        )
        with anyio.fail_after(WAIT):
            await seen.started.wait()
        assert await tab.request("apps/cancel", {"frameId": frame, "requestId": 7}) == {"cancelled": True}
        response = await tab.wait_response(running)
        assert response["error"]["code"] == -32800, response
        with anyio.fail_after(WAIT):
            await seen.cancelled.wait()  # the server got notifications/cancelled
        assert await tab.request("apps/cancel", {"frameId": frame, "requestId": 7}) == {"cancelled": False}
        with pytest.raises(RpcError) as bad:
            await tab.request("apps/cancel", {"frameId": frame})
        assert bad.value.code == -32602


async def approve(tab: AsgiWsClient, decision: str) -> dict[str, Any]:
    request = await tab.wait_notification("approval/request", lambda p: p["kind"] == "download")
    await tab.request("approvals/respond", {"id": request["id"], "decision": decision})
    return request


async def test_download_file_after_consent_embedded_and_linked(tmp_path: Path) -> None:
    async with app_tab(tmp_path, Seen()) as (host, tab, frame):
        descriptor_caps = (await tab.request("apps/open", {"server": "cancel", "tool": "show_app"}))["hostCapabilities"]
        assert descriptor_caps["downloadFile"] == {}
        contents = [
            {
                "type": "resource",
                "resource": {"uri": "file:///notes/hello.txt", "mimeType": "text/plain", "text": "hello"},
            },
            {
                "type": "resource",
                "resource": {"uri": "file:///x/../evil name.bin", "blob": base64.b64encode(b"\x00\x01").decode()},
            },
            {"type": "resource_link", "uri": "file:///report.csv", "name": "report.csv", "mimeType": "text/csv"},
        ]
        running = tab.start_request(
            "apps/request", {"frameId": frame, "method": "ui/download-file", "params": {"contents": contents}}
        )
        request = await approve(tab, "allow")
        assert [f["name"] for f in request["detail"]["files"]] == ["hello.txt", "evil_name.bin", "report.csv"]
        result = (await tab.wait_response(running))["result"]
        files = {f["name"]: base64.b64decode(f["blob"]) for f in result["files"]}
        assert files == {"hello.txt": b"hello", "evil_name.bin": b"\x00\x01", "report.csv": b"a,b\n1,2\n"}

        denied = tab.start_request(
            "apps/request", {"frameId": frame, "method": "ui/download-file", "params": {"contents": contents[:1]}}
        )
        await approve(tab, "deny")
        assert (await tab.wait_response(denied))["result"] == {"isError": True}

        async with host.http() as http:
            entries = (await http.get("/api/audit")).json()["entries"]
        decisions = [e["decision"] for e in entries if e["kind"] == "app.download-file"]
        assert sorted(decisions) == ["allowed", "denied"]


async def test_download_file_limits(tmp_path: Path) -> None:
    async with app_tab(tmp_path, Seen()) as (_, tab, frame):
        big = {
            "type": "resource",
            "resource": {"uri": "file:///big.bin", "blob": base64.b64encode(b"x" * (10 * 1024 * 1024 + 1)).decode()},
        }
        for params, code in [
            ({"contents": [big]}, -32003),
            ({"contents": []}, -32602),
            ({"contents": [{"type": "text", "text": "x"}]}, -32602),
            ({"contents": [{"type": "resource", "resource": {"uri": "a", "blob": "!!"}}]}, -32602),
        ]:
            with pytest.raises(RpcError) as refused:
                await tab.request("apps/request", {"frameId": frame, "method": "ui/download-file", "params": params})
            assert refused.value.code == code, params
        assert not [n for n in tab.notifications if n["method"] == "approval/request"]  # nothing asked
