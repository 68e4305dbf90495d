"""Edit, regenerate and versions of a conversation (contract §8.1) in-process: webhost's page WebSocket, an SDK
test server, the scripted model endpoint over a real socket, and the database on both engines; the branches
survive a restart (a new process on the same database, as a replica change reads them)."""

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
from webhost.chat.branches import Branches
from webhost.chat.transcript import Message

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


@asynccontextmanager
async def chat_tab(
    tmp_path: Path, endpoint: ModelEndpointServer, model: str, database_url: str | None = None
) -> AsyncIterator[AsgiWsClient]:
    webhost = {
        "chat": {
            "models": [
                {"id": "m", "api": "openai", "model": model, "baseUrl": endpoint.openai_base_url, "apiKey": "k"}
            ],
            "toolCalls": "allow",
        }
    }
    servers = {"board": sdk_server("chat_apps")}
    async with in_process_host(tmp_path, servers, webhost_options=webhost, database_url=database_url) as host:
        async with host.tab() as tab:
            await tab.wait_connected("board")
            yield tab


async def answered(tab: AsgiWsClient, conversation_id: str, answer_id: str) -> dict[str, Any]:
    params = await tab.wait_notification(
        "chat/event",
        lambda p: (
            p.get("type") == "message"
            and p.get("conversationId") == conversation_id
            and p["message"]["id"] == answer_id
            and p["message"]["status"] != "streaming"
        ),
    )
    message: dict[str, Any] = params["message"]
    return message


def texts(messages: list[dict[str, Any]]) -> list[str]:
    return [
        m["text"] if m["role"] == "user" else "".join(p.get("text") or "" for p in m["parts"] if p["type"] == "text")
        for m in messages
    ]


def versions(messages: list[dict[str, Any]]) -> list[tuple[int, int] | None]:
    return [(m["branch"]["index"], m["branch"]["count"]) if "branch" in m else None for m in messages]


def sent_texts(endpoint: ModelEndpointServer, model: str) -> list[str]:
    """The conversation as the model was given it in its newest request (the system prompt left out)."""
    body = endpoint.requests(model)[-1]["body"]
    return [str(m["content"]) for m in body["messages"] if m["role"] in ("user", "assistant")]


def reply(word: str) -> dict[str, Any]:
    return {"match": word, "events": [{"text": f"answer to {word}"}]}


async def test_an_edit_makes_a_branch_the_model_sees_only_the_branch_shown_and_it_survives_a_restart(
    tmp_path: Path, endpoint: ModelEndpointServer, database_url: str
) -> None:
    model = f"branches-{database_url.split(':')[0]}"
    endpoint.script(model, [reply("first"), reply("second"), reply("edited"), reply("again")])
    async with chat_tab(tmp_path, endpoint, model, database_url) as tab:
        sent = await tab.request("chat/send", {"text": "first"})
        conversation = sent["conversationId"]
        await answered(tab, conversation, sent["answerId"])
        second = await tab.request("chat/send", {"conversationId": conversation, "text": "second"})
        await answered(tab, conversation, second["answerId"])

        edited = await tab.request(
            "chat/edit", {"conversationId": conversation, "messageId": second["messageId"], "text": "edited"}
        )
        branch = await tab.wait_notification("chat/event", lambda p: p.get("type") == "branch")
        assert texts(branch["messages"]) == ["first", "answer to first", "edited"]
        assert versions(branch["messages"]) == [None, None, (2, 2)]
        await answered(tab, conversation, edited["answerId"])
        # The model was given the branch shown: not the message edited nor its answer.
        assert sent_texts(endpoint, model) == ["first", "answer to first", "edited"]

        opened = await tab.request("chat/open", {"conversationId": conversation})
        assert texts(opened["messages"]) == ["first", "answer to first", "edited", "answer to edited"]
        await tab.request("chat/branch", {"conversationId": conversation, "messageId": edited["messageId"], "index": 1})
        opened = await tab.request("chat/open", {"conversationId": conversation})
        assert texts(opened["messages"]) == ["first", "answer to first", "second", "answer to second"]
        assert versions(opened["messages"]) == [None, None, (1, 2), None]

        # Regenerating an answer of the old branch: a version beside it, given that branch only.
        regenerated = await tab.request(
            "chat/regenerate", {"conversationId": conversation, "messageId": second["answerId"]}
        )
        await answered(tab, conversation, regenerated["answerId"])
        assert sent_texts(endpoint, model) == ["first", "answer to first", "second"]
        with pytest.raises(RpcError, match="no such message in the conversation shown"):
            await tab.request("chat/regenerate", {"conversationId": conversation, "messageId": edited["answerId"]})
        with pytest.raises(RpcError, match="no such version"):  # the first answer has one version
            await tab.request(
                "chat/branch", {"conversationId": conversation, "messageId": sent["answerId"], "index": 9}
            )

    # A new process on the same database (a restart, or another replica): the same branch shown, the same versions.
    async with chat_tab(tmp_path, endpoint, model, database_url) as tab:
        opened = await tab.request("chat/open", {"conversationId": conversation})
        assert texts(opened["messages"]) == ["first", "answer to first", "second", "answer to second"]
        assert versions(opened["messages"]) == [None, None, (1, 2), (2, 2)]
        await tab.request("chat/branch", {"conversationId": conversation, "messageId": second["messageId"], "index": 2})
        opened = await tab.request("chat/open", {"conversationId": conversation})
        assert texts(opened["messages"]) == ["first", "answer to first", "edited", "answer to edited"]
        again = await tab.request("chat/send", {"conversationId": conversation, "text": "again"})
        await answered(tab, conversation, again["answerId"])
        assert sent_texts(endpoint, model) == ["first", "answer to first", "edited", "answer to edited", "again"]


async def test_a_tool_call_of_another_branch_is_shown_again_from_what_was_stored(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    """Going back to a branch with an app's tool call gives its stored input and result: the tool is not run again."""
    model = "branch-tools"
    board = {"id": "c1", "name": "board__show_board", "args": ['{"title": "Plan", "items": ["a"]}']}
    endpoint.script(
        model,
        [
            {"match": "board", "times": 1, "events": [{"tool": board}]},
            {"match": "board", "events": [{"text": "shown"}]},
            reply("instead"),
        ],
    )
    async with chat_tab(tmp_path, endpoint, model) as tab:
        asked = iter(range(1, 3))

        async def runs() -> dict[str, int]:  # the server's counts live as long as the process: other tests add to them
            call_id = f"n-{next(asked)}"
            ran = await tab.request(
                "tools/call", {"server": "board", "name": "calls", "arguments": {}, "callId": call_id}
            )
            return dict(json.loads(ran["content"][0]["text"]))

        before = await runs()
        sent = await tab.request("chat/send", {"text": "board"})
        conversation = sent["conversationId"]
        first = await answered(tab, conversation, sent["answerId"])
        [call] = [p["call"] for p in first["parts"] if p["type"] == "tool"]
        assert call["status"] == "ok" and call["resourceUri"]
        edited = await tab.request(
            "chat/edit", {"conversationId": conversation, "messageId": sent["messageId"], "text": "instead"}
        )
        await answered(tab, conversation, edited["answerId"])
        await tab.request("chat/branch", {"conversationId": conversation, "messageId": edited["messageId"], "index": 1})
        opened = await tab.request("chat/open", {"conversationId": conversation})
        [again] = [p["call"] for p in opened["messages"][1]["parts"] if p["type"] == "tool"]
        assert again["id"] == call["id"] and again["result"] == call["result"]
        assert await runs() == {**before, "show_board": before.get("show_board", 0) + 1}


def test_the_branch_shown_follows_the_newest_version_below_the_one_chosen() -> None:
    tree = Branches()
    question, answer = Message("q", "user", text="q"), Message("a", "assistant")
    for message in (question, answer):
        tree.append(message)
    tree.show_before("a")
    tree.append(Message("a2", "assistant"))
    tree.append(Message("q2", "user", text="more"))
    tree.append(Message("a3", "assistant"))
    assert [m.id for m in tree.shown()] == ["q", "a2", "q2", "a3"]
    assert tree.versions("a2") == {"index": 2, "count": 2} and tree.versions("q2") is None
    assert tree.show_version("a2", 1) and [m.id for m in tree.shown()] == ["q", "a"]
    assert tree.show_version("a", 2) and [m.id for m in tree.shown()] == ["q", "a2", "q2", "a3"]
    assert not tree.show_version("a", 3)
    tree.show_before("q")  # a new version of the first message
    tree.append(Message("q3", "user", text="other"))
    assert [m.id for m in tree.shown()] == ["q3"] and tree.versions("q3") == {"index": 2, "count": 2}
    tree.remove("q3")
    assert [m.id for m in tree.shown()] == ["q", "a2", "q2", "a3"]  # nothing left to show: the newest branch


async def test_a_version_refused_for_a_model_without_its_key_changes_nothing(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("keyed", [reply("hello")])
    mine = {"id": "mine", "api": "openai", "model": "keyed", "baseUrl": endpoint.openai_base_url}
    webhost = {
        "chat": {
            "models": [
                {**mine, "id": "m", "apiKey": "k"},
                {**mine, "apiKey": "${input:llm_key}"},
            ]
        }
    }
    inputs = [{"type": "promptString", "id": "llm_key", "description": "Your key", "password": True}]
    servers = {"board": sdk_server("chat_apps")}
    async with in_process_host(tmp_path, servers, webhost_options=webhost, inputs=inputs) as host:
        async with host.tab() as tab:
            sent = await tab.request("chat/send", {"text": "hello", "model": "m"})
            conversation = sent["conversationId"]
            await answered(tab, conversation, sent["answerId"])
            for method, params in (
                ("chat/regenerate", {"messageId": sent["answerId"]}),
                ("chat/edit", {"messageId": sent["messageId"], "text": "other"}),
            ):
                with pytest.raises(RpcError, match="needs your own API key"):
                    await tab.request(method, {"conversationId": conversation, "model": "mine", **params})
                opened = await tab.request("chat/open", {"conversationId": conversation})
                assert texts(opened["messages"]) == ["hello", "answer to hello"]
                assert versions(opened["messages"]) == [None, None]
