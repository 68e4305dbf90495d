"""What an app may do, judged in the backend: apps/open, apps/request under the per-server policy, events, audit."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.fast import apps_server, connected_tab, error_of, text
from tests.support.inprocess import AsgiWsClient
from tests.support.process import RpcError
from webhost.apps.instances import MAX_MESSAGES_BYTES
from webhost.demo.server import mcp as demo_server

pytestmark = pytest.mark.anyio

PROBE = "bridge_probe"  # apps.py: its frame's server also has echo_app, app_only_ping and model_only_ping


@asynccontextmanager
async def app_frame(
    tmp_path: Path, policy: dict[str, Any] | None = None, *, tool: str = PROBE
) -> AsyncIterator[tuple[AsgiWsClient, str]]:
    """A tab with the apps server connected and one frame of `tool` open."""
    options = {"servers": {"apps": policy}} if policy is not None else None
    async with connected_tab(tmp_path, {"apps": apps_server()}, webhost_options=options) as tab:
        frame = await tab.request("apps/open", {"server": "apps", "tool": tool})
        yield tab, frame["frameId"]


async def app_request(tab: AsgiWsClient, frame: str, method: str, params: dict[str, Any]) -> Any:
    return await tab.request("apps/request", {"frameId": frame, "method": method, "params": params})


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


async def audit(tab: AsgiWsClient, kind: str) -> list[dict[str, Any]]:
    entries = (await tab.request("audit/list", {"server": "apps"}))["entries"]
    return [e for e in entries if e["kind"] == kind]


async def test_apps_open_describes_the_frame(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, {"apps": apps_server()}) as tab:
        frame = await tab.request("apps/open", {"server": "apps", "tool": PROBE})
        assert frame["server"] == "apps" and frame["purpose"] == "tool"
        assert frame["resourceUri"].startswith("ui://apps/")
        assert frame["proxyUrl"].startswith(frame["origin"] + "/proxy?p=")
        assert frame["toolInfo"]["tool"]["name"] == PROBE
        assert "elicitation" not in frame["hostCapabilities"]
        assert "<" in frame["html"]
        [opened] = await audit(tab, "app.open")
        assert opened["frame"] == frame["frameId"]


async def test_apps_open_refuses_an_unknown_tool_a_tool_without_an_app_and_a_missing_resource(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, {"demo": demo_server, "apps": apps_server()}) as tab:
        with pytest.raises(RpcError) as unknown:
            await tab.request("apps/open", {"server": "demo", "tool": "no_such_tool"})
        assert unknown.value.code == -32602 and unknown.value.data == {"tool": "no_such_tool"}
        with pytest.raises(RpcError, match="has no app") as plain:
            await tab.request("apps/open", {"server": "demo", "tool": "get_weather"})
        assert plain.value.code == -32602
        with pytest.raises(RpcError) as missing:
            await tab.request("apps/open", {"server": "apps", "tool": "missing_resource_app"})
        assert missing.value.code == -32000
        with pytest.raises(RpcError) as wrong:
            await tab.request("apps/open", {"server": "apps", "tool": "wrong_mime_app"})
        assert wrong.value.code == -32004


async def test_an_unsupported_app_method_is_refused_and_audited(tmp_path: Path) -> None:
    async with app_frame(tmp_path) as (tab, frame):
        with pytest.raises(RpcError) as refused:
            await app_request(tab, frame, "sampling/createMessage", {})
        assert refused.value.code == -32003 and refused.value.data == {"method": "sampling/createMessage"}
        [entry] = await audit(tab, "app.refused")
        assert entry["decision"] == "refused" and entry["frame"] == frame
        with pytest.raises(RpcError, match="no such app frame") as gone:
            await app_request(tab, "f-never-opened", "ui/message", {})
        assert gone.value.code == -32602


async def test_an_app_calls_tools_visible_to_apps_only(tmp_path: Path) -> None:
    async with app_frame(tmp_path) as (tab, frame):
        assert text(await app_request(tab, frame, "tools/call", call("app_only_ping"))) == "app_only_ping: pong"
        assert text(await app_request(tab, frame, "tools/call", call("echo_app", text="hi"))) == "echo_app: hi"
        with pytest.raises(RpcError, match="visibility lacks") as model_only:
            await app_request(tab, frame, "tools/call", call("model_only_ping"))
        assert model_only.value.code == -32003
        with pytest.raises(RpcError, match="has no tool named") as unknown:
            await app_request(tab, frame, "tools/call", call("nope"))
        assert unknown.value.code == -32003
        with pytest.raises(RpcError) as malformed:
            await app_request(tab, frame, "tools/call", {"name": "echo_app", "arguments": [1]})
        assert malformed.value.code == -32602
        decisions = {(e["summary"], e["decision"]) for e in await audit(tab, "app.tools/call")}
        assert decisions == {
            ("app_only_ping", "allowed"),
            ("echo_app", "allowed"),
            ("model_only_ping: not visible to apps", "refused"),
            ("nope: no such tool on this server", "refused"),
        }


async def test_a_tool_the_policy_denies_is_refused(tmp_path: Path) -> None:
    async with app_frame(tmp_path, {"tools": {"echo_app": "deny"}}) as (tab, frame):
        with pytest.raises(RpcError, match="was denied") as denied:
            await app_request(tab, frame, "tools/call", call("echo_app", text="x"))
        assert denied.value.code == -32003
        assert text(await app_request(tab, frame, "tools/call", call("app_only_ping"))) == "app_only_ping: pong"
        [entry] = [e for e in await audit(tab, "app.tools/call") if e["decision"] == "denied"]
        assert entry["summary"] == "echo_app" and entry["detail"] == {"arguments": {"text": "x"}}


async def test_ask_shows_an_approval_and_remember_skips_the_next_one(tmp_path: Path) -> None:
    async with app_frame(tmp_path, {"appToolCalls": "ask"}) as (tab, frame):
        running = tab.start_request(
            "apps/request", {"frameId": frame, "method": "tools/call", "params": call("echo_app", text="one")}
        )
        approval = await tab.wait_notification("approval/request")
        assert approval["server"] == "apps" and approval["kind"] == "tool-call" and approval["frame"] == frame
        assert approval["detail"]["tool"] == "echo_app" and approval["detail"]["arguments"] == {"text": "one"}
        with pytest.raises(RpcError, match="decision must be"):
            await tab.request("approvals/respond", {"id": approval["id"], "decision": "maybe"})
        await tab.request("approvals/respond", {"id": approval["id"], "decision": "allow", "remember": True})
        assert text((await tab.wait_response(running))["result"]) == "echo_app: one"
        assert await tab.wait_notification("approval/resolved") == {"id": approval["id"], "decision": "allow"}
        with pytest.raises(RpcError, match="unknown or was already decided"):
            await tab.request("approvals/respond", {"id": approval["id"], "decision": "deny"})
        # Remembered for this tool in this session: no second approval.
        assert text(await app_request(tab, frame, "tools/call", call("echo_app", text="two"))) == "echo_app: two"
        assert not [n for n in tab.notifications if n["method"] == "approval/request"]
        approvals = [e for e in (await tab.request("audit/list"))["entries"] if e["kind"] == "approval"]
        assert [a["decision"] for a in approvals] == ["allow"]


async def test_ask_denied_refuses_the_call(tmp_path: Path) -> None:
    async with app_frame(tmp_path, {"appToolCalls": "ask"}) as (tab, frame):
        running = tab.start_request(
            "apps/request", {"frameId": frame, "method": "tools/call", "params": call("app_only_ping")}
        )
        approval = await tab.wait_notification("approval/request")
        await tab.request("approvals/respond", {"id": approval["id"], "decision": "deny"})
        error = error_of(await tab.wait_response(running))
        assert error["code"] == -32003 and "denied" in error["message"]


async def test_closing_the_frame_releases_its_approval_as_a_denial(tmp_path: Path) -> None:
    async with app_frame(tmp_path, {"appToolCalls": "ask"}) as (tab, frame):
        running = tab.start_request(
            "apps/request", {"frameId": frame, "method": "tools/call", "params": call("app_only_ping")}
        )
        approval = await tab.wait_notification("approval/request")
        await tab.request("apps/close", {"frameId": frame, "reason": "teardown"})
        assert await tab.wait_notification("approval/resolved") == {"id": approval["id"], "decision": "deny"}
        assert error_of(await tab.wait_response(running))["code"] == -32003
        [closed] = await audit(tab, "app.close")
        assert closed["summary"] == "teardown"


@pytest.mark.parametrize(
    ("url", "scheme"),
    [
        ("javascript:alert(1)", "javascript"),
        ("JavaScript:alert(1)", "javascript"),
        ("data:text/html,<b>x</b>", "data"),
        ("file:///etc/passwd", "file"),
        ("https://user:secret@example.com/", "https"),
        (42, ""),
    ],
    ids=["javascript", "JavaScript", "data", "file", "credentials", "not-a-string"],
)
async def test_open_link_refuses_what_is_not_a_plain_http_link(tmp_path: Path, url: object, scheme: str) -> None:
    async with app_frame(tmp_path, {"openLinks": "allow"}) as (tab, frame):
        with pytest.raises(RpcError) as refused:
            await app_request(tab, frame, "ui/open-link", {"url": url})
        assert refused.value.code == -32003 and refused.value.data == {"scheme": scheme}
        [entry] = await audit(tab, "app.open-link")
        assert entry["decision"] == "refused"
        assert ("credentials" in entry["summary"]) == (scheme == "https")


async def test_open_link_asks_for_consent(tmp_path: Path) -> None:
    async with app_frame(tmp_path) as (tab, frame):
        url = "https://example.com/docs?x=1"
        running = tab.start_request(
            "apps/request", {"frameId": frame, "method": "ui/open-link", "params": {"url": url}}
        )
        approval = await tab.wait_notification("approval/request")
        assert approval["kind"] == "open-link" and approval["detail"] == {"url": url}
        await tab.request("approvals/respond", {"id": approval["id"], "decision": "allow"})
        assert (await tab.wait_response(running))["result"] == {"open": True, "url": url}

        running = tab.start_request(
            "apps/request", {"frameId": frame, "method": "ui/open-link", "params": {"url": url}}
        )
        approval = await tab.wait_notification("approval/request")
        await tab.request("approvals/respond", {"id": approval["id"], "decision": "deny"})
        error = error_of(await tab.wait_response(running))
        assert error["code"] == -32003 and error["message"] == "Link opening denied by user"
        assert [e["decision"] for e in await audit(tab, "app.open-link")] == ["deny", "allow"]


async def test_open_link_says_whether_the_page_opened_it_in_the_persons_click(tmp_path: Path) -> None:
    async with app_frame(tmp_path) as (tab, frame):
        url = "https://example.com/blocked"
        params = {"frameId": frame, "method": "ui/open-link", "params": {"url": url}}
        running = tab.start_request("apps/request", params)
        approval = await tab.wait_notification("approval/request")
        with pytest.raises(RpcError, match="opened must be true or false"):
            await tab.request("approvals/respond", {"id": approval["id"], "decision": "allow", "opened": "yes"})
        # The page tried within the click on Allow, and the browser's popup blocker stopped it.
        await tab.request(
            "approvals/respond", {"id": approval["id"], "decision": "allow", "remember": True, "opened": False}
        )
        assert (await tab.wait_response(running))["result"] == {"open": True, "url": url, "opened": False}
        # Remembered: nobody clicks now, so the answer does not say; the page opens it and tells the app.
        assert await app_request(tab, frame, "ui/open-link", {"url": url}) == {"open": True, "url": url}
        entries = await audit(tab, "app.open-link")
        assert [(e["decision"], e["detail"]) for e in entries] == [("allow", None), ("allow", {"opened": False})]


async def test_open_link_without_asking_when_the_policy_allows_links(tmp_path: Path) -> None:
    async with app_frame(tmp_path, {"openLinks": "allow"}) as (tab, frame):
        answer = await app_request(tab, frame, "ui/open-link", {"url": "http://example.com/"})
        assert answer == {"open": True, "url": "http://example.com/"}
        assert not [n for n in tab.notifications if n["method"] == "approval/request"]


async def test_messages_and_model_context_reach_the_conversation(tmp_path: Path) -> None:
    async with app_frame(tmp_path) as (tab, frame):
        block = {"type": "text", "text": "hello model"}
        assert await app_request(tab, frame, "ui/message", {"role": "user", "content": [block]}) == {}
        first = await tab.wait_notification("apps/conversation")
        assert first["frameId"] == frame and "modelContext" not in first and first["messageCount"] == 1
        assert (first["message"]["role"], first["message"]["content"]) == ("user", [block])
        # An older app's single block, and a role that is not user/assistant.
        await app_request(tab, frame, "ui/message", {"role": "system", "content": {"type": "text", "text": "b"}})
        second = await tab.wait_notification("apps/conversation")
        assert (second["message"]["role"], second["message"]["content"]) == ("user", [{"type": "text", "text": "b"}])
        await app_request(tab, frame, "ui/update-model-context", {"content": [block], "structuredContent": {"n": 1}})
        third = await tab.wait_notification("apps/conversation")
        assert third["modelContext"]["content"] == [block] and third["modelContext"]["structuredContent"] == {"n": 1}
        await app_request(tab, frame, "ui/update-model-context", {"content": "not blocks"})
        fourth = await tab.wait_notification("apps/conversation")
        assert fourth["modelContext"]["content"] == [] and fourth["messageCount"] == 2 and "message" not in fourth
        whole = await tab.request("apps/conversation", {"frameId": frame})
        assert [m["content"] for m in whole["messages"]] == [[block], [{"type": "text", "text": "b"}]]
        assert whole["modelContext"]["content"] == []
        kinds = [e["kind"] for e in (await tab.request("audit/list", {"server": "apps"}))["entries"]]
        assert kinds.count("app.message") == 2 and kinds.count("app.model-context") == 2
        assert [e["summary"] for e in await audit(tab, "app.message")] == ["b", "hello model"]


async def test_an_apps_kept_messages_are_bounded_by_bytes_as_well_as_by_count(tmp_path: Path) -> None:
    async with app_frame(tmp_path) as (tab, frame):
        chunk = "x" * (300 * 1024)
        for n in range(5):  # 1.5 MB in all: more than a frame keeps
            message = {"role": "user", "content": [{"type": "text", "text": f"{n} {chunk}"}]}
            assert await app_request(tab, frame, "ui/message", message) == {}
        whole = await tab.request("apps/conversation", {"frameId": frame})
        assert [m["content"][0]["text"][0] for m in whole["messages"]] == ["2", "3", "4"]  # the newest that fit
        assert sum(len(json.dumps(m)) for m in whole["messages"]) <= MAX_MESSAGES_BYTES
        # One message larger than all a frame keeps is refused (the app is told), and the kept ones stay.
        huge = {"role": "user", "content": [{"type": "text", "text": "y" * MAX_MESSAGES_BYTES}]}
        with pytest.raises(RpcError) as refused:
            await app_request(tab, frame, "ui/message", huge)
        assert refused.value.code == -32003 and refused.value.data["limit"] == MAX_MESSAGES_BYTES
        again = await tab.request("apps/conversation", {"frameId": frame})
        assert again["messages"] == whole["messages"]
        assert [e["decision"] for e in await audit(tab, "app.message")][0] == "refused"


async def test_an_app_reads_and_lists_its_own_servers_resources_and_prompts(tmp_path: Path) -> None:
    async with app_frame(tmp_path) as (tab, frame):
        listed = await app_request(tab, frame, "resources/list", {})
        uris = [r["uri"] for r in listed["resources"]]
        own = (await tab.request("resources/list", {"server": "apps"}))["resources"]
        assert uris == [r["uri"] for r in own] and any(uri.startswith("ui://apps/") for uri in uris)
        read = await app_request(tab, frame, "resources/read", {"uri": uris[0]})
        assert read["contents"][0]["uri"] == uris[0]
        assert (await app_request(tab, frame, "resources/templates/list", {})) == {"resourceTemplates": []}
        assert (await app_request(tab, frame, "prompts/list", {})) == {"prompts": []}
        with pytest.raises(RpcError) as no_uri:
            await app_request(tab, frame, "resources/read", {})
        assert no_uri.value.code == -32602
        [entry] = await audit(tab, "app.resources/read")
        assert entry["summary"] == uris[0] and entry["decision"] == "allowed"


async def test_progress_of_an_apps_call_goes_to_the_app_with_its_token(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, {"demo": demo_server}) as tab:
        frame = (await tab.request("apps/open", {"server": "demo", "tool": "show_dashboard"}))["frameId"]
        result = await app_request(
            tab,
            frame,
            "tools/call",
            {"name": "count_slowly", "arguments": {"steps": 2, "delay": 0}, "_meta": {"progressToken": "app-token-1"}},
        )
        assert text(result) == "Counted to 2."
        progress = await tab.wait_notification("apps/progress", lambda p: p["progress"] == 2)
        assert progress == {
            "frameId": frame,
            "progressToken": "app-token-1",
            "progress": 2,
            "total": 2,
            "message": "Counted 2 of 2",
        }
        assert not [n for n in tab.notifications if n["method"] == "progress"]


@pytest.mark.parametrize(
    ("kind", "audited", "activity_kind"),
    [
        ("violation", "blocked", "error"),
        ("csp-violation", "blocked", "error"),
        ("error", None, "error"),
        ("log", None, "notification"),
        ("size", None, "notification"),
    ],
)
async def test_app_events_reach_the_activity_log_and_problems_the_audit_log(
    tmp_path: Path, kind: str, audited: str | None, activity_kind: str
) -> None:
    async with app_frame(tmp_path) as (tab, frame):
        assert (
            await tab.request(
                "apps/event", {"frameId": frame, "kind": kind, "detail": {"summary": f"saw {kind}", "n": 1}}
            )
            == {}
        )
        entry = await tab.wait_notification("activity", lambda p: p["entry"]["method"] == f"app/{kind}")
        assert entry["entry"]["kind"] == activity_kind and entry["entry"]["summary"] == f"saw {kind}"
        assert entry["entry"]["data"] == {"summary": f"saw {kind}", "n": 1}
        recorded = await audit(tab, f"app.{kind}")
        if kind in ("violation", "csp-violation", "error"):
            assert [(e["decision"], e["summary"]) for e in recorded] == [(audited, f"saw {kind}")]
        else:
            assert recorded == []


async def test_an_unknown_app_event_kind_is_invalid(tmp_path: Path) -> None:
    async with app_frame(tmp_path) as (tab, frame):
        with pytest.raises(RpcError, match="unknown app event kind") as refused:
            await tab.request("apps/event", {"frameId": frame, "kind": "explode"})
        assert refused.value.code == -32602


async def test_a_permission_granted_by_a_person_applies_to_the_next_frame(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, {"apps": apps_server()}) as tab:
        before = await tab.request("apps/open", {"server": "apps", "tool": "permissions_probe"})
        assert set(before["requestedPermissions"]) == {"camera", "clipboardWrite"}
        assert "camera" not in before["permissions"]
        granted = await tab.request("apps/permission", {"server": "apps", "permission": "camera", "granted": True})
        assert granted == {"server": "apps", "permission": "camera", "granted": True}
        after = await tab.request("apps/open", {"server": "apps", "tool": "permissions_probe"})
        assert "camera" in after["permissions"] and "camera" in after["allow"]
        await tab.request("apps/permission", {"server": "apps", "permission": "camera", "granted": False})
        revoked = await tab.request("apps/open", {"server": "apps", "tool": "permissions_probe"})
        assert "camera" not in revoked["permissions"]
        assert [e["decision"] for e in await audit(tab, "app.permission")] == ["revoked", "granted"]
        with pytest.raises(RpcError, match="unknown permission"):
            await tab.request("apps/permission", {"server": "apps", "permission": "usb", "granted": True})


async def test_audit_list_filters_by_server_and_limits(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, {"demo": demo_server, "apps": apps_server()}) as tab:
        for _ in range(3):
            await tab.request("apps/open", {"server": "apps", "tool": PROBE})
        await tab.request("apps/open", {"server": "demo", "tool": "show_dashboard"})
        everything = (await tab.request("audit/list"))["entries"]
        assert [e["server"] for e in everything[:4]] == ["demo", "apps", "apps", "apps"]  # newest first
        assert {e["server"] for e in (await tab.request("audit/list", {"server": "apps"}))["entries"]} == {"apps"}
        assert len((await tab.request("audit/list", {"limit": 2}))["entries"]) == 2
        assert len((await tab.request("audit/list", {"limit": "two"}))["entries"]) == len(everything)
