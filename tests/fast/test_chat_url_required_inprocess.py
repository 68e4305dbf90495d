"""A model's tool call on a legacy server that answers -32042 (URL elicitation required): the person consents in
the chat, the server's notifications/elicitation/complete ends the step, and the call is retried to its result.
The completion once reached only the tabs' own calls, so the model's call waited on a step already done."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fast.test_chat_inprocess import calls_of, chat_options, final
from tests.support.inprocess import in_process_host, sdk_server
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


async def test_the_models_url_step_is_completed_by_the_server_and_the_call_retried(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "url-step",
        [
            {
                "match": "Authorise",
                "times": 1,
                "events": [
                    {"tool": {"id": "call_1", "name": "elicit__url_required", "args": ['{"complete_after": 0}']}}
                ],
            },
            {"events": [{"text": "Authorised."}]},
        ],
    )
    options = chat_options(endpoint, "url-step", toolCalls="allow")
    async with in_process_host(
        tmp_path, {"elicit": sdk_server("elicit")}, legacy=frozenset({"elicit"}), webhost_options=options
    ) as host:
        async with host.tab() as tab:
            await tab.wait_connected("elicit")
            sent = await tab.request("chat/send", {"text": "Authorise me"})
            conversation = sent["conversationId"]
            consent = await tab.wait_notification(
                "elicitation/request", lambda p: p.get("mode") == "url" and p.get("phase") == "consent"
            )
            assert consent["origin"]["conversationId"] == conversation
            await tab.request("elicitation/respond", {"id": consent["id"], "action": "accept"})
            # Nobody answers again: the server's completion (before or after the consent) ends the step.
            answer = await final(tab, conversation)
            assert answer["status"] == "done"
            [call] = calls_of(answer)
            assert call["status"] == "ok"
            assert json.loads(call["result"]["content"][0]["text"])["authorised"] is True
