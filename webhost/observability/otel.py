"""Tracing on: the OpenTelemetry SDK exporting spans over OTLP/HTTP, configured by the standard variables.

Only `webhost serve` imports this, and only when `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces-only form) is
set; the SDK, the exporter and the instrumentation are the optional extra `webhost[otel]`. Everything else
the exporter reads itself: `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
`OTEL_BSP_SCHEDULE_DELAY`, ... (the SDK's documentation).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from webhost.observability import tracing

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


class TracingUnavailable(Exception):
    """Tracing was asked for but the packages of `webhost[otel]` are not installed."""


def tracing_wanted(environ: Mapping[str, str]) -> bool:
    return any(environ.get(name) for name in ENDPOINT_VARIABLES) and environ.get("OTEL_SDK_DISABLED") != "true"


class Tracing:
    """The SDK's provider while webhost serves; `shutdown` sends the spans still batched."""

    def __init__(self, version: str) -> None:
        try:
            from opentelemetry import trace
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError as exc:
            raise TracingUnavailable(
                f"OTEL_EXPORTER_OTLP_ENDPOINT is set but {exc.name} is not installed: "
                'pip install "webhost[otel]" (or unset the variable)'
            ) from None
        attributes = {SERVICE_VERSION: version}
        if not os.environ.get("OTEL_SERVICE_NAME"):
            attributes[SERVICE_NAME] = "webhost"
        self.provider = TracerProvider(resource=Resource.create(attributes))
        self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(self.provider)
        tracing.enabled = True

    def shutdown(self) -> None:
        tracing.enabled = False
        self.provider.shutdown()
