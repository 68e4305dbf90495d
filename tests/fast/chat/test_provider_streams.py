"""Answers streamed through the adapter on both wires: text, tool calls, usage, stop reasons, scripts per
conversation, and the body the endpoint received being exactly `wire_body`."""

from __future__ import annotations

import json
import time

import pytest

from tests.fast.chat.conftest import KEY, WEATHER, Wire, well_ordered, without_usage
from webhost.chat.providers import open_provider
from webhost.chat.providers.events import Stop, TextDelta, ToolArgsDelta, ToolCallEnd, ToolCallStart, Usage
from webhost.chat.providers.messages import (
    AssistantMessage,
    ChatRequest,
    ImageBlock,
    TextBlock,
    ToolCall,
    ToolResult,
    UserMessage,
)

pytestmark = pytest.mark.anyio


async def test_text_streams_in_the_pieces_the_model_sent(wire: Wire) -> None:
    wire.answer({"text": "Hel"}, {"pause": 0.01}, {"text": "lo"}, {"text": " there"})
    events = without_usage(well_ordered(await wire.run()))
    assert events == [TextDelta("Hel"), TextDelta("lo"), TextDelta(" there"), Stop("end")]


async def test_a_text_at_a_time_of_the_answer_waits_for_it(wire: Wire) -> None:
    # `at` (bench/chat.py's steady pace) holds a piece until that long after the answer began: never earlier.
    wire.answer({"text": "now"}, {"at": 0.3}, {"text": " later"})
    provider = open_provider(wire.endpoint())
    try:
        sent = time.monotonic()
        arrived = {
            event.text: time.monotonic() - sent
            async for event in provider.stream(wire.request())
            if isinstance(event, TextDelta)
        }
    finally:
        await provider.aclose()
    assert list(arrived) == ["now", " later"]
    assert arrived[" later"] >= 0.3


async def test_a_tool_call_streams_its_argument_fragments(wire: Wire) -> None:
    wire.answer(
        {"text": "Let me look."},
        {"tool": {"id": "call_1", "name": "weather", "args": ['{"ci', 'ty": "Par', 'is"}']}},
        {"usage": {"input": 10, "output": 5}},
    )
    events = well_ordered(await wire.run())
    assert events == [
        TextDelta("Let me look."),
        ToolCallStart(0, "call_1", "weather"),
        ToolArgsDelta(0, '{"ci'),
        ToolArgsDelta(0, 'ty": "Par'),
        ToolArgsDelta(0, 'is"}'),
        ToolCallEnd(0, '{"city": "Paris"}'),
        Usage(10, 5),
        Stop("tool_calls"),
    ]


async def test_parallel_calls_interleaved_by_index_stay_apart(openai_wire: Wire) -> None:
    openai_wire.answer(
        {"tool": {"id": "call_a", "name": "weather", "args": ['{"city":']}},
        {"tool": {"id": "call_b", "name": "weather", "args": ['{"city":']}},
        {"args": {"id": "call_a", "fragment": ' "Oslo"}'}},
        {"args": {"id": "call_b", "fragment": ' "Rome"}'}},
    )
    events = well_ordered(await openai_wire.run())
    assert events == [
        ToolCallStart(0, "call_a", "weather"),
        ToolArgsDelta(0, '{"city":'),
        ToolCallStart(1, "call_b", "weather"),
        ToolArgsDelta(1, '{"city":'),
        ToolArgsDelta(0, ' "Oslo"}'),
        ToolArgsDelta(1, ' "Rome"}'),
        ToolCallEnd(0, '{"city": "Oslo"}'),
        ToolCallEnd(1, '{"city": "Rome"}'),
        Stop("tool_calls"),
    ]


async def test_two_tool_blocks_after_text_are_calls_0_and_1(anthropic_wire: Wire) -> None:
    anthropic_wire.answer(
        {"text": "Both."},
        {"tool": {"id": "toolu_a", "name": "weather", "args": ['{"city": "Oslo"}']}},
        {"tool": {"id": "toolu_b", "name": "weather", "args": ['{"city": "Rome"}']}},
    )
    events = well_ordered(await anthropic_wire.run())
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert starts == [ToolCallStart(0, "toolu_a", "weather"), ToolCallStart(1, "toolu_b", "weather")]
    assert ends == [ToolCallEnd(0, '{"city": "Oslo"}'), ToolCallEnd(1, '{"city": "Rome"}')]
    assert events[0] == TextDelta("Both.")


async def test_anthropic_usage_is_the_running_total_with_cached_input(anthropic_wire: Wire) -> None:
    # message_start says output 1 and message_delta output 5: running totals, so 5 (not 6); input
    # counts the cache reads and writes as well, as OpenAI's prompt_tokens does.
    anthropic_wire.answer({"text": "ok"}, {"usage": {"input": 10, "output": 5, "cacheRead": 3, "cacheWrite": 2}})
    events = well_ordered(await anthropic_wire.run())
    assert events[-2:] == [Usage(15, 5), Stop("end")]


async def test_a_cut_off_length_is_a_length_stop(wire: Wire) -> None:
    wire.answer({"text": "and then"}, {"stop": "length"})
    assert well_ordered(await wire.run())[-1] == Stop("length")


async def test_a_tool_loop_scripted_per_step_answers_the_tool_result(wire: Wire) -> None:
    wire.script(
        {"times": 1, "events": [{"tool": {"id": "call_1", "name": "weather", "args": ['{"city": "Oslo"}']}}]},
        {"match": "sunny", "events": [{"text": "It is sunny in Oslo."}]},
        {"events": [{"text": "fallback"}]},
    )
    first = well_ordered(await wire.run(wire.request("Weather in Oslo?")))
    assert first[-1] == Stop("tool_calls")
    call = ToolCall("call_1", "weather", '{"city": "Oslo"}')
    history = (UserMessage((TextBlock("Weather in Oslo?"),)), AssistantMessage("", (call,)))
    second = ChatRequest(
        model=wire.model,
        system="",
        messages=(*history, ToolResult("call_1", (TextBlock("sunny, 21 C"),))),
        tools=(WEATHER,),
    )
    assert without_usage(well_ordered(await wire.run(second))) == [TextDelta("It is sunny in Oslo."), Stop("end")]
    # used up: the same first question now gets the fallback
    again = without_usage(well_ordered(await wire.run(wire.request("Weather in Oslo?"))))
    assert again == [TextDelta("fallback"), Stop("end")]


async def test_the_endpoint_receives_exactly_the_wire_body_and_the_key(wire: Wire) -> None:
    wire.answer({"text": "seen"})
    png = ImageBlock("iVBORw0KGgo=", "image/png")
    calls = (ToolCall("call_1", "weather", '{"city": "Oslo"}'), ToolCall("call_2", "weather", ""))
    request = ChatRequest(
        model=wire.model,
        system="You help the platform team.",
        messages=(
            UserMessage((TextBlock("Look at this"), png)),
            AssistantMessage("Checking both.", calls),
            ToolResult("call_1", (TextBlock("rain"), png)),
            ToolResult("call_2", (TextBlock("no such city"),), is_error=True),
            UserMessage((TextBlock("And now?"),)),
        ),
        tools=(WEATHER,),
        max_tokens=321,
    )
    well_ordered(await wire.run(request))
    (received,) = wire.received()
    provider = open_provider(wire.endpoint())
    assert received["body"] == provider.wire_body(request)
    await provider.aclose()
    assert KEY not in json.dumps(received["body"])
    # the key travels in a header only (anthropic 2.x sends it as a bearer token too; older SDKs as x-api-key)
    headers = received["headers"]
    assert headers.get("authorization") == f"Bearer {KEY}" or headers.get("x-api-key") == KEY


async def test_without_an_api_key_no_key_from_the_environment_is_sent(
    wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-servers-env")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-the-servers-env")
    wire.answer({"text": "ok"})
    well_ordered(await wire.run(endpoint=wire.endpoint(key=None)))
    (received,) = wire.received()
    assert "sk-from-the-servers-env" not in json.dumps(received["headers"])


async def test_leaving_a_stream_early_closes_it_and_the_provider_goes_on(wire: Wire) -> None:
    wire.answer(*[{"text": f"{n} "} for n in range(50)])
    provider = open_provider(wire.endpoint())
    try:
        stream = provider.stream(wire.request())
        async for event in stream:
            assert event == TextDelta("0 ")
            break
        await stream.aclose()  # type: ignore[attr-defined]
        events = [event async for event in provider.stream(wire.request())]
    finally:
        await provider.aclose()
    assert len(without_usage(well_ordered(events))) == 51
