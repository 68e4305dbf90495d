"""One real model, end to end: SmolLM2-135M (tools/small-model, llama.cpp through node-llama-cpp) on the `openai`
wire, its output held by a grammar to a valid tool call. Its streamed call runs the board's tool on the person's
connection and opens the tool's App in the conversation; then it answers in text. The test asserts the
plumbing, never the model's judgement (only one tool is offered, so whichever it "chooses" is that one).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_chat_page import ANSWER_MS, app_in, last_answer, open_chat, send
from tests.support.process import Webhost, run_webhost, stdio_server
from tests.support.small_model import running_small_model

pytestmark = [pytest.mark.e2e, pytest.mark.slow_model]

REAL_MODEL_MS = 120_000  # a 135M model on a loaded 2-core machine: generous, it only bounds a hang


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    with running_small_model() as base_url:
        options = {
            "chat": {
                "models": [{"id": "local", "api": "openai", "model": "smollm2-135m-instruct", "baseUrl": base_url}],
                "toolCalls": "allow",
            },
            # Only show_board is offered: the plumbing is tested, not which tool a tiny model picks.
            "servers": {"board": {"modelTools": {"lookup": "deny", "slow": "deny", "calls": "deny"}}},
        }
        servers = {"board": stdio_server("chat_apps")}
        with run_webhost(tmp_path_factory.mktemp("chat-small-model"), servers, webhost_options=options) as running:
            yield running


def test_a_real_models_streamed_tool_call_runs_the_tool_and_opens_its_app(page: Page, host: Webhost) -> None:
    chat = open_chat(page, host, "local")
    send(chat, "Show me a board of my tasks.")
    card = chat.locator('[data-chat-tool-call][data-server="board"][data-tool="show_board"]')
    expect(card).to_have_attribute("data-status", "ok", timeout=REAL_MODEL_MS)
    app = app_in(card)
    expect(app.locator("body")).to_have_attribute("data-results", "1", timeout=ANSWER_MS)
    expect(app.locator("body")).to_have_attribute("data-inputs", "1")
    answer = last_answer(chat)  # the model's text after the tool result
    expect(answer.locator(".chat-markdown").last).not_to_be_empty(timeout=REAL_MODEL_MS)
