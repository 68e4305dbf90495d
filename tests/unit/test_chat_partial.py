"""Tool arguments while the model writes them (chat/partial.py): healed prefixes, the pace, and the flusher that
sends what the pace held back, even when the event loop's timer wakes before the monotonic clock says it may."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from webhost.chat.partial import PartialArguments, flush_soon, flush_when_due, heal
from webhost.chat.transcript import Message, Part, ToolCall, call_json

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_prefix_heals_to_the_object_so_far() -> None:
    assert heal("") is None
    assert heal('{"title": "') == {"title": ""}
    assert heal('{"title": "Q3", "items": ["al') == {"title": "Q3", "items": ["al"]}
    assert heal('{"done": tr') == {}  # a value still being typed is left out until it is whole
    assert heal("[1, 2") is None  # not an object
    assert heal("not json") is None


def test_the_pace_holds_back_what_comes_too_soon_and_never_sends_the_same_twice() -> None:
    clock = Clock()
    partial = PartialArguments(clock=clock, interval=0.1)
    assert partial.add('{"title": "') == {"title": ""}
    assert partial.add("Q3") is None  # within the interval: held back
    assert partial.next_due_in() == pytest.approx(0.1)
    assert partial.due() is None
    clock.now += 0.1
    assert partial.due() == {"title": "Q3"}
    assert partial.next_due_in() is None
    clock.now += 1
    assert partial.add('"') is None  # the string closed: the same object as the healed one, not sent again
    assert partial.add(", ") is None
    assert partial.next_due_in() is None
    assert partial.add('"n": 1.') is None  # a number cut at its point: left out until it is whole
    assert partial.add("5}") == {"title": "Q3", "n": 1.5}
    assert partial.text == '{"title": "Q3", "n": 1.5}'


async def test_the_flusher_sends_what_was_held_back_when_the_timer_wakes_early() -> None:
    clock = Clock()
    partial = PartialArguments(clock=clock, interval=0.1)
    partial.add('{"title": "')
    partial.add("Q3")
    slept: list[float] = []

    async def early_sleep(seconds: float) -> None:
        # uvloop's timer fires a millisecond before the monotonic clock reaches the deadline: that is due.
        slept.append(seconds)
        clock.now += seconds - 0.001

    sent: list[dict[str, Any]] = []
    await flush_when_due(partial, sent.append, lambda: True, early_sleep)
    assert sent == [{"title": "Q3"}]
    assert slept == [pytest.approx(0.1)]
    assert not partial.flushing


async def test_the_flusher_waits_again_when_the_timer_wakes_far_too_early() -> None:
    clock = Clock()
    partial = PartialArguments(clock=clock, interval=0.1)
    partial.add('{"title": "')
    partial.add("Q3")
    slept: list[float] = []

    async def half_sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds / 2 if len(slept) == 1 else seconds

    sent: list[dict[str, Any]] = []
    await flush_when_due(partial, sent.append, lambda: True, half_sleep)
    assert sent == [{"title": "Q3"}]
    assert slept == [pytest.approx(0.1), pytest.approx(0.05)]


async def test_the_flusher_stops_when_the_arguments_are_no_longer_wanted() -> None:
    clock = Clock()
    partial = PartialArguments(clock=clock, interval=0.1)
    partial.add('{"title": "')
    partial.add("Q3")
    wanted = True

    async def sleep(seconds: float) -> None:
        nonlocal wanted
        clock.now += seconds
        wanted = False  # the call ended meanwhile: its complete arguments went out instead

    sent: list[dict[str, Any]] = []
    await flush_when_due(partial, sent.append, lambda: wanted, sleep)
    assert sent == []


async def test_one_flusher_per_call_however_many_fragments_are_held_back() -> None:
    clock = Clock()
    partial = PartialArguments(clock=clock, interval=0.1)
    partial.add('{"items": ["a"')
    sent: list[dict[str, Any]] = []
    async with anyio.create_task_group() as tg:
        for fragment in [', "b"', ', "c"', "]}"]:
            assert partial.add(fragment) is None
            flush_soon(partial, tg, sent.append, still_wanted=lambda: True)
            assert partial.flushing
        clock.now += 0.1  # the real sleep below ends; the fake clock says the interval is over by then
    assert sent == [{"items": ["a", "b", "c"]}]  # the newest object, once
    assert not partial.flushing


def test_a_snapshot_keeps_the_partial_arguments_keys_as_the_model_wrote_them() -> None:
    call = ToolCall(id="tc-1", model_call_id="c", step=1, model_name="s__t", server="s", tool="t")
    call.partial = {"due_date": "2026", "nested_value": {"inner_key": 1}}
    assert call_json(call)["partial"] == {"due_date": "2026", "nested_value": {"inner_key": 1}}
    message = Message(id="m-1", role="assistant", parts=[Part(call=call)])
    assert message.to_json()["parts"][0]["call"]["partial"] == call.partial
