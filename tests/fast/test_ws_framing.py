"""The page's WebSocket in-process: JSON-RPC framing errors, notifications, concurrency, internal errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.fast import connected_tab, error_of
from tests.support.inprocess import AsgiWsClient, in_process_host, sdk_server
from webhost import __version__
from webhost.app import HostApp
from webhost.methods import METHODS
from webhost.ws import MAX_FRAME

pytestmark = pytest.mark.anyio


async def frame_error(tab: AsgiWsClient, request_id: Any = None) -> dict[str, Any]:
    return error_of(await tab.wait_response(request_id))


async def still_serving(tab: AsgiWsClient) -> None:
    info = await tab.request("session/info")
    assert info["version"] == __version__


@pytest.mark.parametrize(
    ("frame", "code", "message"),
    [
        ("{not json", -32700, "parse error"),
        ("[1, 2]", -32600, "request object"),
        ('"a string"', -32600, "request object"),
        ('{"jsonrpc": "2.0", "id": [1], "method": "session/info"}', -32600, "id must be"),
        ('{"jsonrpc": "2.0", "id": true, "method": "session/info"}', -32600, "id must be"),
        ('{"jsonrpc": "2.0", "id": {"a": 1}, "method": "session/info"}', -32600, "id must be"),
    ],
    ids=["not-json", "array", "string", "id-list", "id-bool", "id-object"],
)
async def test_a_bad_frame_gets_an_error_without_id_and_the_socket_stays_open(
    tmp_path: Path, frame: str, code: int, message: str
) -> None:
    async with in_process_host(tmp_path, {}) as host, host.tab() as tab:
        await tab.send_raw(frame)
        error = await frame_error(tab)
        assert error["code"] == code and message in error["message"]
        await still_serving(tab)


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ({"jsonrpc": "1.0", "id": 7, "method": "session/info"}, "not a JSON-RPC 2.0 request"),
        ({"id": 7, "method": "session/info"}, "not a JSON-RPC 2.0 request"),
        ({"jsonrpc": "2.0", "id": 7, "method": 5}, "not a JSON-RPC 2.0 request"),
        ({"jsonrpc": "2.0", "id": 7, "method": "session/info", "params": [1]}, "params must be an object"),
        ({"jsonrpc": "2.0", "id": 7, "method": "session/info", "params": "x"}, "params must be an object"),
    ],
    ids=["jsonrpc-1.0", "no-jsonrpc", "method-number", "params-list", "params-string"],
)
async def test_an_invalid_request_is_answered_with_its_own_id(
    tmp_path: Path, frame: dict[str, Any], message: str
) -> None:
    async with in_process_host(tmp_path, {}) as host, host.tab() as tab:
        await tab.send_raw(json.dumps(frame))
        error = await frame_error(tab, 7)
        assert error["code"] == -32600 and message in error["message"]
        await still_serving(tab)


async def test_null_params_are_no_params(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}) as host, host.tab() as tab:
        await tab.send_raw(json.dumps({"jsonrpc": "2.0", "id": "s-1", "method": "servers/list", "params": None}))
        response = await tab.wait_response("s-1")
        assert response["result"] == {"servers": []}


async def test_an_unknown_method_is_method_not_found(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}) as host, host.tab() as tab:
        response = await tab.request_raw("tools/explode", {})
        error = error_of(response)
        assert error["code"] == -32601 and "tools/explode" in error["message"]
        await still_serving(tab)


async def test_a_binary_frame_of_utf8_json_is_served_and_one_that_is_not_utf8_is_a_parse_error(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}) as host, host.tab() as tab:
        await tab.send_bytes(json.dumps({"jsonrpc": "2.0", "id": 41, "method": "servers/list"}).encode())
        assert (await tab.wait_response(41))["result"] == {"servers": []}
        await tab.send_bytes(b"\xff\xfe{")
        error = await frame_error(tab)
        assert error["code"] == -32700 and "UTF-8" in error["message"]
        await still_serving(tab)


async def test_a_frame_over_16_mib_is_refused_and_the_socket_stays_open(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}) as host, host.tab() as tab:
        padding = "x" * (MAX_FRAME + 1)
        await tab.send_raw(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/info", "params": {"pad": padding}})
        )
        error = await frame_error(tab)
        assert error["code"] == -32600 and "larger than" in error["message"]
        assert 1 not in tab._responses  # the oversized request itself was never run
        await still_serving(tab)


async def test_a_notification_gets_no_answer(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}) as host, host.tab() as tab:
        await tab.send_raw(json.dumps({"jsonrpc": "2.0", "method": "session/info"}))
        await tab.send_raw(json.dumps({"jsonrpc": "2.0", "method": "no/such/method"}))
        await tab.send_raw(json.dumps({"jsonrpc": "2.0", "method": "tools/call", "params": {"server": "nope"}}))
        await still_serving(tab)
        assert tab._responses == {}  # nothing but the one request was answered


async def test_a_slow_call_does_not_block_a_fast_request(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, {"basic": sdk_server("basic")}) as tab:
        hanging = tab.start_request(
            "tools/call", {"server": "basic", "name": "hang", "arguments": {}, "callId": "c-hang"}
        )
        await tab.wait_notification(
            "activity", lambda p: p["entry"]["method"] == "tools/call" and p["entry"]["direction"] == "out"
        )
        listed = await tab.request("resources/read", {"server": "basic", "uri": "basic://text"})
        assert listed["contents"][0]["text"].startswith("Hello from the basic test server.")
        assert hanging not in tab._responses
        assert await tab.request("tools/cancel", {"callId": "c-hang"}) == {"cancelled": True}
        error = error_of(await tab.wait_response(hanging))
        assert error["code"] == -32800


async def test_a_bug_in_a_handler_answers_the_request_and_keeps_the_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug is webhost's fault, not the MCP server's: -32603 with a reference; the traceback, with the same
    reference, goes to the log and never to the tab."""

    async def broken(session: Any, params: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("secret-detail")

    monkeypatch.setitem(METHODS, "servers/list", broken)
    async with in_process_host(tmp_path, {}) as host, host.tab() as tab:
        response = await tab.request_raw("servers/list")
        error = error_of(response)
        found = re.fullmatch(r"internal error \(ref ([0-9a-f]{8})\)", error["message"])
        assert error["code"] == -32603 and found is not None, error
        assert error["data"] == {"ref": found[1]}
        assert "KeyError" not in json.dumps(response) and "secret-detail" not in json.dumps(response)
        await still_serving(tab)
        again = error_of(await tab.request_raw("servers/list"))
        assert again["code"] == -32603 and again["data"]["ref"] != found[1]  # one reference per failure
    (logged,) = [r for r in caplog.records if found[1] in r.getMessage()]
    assert "servers/list" in logged.getMessage() and logged.exc_info is not None
    assert logged.exc_info[0] is KeyError


async def test_a_result_json_cannot_carry_is_answered_as_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def not_a_number(session: Any, params: dict[str, Any]) -> dict[str, Any]:
        return {"value": float("nan")}

    monkeypatch.setitem(METHODS, "servers/list", not_a_number)
    async with in_process_host(tmp_path, {}) as host, host.tab() as tab:
        error = error_of(await tab.request_raw("servers/list"))
        assert error["code"] == -32603 and "could not be encoded as JSON" in error["message"]
        await still_serving(tab)


async def test_webhost_stopping_answers_what_a_tab_waits_for_with_a_code_of_its_own(tmp_path: Path) -> None:
    """Stopping is webhost's doing, not the server's: -32005 (not -32000) with the request's method."""
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}) as host, host.tab() as tab:
        await tab.wait_connected("basic")
        hanging = tab.start_request(
            "tools/call", {"server": "basic", "name": "hang", "arguments": {}, "callId": "c-hang"}
        )
        await tab.wait_notification(
            "activity", lambda p: p["entry"]["method"] == "tools/call" and p["entry"]["direction"] == "out"
        )
        assert isinstance(host.app, HostApp)
        await host.app.tabs.stop(timeout=30)
        response = await tab.wait_response(hanging)
    assert response["error"] == {"code": -32005, "message": "webhost is stopping", "data": {"method": "tools/call"}}
