"""Every way a model endpoint fails is one clear `ProviderError` line, on both wires, without the API key:
refused keys, missing models, rate limits, server errors, unreachable hosts, cut streams, bad baseUrls."""

from __future__ import annotations

import socket

import pytest

from tests.fast.chat.conftest import KEY, Wire, well_ordered, without_usage
from webhost.chat.providers import Api, ModelEndpoint, ProviderError, base_url_problem, open_provider
from webhost.chat.providers.events import Stop, TextDelta
from webhost.chat.providers.messages import ChatRequest

pytestmark = pytest.mark.anyio


def one_line(error: ProviderError, *secrets: str) -> str:
    """The error's line, after checking it is one line without the key (or any other secret given)."""
    assert "\n" not in error.message and "Traceback" not in error.message
    for secret in (KEY, *secrets):
        assert secret not in error.message and secret not in repr(error)
    return error.message


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (401, "auth", "refused the API key (401)"),
        (403, "forbidden", "denied access (403)"),
        (404, "not-found", "may be wrong"),
        (500, "server", "failed (500)"),
        (400, "bad-request", "rejected the request (400)"),
    ],
)
async def test_an_http_error_is_one_line_of_its_kind(wire: Wire, status: int, kind: str, words: str) -> None:
    wire.answer({"status": status})
    events, error = await wire.fail()
    assert (events, error.kind, error.status) == ([], kind, status)
    assert words in one_line(error)
    assert error.retryable == (status >= 500)
    if status == 404:
        assert repr(wire.model) in error.message, "names the model it asked for"


async def test_a_401_without_a_configured_key_says_to_set_one(wire: Wire) -> None:
    wire.answer({"status": 401})
    _, error = await wire.fail(endpoint=wire.endpoint(key=None))
    assert one_line(error).endswith("refused the API key (401): set apiKey for 'scripted'.")


async def test_a_rate_limit_says_when_to_try_again(wire: Wire) -> None:
    wire.answer({"status": 429, "retryAfter": 2})
    _, error = await wire.fail()
    assert (error.kind, error.status, error.retry_after, error.retryable) == ("rate-limited", 429, 2.0, True)
    assert "try again in 2 s" in one_line(error)


async def test_a_rate_limit_with_an_http_date_in_the_past_means_now(wire: Wire) -> None:
    wire.answer({"status": 429, "retryAfter": "Wed, 21 Oct 2015 07:28:00 GMT"})
    _, error = await wire.fail()
    assert (error.kind, error.retry_after) == ("rate-limited", 0.0)
    assert "try again in 1 s" in one_line(error)


@pytest.mark.parametrize("status", [401, 400, 500])
async def test_a_key_the_server_echoes_is_masked(wire: Wire, status: int) -> None:
    wire.answer({"status": status, "message": "Incorrect API key provided: {key}. Check it."})
    _, error = await wire.fail()
    one_line(error)
    if status != 401:  # the server's words are kept where they help (400, 5xx), the key masked
        assert "Incorrect API key provided: ***" in error.message


async def test_a_key_in_the_base_url_is_masked(wire: Wire) -> None:
    host = wire.base_url.removeprefix("http://")
    wire.answer({"status": 401})
    endpoint = wire.endpoint(base_url=f"http://user:sk-in-url-secret@{host}?token=sk-query-secret")
    _, error = await wire.fail(endpoint=endpoint)
    assert "***@" in one_line(error, "sk-in-url-secret", "sk-query-secret")


async def test_a_refused_port_is_unreachable(wire: Wire) -> None:
    with socket.socket() as sock:  # a port that was just free: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    suffix = "/v1" if wire.api == "openai" else ""
    _, error = await wire.fail(endpoint=wire.endpoint(base_url=f"http://127.0.0.1:{port}{suffix}"))
    assert (error.kind, error.retryable) == ("unreachable", True)
    assert one_line(error) == f"Cannot reach the model endpoint at http://127.0.0.1:{port}{suffix}: connection refused."


async def test_an_endpoint_that_does_not_answer_times_out(wire: Wire) -> None:
    wire.answer({"pause": 30}, {"text": "too late"})
    _, error = await wire.fail(timeout=0.3)
    assert error.kind == "unreachable"
    assert "did not answer within 0.3 s" in one_line(error)


async def test_a_stream_that_goes_silent_is_interrupted(wire: Wire) -> None:
    wire.answer({"text": "Hel"}, {"pause": 30}, {"text": "lo"})
    events, error = await wire.fail(timeout=0.3)
    assert events == [TextDelta("Hel")]
    assert (error.kind, error.retryable) == ("interrupted", True)
    assert "no data for 0.3 s" in one_line(error)


async def test_a_stream_cut_mid_answer_keeps_what_came_and_is_interrupted(wire: Wire) -> None:
    wire.answer(
        {"text": "The answer is"}, {"tool": {"id": "call_1", "name": "weather", "args": ['{"ci']}}, {"cut": True}
    )
    events, error = await wire.fail()
    assert events[0] == TextDelta("The answer is")
    assert (error.kind, error.retryable) == ("interrupted", True)
    assert "cut off mid-stream (the connection closed)" in one_line(error)


async def test_a_stream_that_ends_unfinished_is_interrupted(wire: Wire) -> None:
    wire.answer({"text": "The answer is"}, {"cut": "clean"})
    events, error = await wire.fail()
    assert events == [TextDelta("The answer is")]
    assert error.kind == "interrupted"
    assert "stopped before it finished" in one_line(error)


async def test_a_cut_after_the_finish_loses_only_the_usage(openai_wire: Wire) -> None:
    openai_wire.answer({"text": "Done."}, {"usage": {"input": 1, "output": 1}}, {"stop": "end"}, {"cut": True})
    assert well_ordered(await openai_wire.run()) == [TextDelta("Done."), Stop("end")]


async def test_an_error_inside_the_stream_is_a_server_error(wire: Wire) -> None:
    wire.answer({"text": "Hel"}, {"status": 529, "message": "Overloaded"})
    events, error = await wire.fail()
    assert events == [TextDelta("Hel")]
    assert error.kind == "server"
    assert "reported an error mid-answer: Overloaded." in one_line(error)


async def test_a_data_line_that_is_not_json_is_one_line_too(wire: Wire) -> None:
    event = "" if wire.api == "openai" else "event: content_block_delta\n"
    wire.answer({"text": "Hel"}, {"raw": f"{event}data: <html>oops\n\n"}, {"text": "lo"})
    events, error = await wire.fail()
    assert events == [TextDelta("Hel")]
    assert error.kind == "other"
    assert "a data line that is not JSON" in one_line(error)


@pytest.mark.parametrize(
    ("api", "base_url", "words"),
    [
        ("openai", "ftp://models.example/v1", "is not an http(s) URL"),
        ("openai", "http:///v1", "has no host"),
        ("openai", "http://127.0.0.1:notaport/v1", "is not a valid URL"),
        ("openai", "http://127.0.0.1:11434/v1/chat/completions", "stops at /v1"),
        ("anthropic", "https://api.anthropic.com/v1", "is the origin"),
        ("anthropic", "localhost:8080", "is not an http(s) URL"),
    ],
)
async def test_a_bad_base_url_is_refused_before_any_request(api: Api, base_url: str, words: str) -> None:
    endpoint = ModelEndpoint("local", api, "m", base_url, KEY)
    assert words in (base_url_problem(endpoint) or "")
    provider = open_provider(endpoint)
    try:
        with pytest.raises(ProviderError) as caught:
            async for _ in provider.stream(ChatRequest("m", "", (), ())):
                pass
    finally:
        await provider.aclose()
    assert (caught.value.kind, caught.value.retryable) == ("bad-url", False)
    assert words in one_line(caught.value)


@pytest.mark.parametrize(("place", "words"), [("site", "answered with a web page"), ("json", "not an event stream")])
async def test_a_base_url_that_is_not_a_model_api_is_a_bad_url(wire: Wire, place: str, words: str) -> None:
    suffix = "/v1" if wire.api == "openai" else ""
    _, error = await wire.fail(endpoint=wire.endpoint(base_url=f"{wire.server.origin}/{place}{suffix}"))
    assert error.kind == "bad-url"
    assert words in one_line(error) and "check the baseUrl of model 'scripted'" in error.message


async def test_a_wrong_path_is_not_found_with_a_hint(wire: Wire) -> None:
    _, error = await wire.fail(endpoint=wire.endpoint(base_url=f"{wire.server.origin}/nothing-here"))
    assert (error.kind, error.status) == ("not-found", 404)
    assert "the model name or the baseUrl path may be wrong" in one_line(error)


async def test_after_an_error_the_same_provider_answers_the_retry(wire: Wire) -> None:
    wire.script({"times": 1, "events": [{"status": 503, "retryAfter": 1}]}, {"events": [{"text": "ok now"}]})
    provider = open_provider(wire.endpoint())
    try:
        with pytest.raises(ProviderError) as caught:
            async for _ in provider.stream(wire.request()):
                pass
        retried = [event async for event in provider.stream(wire.request())]
    finally:
        await provider.aclose()
    assert (caught.value.kind, caught.value.retry_after) == ("server", 1.0)
    assert without_usage(well_ordered(retried)) == [TextDelta("ok now"), Stop("end")]
