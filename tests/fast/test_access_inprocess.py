"""Who may use what (contract §9) through the in-process host in proxy mode: a person whose groups the rules do
not name gets no connection to the server, and every request naming it gets the unknown-name error."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fast import apps_server, connected_tab
from tests.support.inprocess import in_process_host, sdk_server
from tests.support.model_endpoint import running_model_endpoint
from tests.support.process import RpcError
from webhost.config import ServerConfig

OPTIONS = {
    "auth": {
        "mode": "proxy",
        "userHeader": "X-Forwarded-Email",
        "groupsHeader": "X-Forwarded-Groups",
        "trustedProxies": ["127.0.0.1/32"],
    },
    "access": {"servers": {"payroll": {"groups": ["finance"]}}, "models": {"claude": {"groups": ["finance"]}}},
    # Never reached: a refused model is refused before any request (port 9 is discard).
    "chat": {
        "models": [
            {"id": "claude", "api": "openai", "model": "c", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "k"},
            {"id": "small", "api": "openai", "model": "s", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "k"},
        ]
    },
}
pytestmark = pytest.mark.anyio

FINANCE: dict[str, Any] = {"x-forwarded-email": "fay@example.com", "x-forwarded-groups": "finance"}
STAFF: dict[str, Any] = {"x-forwarded-email": "bob@example.com", "x-forwarded-groups": "staff"}


def host(tmp_path: Path, connects: list[ServerConfig]) -> Any:
    servers = {"basic": sdk_server("basic"), "payroll": sdk_server("traced")}
    return in_process_host(tmp_path, servers, webhost_options=OPTIONS, connects=connects)


async def test_a_server_the_person_may_not_use_is_absent_and_never_connected(tmp_path: Path) -> None:
    connects: list[ServerConfig] = []
    async with host(tmp_path, connects) as web, web.tab(authorization=None, client=("127.0.0.1", 1), **STAFF) as bob:
        await bob.wait_connected("basic")
        listed = [s["name"] for s in (await bob.request("servers/list"))["servers"]]
        assert listed == ["basic"]
        async with web.http(token=None, headers=STAFF, client=("127.0.0.1", 1)) as api:
            assert [s["name"] for s in (await api.get("/api/servers")).json()["servers"]] == ["basic"]
        with pytest.raises(RpcError) as payroll:
            await bob.request("tools/list", {"server": "payroll"})
        with pytest.raises(RpcError) as nowhere:
            await bob.request("tools/list", {"server": "nowhere"})
        # No oracle: the same code, and the same message with only the name changed.
        assert payroll.value.code == nowhere.value.code
        assert str(payroll.value.message).replace("payroll", "X") == str(nowhere.value.message).replace("nowhere", "X")
    assert "payroll" not in {c.name for c in connects}


async def test_a_person_of_the_group_uses_it(tmp_path: Path) -> None:
    connects: list[ServerConfig] = []
    async with host(tmp_path, connects) as web, web.tab(authorization=None, client=("127.0.0.1", 1), **FINANCE) as fay:
        listed = sorted(s["name"] for s in (await fay.request("servers/list"))["servers"])
        assert listed == ["basic", "payroll"]
        await fay.wait_connected("payroll")
        tools = await fay.request("tools/list", {"server": "payroll"})
        assert tools["tools"]


async def test_a_model_the_person_may_not_use_is_absent_from_the_picker_and_refused_as_unknown(tmp_path: Path) -> None:
    async with host(tmp_path, []) as web, web.tab(authorization=None, client=("127.0.0.1", 1), **STAFF) as bob:
        info = await bob.request("chat/info")
        assert [m["id"] for m in info["models"]] == ["small"] and info["defaultModel"] == "small"
        with pytest.raises(RpcError) as claude:
            await bob.request("chat/send", {"text": "hi", "model": "claude"})
        with pytest.raises(RpcError) as nowhere:
            await bob.request("chat/send", {"text": "hi", "model": "nowhere"})
        assert claude.value.code == nowhere.value.code
        assert str(claude.value.message).replace("claude", "X") == str(nowhere.value.message).replace("nowhere", "X")
    async with host(tmp_path, []) as web, web.tab(authorization=None, client=("127.0.0.1", 1), **FINANCE) as fay:
        assert [m["id"] for m in (await fay.request("chat/info"))["models"]] == ["claude", "small"]


async def test_a_tool_the_person_may_not_use_is_not_offered_to_the_model(tmp_path: Path) -> None:
    with running_model_endpoint() as endpoint:
        endpoint.script("access-tools", [{"events": [{"text": "done"}]}])
        model = {"id": "m", "api": "openai", "model": "access-tools", "baseUrl": endpoint.openai_base_url}
        options = {
            "chat": {"models": [model]},
            "access": {"servers": {"board": {"tools": {"lookup": {"groups": ["finance"]}}}}},
        }
        mcp = {"board": sdk_server("chat_apps")}
        async with in_process_host(tmp_path, mcp, webhost_options=options) as web, web.tab() as tab:
            await tab.wait_connected("board")
            sent = await tab.request("chat/send", {"text": "look it up"})
            await tab.wait_notification(
                "chat/event",
                lambda p: (
                    p.get("type") == "message"
                    and p.get("conversationId") == sent["conversationId"]
                    and p["message"]["role"] == "assistant"
                    and p["message"]["status"] != "streaming"
                ),
            )
            names = {t["function"]["name"] for t in endpoint.requests("access-tools")[-1]["body"]["tools"]}
        assert "board__show_board" in names and "board__lookup" not in names


# -- per-tool rules: a tool the person may not use is absent, and a call of it is answered as for no such tool --


def same_error(hidden: RpcError, unknown: RpcError, hidden_name: str, unknown_name: str) -> None:
    """No oracle: the same code, data shape and message with only the name changed."""
    assert hidden.code == unknown.code
    assert str(hidden.message).replace(hidden_name, "X") == str(unknown.message).replace(unknown_name, "X")
    assert json.dumps(hidden.data).replace(hidden_name, "X") == json.dumps(unknown.data).replace(unknown_name, "X")


def recording() -> Any:
    server = sdk_server("recording")
    module = sys.modules["recording"]
    module.RECEIVED.clear()
    return server, module.RECEIVED


async def test_a_tool_the_person_may_not_use_is_absent_from_the_workbench_and_never_called(tmp_path: Path) -> None:
    server, received = recording()
    options = {"access": {"servers": {"ledger": {"tools": {"ledger_close": {"groups": ["finance"]}}}}}}
    async with connected_tab(tmp_path, {"ledger": server}, webhost_options=options) as tab:  # token mode: no groups
        names = [t["name"] for t in (await tab.request("tools/list", {"server": "ledger"}))["tools"]]
        assert names == ["ledger_balance"]
        cached = await tab.request("tools/list", {"server": "ledger", "refresh": False})
        assert [t["name"] for t in cached["tools"]] == ["ledger_balance"]
        # Nor does the activity log show the server's whole list.
        assert not [n for n in tab.notifications if "ledger_close" in json.dumps(n)]
        args = {"server": "ledger", "arguments": {}}
        with pytest.raises(RpcError) as hidden:
            await tab.request("tools/call", {**args, "name": "ledger_close", "callId": "c1"})
        with pytest.raises(RpcError) as unknown:
            await tab.request("tools/call", {**args, "name": "ledger_nothing", "callId": "c2"})
        same_error(hidden.value, unknown.value, "ledger_close", "ledger_nothing")
        allowed = await tab.request("tools/call", {**args, "name": "ledger_balance", "callId": "c3"})
        assert allowed["content"][0]["text"] == "ledger_balance main: 42"
    calls = [params["name"] for method, params in received if method == "tools/call"]
    assert calls == ["ledger_balance"]


async def test_a_person_of_the_tool_group_calls_it(tmp_path: Path) -> None:
    server, received = recording()
    options = {**OPTIONS, "access": {"servers": {"ledger": {"tools": {"ledger_close": {"groups": ["finance"]}}}}}}
    async with (
        in_process_host(tmp_path, {"ledger": server}, webhost_options=options) as web,
        web.tab(authorization=None, client=("127.0.0.1", 1), **FINANCE) as fay,
    ):
        await fay.wait_connected("ledger")
        names = sorted(t["name"] for t in (await fay.request("tools/list", {"server": "ledger"}))["tools"])
        assert names == ["ledger_balance", "ledger_close"]
        params = {"server": "ledger", "name": "ledger_close", "arguments": {}, "callId": "c1"}
        assert (await fay.request("tools/call", params))["content"][0]["text"] == "ledger_close main: closed"
    assert ("tools/call", "ledger_close") in {(m, (p or {}).get("name")) for m, p in received}


async def test_an_app_calling_a_tool_its_person_may_not_use_gets_the_unknown_tool_answer(tmp_path: Path) -> None:
    options = {"access": {"servers": {"apps": {"tools": {"app_only_ping": {"groups": ["finance"]}}}}}}
    async with connected_tab(tmp_path, {"apps": apps_server()}, webhost_options=options) as tab:
        frame = (await tab.request("apps/open", {"server": "apps", "tool": "bridge_probe"}))["frameId"]

        async def app_call(name: str) -> RpcError:
            params = {"name": name, "arguments": {}}
            with pytest.raises(RpcError) as refused:
                await tab.request("apps/request", {"frameId": frame, "method": "tools/call", "params": params})
            return refused.value

        same_error(await app_call("app_only_ping"), await app_call("no_such_ping"), "app_only_ping", "no_such_ping")
        with pytest.raises(RpcError) as opened:
            await tab.request("apps/open", {"server": "apps", "tool": "app_only_ping"})
        assert opened.value.code == -32602 and opened.value.data == {"tool": "app_only_ping"}


async def test_the_models_call_of_a_tool_its_person_may_not_use_is_answered_as_for_no_such_tool(
    tmp_path: Path,
) -> None:
    server, received = recording()
    calls = [
        {"tool": {"id": "h1", "name": "ledger__ledger_close", "args": ["{}"]}},
        {"tool": {"id": "u1", "name": "ledger__ledger_nothing", "args": ["{}"]}},
    ]
    with running_model_endpoint() as endpoint:
        endpoint.script("access-call", [{"match": "close", "times": 1, "events": calls}, {"events": [{"text": "ok"}]}])
        model = {"id": "m", "api": "openai", "model": "access-call", "baseUrl": endpoint.openai_base_url}
        options = {
            "chat": {"models": [model], "toolCalls": "allow"},
            "access": {"servers": {"ledger": {"tools": {"ledger_close": {"groups": ["finance"]}}}}},
        }
        async with connected_tab(tmp_path, {"ledger": server}, webhost_options=options) as tab:
            sent = await tab.request("chat/send", {"text": "close the ledger"})
            done = await tab.wait_notification(
                "chat/event",
                lambda p: (
                    p.get("type") == "message"
                    and p.get("conversationId") == sent["conversationId"]
                    and p["message"]["role"] == "assistant"
                    and p["message"]["status"] != "streaming"
                ),
            )
        offered = {t["function"]["name"] for t in endpoint.requests("access-call")[0]["body"]["tools"]}
        told = [m for m in endpoint.requests("access-call")[-1]["body"]["messages"] if m["role"] == "tool"]
    assert offered == {"ledger__ledger_balance"}
    hidden, unknown = (p["call"] for p in done["message"]["parts"] if p["type"] == "tool")
    assert hidden["status"] == unknown["status"] == "error"
    assert hidden["error"].replace("ledger_close", "X") == unknown["error"].replace("ledger_nothing", "X")
    assert [json.dumps(m["content"]).replace("ledger_close", "X") for m in told[:1]] == [
        json.dumps(m["content"]).replace("ledger_nothing", "X") for m in told[1:]
    ]
    assert "tools/call" not in {method for method, _ in received}


async def test_history_leaves_out_calls_of_what_the_person_may_no_longer_use_before_its_limit(tmp_path: Path) -> None:
    server, _ = recording()
    args = {"server": "ledger", "arguments": {}}
    async with connected_tab(tmp_path, {"ledger": server}) as tab:  # no rules yet: both tools are the person's
        for number, name in enumerate(("ledger_balance", "ledger_close")):
            await tab.request("tools/call", {**args, "name": name, "callId": f"c{number}"})
            await tab.wait_notification("history/added", lambda p, name=name: p["entry"]["name"] == name)
        entries = (await tab.request("history/list"))["entries"]
        assert [e["name"] for e in entries] == ["ledger_close", "ledger_balance"]
    closed_id = entries[0]["id"]
    options = {"access": {"servers": {"ledger": {"tools": {"ledger_close": {"groups": ["finance"]}}}}}}
    server, _ = recording()
    async with connected_tab(tmp_path, {"ledger": server}, webhost_options=options) as tab:  # the same database
        newest = (await tab.request("history/list", {"limit": 1}))["entries"]
        assert [e["name"] for e in newest] == ["ledger_balance"]  # filtered first, then the limit
        with pytest.raises(RpcError) as hidden:
            await tab.request("history/get", {"id": closed_id})
        with pytest.raises(RpcError) as missing:
            await tab.request("history/get", {"id": closed_id + 1000})
        same_error(hidden.value, missing.value, str(closed_id), str(closed_id + 1000))


async def test_inputs_of_servers_the_person_may_not_use_are_not_theirs(tmp_path: Path) -> None:
    inputs: list[dict[str, Any]] = [
        {"type": "promptString", "id": "payroll_key", "description": "for payroll", "password": True},
        {"type": "promptString", "id": "basic_key", "description": "for basic"},
        {"type": "promptString", "id": "loose", "description": "used by nothing"},
    ]
    entries = {
        "payroll": {"command": "in-process", "env": {"KEY": "${input:payroll_key}"}},
        "basic": {"command": "in-process", "env": {"KEY": "${input:basic_key}"}},
    }
    servers = {"basic": sdk_server("basic"), "payroll": sdk_server("traced")}
    async with (
        in_process_host(tmp_path, servers, entries=entries, webhost_options=OPTIONS, inputs=inputs) as web,
        web.tab(authorization=None, client=("127.0.0.1", 1), **STAFF) as bob,
    ):
        listed = (await bob.request("inputs/list"))["inputs"]
        assert sorted(i["id"] for i in listed) == ["basic_key", "loose"]
        assert "payroll" not in json.dumps(listed)
        errors = []
        for input_id in ("payroll_key", "nothing_key"):
            with pytest.raises(RpcError) as refused:
                await bob.request("inputs/set", {"values": {input_id: "v"}})
            errors.append(refused.value)
        same_error(errors[0], errors[1], "payroll_key", "nothing_key")
        assert (await bob.request("inputs/set", {"values": {"basic_key": "v"}}))["stored"] == ["basic_key"]
