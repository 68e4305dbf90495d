"""The chat's turn loop in-process (contract §8): webhost's page WebSocket, our SDK test servers, and the
scripted model endpoint over a real socket with the official SDK clients on webhost's side."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.inprocess import SECRET, AsgiWsClient, InProcessHost, in_process_host, sdk_server
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import RpcError
from webhost.apps.origins import derive_key
from webhost.people import TOKEN_PERSON_ID, Person
from webhost.storage.conversations import ChatSeal, ConversationStore
from webhost.storage.db import Storage

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


@asynccontextmanager
async def apps_host(
    tmp_path: Path, endpoint: ModelEndpointServer, model: str, *, api: str = "openai", **options: Any
) -> AsyncIterator[tuple[InProcessHost, AsgiWsClient]]:
    servers_opts = options.pop("servers", None)
    inputs = options.pop("inputs", None)
    webhost = chat_options(endpoint, model, api=api, **options)
    if servers_opts:
        webhost["servers"] = servers_opts
    async with in_process_host(
        tmp_path, {"board": sdk_server("chat_apps")}, webhost_options=webhost, inputs=inputs
    ) as host:
        async with host.tab() as tab:
            await tab.wait_connected("board")
            yield host, tab


async def test_app_only_tools_are_not_offered_and_structured_content_stays_with_the_app(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "hygiene",
        [
            {
                "match": "board",
                "times": 1,
                "events": [
                    {
                        "tool": {
                            "id": "b1",
                            "name": "board__show_board",
                            "args": ['{"title": "Q3", "items": ["a", "b"]}'],
                        }
                    },
                ],
            },
            {"events": [{"text": "Shown."}]},
        ],
    )
    async with apps_host(tmp_path, endpoint, "hygiene", toolCalls="allow") as (host, tab):
        sent = await tab.request("chat/send", {"text": "show the board"})
        answer = await final(tab, sent["conversationId"])
        [call] = calls_of(answer)
        assert call["status"] == "ok" and call["resourceUri"] == "ui://chat/board.html"
        assert call["result"]["structuredContent"]["note"] == "STRUCTURED-ONLY-MARKER"  # the page (and app) get it
        bodies = [r["body"] for r in endpoint.requests("hygiene")]
        names = {t["function"]["name"] for t in bodies[0]["tools"]}
        assert "board__show_board" in names and "board__board_refresh" not in names and "board__lookup" in names
        assert "STRUCTURED-ONLY-MARKER" not in json.dumps(bodies[-1])
        assert "Board Q3 with 2 items" in json.dumps(bodies[-1])


async def test_a_server_may_give_the_model_its_structured_content(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "structured",
        [
            {
                "match": "board",
                "times": 1,
                "events": [
                    {"tool": {"id": "b1", "name": "board__show_board", "args": ['{"title": "Q3", "items": []}']}},
                ],
            },
            {"events": [{"text": "ok"}]},
        ],
    )
    servers = {"board": {"modelToolCalls": "allow", "modelSeesStructuredContent": True}}
    async with apps_host(tmp_path, endpoint, "structured", servers=servers) as (host, tab):
        sent = await tab.request("chat/send", {"text": "show the board"})
        await final(tab, sent["conversationId"])
        assert "STRUCTURED-ONLY-MARKER" in json.dumps(endpoint.requests("structured")[-1]["body"])


async def test_a_per_tool_deny_hides_the_tool_and_steps_are_capped(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "runaway",
        [{"events": [{"tool": {"id": "l", "name": "board__lookup", "args": ['{"q": "again"}']}}]}],
    )
    servers = {"board": {"modelToolCalls": "allow", "modelTools": {"slow": "deny"}}}
    async with apps_host(tmp_path, endpoint, "runaway", servers=servers, maxSteps=3) as (host, tab):
        sent = await tab.request("chat/send", {"text": "loop forever"})
        answer = await final(tab, sent["conversationId"])
        assert answer["status"] == "done" and len(calls_of(answer)) == 3
        assert "made 3 requests to the model and was ended" in text_of(answer)
        bodies = [r["body"] for r in endpoint.requests("runaway")]
        assert len(bodies) == 3 and "board__slow" not in {t["function"]["name"] for t in bodies[0]["tools"]}


async def test_stop_ends_the_stream_and_the_running_call(tmp_path: Path, endpoint: ModelEndpointServer) -> None:
    endpoint.script(
        "stoppable",
        [
            {
                "events": [
                    {"text": "Working on it. "},
                    {"tool": {"id": "s", "name": "board__slow", "args": ['{"seconds": 60}']}},
                ]
            }
        ],
    )
    async with apps_host(tmp_path, endpoint, "stoppable", toolCalls="allow") as (host, tab):
        sent = await tab.request("chat/send", {"text": "be slow"})
        conversation = sent["conversationId"]
        await tab.wait_notification(
            "chat/event", lambda p: p.get("type") == "call" and p["call"]["status"] == "running"
        )
        assert (await tab.request("chat/stop", {"conversationId": conversation}))["stopped"] is True
        answer = await final(tab, conversation)
        assert answer["status"] == "stopped" and text_of(answer) == "Working on it. "
        [call] = calls_of(answer)
        assert call["status"] == "error" and call["error"] == "Stopped."


async def test_the_persons_own_key_is_asked_for_and_never_shown(tmp_path: Path, endpoint: ModelEndpointServer) -> None:
    endpoint.script("own-key", [{"events": [{"text": "hi"}]}])
    webhost = {
        "chat": {
            "models": [
                {
                    "id": "mine",
                    "api": "openai",
                    "model": "own-key",
                    "baseUrl": endpoint.openai_base_url,
                    "apiKey": "${input:llm_key}",
                }
            ]
        }
    }
    inputs = [{"type": "promptString", "id": "llm_key", "description": "Your key", "password": True}]
    async with in_process_host(
        tmp_path, {"board": sdk_server("chat_apps")}, webhost_options=webhost, inputs=inputs
    ) as host:
        async with host.tab() as tab:
            info = await tab.request("chat/info")
            assert info["models"][0]["needsKey"] is True and info["models"][0]["keyInput"] == "llm_key"
            with pytest.raises(RpcError, match="needs your own API key"):
                await tab.request("chat/send", {"text": "hello"})
            await tab.request("inputs/set", {"values": {"llm_key": "sk-person-secret-123"}})
            assert (await tab.request("chat/info"))["models"][0]["needsKey"] is False
            sent = await tab.request("chat/send", {"text": "hello"})
            answer = await final(tab, sent["conversationId"])
            assert answer["status"] == "done"
            received = endpoint.requests("own-key")[-1]
            assert received["headers"]["authorization"] == "Bearer sk-person-secret-123"
            shown = await tab.request(
                "chat/requests", {"conversationId": sent["conversationId"], "messageId": answer["id"]}
            )
            assert "sk-person-secret-123" not in json.dumps(shown)


async def test_what_the_model_saw_shows_the_persons_own_values_but_never_their_key(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    """Issue 25 item 8 in the chat: a result holding one of the person's `${input:ID}` values is theirs, so "What
    the model saw" shows it as the model got it (before: `***`); their own API key is never shown."""
    value = "svc-value-4711"
    endpoint.script(
        "own-values",
        [
            {
                "match": "Echo",
                "times": 1,
                "events": [{"tool": {"id": "call_v", "name": "basic__echo", "args": [f'{{"text": "my {value}"}}']}}],
            },
            {"events": [{"text": "Done."}]},
        ],
    )
    model = {"id": "mine", "api": "openai", "model": "own-values", "baseUrl": endpoint.openai_base_url}
    webhost = {"chat": {"models": [{**model, "apiKey": "${input:llm_key}"}], "toolCalls": "allow"}}
    inputs = [
        {"type": "promptString", "id": "llm_key", "description": "Your key", "password": True},
        {"type": "promptString", "id": "svc", "description": "Your service value", "password": True},
    ]
    entries = {"basic": {"command": "in-process", "env": {"SVC": "${input:svc}"}}}
    async with in_process_host(
        tmp_path, {"basic": sdk_server("basic")}, entries=entries, webhost_options=webhost, inputs=inputs
    ) as host:
        async with host.tab() as tab:
            await tab.request("inputs/set", {"values": {"llm_key": "sk-person-key-5150", "svc": value}})
            await tab.wait_connected("basic")
            sent = await tab.request("chat/send", {"text": "Echo my value"})
            answer = await final(tab, sent["conversationId"])
            assert answer["status"] == "done"
            [call] = calls_of(answer)
            assert call["arguments"] == {"text": f"my {value}"}
            shown = await tab.request(
                "chat/requests", {"conversationId": sent["conversationId"], "messageId": answer["id"]}
            )
    seen = json.dumps(shown)
    assert f"my {value}" in seen and "sk-person-key-5150" not in seen


async def test_a_daily_budget_refuses_the_next_turn_before_its_request_and_keeps_the_paid_answer(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("budget", [{"events": [{"text": "expensive"}, {"usage": {"input": 80, "output": 40}}]}])
    async with apps_host(tmp_path, endpoint, "budget", dailyTokenBudget=100) as (host, tab):
        sent = await tab.request("chat/send", {"text": "first"})
        first = await final(tab, sent["conversationId"])
        assert first["status"] == "done" and text_of(first) == "expensive"  # paid for: shown, never an error
        await tab.request("chat/send", {"conversationId": sent["conversationId"], "text": "second"})
        second = await final(tab, sent["conversationId"])
        assert second["status"] == "error" and not second["retryable"]
        assert second["error"] == "Your daily token budget (100 tokens) is used up; it starts again at 00:00 UTC."
        assert len(endpoint.requests("budget")) == 1  # the second was refused before any request
        usage = await tab.request("chat/usage")
        assert usage["usage"] == [{"person": usage["usage"][0]["person"], "model": "m", "input": 80, "output": 40}]


async def test_a_turn_left_streaming_by_a_stopped_replica_is_interrupted_and_can_be_retried(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("replica", [{"events": [{"text": "answered here"}]}])
    async with apps_host(tmp_path, endpoint, "replica") as (host, tab):
        sent = await tab.request("chat/send", {"text": "hello"})
        await final(tab, sent["conversationId"])
        conversation = sent["conversationId"]
    # Another replica died mid-answer: its row says streaming, its heartbeat is gone.

    storage = Storage(f"sqlite+aiosqlite:///{tmp_path / 'data' / 'webhost.sqlite3'}")
    await storage.start()
    try:
        store = ConversationStore(storage, ChatSeal(derive_key(SECRET, "chat/v1")))
        person = TOKEN_PERSON_ID
        [stored] = await store.listing(person)
        messages = await store.messages(person, stored.id)
        body = {
            **messages[-1].body,
            "status": "streaming",
            "parts": [{"type": "text", "text": "half an ans", "step": 1}],
        }
        await store.save_message(person, stored.id, body, seq=messages[-1].seq, replica_id="r-gone", now=1.0)
    finally:
        await storage.close()
    async with apps_host(tmp_path, endpoint, "replica") as (host, tab):
        opened = await tab.request("chat/open", {"conversationId": conversation})
        last = opened["messages"][-1]
        assert last["status"] == "interrupted" and last["retryable"] and text_of(last) == "half an ans"
        await tab.request("chat/retry", {"conversationId": conversation})
        answer = await final(tab, conversation)
        assert answer["status"] == "done" and text_of(answer) == "answered here"


async def test_an_app_of_a_call_gives_context_and_sends_messages_through_the_backend(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "bridge",
        [
            {
                "match": "board",
                "times": 1,
                "events": [
                    {"tool": {"id": "b1", "name": "board__show_board", "args": ['{"title": "T", "items": []}']}},
                ],
            },
            {"events": [{"text": "noted"}]},
        ],
    )
    options: dict[str, Any] = {"toolCalls": "allow", "maxAppContextChars": 120, "maxContextChars": 100}
    async with apps_host(tmp_path, endpoint, "bridge", **options) as (host, tab):
        sent = await tab.request("chat/send", {"text": "show the board"})
        conversation = sent["conversationId"]
        [call] = calls_of(await final(tab, conversation))
        frame = await tab.request(
            "apps/open", {"server": "board", "tool": "show_board", "conversationId": conversation, "callId": call["id"]}
        )
        context = {"content": [{"type": "text", "text": "x" * 150}]}
        await tab.request(
            "apps/request", {"frameId": frame["frameId"], "method": "ui/update-model-context", "params": context}
        )
        chips = await tab.wait_notification("chat/event", lambda p: p.get("type") == "contexts" and p["contexts"])
        [chip] = chips["contexts"]
        assert chip["instance"] == call["id"] and chip["cut"] and chip["fullChars"] == 150 and len(chip["text"]) == 120
        await tab.request("chat/send", {"conversationId": conversation, "text": "and now"})
        cut = await tab.wait_notification("chat/event", lambda p: p.get("type") == "contexts-cut")
        assert cut["instances"] == [call["id"]] and cut["limit"] == 100
        await final(tab, conversation)
        system = endpoint.requests("bridge")[-1]["body"]["messages"][0]["content"]
        assert "x" * 100 in system and "x" * 101 not in system
        # ui/message: the first one waits for the person; denied, the app gets an error.
        message = {"role": "user", "content": [{"type": "text", "text": "from the app"}]}
        ask = {"frameId": frame["frameId"], "method": "ui/message", "params": message}
        async with anyio.create_task_group() as tg:
            refused: list[BaseException] = []

            async def send_denied() -> None:
                try:
                    await tab.request("apps/request", ask)
                except RpcError as exc:
                    refused.append(exc)

            tg.start_soon(send_denied)
            consent = await tab.wait_notification("approval/request", lambda p: p["kind"] == "app-message")
            assert consent["detail"]["text"] == "from the app" and consent["detail"]["conversationId"] == conversation
            await tab.request("approvals/respond", {"id": consent["id"], "decision": "deny"})
        assert refused and "did not allow" in str(refused[0])
        async with anyio.create_task_group() as tg:
            tg.start_soon(tab.request, "apps/request", ask)
            consent = await tab.wait_notification(
                "approval/request", lambda p: p["kind"] == "app-message" and p["id"] != consent["id"]
            )
            await tab.request("approvals/respond", {"id": consent["id"], "decision": "allow", "remember": True})
        user = await tab.wait_notification(
            "chat/event", lambda p: p.get("type") == "message" and p["message"].get("fromApp") is not None
        )
        assert user["message"]["text"] == "from the app" and user["message"]["fromApp"]["server"] == "board"
        await final(tab, conversation)
        # Closed by the person: its context leaves the model's requests.
        await tab.request("apps/close", {"frameId": frame["frameId"], "reason": "closed by the person"})
        await tab.wait_notification("chat/event", lambda p: p.get("type") == "contexts" and not p["contexts"])


async def test_an_app_cannot_open_for_a_call_that_waits_for_approval(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "too-early",
        [{"events": [{"tool": {"id": "b1", "name": "board__show_board", "args": ['{"title": "T", "items": []}']}}]}],
    )
    async with apps_host(tmp_path, endpoint, "too-early") as (host, tab):
        sent = await tab.request("chat/send", {"text": "show the board"})
        asked = await tab.wait_notification("approval/request", lambda p: p["kind"] == "model-tool-call")
        call_id = asked["detail"]["callId"]
        with pytest.raises(RpcError, match="has not allowed"):
            await tab.request(
                "apps/open",
                {"server": "board", "tool": "show_board", "conversationId": sent["conversationId"], "callId": call_id},
            )
        with pytest.raises(RpcError, match="no such tool call"):
            await tab.request(
                "apps/open",
                {
                    "server": "board",
                    "tool": "board_refresh",
                    "conversationId": sent["conversationId"],
                    "callId": call_id,
                },
            )
        await tab.request("chat/stop", {"conversationId": sent["conversationId"]})


async def test_two_messages_sent_at_once_into_a_stored_conversation_start_one_answer(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("twice", [{"events": [{"gate": "twice-answer"}, {"text": "one answer"}]}])
    async with apps_host(tmp_path, endpoint, "twice") as (host, tab):
        endpoint.release("twice-answer")
        sent = await tab.request("chat/send", {"text": "first"})
        await final(tab, sent["conversationId"])
    endpoint.script("twice", [{"events": [{"gate": "twice-again"}, {"text": "one answer"}]}])
    async with apps_host(tmp_path, endpoint, "twice") as (host, tab):  # a new process: nothing in memory
        outcomes: list[object] = []

        async def send(text: str) -> None:
            try:
                outcomes.append(
                    await tab.request("chat/send", {"conversationId": sent["conversationId"], "text": text})
                )
            except RpcError as exc:
                outcomes.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(send, "second")
            tg.start_soon(send, "third")
        refused = [o for o in outcomes if isinstance(o, RpcError)]
        assert len(refused) == 1 and "still answering" in str(refused[0])
        endpoint.release("twice-again")
        await final(tab, sent["conversationId"])
        opened = await tab.request("chat/open", {"conversationId": sent["conversationId"]})
        assert [m["role"] for m in opened["messages"]] == ["user", "assistant", "user", "assistant"]
