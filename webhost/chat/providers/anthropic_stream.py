"""The `anthropic` wire: Messages streamed through the official SDK, as webhost's events.

Event mapping: `content_block_start` of a `tool_use` block → `ToolCallStart`; `input_json_delta`
→ `ToolArgsDelta` (empty fragments dropped); `content_block_stop` of it → `ToolCallEnd` with the
block's whole arguments; `text_delta` → `TextDelta`; `message_delta.stop_reason` → the `Stop` sent
at the end (end_turn / stop_sequence → end, tool_use → tool_calls, max_tokens /
model_context_window_exceeded → length, anything else → other). Thinking and server-tool blocks
are not passed on.
Usage: the counts in `message_start` and `message_delta` are running totals, so the latest of each
field counts, and input is input + cache creation + cache read tokens (the whole prompt, as
OpenAI's `prompt_tokens` is); sent once, before `Stop`.
Buffered parameters (fine-grained streaming off, or a server that buffers): the whole JSON arrives
in one delta just before the block stops, or none arrives and `input` is already complete in
`content_block_start`; then it is sent as one `ToolArgsDelta` at the stop. Either way: one start,
the fragments, one end with the full arguments ("{}" for none).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
from anthropic.types import (
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    RawMessageStreamEvent,
    ToolUseBlock,
)

from webhost.chat.providers.anthropic_body import anthropic_body, anthropic_messages, anthropic_tools
from webhost.chat.providers.endpoint import ModelEndpoint, Where, base_url_of, base_url_problem
from webhost.chat.providers.errors import ProviderError
from webhost.chat.providers.events import (
    Stop,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from webhost.chat.providers.messages import ChatRequest
from webhost.chat.providers.sdk_errors import SdkErrors, connect_timeout, not_a_stream, provider_error
from webhost.chat.providers.streamed_images import client_hooks, images_sent
from webhost.chat.providers.tool_calls import normalised

ERRORS = SdkErrors(
    status=anthropic.APIStatusError,
    timeout=anthropic.APITimeoutError,
    connection=anthropic.APIConnectionError,
    api=anthropic.APIError,
    base=anthropic.AnthropicError,
)
STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end",
    "stop_sequence": "end",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
USAGE_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


@dataclass
class _ToolBlock:
    index: int
    given_input: object = None  # `input` as content_block_start gave it
    fragments: list[str] = field(default_factory=list)
    ended: bool = False


class EventTranslator:
    """Messages stream events in, webhost events out; `finished` once the message has stopped."""

    def __init__(self) -> None:
        self.reason: StopReason | None = None
        self.stopped = False
        self.events = 0
        self._tools: dict[int, _ToolBlock] = {}  # by content block index
        self._usage: dict[str, int] = {}

    @property
    def finished(self) -> bool:
        return self.stopped or self.reason is not None

    def event(self, event: RawMessageStreamEvent) -> list[StreamEvent]:
        self.events += 1
        if isinstance(event, RawMessageStartEvent):
            self._count(event.message.usage)
        elif isinstance(event, RawContentBlockStartEvent):
            block = event.content_block
            if isinstance(block, ToolUseBlock):
                tool = _ToolBlock(len(self._tools), block.input)
                self._tools[event.index] = tool
                return [ToolCallStart(tool.index, block.id, block.name)]
        elif isinstance(event, RawContentBlockDeltaEvent):
            return self._delta(event.index, event.delta)
        elif isinstance(event, RawContentBlockStopEvent):
            stopped = self._tools.get(event.index)
            return self._end(stopped) if stopped is not None else []
        elif isinstance(event, RawMessageDeltaEvent):
            self._count(event.usage)
            if event.delta.stop_reason:
                self.reason = STOP_REASONS.get(str(event.delta.stop_reason), "other")
        elif isinstance(event, RawMessageStopEvent):
            self.stopped = True
        return []

    def _delta(self, index: int, delta: Any) -> list[StreamEvent]:
        kind = getattr(delta, "type", None)
        if kind == "text_delta" and getattr(delta, "text", ""):
            return [TextDelta(delta.text)]
        tool = self._tools.get(index)
        fragment = getattr(delta, "partial_json", None)
        if (
            kind == "input_json_delta"
            and tool is not None
            and not tool.ended
            and isinstance(fragment, str)
            and fragment
        ):
            tool.fragments.append(fragment)
            return [ToolArgsDelta(tool.index, fragment)]
        return []

    def _end(self, tool: _ToolBlock) -> list[StreamEvent]:
        if tool.ended:
            return []
        tool.ended = True
        events: list[StreamEvent] = []
        if not tool.fragments and isinstance(tool.given_input, dict) and tool.given_input:
            whole = json.dumps(tool.given_input, ensure_ascii=False)
            tool.fragments.append(whole)
            events.append(ToolArgsDelta(tool.index, whole))
        return [*events, ToolCallEnd(tool.index, normalised("".join(tool.fragments)))]

    def _count(self, usage: object) -> None:
        for name in USAGE_FIELDS:
            value = getattr(usage, name, None)
            if isinstance(value, int):
                self._usage[name] = value

    def end(self) -> list[StreamEvent]:
        """The events that close the answer: every tool block not yet stopped, the usage, the stop."""
        events: list[StreamEvent] = []
        for tool in self._tools.values():
            events += self._end(tool)
        if self._usage:
            prompt = sum(self._usage.get(name, 0) for name in USAGE_FIELDS[:3])
            events.append(Usage(prompt, self._usage.get("output_tokens", 0)))
        reason = self.reason or "end"
        if reason == "end" and self._tools:  # a proxy that says end_turn after tool_use blocks: the calls still run
            reason = "tool_calls"
        return [*events, Stop(reason)]


class AnthropicProvider:
    """One model endpoint on the `anthropic` wire; one SDK client (and connection pool) for its life."""

    def __init__(self, endpoint: ModelEndpoint, *, timeout: float = 120.0) -> None:
        self.endpoint = endpoint
        self._where = Where(endpoint)
        self._timeout = timeout
        self._problem = base_url_problem(endpoint)
        self._client: anthropic.AsyncAnthropic | None = None
        if self._problem is None:
            self._client = anthropic.AsyncAnthropic(
                base_url=base_url_of(endpoint),
                # Always explicit: the SDK would otherwise take the server's own ANTHROPIC_API_KEY.
                api_key=endpoint.api_key or "not-needed",
                max_retries=0,  # the person decides to retry; a silent retry would hide a 429's wait
                timeout=httpx2.Timeout(timeout, connect=connect_timeout(timeout)),
                http_client=anthropic.DefaultAsyncHttpxClient(event_hooks=client_hooks()),  # images as they are sent
            )

    def wire_body(self, request: ChatRequest) -> dict[str, Any]:
        return anthropic_body(request)

    async def stream(self, request: ChatRequest, body: dict[str, Any] | None = None) -> AsyncIterator[StreamEvent]:
        del body  # the SDK's call is built from the request's parts, which hold an image's base64 without a copy
        if self._client is None:
            raise ProviderError(self._problem or "bad baseUrl", "bad-url")
        tools = anthropic_tools(request)
        try:
            with images_sent(request):
                events = await self._client.messages.create(
                    model=request.model,
                    max_tokens=request.max_tokens,
                    messages=anthropic_messages(request),
                    system=request.system if request.system else anthropic.omit,
                    tools=tools if tools else anthropic.omit,
                    stream=True,
                )
        except ERRORS.handled as exc:
            raise provider_error(exc, self._where, streaming=False, timeout=self._timeout, errors=ERRORS) from None
        translator = EventTranslator()
        content_type = events.response.headers.get("content-type", "")
        try:
            if "html" in content_type:
                raise not_a_stream(self._where, content_type)
            async for event in events:
                for out in translator.event(event):
                    yield out
        except ERRORS.handled as exc:
            if not translator.finished:
                raise provider_error(exc, self._where, streaming=True, timeout=self._timeout, errors=ERRORS) from None
        finally:
            await events.close()
        if not translator.finished:
            if translator.events == 0 and "event-stream" not in content_type:
                raise not_a_stream(self._where, content_type)
            raise ProviderError(
                f"The model's answer from {self._where.url} stopped before it finished "
                "(the stream ended without message_stop).",
                "interrupted",
            )
        for out in translator.end():
            yield out

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()


__all__ = ["AnthropicProvider", "EventTranslator"]
