"""The chat's turn loop in-process (contract §8): webhost's page WebSocket, our SDK test servers, and the
scripted model endpoint over a real socket with the official SDK clients on webhost's side."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.inprocess import AsgiWsClient, InProcessHost, in_process_host, sdk_server
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import RpcError

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


def chat_options(endpoint: ModelEndpointServer, model: str, *, api: str = "openai", **extra: Any) -> dict[str, Any]:
    base = endpoint.openai_base_url if api == "openai" else endpoint.anthropic_base_url
    return {"chat": {"models": [{"id": "m", "api": api, "model": model, "baseUrl": base, "apiKey": "k-test"}], **extra}}


@asynccontextmanager
async def chat_host(
    tmp_path: Path, endpoint: ModelEndpointServer, model: str, *, api: str = "openai", **options: Any
) -> AsyncIterator[tuple[InProcessHost, AsgiWsClient]]:
    servers_opts = options.pop("servers", None)
    webhost = chat_options(endpoint, model, api=api, **options)
    if servers_opts:
        webhost["servers"] = servers_opts
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}, webhost_options=webhost) as host:
        async with host.tab() as tab:
            await tab.wait_connected("basic")
            yield host, tab


async def final(tab: AsgiWsClient, conversation_id: str) -> dict[str, Any]:
    """The assistant message as the turn left it (its last `message` event that is no longer streaming)."""
    params = await tab.wait_notification(
        "chat/event",
        lambda p: (
            p.get("type") == "message"
            and p.get("conversationId") == conversation_id
            and p["message"]["role"] == "assistant"
            and p["message"]["status"] != "streaming"
        ),
    )
    message: dict[str, Any] = params["message"]
    return message


def text_of(message: dict[str, Any]) -> str:
    return "".join(p.get("text") or "" for p in message["parts"] if p["type"] == "text")


def calls_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p["call"] for p in message["parts"] if p["type"] == "tool"]


async def test_a_turn_streams_text_and_is_kept_for_a_reload(tmp_path: Path, endpoint: ModelEndpointServer) -> None:
    endpoint.script(
        "text-only", [{"events": [{"text": "Hello "}, {"text": "Ada."}, {"usage": {"input": 7, "output": 3}}]}]
    )
    async with chat_host(tmp_path, endpoint, "text-only") as (host, tab):
        info = await tab.request("chat/info")
        assert [m["id"] for m in info["models"]] == ["m"] and "apiKey" not in json.dumps(info)
        sent = await tab.request("chat/send", {"text": "Say hello"})
        conversation = sent["conversationId"]
        first = await tab.wait_notification("chat/event", lambda p: p.get("type") == "text")
        assert first["delta"] == "Hello " and first["conversationId"] == conversation
        answer = await final(tab, conversation)
        assert answer["status"] == "done" and text_of(answer) == "Hello Ada."
        assert answer["usage"] == {"input": 7, "output": 3}
        # What the endpoint got: the system prompt, the person's message, no tools needed to be called.
        body = endpoint.requests("text-only")[-1]["body"]
        assert body["messages"][0]["role"] == "system" and body["messages"][-1] == {
            "role": "user",
            "content": "Say hello",
        }
        assert {t["function"]["name"] for t in body["tools"]} >= {"basic__echo"}
        # A reload (another tab) reads it back from the database; the list has it with its title.
        async with host.tab() as reloaded:
            listed = await reloaded.request("chat/list")
            assert [c["title"] for c in listed["conversations"]] == ["Say hello"]
            opened = await reloaded.request("chat/open", {"conversationId": conversation})
            assert [m["role"] for m in opened["messages"]] == ["user", "assistant"]
            assert text_of(opened["messages"][1]) == "Hello Ada." and not opened["running"]
            shown = await reloaded.request("chat/requests", {"conversationId": conversation, "messageId": answer["id"]})
            assert shown["requests"][0]["body"] == body


async def test_an_allowed_tool_call_runs_on_the_persons_connection_and_only_content_reaches_the_model(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "tool-allowed",
        [
            {
                "match": "Echo",
                "times": 1,
                "events": [{"tool": {"id": "call_1", "name": "basic__echo", "args": ['{"text":', ' "hi"}']}}],
            },
            {"events": [{"text": "The tool said hi."}]},
        ],
    )
    async with chat_host(tmp_path, endpoint, "tool-allowed", toolCalls="allow") as (host, tab):
        sent = await tab.request("chat/send", {"text": "Echo hi please"})
        answer = await final(tab, sent["conversationId"])
        assert answer["status"] == "done" and text_of(answer) == "The tool said hi."
        [call] = calls_of(answer)
        assert (call["server"], call["tool"], call["status"]) == ("basic", "echo", "ok")
        assert call["arguments"] == {"text": "hi"} and call["modelName"] == "basic__echo"
        history = await tab.wait_notification("history/added", lambda p: p["entry"]["name"] == "echo")
        assert history["entry"]["arguments"] == {"text": "hi"}
        second = endpoint.requests("tool-allowed")[-1]["body"]["messages"]
        tool_message = next(m for m in second if m["role"] == "tool")
        assert tool_message["tool_call_id"] == "call_1" and "hi" in json.dumps(tool_message["content"])
        assert "structuredContent" not in json.dumps(second)


async def test_an_asked_tool_call_waits_for_the_person_and_a_denied_one_is_told_to_the_model(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "tool-asked",
        [
            {
                "match": "twice",
                "times": 1,
                "events": [{"tool": {"id": "c1", "name": "basic__echo", "args": ['{"text": "one"}']}}],
            },
            {
                "match": "one",
                "times": 1,
                "events": [{"tool": {"id": "c2", "name": "basic__echo", "args": ['{"text": "two"}']}}],
            },
            {"events": [{"text": "done"}]},
        ],
    )
    async with chat_host(tmp_path, endpoint, "tool-asked") as (host, tab):
        sent = await tab.request("chat/send", {"text": "echo twice"})
        asked = await tab.wait_notification("approval/request", lambda p: p["kind"] == "model-tool-call")
        assert (
            asked["detail"]["arguments"] == {"text": "one"}
            and asked["detail"]["conversationId"] == sent["conversationId"]
        )
        await tab.request("approvals/respond", {"id": asked["id"], "decision": "allow"})
        again = await tab.wait_notification("approval/request", lambda p: p["detail"]["arguments"] == {"text": "two"})
        await tab.request("approvals/respond", {"id": again["id"], "decision": "deny"})
        answer = await final(tab, sent["conversationId"])
        assert [c["status"] for c in calls_of(answer)] == ["ok", "denied"]
        last = endpoint.requests("tool-asked")[-1]["body"]["messages"]
        assert "denied" in json.dumps([m for m in last if m["role"] == "tool"][-1])


async def test_an_endpoint_that_refuses_the_key_gives_one_line_and_the_turn_can_be_retried(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("refused", [{"times": 1, "events": [{"status": 401}]}, {"events": [{"text": "ok now"}]}])
    async with chat_host(tmp_path, endpoint, "refused") as (host, tab):
        sent = await tab.request("chat/send", {"text": "hello"})
        failed = await final(tab, sent["conversationId"])
        assert failed["status"] == "error" and "401" in failed["error"] and "k-test" not in failed["error"]
        assert "Traceback" not in failed["error"] and "\n" not in failed["error"]
        await tab.request("chat/retry", {"conversationId": sent["conversationId"]})
        answer = await final(tab, sent["conversationId"])
        assert answer["status"] == "done" and text_of(answer) == "ok now"
        opened = await tab.request("chat/open", {"conversationId": sent["conversationId"]})
        assert [m["role"] for m in opened["messages"]] == ["user", "assistant"]


async def test_conversations_are_the_persons_own(tmp_path: Path, endpoint: ModelEndpointServer) -> None:
    from webhost.people import Person

    endpoint.script("private", [{"events": [{"text": "secret plans"}]}])
    webhost = chat_options(endpoint, "private")
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}, webhost_options=webhost, people=True) as host:
        ada = Person(id="ada", name="Ada", role="member")
        admin = Person(id="root", name="Root", role="admin")
        async with host.tab(person=ada) as tab, host.tab(person=admin) as other:
            sent = await tab.request("chat/send", {"text": "plans"})
            await final(tab, sent["conversationId"])
            assert (await other.request("chat/list"))["conversations"] == []
            with pytest.raises(RpcError, match="no such conversation"):
                await other.request("chat/open", {"conversationId": sent["conversationId"]})
