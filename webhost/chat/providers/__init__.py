"""Model providers: one small adapter per wire format (`openai`, `anthropic`) behind one interface.

`open_provider(endpoint)` gives a `Provider` whose `stream(request)` yields webhost's own events
(events.py) and raises `ProviderError` (errors.py), before or during the stream, with one clear
line; it never raises for a bad baseUrl itself (`stream` does, so the line lands in the
conversation). `wire_body(request)` is the exact JSON body `stream` sends, without the key (which
travels in a header). The official SDKs do the HTTP and SSE; no framework owns the loop.

Each wire's module, and its SDK with it, is imported when a model of that wire is first used: the two SDKs cost
about 2.7 s of CPU to import, which a webhost with no model (or with models of one wire) should not pay at start-up
(tests/unit/test_startup_imports.py).
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Iterable
from typing import Any, Protocol

from webhost.chat.providers.endpoint import DEFAULT_BASE_URL, Api, ModelEndpoint, base_url_problem
from webhost.chat.providers.errors import ErrorKind, ProviderError
from webhost.chat.providers.events import StreamEvent
from webhost.chat.providers.messages import ChatRequest
from webhost.chat.providers.observed import ObservedProvider


class Provider(Protocol):
    # `body`: `wire_body(request)` when the caller built it already (an image's base64 is not copied again).
    def stream(self, request: ChatRequest, body: dict[str, Any] | None = None) -> AsyncIterator[StreamEvent]: ...

    def wire_body(self, request: ChatRequest) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


def open_provider(endpoint: ModelEndpoint, *, timeout: float = 120.0) -> Provider:
    """The adapter for `endpoint.api`; `timeout`: seconds to connect, and between two pieces of the stream."""
    inner: Provider
    if endpoint.api == "anthropic":
        from webhost.chat.providers.anthropic_stream import AnthropicProvider  # with its SDK, on first use

        inner = AnthropicProvider(endpoint, timeout=timeout)
    else:
        from webhost.chat.providers.openai_stream import OpenAIProvider  # with its SDK, on first use

        inner = OpenAIProvider(endpoint, timeout=timeout)
    return ObservedProvider(inner, endpoint)  # counted, timed and traced (webhost/observability)


WIRE_MODULES = {
    "openai": "webhost.chat.providers.openai_stream",
    "anthropic": "webhost.chat.providers.anthropic_stream",
}


def import_wires(apis: Iterable[str]) -> None:
    """Import the wires' modules (and their SDKs) ahead of their first use: run in a worker thread once webhost
    is up, so that a configured model's first answer does not wait the SDK's import (about 0.8 s for `openai`)."""
    for api in dict.fromkeys(apis):
        importlib.import_module(WIRE_MODULES[api])


__all__ = [
    "DEFAULT_BASE_URL",
    "Api",
    "ErrorKind",
    "ModelEndpoint",
    "Provider",
    "ProviderError",
    "base_url_problem",
    "import_wires",
    "open_provider",
]
