"""The small local model's OpenAI-compatible server, driven by the official `openai` SDK: a streamed tool call
in several argument fragments, then a text answer to the tool's result. It asserts the wire, not the model's
judgement (which city it picks, what it says)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

from tests.support.small_model import SMALL_MODEL, SMALL_MODEL_ID, SmallModel, SmallModelMissing, running_small_model

pytestmark = [pytest.mark.slow_model, pytest.mark.timeout(600)]

WEATHER: ChatCompletionToolParam = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
# A schema with what MCP servers' input schemas hold: a $ref, anyOf, an enum, an array, an optional property.
BOOKING: ChatCompletionToolParam = {
    "type": "function",
    "function": {
        "name": "book_table",
        "description": "Book a table at a restaurant",
        "parameters": {
            "type": "object",
            "properties": {
                "restaurant": {"type": "string"},
                "party": {"type": "integer"},
                "when": {"$ref": "#/$defs/slot"},
                "notes": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "seating": {"type": "array", "items": {"enum": ["window", "quiet", "terrace"]}},
                "phone": {"type": "string"},
            },
            "required": ["restaurant", "party", "when", "notes", "seating"],
            "$defs": {
                "slot": {
                    "type": "object",
                    "properties": {"day": {"enum": ["friday", "saturday"]}, "hour": {"type": "integer"}},
                    "required": ["day", "hour"],
                }
            },
        },
    },
}
QUESTION: ChatCompletionMessageParam = {"role": "user", "content": "What is the weather in Paris?"}


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    with running_small_model() as base_url:
        with openai.OpenAI(base_url=base_url, api_key="unused", timeout=300, max_retries=0) as client:
            yield client


def test_models_lists_the_small_model(client: openai.OpenAI) -> None:
    assert [model.id for model in client.models.list()] == [SMALL_MODEL_ID]


def test_a_streamed_tool_call_then_a_text_answer_to_its_result(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model=SMALL_MODEL_ID,
        messages=[QUESTION],
        tools=[WEATHER],
        stream=True,
        stream_options={"include_usage": True},
    )
    starts: list[tuple[str, str]] = []
    fragments: list[str] = []
    finishes: list[str] = []
    usage: list[Any] = []
    for chunk in stream:
        if chunk.usage is not None:
            usage.append(chunk.usage)
        for choice in chunk.choices:
            assert choice.delta.content in (None, "")
            for call in choice.delta.tool_calls or []:
                assert call.index == 0
                if call.id is not None:
                    assert call.function is not None and call.function.name is not None
                    starts.append((call.id, call.function.name))
                if call.function is not None and call.function.arguments:
                    fragments.append(call.function.arguments)
            if choice.finish_reason is not None:
                finishes.append(choice.finish_reason)

    assert len(starts) == 1 and starts[0][1] == "get_weather"
    assert len(fragments) > 1, fragments  # streamed as the model writes them, not in one piece
    arguments = json.loads("".join(fragments))
    assert isinstance(arguments.get("city"), str)
    assert finishes == ["tool_calls"]
    assert len(usage) == 1 and usage[0].completion_tokens > 0 and usage[0].prompt_tokens > 0

    call_id, name = starts[0]
    follow_up = client.chat.completions.create(
        model=SMALL_MODEL_ID,
        messages=[
            QUESTION,
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": name, "arguments": "".join(fragments)}}
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": "Sunny, 21 °C"},
        ],
        tools=[WEATHER],
        stream=True,
    )
    text: list[str] = []
    finishes = []
    for chunk in follow_up:
        for choice in chunk.choices:
            assert not choice.delta.tool_calls
            if choice.delta.content:
                text.append(choice.delta.content)
            if choice.finish_reason is not None:
                finishes.append(choice.finish_reason)
    assert "".join(text).strip()
    assert finishes in (["stop"], ["length"])


def test_with_two_tools_the_call_is_one_of_them_with_arguments_its_schema_accepts(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model=SMALL_MODEL_ID,
        messages=[{"role": "user", "content": "Book a table for 4 at Chez Paul on Friday at 8pm, by the window."}],
        tools=[WEATHER, BOOKING],
    )
    (choice,) = completion.choices
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls or []
    assert call.type == "function"
    tools = {tool["function"]["name"]: tool["function"] for tool in (WEATHER, BOOKING)}
    assert call.function.name in tools
    jsonschema.validate(json.loads(call.function.arguments), tools[call.function.name].get("parameters", {}))


def test_a_malformed_request_is_answered_400(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="messages must be a non-empty array"):
        client.chat.completions.create(model=SMALL_MODEL_ID, messages=[])


def test_a_server_that_cannot_load_its_model_is_an_error_with_its_output(tmp_path: Path) -> None:
    broken = SmallModel(tmp_path)
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "small-model").symlink_to(SMALL_MODEL.server.parent)
    broken.gguf.parent.mkdir(parents=True)
    broken.gguf.write_bytes(b"not a GGUF file")
    with pytest.raises(RuntimeError, match=r"(?s)exited \(1\).*small-model: cannot load"):
        with running_small_model(broken):
            pass


def test_not_installed_says_how_to_install(tmp_path: Path) -> None:
    with pytest.raises(SmallModelMissing, match="run scripts/install-small-model"):
        with running_small_model(SmallModel(tmp_path)):
            pass
