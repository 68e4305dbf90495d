"""Each known endpoint quirk, replayed by the scripted endpoint on its wire, comes out as the same clean
events: one start per call, its fragments, one end with the whole arguments ("{}" for none)."""

from __future__ import annotations

import json

import pytest

from tests.fast.chat.conftest import Wire, well_ordered, without_usage
from webhost.chat.providers.events import Stop, StreamEvent, TextDelta, ToolArgsDelta, ToolCallEnd, ToolCallStart

pytestmark = pytest.mark.anyio

OSLO = ['{"city":', ' "Oslo"}']
ROME = ['{"city": "Rome"}']


def ends(events: list[StreamEvent]) -> list[ToolCallEnd]:
    return [event for event in events if isinstance(event, ToolCallEnd)]


def starts(events: list[StreamEvent]) -> list[ToolCallStart]:
    return [event for event in events if isinstance(event, ToolCallStart)]


async def test_ollama_whole_calls_in_the_finishing_chunk_are_two_calls(openai_wire: Wire) -> None:
    # Ollama sends all calls whole in one chunk that also carries finish_reason; older versions say "stop".
    openai_wire.answer(
        {"quirk": "ollama-whole"},
        {"tool": {"id": "call_a", "name": "weather", "args": OSLO}},
        {"tool": {"id": "call_b", "name": "weather", "args": ROME}},
        {"stop": "end"},
    )
    events = well_ordered(await openai_wire.run())
    assert events == [
        ToolCallStart(0, "call_a", "weather"),
        ToolArgsDelta(0, '{"city": "Oslo"}'),
        ToolCallStart(1, "call_b", "weather"),
        ToolArgsDelta(1, '{"city": "Rome"}'),
        ToolCallEnd(0, '{"city": "Oslo"}'),
        ToolCallEnd(1, '{"city": "Rome"}'),
        Stop("tool_calls"),
    ]


async def test_llamacpp_repeating_the_name_in_every_delta_starts_one_call(openai_wire: Wire) -> None:
    openai_wire.answer(
        {"text": "Looking."},
        {"quirk": "llamacpp-repeat-name"},
        {"tool": {"id": "call_1", "name": "weather", "args": ['{"ci', 'ty": ', '"Oslo"}']}},
    )
    events = well_ordered(await openai_wire.run())
    assert starts(events) == [ToolCallStart(0, "call_1", "weather")]
    assert ends(events) == [ToolCallEnd(0, '{"city": "Oslo"}')]
    assert [e.fragment for e in events if isinstance(e, ToolArgsDelta)] == ['{"ci', 'ty": ', '"Oslo"}']


@pytest.mark.parametrize("quirk", ["vllm-empty-args", "vllm-no-args"])
async def test_vllm_empty_or_missing_arguments_end_as_an_empty_object(openai_wire: Wire, quirk: str) -> None:
    openai_wire.answer({"quirk": quirk}, {"tool": {"id": "call_1", "name": "weather", "args": OSLO}})
    events = well_ordered(await openai_wire.run())
    assert events == [ToolCallStart(0, "call_1", "weather"), ToolCallEnd(0, "{}"), Stop("tool_calls")]


async def test_arguments_sent_as_an_object_become_json_text(openai_wire: Wire) -> None:
    openai_wire.answer({"quirk": "object-args"}, {"tool": {"id": "call_1", "name": "weather", "args": OSLO}})
    (end,) = ends(well_ordered(await openai_wire.run()))
    assert json.loads(end.arguments) == {"city": "Oslo"}


async def test_calls_without_index_are_told_apart_by_id(openai_wire: Wire) -> None:
    openai_wire.answer(
        {"quirk": "no-index"},
        {"tool": {"id": "call_a", "name": "weather", "args": OSLO}},
        {"tool": {"id": "call_b", "name": "weather", "args": ROME}},
    )
    events = well_ordered(await openai_wire.run())
    assert starts(events) == [ToolCallStart(0, "call_a", "weather"), ToolCallStart(1, "call_b", "weather")]
    assert ends(events) == [ToolCallEnd(0, '{"city": "Oslo"}'), ToolCallEnd(1, '{"city": "Rome"}')]


async def test_every_call_at_index_zero_with_its_own_id_is_its_own_call(openai_wire: Wire) -> None:
    openai_wire.answer(
        {"quirk": "index-zero"},
        {"tool": {"id": "call_a", "name": "weather", "args": OSLO}},
        {"tool": {"id": "call_b", "name": "weather", "args": ROME}},
    )
    events = well_ordered(await openai_wire.run())
    assert ends(events) == [ToolCallEnd(0, '{"city": "Oslo"}'), ToolCallEnd(1, '{"city": "Rome"}')]


async def test_anthropic_parameters_buffered_until_the_block_ends(anthropic_wire: Wire) -> None:
    anthropic_wire.answer(
        {"text": "Checking."},
        {"quirk": "anthropic-buffered"},
        {"tool": {"id": "toolu_1", "name": "weather", "args": OSLO}},
    )
    events = without_usage(well_ordered(await anthropic_wire.run()))
    assert events == [
        TextDelta("Checking."),
        ToolCallStart(0, "toolu_1", "weather"),
        ToolArgsDelta(0, '{"city": "Oslo"}'),
        ToolCallEnd(0, '{"city": "Oslo"}'),
        Stop("tool_calls"),
    ]


async def test_anthropic_input_given_whole_in_the_block_start(anthropic_wire: Wire) -> None:
    anthropic_wire.answer(
        {"quirk": "anthropic-input-in-start"}, {"tool": {"id": "toolu_1", "name": "weather", "args": OSLO}}
    )
    events = without_usage(well_ordered(await anthropic_wire.run()))
    assert [type(e) for e in events] == [ToolCallStart, ToolArgsDelta, ToolCallEnd, Stop]
    (end,) = ends(events)
    assert json.loads(end.arguments) == {"city": "Oslo"}


@pytest.mark.parametrize("quirk", ["anthropic-buffered", "anthropic-input-in-start"])
async def test_anthropic_buffered_call_without_arguments_ends_as_an_empty_object(
    anthropic_wire: Wire, quirk: str
) -> None:
    anthropic_wire.answer({"quirk": quirk}, {"tool": {"id": "toolu_1", "name": "weather", "args": []}})
    events = without_usage(well_ordered(await anthropic_wire.run()))
    assert events == [ToolCallStart(0, "toolu_1", "weather"), ToolCallEnd(0, "{}"), Stop("tool_calls")]
