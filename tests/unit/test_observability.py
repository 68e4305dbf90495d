"""webhost/observability without a server: when tracing is asked for, the one line when its packages are
missing, and the JSON log line's fields (the real process is tests/integration/test_json_logs.py)."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import pytest

from webhost import cli
from webhost.observability.logs import JsonFormatter, start_line
from webhost.observability.otel import tracing_wanted


def test_tracing_is_wanted_only_with_an_endpoint_and_not_disabled() -> None:
    assert not tracing_wanted({})
    assert not tracing_wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": ""})
    assert tracing_wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert tracing_wanted({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"})
    assert not tracing_wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"})


def test_an_endpoint_without_the_otel_extra_is_one_line_and_status_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [n for n in os.environ if n.startswith("WEBHOST_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9/")
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # as when webhost[otel] is not installed
    assert cli.main(["serve", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (
        'OTEL_EXPORTER_OTLP_ENDPOINT is set but opentelemetry.sdk.trace is not installed: pip install "webhost[otel]"'
        in err
    )


def test_a_json_line_has_the_access_fields_and_the_traceback() -> None:
    formatter = JsonFormatter()
    access = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "GET", "/x", "1.1", 200),
        None,
    )
    line = json.loads(formatter.format(access))
    assert line["message"] == '127.0.0.1:5 - "GET /x HTTP/1.1" 200' and line["level"] == "info"
    assert (line["client"], line["method"], line["path"], line["status"]) == ("127.0.0.1:5", "GET", "/x", 200)
    assert "trace_id" not in line  # tracing off
    try:
        raise ValueError("boom")
    except ValueError:
        failed = logging.LogRecord("webhost", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())
    line = json.loads(formatter.format(failed))
    assert line["level"] == "error" and "ValueError: boom" in line["exception"]
    assert "\n" not in formatter.format(failed)  # one line, whatever the traceback
    assert json.loads(start_line("Open http://127.0.0.1:8700/", "json"))["message"] == "Open http://127.0.0.1:8700/"
    assert start_line("Open http://127.0.0.1:8700/", "text") == "Open http://127.0.0.1:8700/"
