"""What the model may use, per conversation (contract §8.1 `[data-testid="chat-tools"]`, issue 28 item 4): the
configured default (`chat.defaultServers`), the person's choice kept with the conversation, and the backend's
refusal of a call of a tool that was not offered. webhost's page WebSocket in-process, two real SDK servers
over stdio, the scripted model endpoint over a real socket."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.fast.test_chat_inprocess import calls_of, final
from tests.support.inprocess import AsgiWsClient, InProcessHost, in_process_host, sdk_server
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import RpcError

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


@asynccontextmanager
async def two_servers(
    tmp_path: Path, endpoint: ModelEndpointServer, model: str, **chat: Any
) -> AsyncIterator[tuple[InProcessHost, AsgiWsClient]]:
    entry = {"id": "m", "api": "openai", "model": model, "baseUrl": endpoint.openai_base_url, "apiKey": "k"}
    options = {"chat": {"models": [entry], "toolCalls": "allow", **chat}}
    servers = {"one": sdk_server("basic"), "two": sdk_server("basic")}
    async with in_process_host(tmp_path, servers, webhost_options=options) as host:
        async with host.tab() as tab:
            await tab.wait_connected("one")
            await tab.wait_connected("two")
            yield host, tab


def offered(endpoint: ModelEndpointServer, model: str, index: int = -1) -> set[str]:
    body = endpoint.requests(model)[index]["body"]
    return {t["function"]["name"] for t in body.get("tools") or []}


def checked(picker: dict[str, Any]) -> dict[str, Any]:
    return {s["name"]: (s["checked"], {t["name"] for t in s["tools"] if t["checked"]}) for s in picker["servers"]}


async def test_a_new_conversation_offers_the_configured_default_servers(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("default-servers", [{"events": [{"text": "Fine."}]}])
    async with two_servers(tmp_path, endpoint, "default-servers", defaultServers=["two"]) as (_, tab):
        picker = await tab.request("chat/tools", {})
        shown = checked(picker)
        assert shown["one"][0] is False and shown["two"][0] is True and "echo" in shown["two"][1]
        sent = await tab.request("chat/send", {"text": "hello"})
        await final(tab, sent["conversationId"])
        names = offered(endpoint, "default-servers")
        assert "two__echo" in names and not any(n.startswith("one__") for n in names)


async def test_the_choice_is_kept_with_the_conversation_and_an_unoffered_call_is_refused(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    model = "choice-kept"
    endpoint.script(
        model,
        [
            # The model calls a tool it was not offered (a small model does): refused, never run.
            {
                "match": "echo anyway",
                "times": 1,
                "events": [{"tool": {"id": "c1", "name": "one__echo", "args": ['{"text": "x"}']}}],
            },
            {"events": [{"text": "Done."}]},
        ],
    )
    async with two_servers(tmp_path, endpoint, model) as (host, tab):
        # Chosen before the first message: it holds from the conversation's first request.
        choice = {"servers": ["one"], "toolsOff": [{"server": "one", "tool": "echo"}]}
        sent = await tab.request("chat/send", {"text": "first", "tools": choice})
        conversation = sent["conversationId"]
        await final(tab, conversation)
        first = offered(endpoint, model)
        assert "one__add" in first and "one__echo" not in first and not any(n.startswith("two__") for n in first)
        # Another tab (a reload) reads the same choice back from the database.
        async with host.tab() as other:
            shown = checked(await other.request("chat/tools", {"conversationId": conversation}))
            assert shown["one"][0] is True and shown["two"][0] is False
            assert "echo" not in shown["one"][1] and "add" in shown["one"][1]
        await tab.request("chat/send", {"conversationId": conversation, "text": "echo anyway"})
        answer = await final(tab, conversation)
        [call] = calls_of(answer)
        assert call["status"] == "error" and call["server"] is None
        assert "no tool named 'one__echo'" in call["error"]
        # Checking the server's echo again offers it at the next request.
        await tab.request(
            "chat/tools/set", {"conversationId": conversation, "tools": {"servers": ["one"], "toolsOff": []}}
        )
        await tab.request("chat/send", {"conversationId": conversation, "text": "again"})
        await final(tab, conversation)
        assert "one__echo" in offered(endpoint, model)


async def test_a_malformed_choice_is_refused_with_a_clear_error(tmp_path: Path, endpoint: ModelEndpointServer) -> None:
    async with two_servers(tmp_path, endpoint, "bad-choice") as (_, tab):
        with pytest.raises(RpcError, match="params.tools.servers must be a list"):
            await tab.request("chat/send", {"text": "hi", "tools": {"servers": "one"}})
        with pytest.raises(RpcError, match="toolsOff must be a list"):
            await tab.request("chat/send", {"text": "hi", "tools": {"servers": None, "toolsOff": [{"server": 1}]}})
        assert (await tab.request("chat/list"))["conversations"] == []
