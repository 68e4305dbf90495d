"""webhost.jsontext.dumps: the standard library's text and errors, at orjson's speed."""

from __future__ import annotations

import json
import math

import pytest

from webhost.jsontext import dumps


def reference(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


@pytest.mark.parametrize(
    "value",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hello"}], "isError": False}},
        {"text": "é ü 漢字 😀", "list": [1, 2.5, None, True]},
        {"nested": {"a": [{"b": None}]}, "ts": 1700000000.123456, "ms": 0.91},
        {1: "int key", "x": "y"},
        {"big": 2**70},
        {"lone": "\ud800"},
        {"controls": '\x00\x1f\x7f\n\t"\\/'},
        "x" * 100_000,
        [],
    ],
)
def test_the_same_text_as_json_dumps(value: object) -> None:
    assert dumps(value) == reference(value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused_as_before(bad: float) -> None:
    with pytest.raises(ValueError):
        dumps({"result": {"x": bad}})
    with pytest.raises(ValueError):  # beside a real null, deep in a list
        dumps({"result": {"a": None, "b": [[1.5, (2, bad)]]}})


def test_nesting_too_deep_is_a_recursion_error_as_before() -> None:
    value: list[object] = []
    for _ in range(100_000):
        value = [value]
    with pytest.raises(RecursionError):
        dumps(value)
