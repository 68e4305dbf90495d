"""`webhost.frames.parse`: the orjson fast path gives exactly what the standard library gives."""

from __future__ import annotations

import json

import pytest

from webhost.frames import parse


def frame(params: str) -> str:
    return '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ' + params + "}"


@pytest.mark.parametrize(
    "params",
    [
        '{"n": 123456789012345678901234567890}',  # past 64 bits: orjson would read a float
        '{"n": -9223372036854775809, "m": 18446744073709551615}',
        '{"n": 1.5e300, "s": "\\ud83d\\ude00", "t": "caf\\u00e9", "l": [1, {"a": null}]}',
        '{"a": 1, "a": 2}',  # the last of a repeated key, as json.loads
    ],
)
def test_a_request_parses_to_the_values_the_standard_library_reads(params: str) -> None:
    parsed = parse(frame(params))
    assert parsed == (3, "tools/call", json.loads(params))
    assert isinstance(parsed, tuple)
    assert repr(parsed[2]) == repr(json.loads(params))  # ints stay ints, to the last digit


@pytest.mark.parametrize(
    ("params", "message"),
    [('{"n": NaN}', "NaN is not a JSON value"), ('{"s": "\\ud800"}', "lone UTF-16 surrogate")],
)
def test_what_orjson_refuses_is_named_as_before(params: str, message: str) -> None:
    error = parse(frame(params))
    assert isinstance(error, dict) and message in error["error"]["message"]
