"""`webhost.upstream.text_pieces`: a line kept as its chunks reads as the joined string reads."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webhost.upstream.text_pieces import TextPieces

chunks = st.lists(st.text(alphabet=st.sampled_from('ab"\\é😀\n'), max_size=12), max_size=8)
positions = st.integers(min_value=-3, max_value=80)


@settings(max_examples=400, deadline=None)
@given(chunks, positions, positions, st.sampled_from('a"\\😀'))
def test_reads_as_the_joined_string_reads(parts: list[str], start: int, end: int, char: str) -> None:
    whole = "".join(parts)
    pieces = TextPieces(parts)
    assert len(pieces) == len(whole) and str(pieces) == whole
    lo, hi = max(0, start), max(0, end)  # big_json asks for windows inside the line
    assert pieces.find(char, lo, hi) == whole.find(char, lo, hi)
    assert pieces.count(char, lo, hi) == whole.count(char, lo, hi)
    assert pieces[start:end] == whole[start:end]
    assert pieces[lo : len(pieces)] == whole[lo:]
    if -len(whole) <= start < len(whole):
        assert pieces[start] == whole[start]
    else:
        with pytest.raises(IndexError):
            pieces[start]


def test_only_one_character_is_searched_for() -> None:
    pieces = TextPieces(["ab", "cd"])
    with pytest.raises(ValueError):
        pieces.find("bc", 0, 4)  # would span two parts
    with pytest.raises(ValueError):
        pieces.count("bc", 0, 4)
    with pytest.raises(ValueError):
        pieces[0:4:2]
