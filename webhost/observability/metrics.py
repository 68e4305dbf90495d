"""The counters and histograms the request paths bump, in one registry that `/metrics` writes out.

Labels are servers, methods, tools, models and outcomes: never a person, never an argument (docs/deploy.md,
"Metrics and traces"). Each record function is the whole cost on its path: a labelled child looked up
in a dict and incremented (about 2 us for an MCP request's count and latency together).
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.process_collector import ProcessCollector

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)  # CPU seconds, resident memory, open files of this process

# From a fast local tool to a person-paced one (an input request keeps a call open for minutes).
CALL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
MODEL_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)

MCP_REQUESTS = Counter(
    "webhost_mcp_requests",
    "MCP requests webhost sent to servers, by server, method, tool (tools/call only) and outcome "
    "(ok, error: a tool result with isError, failed, timeout, cancelled).",
    ["server", "method", "tool", "outcome"],
    registry=REGISTRY,
)
MCP_SECONDS = Histogram(
    "webhost_mcp_request_seconds",
    "Time from sending an MCP request to its answer (a person's time answering an input request included).",
    ["server", "method", "tool"],
    buckets=CALL_BUCKETS,
    registry=REGISTRY,
)
MODEL_REQUESTS = Counter(
    "webhost_model_requests",
    "Requests to the chat's models, by configured model id and outcome (ok, failed, stopped).",
    ["model", "outcome"],
    registry=REGISTRY,
)
MODEL_SECONDS = Histogram(
    "webhost_model_request_seconds",
    "Time from a model request to the end of its streamed answer.",
    ["model"],
    buckets=MODEL_BUCKETS,
    registry=REGISTRY,
)
MODEL_TOKENS = Counter(
    "webhost_model_tokens",
    "Tokens the models reported, by configured model id and direction (in: the prompt, out: the answer).",
    ["model", "direction"],
    registry=REGISTRY,
)
LOOP_LAG = Histogram(
    "webhost_event_loop_lag_seconds",
    "How much later than asked the event loop woke a sleeper (sampled twice a second once /metrics is read).",
    buckets=LAG_BUCKETS,
    registry=REGISTRY,
)


# The labelled children by label values: `labels()` checks and converts its values and takes a lock each time
# (~4 us); a dict hit is ~0.1 us. Bounded as the labels are (configured servers, their tools, four outcomes).
_mcp_children: dict[tuple[str, str, str, str], tuple[Any, Any]] = {}


def mcp_request_ended(server: str, method: str, tool: str, outcome: str, seconds: float) -> None:
    key = (server, method, tool, outcome)
    children = _mcp_children.get(key)
    if children is None:
        children = _mcp_children[key] = (MCP_REQUESTS.labels(*key), MCP_SECONDS.labels(server, method, tool))
    children[0].inc()
    children[1].observe(seconds)


def model_request_ended(model: str, outcome: str, seconds: float) -> None:
    MODEL_REQUESTS.labels(model, outcome).inc()
    MODEL_SECONDS.labels(model).observe(seconds)


def model_tokens_used(model: str, input_tokens: int, output_tokens: int) -> None:
    MODEL_TOKENS.labels(model, "in").inc(input_tokens)
    MODEL_TOKENS.labels(model, "out").inc(output_tokens)
