"""A big value's JSON text cut to a window, without encoding the whole value first.

History keeps the first `limit` characters of a result's JSON (masked) and its full length. Encoding
a 10 MB result to keep 64 KB of it made one more full copy at the moment the result was also being
sent to the page. `shortened(value, keep)` copies only the containers on the way to a string longer
than `keep` characters and cuts that string to `keep`; the JSON of the copy starts with the same
`keep` characters as the JSON of the value (a string's JSON is never shorter than the string), and
the characters cut away are counted as the JSON they would have been. With `keep` twice the window, a
secret that straddles a cut still starts outside the window, so masking the copy's text masks the
window as masking the whole text would.
"""

from __future__ import annotations

import re

from webhost import jsontext

MAX_DEPTH = 200  # deeper than this the value is left as it is (the encoder refuses it or copes)
# Characters whose JSON is longer than themselves (escapes, and the encoder's \uXXXX for non-ASCII).
_ESCAPED = re.compile(r'[\x00-\x1f"\\\x7f-\U0010ffff]')


def shortened(value: object, keep: int) -> tuple[object, int]:
    """The value with every string longer than `keep` cut to `keep`, and the JSON length cut away."""
    removed = 0

    def walk(item: object, depth: int) -> object:
        nonlocal removed
        if isinstance(item, str):
            if len(item) <= keep:
                return item
            removed += encoded_length(item[keep:])
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

    return walk(value, 0), removed


def encoded_length(text: str) -> int:
    """The length of `text`'s JSON without its quotes, without building it when nothing needs escaping."""
    if not _ESCAPED.search(text):
        return len(text)
    return len(jsontext.dumps(text)) - 2
