"""An OTLP/HTTP trace receiver for tests: what a collector's `otlphttp` receiver does, on a free loopback port.

No collector installs from PyPI or npm (the OpenTelemetry Collector is a Go binary), so the test receives the
wire itself: `POST /v1/traces` with an `ExportTraceServiceRequest` protobuf, decoded
with the official generated classes (opentelemetry-proto) into `ReceivedSpan`s.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

SPAN_KINDS = {1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    kind: str
    trace_id: str  # hex, as in a traceparent
    span_id: str
    parent_span_id: str  # "" for a root
    attributes: dict[str, Any]
    resource: dict[str, Any]
    status_code: int


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return None if kind is None else getattr(value, kind)


@dataclass
class TraceReceiver:
    url: str  # what OTEL_EXPORTER_OTLP_ENDPOINT is set to
    spans: list[ReceivedSpan] = field(default_factory=list)
    content_types: set[str] = field(default_factory=set)
    _changed: threading.Condition = field(default_factory=threading.Condition)

    def add(self, body: bytes, content_type: str) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)  # webhost's exporter sends protobuf (the test checks the content type)
        with self._changed:
            self.content_types.add(content_type)
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(
                            ReceivedSpan(
                                name=span.name,
                                kind=SPAN_KINDS.get(span.kind, "unspecified"),
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_span_id=span.parent_span_id.hex(),
                                attributes={a.key: _value(a.value) for a in span.attributes},
                                resource=resource,
                                status_code=span.status.code,
                            )
                        )
            self._changed.notify_all()

    def wait_for(self, found: Callable[[list[ReceivedSpan]], bool], timeout: float) -> list[ReceivedSpan]:
        """The spans once `found` holds for them (woken by each export), or AssertionError after `timeout`."""
        with self._changed:
            if not self._changed.wait_for(lambda: found(list(self.spans)), timeout=timeout):
                names = sorted({s.name for s in self.spans})
                raise AssertionError(f"the spans awaited did not all arrive; received: {names}")
            return list(self.spans)


@contextlib.contextmanager
def running_trace_receiver() -> Iterator[TraceReceiver]:
    receiver: TraceReceiver | None = None

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            content_type = self.headers.get("content-type", "").split(";")[0]
            if self.path != "/v1/traces" or receiver is None:
                self.send_error(404)
                return
            receiver.add(body, content_type)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the test reads the spans
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver = TraceReceiver(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
