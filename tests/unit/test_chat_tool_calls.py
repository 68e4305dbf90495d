"""The tool-call delta accumulator on the cases no scripted server sends on purpose, and retry-after parsing."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

from webhost.chat.providers.errors import ProviderError, parse_retry_after, retry_after_of, wait_phrase
from webhost.chat.providers.events import ToolArgsDelta, ToolCallEnd, ToolCallStart
from webhost.chat.providers.tool_calls import ToolCallAccumulator


def ids() -> ToolCallAccumulator:
    numbers = iter(range(100))
    return ToolCallAccumulator(new_id=lambda: f"gen_{next(numbers)}")


def test_arguments_before_the_name_are_sent_right_after_the_start() -> None:
    calls = ids()
    assert calls.feed(0, "call_1", None, '{"a"') == []
    assert calls.feed(0, None, "search", ": 1}") == [ToolCallStart(0, "call_1", "search"), ToolArgsDelta(0, '{"a": 1}')]
    assert calls.finish() == [ToolCallEnd(0, '{"a": 1}')]


def test_a_call_without_an_id_gets_one_and_keeps_it() -> None:
    calls = ids()
    assert calls.feed(0, None, "search", "{}") == [ToolCallStart(0, "gen_0", "search"), ToolArgsDelta(0, "{}")]
    assert calls.feed(0, None, None, "") == []
    assert calls.finish() == [ToolCallEnd(0, "{}")]


def test_a_different_name_later_does_not_rename_the_call() -> None:
    calls = ids()
    calls.feed(0, "call_1", "search", "")
    assert calls.feed(0, "call_1", "search_again", "{}") == [ToolArgsDelta(0, "{}")]
    assert calls.finish() == [ToolCallEnd(0, "{}")]


def test_a_bare_fragment_without_index_or_id_belongs_to_the_latest_call() -> None:
    calls = ids()
    calls.feed(None, "call_1", "a", '{"x":')
    calls.feed(None, "call_2", "b", '{"y":')
    assert calls.feed(None, None, None, " 2}") == [ToolArgsDelta(1, " 2}")]
    assert calls.finish() == [ToolCallEnd(0, '{"x":'), ToolCallEnd(1, '{"y": 2}')]


def test_a_call_that_never_got_a_name_still_starts_and_ends() -> None:
    calls = ids()
    calls.feed(3, None, None, '{"q": 1}')
    assert calls.finish() == [ToolCallStart(0, "gen_0", ""), ToolArgsDelta(0, '{"q": 1}'), ToolCallEnd(0, '{"q": 1}')]


def test_whitespace_arguments_are_an_empty_object_and_deltas_after_the_end_are_dropped() -> None:
    calls = ids()
    calls.feed(0, "call_1", "ping", "  ")
    assert calls.finish() == [ToolCallEnd(0, "{}")]
    assert calls.feed(0, None, None, '{"late": 1}') == []
    assert calls.finish() == []


def test_retry_after_in_seconds_dates_and_milliseconds() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    later = format_datetime(datetime(2026, 1, 1, 12, 0, 30, tzinfo=UTC), usegmt=True)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after(later, now=now) == 30.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after("") is None
    assert retry_after_of({"Retry-After": "3", "retry-after-ms": "1500"}) == 1.5
    assert retry_after_of({"Retry-After": "3"}) == 3.0
    assert wait_phrase(0.2) == "try again in 1 s" and wait_phrase(2.1) == "try again in 3 s"


def test_a_provider_error_is_retryable_by_kind_unless_told() -> None:
    assert ProviderError("x", "server").retryable
    assert not ProviderError("x", "auth").retryable
    assert not ProviderError("x", "server", retryable=False).retryable
