"""The spans webhost makes, through the OpenTelemetry API only (the SDK is otel.py's, imported when tracing
is on). While tracing is off every helper here is one flag test: no span, no context, no allocation.

- `mcp_span`: one MCP request to a server (upstream/client.py). The SDK's own client span nests under it and
  carries its W3C `traceparent` to the server in the request's `_meta`, as the spec's trace-context
  convention allows (mcp.shared.jsonrpc_dispatcher injects it into every outgoing request).
- `model_span`: one request to a chat model (chat/providers), started and ended by hand, never made current:
  it lives across a stream's yields, which may be closed from another task.
- `instrument_app`: a span per page request (the FastAPI instrumentation), in the page's FastAPI app.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

from opentelemetry import trace

enabled = False  # set by otel.start_tracing, before the app is built
_tracer = trace.get_tracer("webhost")
_OFF: AbstractContextManager[Any] = nullcontext()  # stateless: one instance serves every call while off
EXCLUDED_URLS = "healthz"  # a balancer's probe every few seconds is no one's request


def mcp_span(server: str, method: str, tool: str) -> AbstractContextManager[Any]:
    if not enabled:
        return _OFF
    attributes = {"mcp.server.name": server, "mcp.method.name": method}
    if tool:
        attributes["gen_ai.tool.name"] = tool
    return _tracer.start_as_current_span(f"mcp {method}", kind=trace.SpanKind.CLIENT, attributes=attributes)


def model_span(model: str, api: str, wire_model: str) -> trace.Span | None:
    """A span for one model request, a child of whatever is current; the caller ends it (`end_model_span`)."""
    if not enabled:
        return None
    return _tracer.start_span(
        f"chat {wire_model}",
        kind=trace.SpanKind.CLIENT,
        attributes={"webhost.model.id": model, "gen_ai.system": api, "gen_ai.request.model": wire_model},
    )


def end_model_span(span: trace.Span | None, outcome: str, error: BaseException | None = None) -> None:
    if span is None:
        return
    span.set_attribute("webhost.outcome", outcome)
    if error is not None:
        span.record_exception(error)
        span.set_status(trace.Status(trace.StatusCode.ERROR, type(error).__name__))
    span.end()


def instrument_app(app: Any) -> None:
    """A span per HTTP request and WebSocket of this FastAPI app, when tracing is on."""
    if not enabled:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    # Not a span per WebSocket frame or body chunk ("receive"/"send"): one per request and one per tab's socket.
    FastAPIInstrumentor.instrument_app(app, excluded_urls=EXCLUDED_URLS, exclude_spans=["receive", "send"])


def current_ids() -> dict[str, str]:
    """The current trace and span ids, for a log line (empty while tracing is off or outside a span)."""
    if not enabled:
        return {}
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": format(context.trace_id, "032x"), "span_id": format(context.span_id, "016x")}
