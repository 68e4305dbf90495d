"""A big response to the page in parts: many frames, and never a second full copy of it in webhost's memory.

A tab that opened `/ws?parts=1` gets a response whose JSON text would be over `STREAM_OVER` as a run of
`response/part` notifications instead of one frame (docs/api.md "Responses in parts"). Each carries about
`PIECE_CHARS` characters of the response's JSON text; the page joins them and reads the whole as the
response it is. The text is made piece by piece from the result already in memory (`pieces`), while the
tab's writer sends them: the encoded frame, its UTF-8 bytes and the WebSocket's copy of it, which each held
the whole result once more, now each hold one piece.

`pieces(value)` joined is the text `jsontext.dumps(value)` gives, with one exception: a float inside a value
that also holds non-ASCII text may spell its exponent differently (`1e16` against `1e+16`; jsontext.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from webhost import jsontext
from webhost.jsonsize import size_at_most

PIECE_CHARS = 512 * 1024
STREAM_OVER = 4 * 1024 * 1024  # smaller results still go as one frame (fewer frames, measured: bench/README.md)
PART_METHOD = "response/part"


def pieces(value: object, size: int = PIECE_CHARS) -> Iterator[str]:
    """The JSON text of `value` in pieces of about `size` characters (a long string is cut; nothing else is).

    Raises what `jsontext.dumps` raises (`ValueError` for NaN, `RecursionError`, `TypeError`), at the piece
    where the value is met.
    """
    held: list[str] = []
    count = 0
    for token in _tokens(value, size):
        held.append(token)
        count += len(token)
        if count >= size:
            yield "".join(held)
            held, count = [], 0
    if held:
        yield "".join(held)


def _tokens(value: object, size: int) -> Iterator[str]:
    if isinstance(value, str):
        if len(value) <= size:
            yield jsontext.dumps(value)
            return
        # JSON escapes a string character by character, so the slices' encodings, less the quotes between
        # them, join to the whole's.
        starts = range(0, len(value), size)
        for start in starts:
            text = jsontext.dumps(value[start : start + size])
            yield text[0 if start == 0 else 1 : None if start == starts[-1] else -1]
        return
    if isinstance(value, dict):
        if size_at_most(value, size) or not all(isinstance(key, str) for key in value):
            yield jsontext.dumps(value)  # small, or keys JSON spells its own way: one token
            return
        yield "{"
        for index, (key, child) in enumerate(value.items()):
            yield ("," if index else "") + jsontext.dumps(key) + ":"
            yield from _tokens(child, size)
        yield "}"
        return
    if isinstance(value, list | tuple) and not size_at_most(value, size):
        yield "["
        for index, child in enumerate(value):
            if index:
                yield ","
            yield from _tokens(child, size)
        yield "]"
        return
    yield jsontext.dumps(value)


async def measured(value: object, size: int = PIECE_CHARS) -> int:
    """How many characters `value`'s JSON text has, found by encoding it a piece at a time and dropping each piece,
    with a turn of the event loop between pieces.

    Not in a worker thread: the encoding holds the interpreter's lock for most of its time, and the event loop,
    waiting up to a switch interval (5 ms) for the lock each time it let it go (every socket read and write),
    served every other tab several times slower for as long as the measure ran (bench/big_stall.py).
    Raises what `pieces` raises."""
    chars = 0
    for piece in pieces(value, size):
        chars += len(piece)
        await asyncio.sleep(0)
    return chars


def part_frames(request_id: object, response: object, chars: int, size: int = PIECE_CHARS) -> Iterator[str]:
    """The `response/part` frames carrying `response` (a whole JSON-RPC response of `chars` characters).

    The first part says how many characters the whole has (`chars`, for the page's progress); the last says
    `last: true`. Parts are made as they are asked for.
    """
    head = '{"jsonrpc":"2.0","method":"' + PART_METHOD + '","params":{"id":' + jsontext.dumps(request_id)
    index = 0
    pending: str | None = None
    for piece in pieces(response, size):
        if pending is not None:
            yield _part(head, index, pending, chars, last=False)
            index += 1
        pending = piece
    if pending is not None:
        yield _part(head, index, pending, chars, last=True)


def _part(head: str, index: int, text: str, chars: int, *, last: bool) -> str:
    extra = (',"chars":' + str(chars) if index == 0 else "") + (',"last":true' if last else "")
    return head + ',"index":' + str(index) + extra + ',"text":' + jsontext.dumps(text) + "}}"
