"""`webhost.response_parts`: a response's JSON text in pieces, and the `response/part` frames that carry it."""

from __future__ import annotations

import json
import math

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webhost import jsontext
from webhost.response_parts import PART_METHOD, measured, part_frames, pieces

text = st.text(alphabet=st.sampled_from('ab"\\\n\x01\x7fé€😀/ '), max_size=120)
values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | text,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(text, children, max_size=6),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(values, st.integers(min_value=1, max_value=64))
def test_the_pieces_join_to_the_text_of_the_whole_value(value: object, size: int) -> None:
    joined = "".join(pieces(value, size))
    assert joined == jsontext.dumps(value)
    assert json.loads(joined) == value


def test_a_long_string_is_cut_into_pieces_of_about_the_size_and_nothing_else_is() -> None:
    value = {"content": [{"type": "image", "data": "A" * 10_000, "mimeType": "image/png"}], "isError": False}
    got = list(pieces(value, 1000))
    assert "".join(got) == jsontext.dumps(value)
    assert len(got) >= 10 and all(len(piece) <= 2 * 1000 + 100 for piece in got)
    # Small values are whole tokens: the mime type and the keys are never split.
    assert sum('"mimeType":"image/png"' in piece for piece in got) == 1


def test_what_json_cannot_carry_raises_as_the_encoder_does() -> None:
    with pytest.raises(ValueError):
        list(pieces({"a": "x" * 100, "b": [math.nan] * 50}, 10))


def test_the_frames_say_their_order_the_size_and_the_last_and_join_to_the_response() -> None:
    response = {"jsonrpc": "2.0", "id": "r-1", "result": {"content": [{"type": "text", "text": 'q"' * 3000}]}}
    chars = len(jsontext.dumps(response))
    frames = [json.loads(frame) for frame in part_frames("r-1", response, chars, size=500)]
    assert {frame["method"] for frame in frames} == {PART_METHOD}
    params = [frame["params"] for frame in frames]
    assert [p["index"] for p in params] == list(range(len(params))) and len(params) > 5
    assert params[0]["chars"] == chars and all("chars" not in p for p in params[1:])
    assert [p.get("last", False) for p in params] == [False] * (len(params) - 1) + [True]
    assert {p["id"] for p in params} == {"r-1"}
    assert json.loads("".join(p["text"] for p in params)) == response


def test_the_frames_are_made_only_as_they_are_asked_for() -> None:
    # The value's end cannot be encoded: making the first frames does not reach it.
    response = {"jsonrpc": "2.0", "id": 1, "result": {"text": "z" * 5000, "bad": math.inf}}
    frames = part_frames(1, response, 5030, size=1000)
    assert [json.loads(next(frames))["params"]["index"] for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError):
        list(frames)


@pytest.mark.anyio
async def test_a_big_result_is_measured_with_the_event_loop_running_between_pieces() -> None:
    """Measured in a worker thread, the encoding held the interpreter's lock and every other tab waited for it."""
    value = {"content": [{"type": "text", "text": "é\n" * 40_000}], "structuredContent": {"result": "x" * 90_000}}
    size = 10_000
    ticks = 0
    done = anyio.Event()

    async def other_tab() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await anyio.sleep(0)

    async with anyio.create_task_group() as tg:
        tg.start_soon(other_tab)
        chars = await measured(value, size)
        done.set()
    assert chars == len(jsontext.dumps(value))
    assert ticks >= len(list(pieces(value, size))) - 1
