"""A context that fits the model (issue 28 item 5), through webhost's page WebSocket in-process and the scripted
model endpoint over a real socket: a conversation longer than the model's `contextTokens` sends its newest turns
only, and "What the model saw" (`chat/requests`) says what was left out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fast.test_chat_inprocess import final
from tests.support.inprocess import in_process_host, sdk_server
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


async def test_a_long_conversation_leaves_out_its_oldest_turns_and_what_the_model_saw_says_so(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    model = "small-context"
    endpoint.script(model, [{"events": [{"text": "An answer of some length. " * 40}]}])
    entry = {
        "id": "m",
        "api": "openai",
        "model": model,
        "baseUrl": endpoint.openai_base_url,
        "apiKey": "k",
        "contextTokens": 3000,
        "maxTokens": 500,
    }
    options = {"chat": {"models": [entry], "systemPrompt": "You help the e2e team."}}
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}, webhost_options=options) as host:
        async with host.tab() as tab:
            await tab.wait_connected("basic")
            conversation = None
            for n in range(8):
                sent = await tab.request(
                    "chat/send", {"conversationId": conversation, "text": f"Question {n}: " + "tell me more " * 60}
                )
                conversation = sent["conversationId"]
                answer = await final(tab, conversation)
            bodies = [r["body"] for r in endpoint.requests(model)]
            first, last = bodies[0], bodies[-1]
            assert "left out" not in first["messages"][0]["content"]
            system = last["messages"][0]
            assert system["role"] == "system" and system["content"].startswith("You help the e2e team.")
            assert (
                "oldest turns of this conversation" in system["content"]
                and "context of 3000 tokens" in system["content"]
            )
            users = [m["content"] for m in last["messages"] if m["role"] == "user"]
            assert users[-1].startswith("Question 7:") and not any(u.startswith("Question 0:") for u in users)
            assert len(users) < 8
            shown = await tab.request("chat/requests", {"conversationId": conversation, "messageId": answer["id"]})
            assert "oldest turns of this conversation" in shown["requests"][-1]["body"]["messages"][0]["content"]
