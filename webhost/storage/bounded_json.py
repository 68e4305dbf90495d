"""A big value's JSON text cut to a window, without encoding the whole value first.

History keeps the first `limit` characters of a result's JSON (masked) and its full length. Encoding
a 10 MB result to keep 64 KB of it made one more full copy at the moment the result was also being
sent to the page. `shortened(value, keep)` copies only the containers on the way to a string longer
than `keep` characters and cuts that string to `keep`; the JSON of the copy starts with the same
`keep` characters as the JSON of the value (a string's JSON is never shorter than the string). What was
cut away is returned as `Cut`s, measured as the JSON they would have been by `measured_cuts` (a piece at a
time, with the event loop running between pieces). With `keep` twice the
window, a secret that straddles a cut still starts outside the window, so masking the copy's text masks
the window as masking the whole text would.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

import anyio.lowlevel

from webhost import jsontext

PIECE = 64 * 1024  # characters encoded at a time (a fraction of a millisecond each)
MAX_DEPTH = 200  # deeper than this the value is left as it is (the encoder refuses it or copes)
# Characters whose JSON is longer than themselves (escapes, and the encoder's \uXXXX for non-ASCII).
_ESCAPED = re.compile(r'[\x00-\x1f"\\\x7f-\U0010ffff]')


class Cut(NamedTuple):
    """The characters of `text` from `start` on, cut away by `shortened` (not copied)."""

    text: str
    start: int


def shortened(value: object, keep: int) -> tuple[object, list[Cut]]:
    """The value with every string longer than `keep` cut to `keep`, and what was cut away."""
    cuts: list[Cut] = []

    def walk(item: object, depth: int) -> object:
        if isinstance(item, str):
            if len(item) <= keep:
                return item
            cuts.append(Cut(item, keep))
            return item[:keep]
        if depth > MAX_DEPTH:
            return item
        if isinstance(item, dict):
            out = {key: walk(child, depth + 1) for key, child in item.items()}
            return item if all(out[key] is child for key, child in item.items()) else out
        if isinstance(item, list | tuple):
            items = [walk(child, depth + 1) for child in item]
            return item if all(a is b for a, b in zip(items, item, strict=True)) else items
        return item

    return walk(value, 0), cuts


async def measured_cuts(cuts: Sequence[Cut]) -> int:
    """The length of the JSON the cuts would have been (without quotes), measured a piece at a time with a
    checkpoint of the event loop between pieces (none when nothing was cut).

    Not in a worker thread: encoding holds the interpreter's lock, and the event loop, waiting up to a switch
    interval (5 ms) for it each time it let it go, served every other tab slower for as long as it ran; one
    encoding of a 15 MB text held it for 30-60 ms (bench/big_stall.py)."""
    length = 0
    for cut in cuts:
        for at in range(cut.start, len(cut.text), PIECE):
            length += _piece_length(cut.text, at)
            await anyio.lowlevel.checkpoint()
    return length


def _piece_length(text: str, at: int) -> int:
    """The JSON length of `text[at : at + PIECE]` (a string's JSON is its characters' JSON one after another),
    without encoding it when nothing in it needs escaping."""
    end = min(at + PIECE, len(text))
    if not _ESCAPED.search(text, at, end):
        return end - at
    return len(jsontext.dumps(text[at:end])) - 2
