"""The person's and the policy's decisions about the model's tool calls, in-process with our SDK servers and the
scripted model endpoint (issue 31, items 6 and 7):

- "Allow for this conversation" holds for the next calls of that tool in that conversation, and only there: another
  tool there, and the same tool in another conversation, still ask.
- A tool denied to the model (`modelTools: deny`) is denied to an app the model's call opened, too; the same app
  opened from the workbench may call it (the model's policy is not the workbench's).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.inprocess import AsgiWsClient, in_process_host, sdk_server
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import RpcError
from webhost.chat.transcript import new_id

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


@asynccontextmanager
async def chat_tab(
    tmp_path: Path, endpoint: ModelEndpointServer, model: str, **options: Any
) -> AsyncIterator[AsgiWsClient]:
    servers = options.pop("servers", None)
    chat = {"models": [{"id": "m", "api": "openai", "model": model, "baseUrl": endpoint.openai_base_url}], **options}
    webhost: dict[str, Any] = {"chat": chat, **({"servers": servers} if servers else {})}
    mcp = {"basic": sdk_server("basic"), "board": sdk_server("chat_apps")}
    async with in_process_host(tmp_path, mcp, webhost_options=webhost) as host, host.tab() as tab:
        await tab.wait_connected("basic")
        await tab.wait_connected("board")
        yield tab


async def lookups(tab: AsgiWsClient) -> int:
    """How many times the board server's `lookup` ran so far."""
    ran = await tab.request(
        "tools/call", {"server": "board", "name": "calls", "arguments": {}, "callId": new_id("c-count-")}
    )
    return int(json.loads(ran["content"][0]["text"]).get("lookup", 0))


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"tool": {"id": call_id, "name": name, "args": [json.dumps(arguments)]}}]


async def answered(tab: AsgiWsClient, conversation: str) -> dict[str, Any]:
    params = await tab.wait_notification(
        "chat/event",
        lambda p: (
            p.get("type") == "message"
            and p.get("conversationId") == conversation
            and p["message"]["role"] == "assistant"
            and p["message"]["status"] != "streaming"
        ),
    )
    message: dict[str, Any] = params["message"]
    return message


def calls_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p["call"] for p in message["parts"] if p["type"] == "tool"]


async def asked(tab: AsgiWsClient, conversation: str, tool: str) -> dict[str, Any]:
    return await tab.wait_notification(
        "approval/request",
        lambda p: (
            p["kind"] == "model-tool-call"
            and p["detail"]["conversationId"] == conversation
            and p["detail"]["tool"] == tool
        ),
    )


def approvals_asked(tab: AsgiWsClient) -> list[dict[str, Any]]:
    return [n["params"] for n in tab.notifications if n["method"] == "approval/request"]


async def test_allow_for_this_conversation_holds_for_that_tool_in_that_conversation_only(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "remember-here",
        [
            {"match": "echo A1", "times": 1, "events": tool_call("a1", "basic__echo", {"text": "a1"})},
            {"match": "echo A2", "times": 1, "events": tool_call("a2", "basic__echo", {"text": "a2"})},
            {"match": "add A3", "times": 1, "events": tool_call("a3", "basic__add", {"a": 1, "b": 2})},
            {"match": "echo B1", "times": 1, "events": tool_call("b1", "basic__echo", {"text": "b1"})},
            {"events": [{"text": "done"}]},
        ],
    )
    async with chat_tab(tmp_path, endpoint, "remember-here", toolCalls="ask") as tab:
        sent = await tab.request("chat/send", {"text": "echo A1"})
        here = sent["conversationId"]
        first = await asked(tab, here, "echo")
        assert first["detail"]["remember"] == "conversation"
        await tab.request("approvals/respond", {"id": first["id"], "decision": "allow", "remember": True})
        assert [c["status"] for c in calls_of(await answered(tab, here))] == ["ok"]

        # The same tool, next in this conversation: it runs without asking (a question would hold the answer).
        await tab.request("chat/send", {"conversationId": here, "text": "echo A2"})
        [again] = calls_of(await answered(tab, here))
        assert again["status"] == "ok" and again["arguments"] == {"text": "a2"}
        assert not approvals_asked(tab)

        # Another tool in this conversation still asks.
        await tab.request("chat/send", {"conversationId": here, "text": "add A3"})
        other_tool = await asked(tab, here, "add")
        await tab.request("approvals/respond", {"id": other_tool["id"], "decision": "deny"})
        assert [c["status"] for c in calls_of(await answered(tab, here))] == ["denied"]

        # The same tool in another conversation still asks.
        elsewhere = (await tab.request("chat/send", {"text": "echo B1"}))["conversationId"]
        other_conversation = await asked(tab, elsewhere, "echo")
        assert other_conversation["detail"]["arguments"] == {"text": "b1"}
        await tab.request("approvals/respond", {"id": other_conversation["id"], "decision": "allow"})
        assert [c["status"] for c in calls_of(await answered(tab, elsewhere))] == ["ok"]


async def test_a_tool_denied_to_the_model_is_denied_to_the_app_its_call_opened(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "denied-to-apps",
        [
            {"match": "board", "times": 1, "events": tool_call("s1", "board__show_board", {"title": "T", "items": []})},
            {"events": [{"text": "shown"}]},
        ],
    )
    servers = {"board": {"modelTools": {"lookup": "deny"}}}
    async with chat_tab(tmp_path, endpoint, "denied-to-apps", toolCalls="allow", servers=servers) as tab:
        sent = await tab.request("chat/send", {"text": "show the board"})
        conversation = sent["conversationId"]
        [call] = calls_of(await answered(tab, conversation))
        names = {t["function"]["name"] for t in endpoint.requests("denied-to-apps")[-1]["body"]["tools"]}
        assert "board__show_board" in names and "board__lookup" not in names  # not offered to the model
        in_chat = await tab.request(
            "apps/open", {"server": "board", "tool": "show_board", "conversationId": conversation, "callId": call["id"]}
        )
        lookup = {"method": "tools/call", "params": {"name": "lookup", "arguments": {"q": "word"}}}
        before = await lookups(tab)  # the in-process server's counts are its module's: other tests' calls too
        with pytest.raises(RpcError) as refused:
            await tab.request("apps/request", {"frameId": in_chat["frameId"], **lookup})
        assert "denied to the model" in str(refused.value.message)
        # What the model is not denied, the app may still call (its app-only tool).
        refresh = {"method": "tools/call", "params": {"name": "board_refresh", "arguments": {}}}
        done = await tab.request("apps/request", {"frameId": in_chat["frameId"], **refresh})
        assert done["content"] == [{"type": "text", "text": "refreshed"}]
        # The same app opened in the workbench is not the model's: the model's policy does not bind it.
        in_workbench = await tab.request("apps/open", {"server": "board", "tool": "show_board"})
        looked_up = await tab.request("apps/request", {"frameId": in_workbench["frameId"], **lookup})
        assert looked_up["content"] == [{"type": "text", "text": "word: a word in the test dictionary"}]
        assert await lookups(tab) == before + 1  # the workbench's call only
