"""A very long JSON line parsed in bounded pieces, so that one person's 30 MB result does not hold the event loop.

`json.loads` of a 30 MB line is one call into C of 40-100 ms (more on a loaded machine), and a thread does not
help: the call holds the interpreter's lock from start to end. What makes a result that big is almost always a
few long strings (a file's text, an image's base64). `loads_in_pieces` finds the line's string literals with
`str.find` over bounded windows, decodes each long one `PIECE` characters at a time (a cut is moved back until
the piece decodes on its own: escapes are prefix-free, so a piece that decodes ends between two of them; a
surrogate pair cut in two is joined again), and parses what is left, the line's small skeleton, in one call.
Between pieces the event loop runs everything else. The line may be a `str` or the chunks it arrived in
(`text_pieces.py`), never joined unless it must be parsed in one call.

A line with very many strings (a result of hundreds of thousands of small values) is parsed in one call, as
before: finding its strings one by one would cost more than the call. Anything this module cannot read the way
`json.loads` would raises `ValueError`, and the caller parses the line as before (whose error then names it).
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

import anyio.lowlevel

from webhost.frames import has_lone_surrogate

from .text_pieces import Text

PIECE = 256 * 1024  # characters decoded, or searched, per step of the event loop
LONG = 64 * 1024  # a string literal at least this long is decoded in pieces; shorter ones stay in the skeleton
MAX_QUOTES = 20_000  # a line with more quote characters is parsed in one call
_ESCAPE = 12  # the longest run of characters a cut may fall inside: a surrogate pair, \uD83D\uDE00
_SURROGATE = re.compile("[\ud800-\udfff]")


async def loads_in_pieces(line: Text) -> Any:
    """`json.loads(line)`, with a checkpoint of the event loop at least every `PIECE` characters of long strings.

    Raises `ValueError` where `json.loads` would, and also for a long string holding a lone surrogate (which no
    UTF-8 text carries: the caller's own parser refuses the line then, as it always has)."""
    if await _many_quotes(line):
        return _checked(json.loads(str(line)))
    spans = await _long_strings(line)
    if not spans:
        return _checked(json.loads(str(line)))
    marker = "\x00webhost-" + secrets.token_hex(8) + "-"
    skeleton: list[str] = []
    decoded: list[str] = []
    last = 0
    for index, (start, end) in enumerate(spans):
        skeleton.append(line[last : start - 1])
        skeleton.append(json.dumps(marker + str(index)))
        decoded.append(await _decode(line, start, end))
        last = end + 1
    skeleton.append(line[last : len(line)])
    value = _checked(json.loads("".join(skeleton)))  # the long strings were checked piece by piece
    return _put_back(value, marker, decoded)


async def _many_quotes(line: Text) -> bool:
    """Whether the line has more than `MAX_QUOTES` quote characters: counted `PIECE` characters at a time, and
    only until there are that many (one count over a 30 MB line held the event loop for tens of ms)."""
    count = 0
    for start in range(0, len(line), PIECE):
        count += line.count('"', start, start + PIECE)
        if count > MAX_QUOTES:
            return True
        await anyio.lowlevel.checkpoint()
    return False


def _checked(value: Any) -> Any:
    if has_lone_surrogate(value):
        raise ValueError("a lone surrogate")
    return value


async def _long_strings(line: Text) -> list[tuple[int, int]]:
    """Where the contents of the line's string literals of at least `LONG` characters start and end."""
    spans: list[tuple[int, int]] = []
    position = 0
    while True:
        opening = await _find_quote(line, position)
        if opening < 0:
            return spans
        closing = opening + 1
        while True:
            closing = await _find_quote(line, closing)
            if closing < 0:
                raise ValueError("an unterminated string")
            backslashes = 0
            while line[closing - 1 - backslashes] == "\\":
                backslashes += 1
            if backslashes % 2 == 0:
                break
            closing += 1  # an escaped quote: the string goes on
        if closing - opening - 1 >= LONG:
            spans.append((opening + 1, closing))
        position = closing + 1


async def _find_quote(line: Text, start: int) -> int:
    """The next `"` from `start`, searched `PIECE` characters at a time."""
    while start < len(line):
        found = line.find('"', start, start + PIECE)
        if found >= 0:
            return found
        start += PIECE
        await anyio.lowlevel.checkpoint()
    return -1


async def _decode(line: Text, start: int, end: int) -> str:
    """The string whose JSON contents are `line[start:end]`, decoded a piece at a time."""
    pieces: list[str] = []
    position = start
    while position < end:
        cut = min(position + PIECE, end)
        while True:
            try:
                text = json.loads('"' + line[position:cut] + '"')
                break
            except ValueError:
                if cut == end or cut <= position + 1 or position + PIECE - cut >= _ESCAPE:
                    raise
                cut -= 1  # inside an escape: end the piece before it
        if pieces and text and _high(pieces[-1][-1:]) and _low(text[0]):
            # A surrogate pair cut in two decodes as two lone halves: one character, as json.loads makes it.
            pair = chr(0x10000 + ((ord(pieces[-1][-1]) - 0xD800) << 10) + (ord(text[0]) - 0xDC00))
            pieces[-1] = pieces[-1][:-1] + pair
            text = text[1:]
        if pieces and not pieces[-1].isascii() and _SURROGATE.search(pieces[-1]):
            raise ValueError("a lone surrogate")  # the one before: its last character had its chance to pair
        pieces.append(text)
        position = cut
        await anyio.lowlevel.checkpoint()
    if pieces and not pieces[-1].isascii() and _SURROGATE.search(pieces[-1]):
        raise ValueError("a lone surrogate")
    return "".join(pieces)


def _high(char: str) -> bool:
    return bool(char) and 0xD800 <= ord(char) <= 0xDBFF


def _low(char: str) -> bool:
    return 0xDC00 <= ord(char) <= 0xDFFF


def _put_back(value: Any, marker: str, decoded: list[str]) -> Any:
    """The skeleton's value with each marker replaced by the string it stands for."""
    if isinstance(value, str):
        return decoded[int(value[len(marker) :])] if value.startswith(marker) else value
    if isinstance(value, dict):
        return {_put_back(key, marker, decoded): _put_back(item, marker, decoded) for key, item in value.items()}
    if isinstance(value, list):
        return [_put_back(item, marker, decoded) for item in value]
    return value
