"""MCP in the chat's composer and titles by the model (contract §8.1, docs/chat.md "Resources and prompts in the
composer", "Titles"): webhost in-process with a real `mcp` SDK server (tests/servers/composer.py) and the scripted
model endpoint over a real socket, through the page's WebSocket; what the model receives is read from the
endpoint's record of the requests, on both wires."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.inprocess import AsgiWsClient, in_process_host, sdk_server
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from webhost.chat.auto_title import cleaned

pytestmark = pytest.mark.anyio

HANDBOOK = "The team handbook: deploys happen on Tuesdays, never on Fridays."


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


def model(endpoint: ModelEndpointServer, name: str, api: str = "openai") -> dict[str, Any]:
    base = endpoint.openai_base_url if api == "openai" else endpoint.anthropic_base_url
    return {"id": name, "api": api, "model": name, "baseUrl": base, "apiKey": "k"}


async def answered(tab: AsgiWsClient, answer_id: str) -> None:
    await tab.wait_notification(
        "chat/event",
        lambda p: p.get("type") == "message" and p["message"]["id"] == answer_id and p["message"]["status"] == "done",
    )


async def received(endpoint: ModelEndpointServer, key: str, count: int) -> list[dict[str, Any]]:
    """The endpoint's record once it holds `count` requests for the model (a request held at a gate is recorded)."""
    with anyio.fail_after(20):
        while len(requests := endpoint.requests(key)) < count:
            await anyio.sleep(0.05)
    return requests


def body_text(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False)


async def test_a_mentioned_resource_is_read_through_the_connection_and_given_to_the_model_on_both_wires(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    models = [model(endpoint, "res-openai"), model(endpoint, "res-anthropic", "anthropic")]
    for entry in models:
        endpoint.script(entry["model"], [{"events": [{"text": "On Tuesdays."}]}])
    async with in_process_host(
        tmp_path, {"composer": sdk_server("composer")}, webhost_options={"chat": {"models": models}}
    ) as host:
        async with host.tab() as tab:
            await tab.wait_connected("composer")
            bad_kinds: list[object] = [[], {}, "tools"]  # a list or an object was looked up as a key: an internal error
            for bad in bad_kinds:
                with pytest.raises(Exception, match=r'params.kind must be "resources" or "prompts"'):
                    await tab.request("chat/composer/items", {"kind": bad})
            listed = (await tab.request("chat/composer/items", {"kind": "resources"}))["items"]
            by_uri = {item.get("uri") or item.get("uriTemplate"): item for item in listed}
            assert by_uri["notes://handbook"]["title"] == "Team handbook"
            assert by_uri["notes://topics/{topic}"]["completions"] is True
            with pytest.raises(Exception, match=r"composer refused to give The vault: .*locked for you"):
                await tab.request(
                    "chat/attach/resource", {"server": "composer", "uri": "notes://vault", "name": "The vault"}
                )
            for entry in models:
                kept = (
                    await tab.request(
                        "chat/attach/resource",
                        {"server": "composer", "uri": "notes://handbook", "name": "Team handbook"},
                    )
                )["attachment"]
                assert (kept["kind"], kept["uri"], kept["server"]) == ("resource", "notes://handbook", "composer")
                sent = await tab.request(
                    "chat/send", {"text": "When do we deploy?", "model": entry["id"], "attachments": [kept]}
                )
                await answered(tab, sent["answerId"])
                [request] = endpoint.requests(entry["model"])
                user = request["body"]["messages"][-1]
                resource = f"[attached resource notes://handbook of the server composer: Team handbook]\n{HANDBOOK}"
                if entry["api"] == "openai":  # text blocks of a message are one string on this wire
                    assert user == {"role": "user", "content": f"{resource}\n\nWhen do we deploy?"}
                else:
                    assert user == {
                        "role": "user",
                        "content": [{"type": "text", "text": resource}, {"type": "text", "text": "When do we deploy?"}],
                    }
                opened = await tab.request("chat/open", {"conversationId": sent["conversationId"]})
                [shown] = opened["messages"][0]["attachments"]
                assert (shown["kind"], shown["uri"]) == ("resource", "notes://handbook")


async def test_a_prompt_runs_into_the_conversation_and_refused_arguments_add_nothing(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    models = [model(endpoint, "prompt-openai"), model(endpoint, "prompt-anthropic", "anthropic")]
    for entry in models:
        endpoint.script(entry["model"], [{"events": [{"text": "Looks fine."}]}])
    async with in_process_host(
        tmp_path, {"composer": sdk_server("composer")}, webhost_options={"chat": {"models": models}}
    ) as host:
        async with host.tab() as tab:
            await tab.wait_connected("composer")
            prompts = {p["name"]: p for p in (await tab.request("chat/composer/items", {"kind": "prompts"}))["items"]}
            assert [a["name"] for a in prompts["review"]["arguments"]] == ["code", "language"]
            assert prompts["standup"]["arguments"] == []
            with pytest.raises(Exception, match=r"The prompt review of composer failed: .*unknown language 'cobol'"):
                await tab.request(
                    "chat/prompt/run",
                    {"server": "composer", "name": "review", "arguments": {"code": "x = 1", "language": "cobol"}},
                )
            assert (await tab.request("chat/list"))["conversations"] == []  # nothing was added
            for entry in models:
                ran = await tab.request(
                    "chat/prompt/run",
                    {
                        "server": "composer",
                        "name": "review",
                        "arguments": {"code": "x = 1", "language": "python"},
                        "model": entry["id"],
                    },
                )
                await answered(tab, ran["answerId"])
                opened = await tab.request("chat/open", {"conversationId": ran["conversationId"]})
                roles = [(m["role"], m.get("fromPrompt")) for m in opened["messages"]]
                origin = {"server": "composer", "name": "review"}
                assert roles == [("user", origin), ("assistant", origin), ("user", origin), ("assistant", None)]
                assert opened["conversation"]["title"] == "Review this python code:"
                [request] = endpoint.requests(entry["model"])
                sent = request["body"]["messages"]
                text = body_text(request["body"])
                assert "Review this python code:\\nx = 1" in text and "I will look at naming and errors first." in text
                assert sent[-1]["role"] == "user" and "Go on, be brief." in body_text(sent[-1])
                assert [m["role"] for m in sent if m["role"] != "system"][-3:] == ["user", "assistant", "user"]


async def test_the_model_titles_a_conversation_after_its_first_answer_and_a_rename_wins(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    title_rule = {"match": "Write a title", "events": [{"gate": "title-late"}, {"text": '"Deploy days."'}]}
    endpoint.script(
        "titled",
        [
            {"match": "Write a title", "events": [{"text": '"Deploy days for the team."'}]},
            {"events": [{"text": "On Tuesdays."}]},
        ],
    )
    endpoint.script("renamed", [title_rule, {"events": [{"text": "On Tuesdays."}]}])
    endpoint.script("untitled", [{"events": [{"text": "On Tuesdays."}]}])
    models = [model(endpoint, "titled"), model(endpoint, "renamed"), model(endpoint, "untitled")]
    async with in_process_host(
        tmp_path, {"composer": sdk_server("composer")}, webhost_options={"chat": {"models": models, "autoTitle": True}}
    ) as host:
        async with host.tab() as tab:
            sent = await tab.request(
                "chat/send", {"text": "## When do **we** deploy?\nasking for a friend", "model": "titled"}
            )
            await answered(tab, sent["answerId"])
            await tab.wait_notification("chat/event", lambda p: p.get("type") == "conversations")
            with anyio.fail_after(20):
                while (await tab.request("chat/open", {"conversationId": sent["conversationId"]}))["conversation"][
                    "title"
                ] != "Deploy days for the team":
                    await tab.wait_notification("chat/event", lambda p: p.get("type") == "conversations")
            answer, title = await received(endpoint, "titled", 2)
            assert title["body"]["messages"][-1]["content"].startswith("Write a title of at most six words")
            assert "When do **we** deploy?" in title["body"]["messages"][-1]["content"]
            assert "tools" not in title["body"] and title["body"]["max_tokens"] <= 64
            assert "Write a title" not in body_text(answer["body"])  # the turn's own request comes first, untouched

            # Renamed while the model writes the title: the person's title stays.
            sent = await tab.request("chat/send", {"text": "When do we deploy?", "model": "renamed"})
            await answered(tab, sent["answerId"])
            await received(endpoint, "renamed", 2)  # the title request is at the endpoint, held
            await tab.request("chat/rename", {"conversationId": sent["conversationId"], "title": "Mine"})
            tab.notifications.clear()
            endpoint.release("title-late")
            await tab.wait_notification("chat/event", lambda p: p.get("type") == "conversations")
            listed = {c["id"]: c["title"] for c in (await tab.request("chat/list"))["conversations"]}
            assert listed[sent["conversationId"]] == "Mine"
    (tmp_path / "off").mkdir()
    async with in_process_host(
        tmp_path / "off", {"composer": sdk_server("composer")}, webhost_options={"chat": {"models": models[2:]}}
    ) as host:
        async with host.tab() as tab:
            sent = await tab.request("chat/send", {"text": "> When do we deploy?", "model": "untitled"})
            await answered(tab, sent["answerId"])
            assert len(endpoint.requests("untitled")) == 1  # off by default in the test hosts: no title request
            listed = (await tab.request("chat/list"))["conversations"]
            assert [c["title"] for c in listed] == ["When do we deploy?"]


def test_a_title_the_model_wrote_is_cleaned_as_a_first_line() -> None:
    assert cleaned('"Deploy days for the team."\nmore') == "Deploy days for the team"
    assert cleaned("**Quarterly figures**") == "Quarterly figures"
    assert cleaned("   ") == ""
