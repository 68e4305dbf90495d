"""`GET /metrics` of a real `webhost serve` (docs/deploy.md, "Metrics and traces"): the counters after real
calls over the page's WebSocket to a real SDK server and a chat turn against the scripted model endpoint, the
gauges read from the host's state at scrape time, and the route closed to anyone but an admin."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import WAIT, Webhost, connected, run_webhost, stdio_server

pytestmark = pytest.mark.anyio

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


def scrape(host: Webhost) -> Samples:
    with host.http() as http:
        answer = http.get("/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


async def test_the_counters_and_gauges_after_real_calls_and_a_chat_turn(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "metrics",
        [
            {
                "times": 1,
                "events": [
                    {"tool": {"id": "c1", "name": "basic__echo", "args": ['{"text": "from the model"}']}},
                    {"usage": {"input": 11, "output": 5}},
                ],
            },
            {"events": [{"text": "done"}, {"usage": {"input": 20, "output": 2}}]},
        ],
    )
    model = {"id": "m", "api": "openai", "model": "metrics", "baseUrl": endpoint.openai_base_url, "apiKey": "k"}
    with run_webhost(tmp_path, {"basic": stdio_server("basic")}, webhost_options={"chat": {"models": [model]}}) as host:
        async with connected(host, "basic") as ws:
            for call_id in ("1", "2"):
                call = {"server": "basic", "name": "echo", "arguments": {"text": "hi"}, "callId": call_id}
                await ws.request("tools/call", call)
            failed = await ws.request("tools/call", {"server": "basic", "name": "fail", "arguments": {}, "callId": "3"})
            assert failed["isError"] is True

            sent = await ws.request("chat/send", {"text": "echo something"})
            asked = await ws.wait_notification("approval/request", lambda p: p["kind"] == "model-tool-call")
            waiting = scrape(host)  # the model's tool call waits for the person's approval
            assert value(waiting, "webhost_approvals_waiting") == 1
            assert value(waiting, "webhost_tabs") == 1 and value(waiting, "webhost_workspaces") == 1
            assert value(waiting, "webhost_mcp_connections", status="connected") == 1
            assert value(waiting, "webhost_conversations") == 1

            await ws.request("approvals/respond", {"id": asked["id"], "decision": "allow"})
            await ws.wait_notification(
                "chat/event",
                lambda p: (
                    p.get("type") == "message"
                    and p.get("conversationId") == sent["conversationId"]
                    and p["message"]["role"] == "assistant"
                    and p["message"]["status"] == "done"
                ),
            )
            samples = scrape(host)
            # The event loop's sampler started with the first scrape and wakes twice a second: wait for its first.
            with anyio.fail_after(WAIT):
                while value(lagged := scrape(host), "webhost_event_loop_lag_seconds_count") < 1:
                    await anyio.sleep(0.1)

    calls = "webhost_mcp_requests_total"
    assert value(samples, calls, server="basic", method="tools/call", tool="echo", outcome="ok") == 3  # 2 + the model's
    assert value(samples, calls, server="basic", method="tools/call", tool="fail", outcome="error") == 1
    assert value(samples, calls, server="basic", method="tools/list", tool="", outcome="ok") >= 1
    seconds = "webhost_mcp_request_seconds"
    assert value(samples, f"{seconds}_count", server="basic", method="tools/call", tool="echo") == 3
    assert value(samples, f"{seconds}_bucket", server="basic", method="tools/call", tool="echo", le="+Inf") == 3
    assert value(samples, "webhost_model_tokens_total", model="m", direction="in") == 31
    assert value(samples, "webhost_model_tokens_total", model="m", direction="out") == 7
    assert value(samples, "webhost_model_requests_total", model="m", outcome="ok") == 2
    assert value(samples, "webhost_model_request_seconds_count", model="m") == 2
    assert value(samples, "webhost_approvals_waiting") == 0
    # Each spool this process writes (audit rows, call history) has its depth, whatever the writers owe now.
    assert {dict(labels)["kind"] for name, labels in samples if name == "webhost_spool_rows"} == {"audit", "history"}
    assert value(lagged, "webhost_event_loop_lag_max_seconds") >= 0
    assert value(samples, "process_resident_memory_bytes") > 0
    # Never a person, never an argument: no label names one, no value holds the text sent.
    label_names = {name for _, labels in samples for name, _ in labels}
    assert label_names <= {"server", "method", "tool", "outcome", "model", "direction", "status", "kind", "le"}
    assert not any("hi" == v or "from the model" in v for _, labels in samples for _, v in labels)


def test_metrics_are_refused_without_the_credential_and_to_a_member(tmp_path: Path) -> None:
    auth = {
        "mode": "proxy",
        "userHeader": "X-Forwarded-Email",
        "trustedProxies": ["127.0.0.1/32"],
        "admins": ["ada@example.com"],
    }
    with run_webhost(tmp_path, {}, webhost_options={"auth": auth}, env={"WEBHOST_TOKEN": "t" * 32}) as host:
        with httpx.Client(base_url=host.base_url) as http:
            assert http.get("/metrics").status_code == 401
            assert http.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
            member = http.get("/metrics", headers={"X-Forwarded-Email": "bob@example.com"})
            assert member.status_code == 403 and member.json() == {"error": "only an admin may read the metrics"}
            admin = http.get("/metrics", headers={"X-Forwarded-Email": "ada@example.com"})
            assert admin.status_code == 200 and "webhost_tabs 0.0" in admin.text
            # WEBHOST_TOKEN stays an admin credential for a scraper in proxy mode.
            scraper = http.get("/metrics", headers={"Authorization": f"Bearer {'t' * 32}"})
            assert scraper.status_code == 200 and "webhost_mcp_requests_total" in scraper.text
