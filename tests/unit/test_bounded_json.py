"""`webhost.storage.bounded_json`: a value cut short keeps its JSON's window and counts what was cut."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from webhost import jsontext
from webhost.storage.bounded_json import encoded_length, shortened

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
    cut, removed = shortened(value, 2 * WINDOW)
    short = jsontext.dumps(cut)
    assert short[:WINDOW] == whole[:WINDOW]
    assert len(short) + removed == len(whole)


def test_only_the_containers_on_the_way_to_a_long_string_are_copied() -> None:
    small = {"a": [1, 2], "b": "short"}
    value = {"keep": small, "big": ["x" * 1000]}
    cut, removed = shortened(value, 10)
    assert cut == {"keep": small, "big": ["x" * 10]} and removed == 990
    assert isinstance(cut, dict) and cut["keep"] is small  # untouched parts are shared, not copied
    assert shortened(small, 10) == (small, 0) and shortened(small, 10)[0] is small


def test_the_encoded_length_counts_escapes() -> None:
    assert encoded_length("plain text") == len("plain text")
    assert encoded_length('a"b\\c\n') == len(jsontext.dumps('a"b\\c\n')) - 2
    assert encoded_length("é😀") == len(jsontext.dumps("é😀")) - 2
