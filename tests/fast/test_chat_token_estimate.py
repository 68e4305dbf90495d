"""The token estimate (webhost/chat/tokens.py) held against a real tokenizer: the small local model (SmolLM2-135M
through llama.cpp, tools/small-model) reports the prompt tokens of each request it is sent, counted by its own
tokenizer over its chat template. The estimate must never be below that count (a request it lets through fits)
and not far above it (it would leave out turns for nothing)."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.support.small_model import running_small_model
from webhost.chat import tokens
from webhost.chat.providers.messages import (
    AssistantMessage,
    ChatRequest,
    Message,
    TextBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)
from webhost.chat.providers.openai_body import openai_body
from webhost.demo.model_choice import SMALL_MODEL_ID

# The model's start and four requests, each bounded on its own (the start in running_small_model, a request at 120 s).
pytestmark = [pytest.mark.slow_model, pytest.mark.timeout(600)]

PROSE = (
    "The platform team keeps a board of the week's work. Each card has an owner, a state and a short note; "
    "the person asks the model which cards are theirs and what is left to do before Friday's release. "
)
CODE = (
    "def lookup(q: str) -> list[dict[str, str]]:\n"
    '    return [{"id": c.id, "title": c.title} for c in cards if q in c.title]\n'
)
SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "The board's title"},
        "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    "required": ["title"],
}
TOOLS = tuple(ToolSpec(f"board__tool_{n}", f"Tool number {n}: does a board thing.", SCHEMA) for n in range(6))


def user(text: str) -> UserMessage:
    return UserMessage((TextBlock(text),))


CASES: dict[str, tuple[tuple[Message, ...], tuple[ToolSpec, ...]]] = {
    "prose": ((user(PROSE * 6), AssistantMessage(PROSE * 4), user("And mine?")), ()),
    "code": ((user("Explain this:\n" + CODE * 8),), ()),
    "tools and results": (
        (
            user("Show the board"),
            AssistantMessage("", (ToolCall("call_1", "board__tool_1", json.dumps({"title": "Q3", "limit": 20})),)),
            ToolResult("call_1", (TextBlock(json.dumps([{"id": n, "title": f"Card {n}"} for n in range(40)])),)),
            AssistantMessage("The board has 40 cards."),
            user("Which are open?"),
        ),
        TOOLS,
    ),
    "non-latin": ((user("Какие карточки мои? 私のカードはどれですか。" * 10),), ()),
}


def test_the_estimate_is_at_or_above_a_real_tokenizers_count_and_within_twice_it() -> None:
    figures: list[str] = []
    ratios: list[float] = []
    with running_small_model() as base_url:
        for name, (messages, tools) in CASES.items():
            request = ChatRequest(
                model=SMALL_MODEL_ID, system="You help the platform team.", messages=messages, tools=tools
            )
            body = {**openai_body(request, official=False), "stream": False, "max_tokens": 1}
            body.pop("stream_options", None)
            answer = httpx.post(f"{base_url}/chat/completions", json=body, timeout=120)
            assert answer.status_code == 200, answer.text
            reported = answer.json()["usage"]["prompt_tokens"]
            estimated = tokens.request_tokens(request.system, messages, tools)
            figures.append(f"{name}: estimated {estimated}, reported {reported} ({estimated / reported:.2f}x)")
            ratios.append(estimated / reported)
    print("\n".join(figures))
    assert all(1 <= r <= 2 for r in ratios), figures
