"""`webhost.storage.bounded_json`: a value cut short keeps its JSON's window and counts what was cut."""

from __future__ import annotations

import json

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webhost import jsontext
from webhost.storage import bounded_json
from webhost.storage.bounded_json import Cut, measured_cuts, shortened

WINDOW = 40

text = st.text(alphabet=st.sampled_from('ab"\\\n\x01é€😀/ '), max_size=300)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | text,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(text, children, max_size=5),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_the_window_and_the_length_are_those_of_the_whole_values_json(value: object) -> None:
    whole = jsontext.dumps(value)
    cut, cuts = shortened(value, 2 * WINDOW)
    removed = anyio.run(measured_cuts, cuts)
    short = jsontext.dumps(cut)
    assert short[:WINDOW] == whole[:WINDOW]
    assert len(short) + removed == len(whole)


def test_only_the_containers_on_the_way_to_a_long_string_are_copied() -> None:
    small = {"a": [1, 2], "b": "short"}
    value = {"keep": small, "big": ["x" * 1000]}
    cut, cuts = shortened(value, 10)
    assert cut == {"keep": small, "big": ["x" * 10]} and anyio.run(measured_cuts, cuts) == 990
    assert isinstance(cut, dict) and cut["keep"] is small  # untouched parts are shared, not copied
    assert shortened(small, 10) == (small, []) and shortened(small, 10)[0] is small


def encoded_length(text: str) -> int:
    return anyio.run(measured_cuts, [Cut(text, 0)])


def test_the_encoded_length_counts_escapes() -> None:
    assert encoded_length("plain text") == len("plain text")
    assert encoded_length('a"b\\c\n') == len(jsontext.dumps('a"b\\c\n')) - 2
    assert encoded_length("é😀") == len(jsontext.dumps("é😀")) - 2


def test_what_was_cut_is_measured_a_piece_at_a_time_with_the_loop_running_between(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One encoding of a whole 15 MB text held the interpreter's lock, and with it every tab's event loop, for
    # tens of ms (bench/big_stall.py): each piece is a short hold, and the loop runs between pieces.
    encoded: list[int] = []
    whole_dumps = jsontext.dumps

    def dumps(value: object) -> str:
        assert isinstance(value, str)
        encoded.append(len(value))
        return whole_dumps(value)

    monkeypatch.setattr(jsontext, "dumps", dumps)
    text = ('line "quoted" é😀\\\x01\n' * 40_000)[:-7]
    turns = 0

    async def measure_and_count_turns() -> int:
        nonlocal turns
        done = anyio.Event()

        async def count() -> None:
            nonlocal turns
            while not done.is_set():
                turns += 1
                await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(count)
            length = await measured_cuts([Cut(text, 5)])
            done.set()
        return length

    assert anyio.run(measure_and_count_turns) == len(json.dumps(text[5:])) - 2
    pieces = -(-(len(text) - 5) // bounded_json.PIECE)
    assert len(encoded) == pieces and max(encoded) <= bounded_json.PIECE and sum(encoded) == len(text) - 5
    assert turns >= pieces  # another task ran between every two pieces
