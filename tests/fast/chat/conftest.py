"""The chat provider tests: the scripted model endpoint (tests/support/model_endpoint.py) in a background
thread for the session, reached over a real socket by the official SDK clients inside our adapter."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from webhost.chat.providers import ModelEndpoint, ProviderError, open_provider
from webhost.chat.providers.endpoint import Api
from webhost.chat.providers.events import Stop, StreamEvent, ToolArgsDelta, ToolCallEnd, ToolCallStart, Usage
from webhost.chat.providers.messages import ChatRequest, Message, TextBlock, ToolSpec, UserMessage

KEY = "sk-test-0123456789abcdef"
WEATHER = ToolSpec("weather", "The weather in a city.", {"type": "object", "properties": {"city": {"type": "string"}}})


@pytest.fixture(scope="session")
def model_endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


def ask(text: str = "hi", *, model: str, messages: tuple[Message, ...] = (), **kwargs: Any) -> ChatRequest:
    """A request whose newest input is `text` (after `messages`), offering the weather tool."""
    kwargs.setdefault("tools", (WEATHER,))
    kwargs.setdefault("system", "You help.")
    return ChatRequest(model=model, messages=(*messages, UserMessage((TextBlock(text),))), **kwargs)


def well_ordered(events: list[StreamEvent]) -> list[StreamEvent]:
    """`events` after checking the order events.py guarantees (start, fragments, one end; Stop last)."""
    started: dict[int, str] = {}
    ended: set[int] = set()
    assert events and isinstance(events[-1], Stop), events
    assert sum(isinstance(e, Stop) for e in events) == 1
    assert sum(isinstance(e, Usage) for e in events) <= 1
    for event in events:
        if isinstance(event, ToolCallStart):
            assert event.index not in started, f"started twice: {event}"
            started[event.index] = ""
        elif isinstance(event, ToolArgsDelta):
            assert event.index in started and event.index not in ended, event
            started[event.index] += event.fragment
        elif isinstance(event, ToolCallEnd):
            assert event.index in started and event.index not in ended, event
            ended.add(event.index)
            assert event.arguments == (started[event.index] or "{}"), "the end holds what the fragments said"
    assert set(started) == ended == set(range(len(started))), "every call ended, indices 0, 1, ..."
    return events


def without_usage(events: list[StreamEvent]) -> list[StreamEvent]:
    """`events` less the usage report (Anthropic always sends one, zeros when the script gives none)."""
    return [event for event in events if not isinstance(event, Usage)]


@dataclass
class Wire:
    """One wire format against the scripted endpoint, with a model name of this test's own."""

    server: ModelEndpointServer
    api: Api
    model: str = field(default_factory=lambda: f"model-{uuid.uuid4().hex[:10]}")

    @property
    def base_url(self) -> str:
        return self.server.openai_base_url if self.api == "openai" else self.server.anthropic_base_url

    def endpoint(self, *, base_url: str | None = None, key: str | None = KEY) -> ModelEndpoint:
        return ModelEndpoint("scripted", self.api, self.model, base_url or self.base_url, key)

    def script(self, *rules: dict[str, Any]) -> None:
        self.server.script(self.model, list(rules))

    def answer(self, *events: dict[str, Any]) -> None:
        """One fallback rule: every request gets these events."""
        self.script({"events": list(events)})

    def received(self) -> list[dict[str, Any]]:
        return self.server.requests(self.model)

    def request(self, text: str = "hi", **kwargs: Any) -> ChatRequest:
        return ask(text, model=self.model, **kwargs)

    async def run(
        self, request: ChatRequest | None = None, *, endpoint: ModelEndpoint | None = None, timeout: float = 10.0
    ) -> list[StreamEvent]:
        provider = open_provider(endpoint or self.endpoint(), timeout=timeout)
        try:
            return [event async for event in provider.stream(request or self.request())]
        finally:
            await provider.aclose()

    async def fail(
        self, request: ChatRequest | None = None, *, endpoint: ModelEndpoint | None = None, timeout: float = 10.0
    ) -> tuple[list[StreamEvent], ProviderError]:
        """The events that came, and the error the stream ended with."""
        provider = open_provider(endpoint or self.endpoint(), timeout=timeout)
        events: list[StreamEvent] = []
        try:
            async for event in provider.stream(request or self.request()):
                events.append(event)
        except ProviderError as error:
            return events, error
        finally:
            await provider.aclose()
        raise AssertionError(f"the stream ended without an error: {events}")


@pytest.fixture(params=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest, model_endpoint: ModelEndpointServer) -> Wire:
    return Wire(model_endpoint, request.param)


@pytest.fixture
def openai_wire(model_endpoint: ModelEndpointServer) -> Wire:
    return Wire(model_endpoint, "openai")


@pytest.fixture
def anthropic_wire(model_endpoint: ModelEndpointServer) -> Wire:
    return Wire(model_endpoint, "anthropic")
