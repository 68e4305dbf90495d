"""`webhost serve --log-format json` (webhost/observability/logs.py) on a real process: every line of its output
is one JSON object, the access log's lines with the request's fields and the login token masked."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.support.process import run_webhost, stdio_server


def test_every_line_is_one_json_object_and_the_access_log_has_the_requests_fields(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"basic": stdio_server("basic")}, extra_args=["--log-format", "json"]) as host:
        with httpx.Client(base_url=host.base_url) as http:
            assert http.get("/", params={"token": host.token}).status_code == 303  # the login URL
            assert http.get("/api/servers", headers={"Authorization": f"Bearer {host.token}"}).status_code == 200
        log_path = host.log_path
    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]  # each line parses

    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    assert all(line["time"].endswith("+00:00") for line in lines)
    started = [line["message"] for line in lines if line["logger"] == "webhost"]
    assert started[0].startswith("webhost ") and started[1].startswith("Open http://")  # the start lines too
    access = [line for line in lines if line["logger"] == "uvicorn.access"]
    [servers] = [line for line in access if line["path"] == "/api/servers"]
    assert (servers["method"], servers["status"], servers["level"]) == ("GET", 200, "info")
    assert servers["client"].startswith("127.0.0.1:")
    [login] = [line for line in access if line["path"].startswith("/?token=")]
    assert login["path"] == "/?token=***" and host.token not in log_path.read_text()
    assert not [line for line in lines if "trace_id" in line]  # tracing is off: no ids to give
