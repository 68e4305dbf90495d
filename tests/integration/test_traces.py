"""OpenTelemetry traces of a real `webhost serve` with OTEL_EXPORTER_OTLP_ENDPOINT set, received over OTLP/HTTP
by a receiver in the test (tests/support/otlp.py): a span per page request, per MCP request (its W3C
`traceparent` reaching the HTTP server in the request's `_meta`) and per model request, with their parent links."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.support.model_endpoint import running_model_endpoint
from tests.support.otlp import ReceivedSpan, running_trace_receiver
from tests.support.process import PYTHON, SERVERS, WAIT, connected, http_process, run_webhost
from webhost import __version__

pytestmark = pytest.mark.anyio


def named(spans: list[ReceivedSpan], name: str) -> list[ReceivedSpan]:
    return [span for span in spans if span.name == name]


async def test_page_requests_mcp_calls_and_model_requests_are_traced_with_their_parents(tmp_path: Path) -> None:
    with (
        running_trace_receiver() as receiver,
        running_model_endpoint() as endpoint,
        http_process([PYTHON, str(SERVERS / "traced.py"), "--http", "{port}"], log_path=tmp_path / "traced.log") as url,
    ):
        endpoint.script("traced", [{"events": [{"text": "hello"}, {"usage": {"input": 3, "output": 1}}]}])
        model = {"id": "m", "api": "openai", "model": "traced", "baseUrl": endpoint.openai_base_url, "apiKey": "k"}
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "50"}
        servers = {"remote": {"type": "http", "url": url}}
        options = {"chat": {"models": [model]}}
        json_logs = ["--log-format", "json"]
        with run_webhost(tmp_path, servers, webhost_options=options, env=env, extra_args=json_logs) as host:
            with httpx.Client(base_url=host.base_url, headers={"Authorization": f"Bearer {host.token}"}) as http:
                assert http.get("/").status_code == 200
            async with connected(host, "remote") as ws:
                call = {"server": "remote", "name": "request_meta", "arguments": {}, "callId": "1"}
                received = (await ws.request("tools/call", call))["structuredContent"]["meta"]
                sent = await ws.request("chat/send", {"text": "hello?"})
                await ws.wait_notification(
                    "chat/event",
                    lambda p: (
                        p.get("type") == "message"
                        and p.get("conversationId") == sent["conversationId"]
                        and p["message"]["status"] == "done"
                    ),
                )
            # The tab closed: its WebSocket's span ends and is exported with the rest.
            spans = receiver.wait_for(
                lambda spans: all(named(spans, name) for name in ("GET /", "mcp tools/call", "HTTP /ws")),
                timeout=WAIT,
            )
            spans = receiver.wait_for(lambda spans: any(s.name == "chat traced" for s in spans), timeout=WAIT)
        log = [json.loads(line) for line in host.log_path.read_text().splitlines() if line.strip()]

    by_id = {span.span_id: span for span in spans}
    assert receiver.content_types == {"application/x-protobuf"}
    [page] = named(spans, "GET /")
    assert page.kind == "server" and page.parent_span_id == "" and page.attributes["http.status_code"] == 200
    assert page.resource["service.name"] == "webhost" and page.resource["service.version"] == __version__
    assert not named(spans, "GET /healthz")  # a balancer's probes are left out
    # The page request's access log line names its trace and span (--log-format json).
    [access] = [line for line in log if line["logger"] == "uvicorn.access" and line["path"] == "/"]
    assert (access["trace_id"], access["span_id"]) == (page.trace_id, page.span_id)

    [websocket] = named(spans, "HTTP /ws")
    [tool_call] = [s for s in named(spans, "mcp tools/call") if s.attributes.get("gen_ai.tool.name") == "request_meta"]
    assert tool_call.kind == "client" and tool_call.attributes["mcp.server.name"] == "remote"
    assert tool_call.parent_span_id == websocket.span_id and tool_call.trace_id == websocket.trace_id

    # The server got a traceparent in the request's _meta, naming a span of webhost's under the MCP call's span
    # (the SDK's own client span, which carries it), in the same trace.
    version, trace_id, parent_id, flags = received["traceparent"].split("-")
    assert (version, trace_id) == ("00", tool_call.trace_id) and int(flags, 16) & 1  # sampled
    carrier = by_id[parent_id]
    assert carrier.span_id == tool_call.span_id or carrier.parent_span_id == tool_call.span_id

    [model_request] = named(spans, "chat traced")
    assert model_request.kind == "client" and model_request.attributes["webhost.model.id"] == "m"
    assert model_request.attributes["webhost.outcome"] == "ok" and model_request.trace_id == websocket.trace_id
    assert model_request.parent_span_id in by_id
