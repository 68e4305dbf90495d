"""Bad frames answer, they don't kill; a slow tab is bounded; big results are capped (hardening, items 2 and 3)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

from tests.support.inprocess import AsgiWsClient, InProcessHost, in_process_host
from tests.support.process import WAIT
from webhost import response_parts

# Server logging is deprecated in 2026-07-28 but still what a noisy server sends.
pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

chatty = MCPServer("chatty")
received: list[Any] = []


@chatty.tool()
def echo(value: Any) -> str:
    """Echo what arrived, as JSON (so a test sees exactly what reached the server)."""
    received.append(value)
    return json.dumps(value)


@chatty.tool()
async def chatter(ctx: Context[Any, Any], lines: int = 3000) -> str:
    """Log `lines` messages as fast as possible, then answer."""
    for i in range(lines):
        await ctx.info(f"line {i} " + "x" * 300)
    return "done"


@chatty.tool()
def blob(size: int) -> str:
    return "x" * size


@asynccontextmanager
async def host(tmp_path: Path, **limits: int) -> AsyncIterator[InProcessHost]:
    options = {"limits": limits} if limits else None
    async with in_process_host(tmp_path, {"chatty": chatty, "other": chatty}, webhost_options=options) as running:
        yield running


async def raw_answer(tab: AsgiWsClient, text: str) -> dict[str, Any]:
    """Send one raw frame and return the error frame answering it (id null or the frame's id)."""
    before = len(tab.notifications)
    await tab.send_raw(text)
    with anyio.fail_after(WAIT):
        while True:
            for key in (None, 7):
                if key in tab._responses:
                    return tab._responses.pop(key)
            await tab._changed.wait()
            assert len(tab.notifications) >= before


@pytest.mark.parametrize(
    ("frame", "code", "words"),
    [
        ("[" * 100_000 + "]" * 100_000, -32700, "nested too deeply"),
        (
            '{"jsonrpc": "2.0", "id": 7, "method": "servers/list", "params": {"n": ' + "9" * 5000 + "}}",
            -32700,
            "digits",
        ),
        (
            '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"n": NaN}}',
            -32700,
            "NaN is not a JSON value",
        ),
        ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"n": -Infinity}}', -32700, "Infinity"),
        (
            '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"server": "chatty", "name": "echo", '
            '"callId": "c", "arguments": {"value": "\\ud800"}}}',
            -32602,
            "lone UTF-16 surrogate",
        ),
        (
            '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"server": "chatty", "name": "echo", '
            '"callId": "c", "arguments": {"\\udfff": 1}}}',
            -32602,
            "lone UTF-16 surrogate",
        ),
    ],
    ids=["deep-nesting", "huge-integer", "nan", "infinity", "surrogate-value", "surrogate-key"],
)
async def test_a_bad_frame_gets_an_error_naming_the_problem_and_nothing_else_breaks(
    tmp_path: Path, frame: str, code: int, words: str
) -> None:
    received.clear()
    async with host(tmp_path) as running, running.tab() as tab:
        await tab.wait_connected("chatty")
        answer = await raw_answer(tab, frame)
        assert answer["error"]["code"] == code and words in answer["error"]["message"], answer
        assert received == []  # nothing reached the server
        # The socket, the session and the connection are all still there.
        result = await tab.request(
            "tools/call",
            {"server": "chatty", "name": "echo", "callId": "after", "arguments": {"value": "\ud83d\ude00 fine"}},
        )
        assert json.loads(result["content"][0]["text"]) == "\U0001f600 fine"
        states = {s["name"]: s["status"] for s in (await tab.request("servers/list"))["servers"]}
        assert states == {"chatty": "connected", "other": "connected"}


async def test_a_paired_surrogate_escape_is_ordinary_text(tmp_path: Path) -> None:
    async with host(tmp_path) as running, running.tab() as tab:
        await tab.wait_connected("chatty")
        await tab.send_raw(
            '{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"server": "chatty", '
            '"name": "echo", "callId": "c9", "arguments": {"value": "\\ud83d\\ude00"}}}'
        )
        response = await tab.wait_response(9)
        assert json.loads(response["result"]["content"][0]["text"]) == "\U0001f600"


async def test_a_tab_that_reads_slowly_loses_commentary_with_a_count_but_not_its_answer(tmp_path: Path) -> None:
    async with host(tmp_path, maxQueuedBytes=1024 * 1024) as running, running.tab(buffer=0) as tab:
        await tab.wait_connected("chatty")
        tab.pause()
        call = tab.start_request(
            "tools/call", {"server": "chatty", "name": "chatter", "callId": "flood", "arguments": {"lines": 4000}}
        )
        async with running.tab() as other:  # another tab is served meanwhile
            await other.wait_connected("chatty")
            assert (
                await other.request(
                    "tools/call", {"server": "chatty", "name": "blob", "callId": "b", "arguments": {"size": 10}}
                )
            )["content"][0]["text"] == "x" * 10
            # The flood is over (its log lines were all queued for the paused tab before its answer): every tab
            # of the person hears the call was recorded.
            await other.wait_notification("history/added", lambda p: p["entry"]["callId"] == "flood", timeout=60)
        tab.resume()
        response = await tab.wait_response(call, timeout=60)
        assert response["result"]["content"][0]["text"] == "done"
        dropped = await tab.wait_notification("outbox/dropped")
        assert dropped["count"] > 0 and set(dropped["methods"]) <= {"activity", "server/log"}


async def test_a_tab_that_stops_reading_is_closed_and_nobody_else_waits(tmp_path: Path) -> None:
    async with host(tmp_path, maxQueuedBytes=1024 * 1024) as running, running.tab(buffer=0) as tab:
        await tab.wait_connected("chatty")
        tab.pause()
        for n in range(30):  # answers are never dropped: 30 x 100 KB is past the 1 MiB budget
            tab.start_request(
                "tools/call", {"server": "chatty", "name": "blob", "callId": f"b{n}", "arguments": {"size": 100_000}}
            )
        with anyio.fail_after(WAIT):
            await tab.app_done.wait()  # webhost ended that socket's session by itself
        async with running.tab() as other:
            await other.wait_connected("chatty")
            result = await other.request(
                "tools/call", {"server": "chatty", "name": "blob", "callId": "ok", "arguments": {"size": 5}}
            )
            assert result["content"][0]["text"] == "xxxxx"


async def test_a_result_over_the_limit_is_refused_with_the_sizes(tmp_path: Path) -> None:
    async with host(tmp_path, maxResultBytes=100_000) as running, running.tab() as tab:
        await tab.wait_connected("chatty")
        response = await tab.request_raw(
            "tools/call", {"server": "chatty", "name": "blob", "callId": "big", "arguments": {"size": 2_000_000}}
        )
        error = response["error"]
        assert error["code"] == -32003 and "too large" in error["message"] and "maxResultBytes" in error["message"]
        small = await tab.request(
            "tools/call", {"server": "chatty", "name": "blob", "callId": "small", "arguments": {"size": 30_000}}
        )
        assert len(small["content"][0]["text"]) == 30_000


@chatty.tool()
def around(text: str, before: int, after: int) -> str:
    """`text` with `before` x's before it and `after` y's after it."""
    return "x" * before + text + "y" * after


def _joined_parts(tab: AsgiWsClient, request_id: int) -> dict[str, Any]:
    """The response sent in parts for `request_id`, joined as the page joins it (static/js/rpc.js)."""
    parts = [
        json.loads(text)["params"]
        for text in tab.received
        if '"response/part"' in text[:60] and json.loads(text)["params"]["id"] == request_id
    ]
    assert [part["index"] for part in parts] == list(range(len(parts)))
    assert parts[-1].get("last") is True and not any(part.get("last") for part in parts[:-1])
    whole: dict[str, Any] = json.loads("".join(part["text"] for part in parts))
    assert parts[0]["chars"] == len("".join(part["text"] for part in parts))
    return whole


async def _wait_last_part(tab: AsgiWsClient, request_id: int) -> None:
    await tab.wait_notification("response/part", lambda p: p["id"] == request_id and p.get("last"), timeout=60)


async def test_a_very_large_result_comes_in_parts_to_a_tab_that_asked_and_whole_to_one_that_did_not(
    tmp_path: Path,
) -> None:
    size = response_parts.STREAM_OVER + 1000
    params = {"server": "chatty", "name": "blob", "arguments": {"size": size}}
    async with host(tmp_path) as running, running.tab(query="parts=1") as in_parts, running.tab() as whole:
        await in_parts.wait_connected("chatty")
        request_id = in_parts.start_request("tools/call", {**params, "callId": "p"})
        await _wait_last_part(in_parts, request_id)
        result = _joined_parts(in_parts, request_id)["result"]
        assert result["content"][0]["text"] == "x" * size
        assert sum('"response/part"' in text[:60] for text in in_parts.received) >= size // response_parts.PIECE_CHARS
        assert all(len(text) < 2 * response_parts.PIECE_CHARS + 1000 for text in in_parts.received)
        # A small result on the same tab is one frame, as before.
        small = await in_parts.request("tools/call", {**params, "arguments": {"size": 10}, "callId": "s"})
        assert small["content"][0]["text"] == "x" * 10

        one = await whole.request("tools/call", {**params, "callId": "w"})
        assert one == result
        assert not any('"response/part"' in text[:60] for text in whole.received)


async def test_a_result_sent_in_parts_is_what_the_server_answered_a_configured_value_included(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value a part boundary cuts in two arrives whole once the parts are joined."""
    secret = "the-SECRET-value-77"
    monkeypatch.setenv("WH_PARTS_SECRET", secret)
    entries = {"chatty": {"command": "in-process", "env": {"API_KEY": "${WH_PARTS_SECRET}"}}}
    before = response_parts.PIECE_CHARS - 5  # the first piece would end inside the secret
    arguments = {"text": secret, "before": before, "after": response_parts.STREAM_OVER}
    async with (
        in_process_host(tmp_path, {"chatty": chatty}, entries=entries) as running,
        running.tab(query="parts=1") as tab,
    ):
        await tab.wait_connected("chatty")
        request_id = tab.start_request(
            "tools/call", {"server": "chatty", "name": "around", "arguments": arguments, "callId": "c"}
        )
        await _wait_last_part(tab, request_id)
        text = _joined_parts(tab, request_id)["result"]["content"][0]["text"]
    # A person's results are theirs (issue 25 item 8): nothing is masked by value in them, so nothing there
    # tells a server which strings are secrets (issue 24 item 1); the joined parts are the answer, whole.
    assert text == "x" * before + secret + "y" * response_parts.STREAM_OVER
