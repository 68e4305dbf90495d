"""A tool call sent while the person's connection to its server is still opening (issue 31, item 4): it waits
for the connection, at most `timeouts.connect`, rather than failing at once with -32002 "not connected". The
server is a real SDK server that holds its handshake (`server/discover` or `initialize`) until the test lets it
through; the wait is seen in the activity log before the handshake is let through. The model's calls in the chat
wait the same way (a server connecting again while the model writes its call)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server import MCPServer, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult

from tests.support.inprocess import AsgiWsClient, in_process_host
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import RpcError

pytestmark = pytest.mark.anyio


def slow_to_connect(handshake: anyio.Event | None = None, *, later: list[anyio.Event] | None = None) -> MCPServer:
    """An SDK server whose handshake waits for `handshake` (and each next one for the next event of `later`, once
    the test put one there), and one tool."""
    server = MCPServer("slow", version="1.0.0")
    holds = later if later is not None else []

    @server.tool(description="Return the text.")
    def echo(text: str) -> str:
        return text

    async def hold_handshake(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method in ("server/discover", "initialize"):
            if handshake is not None:
                await handshake.wait()
            elif holds:
                await holds.pop(0).wait()
        return await call_next(ctx)

    server.middleware.insert(0, hold_handshake)
    return server


async def status_of(tab: AsgiWsClient, server: str) -> str:
    servers = (await tab.request("servers/list"))["servers"]
    return str(next(s for s in servers if s["name"] == server)["status"])


def waiting_line(params: dict[str, Any]) -> bool:
    entry = params["entry"]
    return entry["server"] == "slow" and "waiting for slow to finish connecting" in entry["summary"]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


async def test_a_call_sent_while_the_server_connects_waits_for_the_connection_and_runs(tmp_path: Path) -> None:
    handshake = anyio.Event()
    async with in_process_host(tmp_path, {"slow": slow_to_connect(handshake)}) as host, host.tab() as tab:
        assert await status_of(tab, "slow") == "connecting"
        call = tab.start_request(
            "tools/call", {"server": "slow", "name": "echo", "arguments": {"text": "made it"}, "callId": "c-early"}
        )
        entry = (await tab.wait_notification("activity", waiting_line))["entry"]
        assert "(at most 30 s)" in entry["summary"]
        assert await status_of(tab, "slow") == "connecting"  # the call is waiting: the handshake is still held
        handshake.set()
        response = await tab.wait_response(call)
    assert "error" not in response, response
    assert response["result"]["content"] == [{"type": "text", "text": "made it"}]


async def test_a_call_to_a_server_that_never_connects_fails_after_the_bound_saying_so(tmp_path: Path) -> None:
    never = anyio.Event()
    options = {"timeouts": {"connect": 1}}
    async with (
        in_process_host(tmp_path, {"slow": slow_to_connect(never)}, webhost_options=options) as host,
        host.tab() as tab,
    ):
        assert await status_of(tab, "slow") == "connecting"
        with pytest.raises(RpcError) as refused:
            await tab.request(
                "tools/call", {"server": "slow", "name": "echo", "arguments": {"text": "x"}, "callId": "c-never"}
            )
        await tab.wait_notification("activity", waiting_line)
    assert refused.value.code == -32002
    assert refused.value.message.startswith("server 'slow' ")
    assert "so the call of echo was not sent" in refused.value.message
    assert "connect" in refused.value.message


async def test_the_models_call_to_a_server_connecting_again_waits_for_it_and_runs(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "connecting-again",
        [
            {
                "match": "echo",
                "times": 1,
                "events": [
                    {"text": "Calling. "},  # the request, with the offered tools, was sent
                    {"gate": "connecting-again"},  # and the call is not written yet
                    {"tool": {"id": "e1", "name": "slow__echo", "args": ['{"text": "after reconnecting"}']}},
                ],
            },
            {"events": [{"text": "done"}]},
        ],
    )
    later: list[anyio.Event] = []
    model = {"id": "m", "api": "openai", "model": "connecting-again", "baseUrl": endpoint.openai_base_url}
    options = {"chat": {"models": [model], "toolCalls": "allow"}}
    async with (
        in_process_host(tmp_path, {"slow": slow_to_connect(later=later)}, webhost_options=options) as host,
        host.tab() as tab,
    ):
        await tab.wait_connected("slow")
        conversation = (await tab.request("chat/send", {"text": "echo it"}))["conversationId"]
        await tab.wait_notification("chat/event", lambda p: p.get("type") == "text")
        handshake = anyio.Event()
        later.append(handshake)
        await tab.request("servers/reconnect", {"server": "slow"})
        assert await status_of(tab, "slow") == "connecting"
        endpoint.release("connecting-again")
        entry = (await tab.wait_notification("activity", waiting_line))["entry"]
        assert entry["summary"].startswith("the model's call of echo: ")
        handshake.set()
        answer = await tab.wait_notification(
            "chat/event",
            lambda p: (
                p.get("type") == "message"
                and p.get("conversationId") == conversation
                and p["message"]["role"] == "assistant"
                and p["message"]["status"] != "streaming"
            ),
        )
    [call] = [p["call"] for p in answer["message"]["parts"] if p["type"] == "tool"]
    assert call["status"] == "ok", call
    assert call["result"]["content"] == [{"type": "text", "text": "after reconnecting"}]
