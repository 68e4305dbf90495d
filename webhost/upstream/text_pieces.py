"""A long line kept as the chunks it arrived in, read as a string is read, without joining them.

A server's 30 MB result arrives as a few hundred chunks from its stdout pipe. Joining them into one string was a
single call that copied 30 MB into fresh memory (most of its time the page faults of that memory), 15-20 ms in
one turn of the event loop while every other tab waited (bench/README.md, "Stop 37"). `big_json` reads a long
line only by finding and counting one character in bounded windows, looking at single characters and slicing
bounded ranges: `TextPieces` answers those over the chunks. `str(pieces)` joins them, for the rare line that
must be parsed whole.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import Protocol, overload


class Text(Protocol):
    """What `big_json` reads of a line: a `str`, or `TextPieces`."""

    def __len__(self) -> int: ...

    @overload
    def __getitem__(self, key: int, /) -> str: ...
    @overload
    def __getitem__(self, key: slice, /) -> str: ...

    def find(self, char: str, start: int, end: int, /) -> int: ...

    def count(self, char: str, start: int, end: int, /) -> int: ...


class TextPieces:
    """The text that is `"".join(parts)`, for reading: `find` and `count` of one character, an index, a slice."""

    def __init__(self, parts: list[str]) -> None:
        self._parts = [part for part in parts if part]
        self._starts = [0, *accumulate(len(part) for part in self._parts)]  # where each part starts; then the end

    def __len__(self) -> int:
        return self._starts[-1]

    def __str__(self) -> str:
        return "".join(self._parts)

    @overload
    def __getitem__(self, key: int, /) -> str: ...
    @overload
    def __getitem__(self, key: slice, /) -> str: ...

    def __getitem__(self, key: int | slice, /) -> str:
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                raise ValueError("only contiguous slices")
            return "".join(part[max(0, start - at) : stop - at] for part, at in self._overlapping(start, stop))
        index = key + len(self) if key < 0 else key
        if not 0 <= index < len(self):
            raise IndexError("index out of range")
        part = bisect_right(self._starts, index) - 1
        return self._parts[part][index - self._starts[part]]

    def find(self, char: str, start: int, end: int, /) -> int:
        """The first `char` in `[start, end)`, or -1: one character, so a match never spans two parts."""
        if len(char) != 1:
            raise ValueError("one character")
        for part, at in self._overlapping(start, end):
            found = part.find(char, max(0, start - at), end - at)
            if found >= 0:
                return at + found
        return -1

    def count(self, char: str, start: int, end: int, /) -> int:
        """How many `char` are in `[start, end)`: one character, so none spans two parts."""
        if len(char) != 1:
            raise ValueError("one character")
        return sum(part.count(char, max(0, start - at), end - at) for part, at in self._overlapping(start, end))

    def _overlapping(self, start: int, end: int) -> list[tuple[str, int]]:
        """The parts that hold characters of `[start, end)`, each with where it starts."""
        start, end = max(0, start), min(end, len(self))
        if start >= end:
            return []
        first = bisect_right(self._starts, start) - 1
        out: list[tuple[str, int]] = []
        for index in range(first, len(self._parts)):
            at = self._starts[index]
            if at >= end:
                break
            out.append((self._parts[index], at))
        return out
