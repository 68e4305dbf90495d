"""What webhost tells its operators: Prometheus metrics (`/metrics`), OpenTelemetry traces (when
`OTEL_EXPORTER_OTLP_ENDPOINT` is set) and JSON log lines (`webhost serve --log-format json`).

The package sits below everything else (docs/architecture.md) so that any layer can count or trace with a
line; it imports nothing of webhost's. The OpenTelemetry SDK, its exporter and the FastAPI instrumentation are
imported only by `otel.py`, which runs only when tracing is asked for (docs/deploy.md, "Metrics and traces").
"""
