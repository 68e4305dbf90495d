"""A provider as the operators see it: each model request counted, timed and traced, its tokens counted by model.

Labelled by the configured model id (the configuration bounds it), never by person. The outcome is `ok` when
the answer finished, `failed` when the provider raised, `stopped` when the reader stopped early (the person's
Stop, a closed workspace).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from webhost.chat.providers.endpoint import ModelEndpoint
from webhost.chat.providers.events import Stop, StreamEvent, Usage
from webhost.chat.providers.messages import ChatRequest
from webhost.observability import metrics, tracing

if TYPE_CHECKING:
    from webhost.chat.providers import Provider


class ObservedProvider:
    def __init__(self, inner: Provider, endpoint: ModelEndpoint) -> None:
        self.inner = inner
        self.endpoint = endpoint

    def wire_body(self, request: ChatRequest) -> dict[str, Any]:
        return self.inner.wire_body(request)

    async def stream(self, request: ChatRequest, body: dict[str, Any] | None = None) -> AsyncIterator[StreamEvent]:
        model = self.endpoint.id
        span = tracing.model_span(model, self.endpoint.api, request.model)
        started = time.perf_counter()
        outcome, error = "stopped", None
        try:
            async for event in self.inner.stream(request, body):
                if isinstance(event, Usage):
                    metrics.model_tokens_used(model, event.input_tokens, event.output_tokens)
                elif isinstance(event, Stop):
                    outcome = "ok"
                yield event
        except Exception as exc:
            outcome, error = "failed", exc
            raise
        finally:
            metrics.model_request_ended(model, outcome, time.perf_counter() - started)
            tracing.end_model_span(span, outcome, error)

    async def aclose(self) -> None:
        await self.inner.aclose()
