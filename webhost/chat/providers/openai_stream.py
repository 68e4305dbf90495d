"""The `openai` wire: Chat Completions streamed through the official SDK, as webhost's events.

Event mapping: `delta.content` (and `delta.refusal`) → `TextDelta`; `delta.tool_calls[i]` →
`ToolCallStart` / `ToolArgsDelta` (tool_calls.py normalises the servers' quirks); the chunk with
`finish_reason` ends every open call (`ToolCallEnd`); `usage` (the last report: vLLM can send a
running total in every chunk) → `Usage` at the end; the end of the stream → `Stop`.
Finish reasons: stop → end (tool_calls when calls were made: older Ollama says "stop" then),
tool_calls / function_call → tool_calls, length → length, anything else → other.
A stream that ends without a finish reason is "interrupted"; one that was never an event stream
(a web page, a JSON answer) is "bad-url". Only the first choice is read.

The request's body is `openai_body`'s, posted as it is with the client's public `post` (the SDK's way to make a
request of its own): `chat.completions.create` would first walk the whole body against its typed params
(`async_maybe_transform`), about 30 ms per request for a conversation of 100 messages and a dozen tools' schemas
on this 2-core machine, before the first token could come. The body is plain JSON already, so nothing is lost;
and "What the model saw" is then exactly what was sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from webhost.chat.providers.endpoint import ModelEndpoint, Where, base_url_of, base_url_problem, is_official_openai
from webhost.chat.providers.errors import ProviderError
from webhost.chat.providers.events import Stop, StopReason, StreamEvent, TextDelta, Usage
from webhost.chat.providers.messages import ChatRequest
from webhost.chat.providers.openai_body import openai_body
from webhost.chat.providers.sdk_errors import SdkErrors, connect_timeout, not_a_stream, provider_error
from webhost.chat.providers.streamed_images import client_hooks, images_sent
from webhost.chat.providers.tool_calls import ToolCallAccumulator

ERRORS = SdkErrors(
    status=openai.APIStatusError,
    timeout=openai.APITimeoutError,
    connection=openai.APIConnectionError,
    api=openai.APIError,
    base=openai.OpenAIError,
)
FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
}


class ChunkTranslator:
    """Chat Completions chunks in, webhost events out; `finished` once a finish reason has arrived."""

    def __init__(self) -> None:
        self.calls = ToolCallAccumulator()
        self.reason: StopReason | None = None
        self.chunks = 0
        self._usage: Usage | None = None

    @property
    def finished(self) -> bool:
        return self.reason is not None

    def chunk(self, chunk: ChatCompletionChunk) -> list[StreamEvent]:
        self.chunks += 1
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self._usage = Usage(int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0))
        events: list[StreamEvent] = []
        for choice in getattr(chunk, "choices", None) or ():
            if getattr(choice, "index", 0) != 0 or self.finished:
                continue
            delta = getattr(choice, "delta", None)
            if delta is not None:
                events += self._delta(delta)
            finish = getattr(choice, "finish_reason", None)
            if finish:
                reason = FINISH_REASONS.get(str(finish), "other")
                self.reason = "tool_calls" if reason == "end" and self.calls.any_started else reason
                events += self.calls.finish()
        return events

    def _delta(self, delta: Any) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for text in (getattr(delta, "content", None), getattr(delta, "refusal", None)):
            if isinstance(text, str) and text:
                events.append(TextDelta(text))
        for call in getattr(delta, "tool_calls", None) or ():
            function = getattr(call, "function", None)
            events += self.calls.feed(
                getattr(call, "index", None),
                getattr(call, "id", None),
                getattr(function, "name", None),
                getattr(function, "arguments", None),
            )
        return events

    def end(self) -> list[StreamEvent]:
        assert self.reason is not None
        return [*([self._usage] if self._usage else []), Stop(self.reason)]


class OpenAIProvider:
    """One model endpoint on the `openai` wire; one SDK client (and connection pool) for its life."""

    def __init__(self, endpoint: ModelEndpoint, *, timeout: float = 120.0) -> None:
        self.endpoint = endpoint
        self._where = Where(endpoint)
        self._timeout = timeout
        self._official = is_official_openai(endpoint)
        self._problem = base_url_problem(endpoint)
        self._client: openai.AsyncOpenAI | None = None
        if self._problem is None:
            self._client = openai.AsyncOpenAI(
                base_url=base_url_of(endpoint),
                api_key=endpoint.api_key or "not-needed",  # local servers want no key, the SDK wants one
                max_retries=0,  # the person decides to retry; a silent retry would hide a 429's wait
                timeout=httpx2.Timeout(timeout, connect=connect_timeout(timeout)),
                http_client=openai.DefaultAsyncHttpxClient(event_hooks=client_hooks()),  # images as they are sent
            )

    def wire_body(self, request: ChatRequest) -> dict[str, Any]:
        return openai_body(request, official=self._official)

    async def stream(self, request: ChatRequest, body: dict[str, Any] | None = None) -> AsyncIterator[StreamEvent]:
        if self._client is None:
            raise ProviderError(self._problem or "bad baseUrl", "bad-url")
        try:
            with images_sent(request):
                chunks = await self._client.post(
                    "/chat/completions",
                    body=body if body is not None else openai_body(request, official=self._official),
                    cast_to=ChatCompletion,
                    options={"security": {"bearer_auth": True}},  # as `create` asks: the key as a bearer token
                    stream=True,
                    stream_cls=openai.AsyncStream[ChatCompletionChunk],
                )
        except ERRORS.handled as exc:
            raise provider_error(exc, self._where, streaming=False, timeout=self._timeout, errors=ERRORS) from None
        translator = ChunkTranslator()
        content_type = chunks.response.headers.get("content-type", "")
        try:
            if "html" in content_type:
                raise not_a_stream(self._where, content_type)
            async for chunk in chunks:
                for event in translator.chunk(chunk):
                    yield event
        except ERRORS.handled as exc:
            if not translator.finished:  # after the finish only the usage report can be lost: the answer is whole
                raise provider_error(exc, self._where, streaming=True, timeout=self._timeout, errors=ERRORS) from None
        finally:
            await chunks.close()
        if not translator.finished:
            if translator.chunks == 0 and "event-stream" not in content_type:
                raise not_a_stream(self._where, content_type)
            raise ProviderError(
                f"The model's answer from {self._where.url} stopped before it finished "
                "(the stream ended without a finish reason).",
                "interrupted",
            )
        for event in translator.end():
            yield event

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()


__all__ = ["ChunkTranslator", "OpenAIProvider"]
