"""Log lines for people (`text`, the default) or for a log pipeline (`json`: one object per line).

A JSON line holds `time` (UTC, ISO 8601 with milliseconds), `level`, `logger` and `message`; the access log's
lines add `client`, `method`, `path`, `status`; any line written inside a traced request adds `trace_id` and
`span_id`; a line with a traceback adds `exception`. uvicorn's own formatters are not used in JSON mode (its
loggers then hand their records to the root's handler), so every line of the process has the one shape.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal

LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")
TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"
ACCESS_LOGGER = "uvicorn.access"


class JsonFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__()
        # Here, not at the top: `webhost --help` imports this module and not the OpenTelemetry API.
        from webhost.observability.tracing import current_ids

        self.current_ids = current_ids

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.name == ACCESS_LOGGER and isinstance(record.args, tuple) and len(record.args) == 5:
            # uvicorn's access line: (client, method, path with query, HTTP version, status); the path's
            # secret query values are already masked by the logger's filter (cli.hide_login_tokens).
            client, method, path, _, status = record.args
            line.update(client=client, method=method, path=path, status=status)
        line.update(self.current_ids())
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def configure_logging(level: str, log_format: LogFormat) -> None:
    """The root logger's handler, on stderr, in the chosen format (as `logging.basicConfig`: a root that has
    a handler already, a test's, keeps it)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=level.upper(), handlers=[handler])


def start_line(message: str, log_format: LogFormat) -> str:
    """A line `webhost serve` prints on stdout as it starts (its version, the login URL): in JSON mode a
    JSON object too, so that a log pipeline reading the container's output sees only JSON."""
    if log_format == "text":
        return message
    record = logging.LogRecord("webhost", logging.INFO, __file__, 0, message, None, None)
    return JsonFormatter().format(record)
