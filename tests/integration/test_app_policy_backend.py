"""What apps may do, decided in the backend: proven through the WebSocket, without a browser."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from tests.support.process import WAIT, RpcError, WsClient, connected, run_webhost, stdio_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Any:
    servers = {
        "apps": stdio_server("apps"),
        "other": stdio_server("apps", "--name", "other"),
        "basic": stdio_server("basic"),
    }
    options = {"servers": {"other": {"appToolCalls": "ask", "tools": {"echo_app": "deny"}, "permissions": ["camera"]}}}
    with run_webhost(tmp_path_factory.mktemp("app-policy"), servers, webhost_options=options) as running:
        yield running


@pytest.fixture(scope="module")
async def ws(host: Any) -> AsyncIterator[WsClient]:
    async with connected(host, "apps", "other", "basic") as client:
        yield client


async def open_app(ws: WsClient, server: str, tool: str) -> dict[str, Any]:
    frame: dict[str, Any] = await ws.request("apps/open", {"server": server, "tool": tool})
    return frame


async def app(ws: WsClient, frame: dict[str, Any], method: str, params: dict[str, Any]) -> Any:
    return await ws.request("apps/request", {"frameId": frame["frameId"], "method": method, "params": params})


async def test_an_app_frame_gets_a_per_server_origin_and_a_signed_proxy_url(ws: WsClient, host: Any) -> None:
    first = await open_app(ws, "apps", "bridge_probe")
    second = await open_app(ws, "apps", "csp_probe")
    other = await open_app(ws, "other", "bridge_probe")
    assert first["origin"] == second["origin"] != other["origin"]
    assert first["origin"].endswith(f".localhost:{host.sandbox_port}")
    assert first["proxyUrl"].startswith(first["origin"] + "/proxy?p=")
    assert first["html"].lstrip().lower().startswith("<!doctype html")
    assert first["cspDefault"] is True and "connect-src 'none'" in first["cspHeader"]
    assert second["cspDefault"] is False and second["csp"]["connectDomains"] == ["http://127.0.0.1:8765"]
    label = first["origin"].split("//")[1].split(".")[0]
    page = httpx.get(
        f"http://127.0.0.1:{host.sandbox_port}/proxy?{first['proxyUrl'].split('?')[1]}",
        headers={"Host": f"{label}.localhost:{host.sandbox_port}"},
    )
    assert page.status_code == 200
    assert "connect-src 'none'" in page.headers["content-security-policy"]
    assert f"frame-ancestors http://127.0.0.1:{host.port}" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store" and "x-frame-options" not in page.headers
    wrong_label = other["origin"].split("//")[1].split(".")[0]
    stolen = httpx.get(
        f"http://127.0.0.1:{host.sandbox_port}/proxy?{first['proxyUrl'].split('?')[1]}",
        headers={"Host": f"{wrong_label}.localhost:{host.sandbox_port}"},
    )
    assert stolen.status_code == 403


async def test_visibility_is_enforced_for_app_calls(ws: WsClient) -> None:
    frame = await open_app(ws, "apps", "bridge_probe")
    assert (await app(ws, frame, "tools/call", {"name": "app_only_ping", "arguments": {}}))["isError"] is False
    with pytest.raises(RpcError) as refused:
        await app(ws, frame, "tools/call", {"name": "model_only_ping", "arguments": {}})
    assert refused.value.code == -32003 and "not callable by apps" in str(refused.value.message)
    tools = (await ws.request("tools/list", {"server": "apps"}))["tools"]
    flags = {t["name"]: t["webhost"]["appOnly"] for t in tools}
    assert flags["app_only_ping"] is True and flags["model_only_ping"] is False


async def test_an_app_reaches_only_its_own_server(ws: WsClient) -> None:
    frame = await open_app(ws, "apps", "bridge_probe")
    for name in ("add", "basic/add", "basic__add"):
        with pytest.raises(RpcError) as refused:
            await app(
                ws,
                frame,
                "tools/call",
                {"name": name, "arguments": {"a": 1, "b": 2}, "server": "basic", "_meta": {"server": "basic"}},
            )
        assert refused.value.code == -32003
    with pytest.raises(RpcError):
        await app(ws, frame, "resources/read", {"uri": "basic://text", "server": "basic"})
    with pytest.raises(RpcError) as unknown:
        await ws.request(
            "apps/request", {"frameId": "f-not-mine", "method": "tools/call", "params": {"name": "echo_app"}}
        )
    assert unknown.value.code == -32602


async def test_ask_shows_an_approval_and_deny_refuses(ws: WsClient) -> None:
    frame = await open_app(ws, "other", "bridge_probe")
    pending = ws.start_request(
        "apps/request",
        {"frameId": frame["frameId"], "method": "tools/call", "params": {"name": "app_only_ping", "arguments": {}}},
    )
    approval = await ws.wait_notification("approval/request")
    assert approval["kind"] == "tool-call" and approval["server"] == "other"
    assert approval["detail"]["tool"] == "app_only_ping"
    await ws.request("approvals/respond", {"id": approval["id"], "decision": "deny"})
    response = await ws.wait_response(pending)
    assert response["error"]["code"] == -32003
    with pytest.raises(RpcError) as denied:  # configured deny needs no person
        await app(ws, frame, "tools/call", {"name": "echo_app", "arguments": {"text": "x"}})
    assert "denied" in str(denied.value.message)
    pending = ws.start_request(
        "apps/request",
        {"frameId": frame["frameId"], "method": "tools/call", "params": {"name": "app_only_ping", "arguments": {}}},
    )
    approval = await ws.wait_notification("approval/request")
    await ws.request("approvals/respond", {"id": approval["id"], "decision": "allow"})
    assert (await ws.wait_response(pending))["result"]["isError"] is False


async def test_links_open_only_for_http_and_https_after_consent(ws: WsClient) -> None:
    frame = await open_app(ws, "apps", "bridge_probe")
    for url in (
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "data:text/html,x",
        "file:///etc/passwd",
        "vbscript:x",
        "https://user:secret@example.com/",
    ):
        with pytest.raises(RpcError) as refused:
            await app(ws, frame, "ui/open-link", {"url": url})
        assert refused.value.code == -32003
    pending = ws.start_request(
        "apps/request",
        {"frameId": frame["frameId"], "method": "ui/open-link", "params": {"url": "https://example.com/docs"}},
    )
    approval = await ws.wait_notification("approval/request")
    assert approval["kind"] == "open-link" and approval["detail"]["url"] == "https://example.com/docs"
    await ws.request("approvals/respond", {"id": approval["id"], "decision": "allow"})
    assert (await ws.wait_response(pending))["result"] == {"open": True, "url": "https://example.com/docs"}


async def test_messages_and_model_context_are_kept_per_app_and_audited(ws: WsClient) -> None:
    frame = await open_app(ws, "apps", "bridge_probe")
    await app(ws, frame, "ui/message", {"role": "user", "content": {"type": "text", "text": "hello model"}})
    await app(ws, frame, "ui/update-model-context", {"content": [{"type": "text", "text": "ctx 1"}]})
    await app(ws, frame, "ui/update-model-context", {"content": [{"type": "text", "text": "ctx 2"}]})
    update = await ws.wait_notification(
        "apps/conversation", lambda p: (p.get("modelContext") or {}).get("content", [{}])[0].get("text") == "ctx 2"
    )
    assert update["messageCount"] == 1
    whole = await ws.request("apps/conversation", {"frameId": frame["frameId"]})
    assert whole["messages"][0]["content"] == [{"type": "text", "text": "hello model"}]
    entries = (await ws.request("audit/list", {"server": "apps"}))["entries"]
    kinds = {e["kind"] for e in entries if e["frame"] == frame["frameId"]}
    assert {"app.open", "app.message", "app.model-context"} <= kinds


async def test_permissions_reach_the_frame_only_when_allowed_for_that_server(ws: WsClient) -> None:
    plain = await open_app(ws, "apps", "permissions_probe")
    assert plain["requestedPermissions"] == ["camera", "clipboardWrite"]
    assert plain["allow"] == "" and plain["permissions"] == {}
    configured = await open_app(ws, "other", "permissions_probe")
    assert configured["allow"] == "camera"
    await ws.request("apps/permission", {"server": "apps", "permission": "clipboardWrite", "granted": True})
    granted = await open_app(ws, "apps", "permissions_probe")
    assert granted["allow"] == "clipboard-write"
    assert granted["hostCapabilities"]["sandbox"]["permissions"] == {"clipboardWrite": {}}
    await ws.request("apps/permission", {"server": "apps", "permission": "clipboardWrite", "granted": False})


async def test_missing_and_wrong_resources_give_clear_errors(ws: WsClient) -> None:
    for tool, fragment in (("missing_resource_app", ""), ("wrong_mime_app", "text/plain")):
        with pytest.raises(RpcError) as failed:
            await open_app(ws, "apps", tool)
        assert failed.value.code in (-32004, -32000) and fragment in str(failed.value.message)
    with pytest.raises(RpcError) as no_ui:
        await open_app(ws, "apps", "non_ui_scheme_app")
    assert "no app" in str(no_ui.value.message)
    for tool in ("legacy_key_app", "old_mime_app", "blob_app"):
        assert (await open_app(ws, "apps", tool))["html"]


async def test_the_audit_log_exports_as_json_and_csv(ws: WsClient, host: Any) -> None:
    await open_app(ws, "apps", "bridge_probe")
    with anyio.fail_after(WAIT), host.http() as client:
        data = client.get("/api/audit").json()["entries"]
        csv = client.get("/api/audit", params={"format": "csv"})
    assert any(e["kind"] == "app.open" and e["detail"]["csp"] for e in data)
    assert csv.headers["content-type"].startswith("text/csv") and csv.text.startswith("id,ts,session")
