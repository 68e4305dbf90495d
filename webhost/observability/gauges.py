"""The gauges a scrape reads from state webhost keeps anyway: nothing is counted on the request paths for them.

`HostGauges` asks its `read` callable (the composition root's view of the host: webhost/app/metrics.py)
for the counts when Prometheus scrapes, and adds the spools' depths and the event loop's worst lag.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from webhost.observability.looplag import LoopLagSampler
from webhost.observability.watched import spool_depths


@dataclass(frozen=True)
class HostCounts:
    tabs: int  # open WebSocket sessions (browser tabs)
    workspaces: int  # people with at least one tab, or a call still running
    connections: dict[str, int] = field(default_factory=dict)  # MCP server connections, by status
    conversations: int = 0  # chat conversations held in memory
    approvals: int = 0  # requests for a person's approval waiting for an answer


class HostGauges(Collector):
    def __init__(self, read: Callable[[], HostCounts], loop_lag: LoopLagSampler) -> None:
        self.read = read
        self.loop_lag = loop_lag

    def collect(self) -> Iterable[GaugeMetricFamily]:
        counts = self.read()
        yield GaugeMetricFamily("webhost_tabs", "Open browser tabs (WebSocket sessions).", value=counts.tabs)
        yield GaugeMetricFamily(
            "webhost_workspaces", "People whose workspace is open in this process.", value=counts.workspaces
        )
        connections = GaugeMetricFamily(
            "webhost_mcp_connections", "MCP server connections held for people, by status.", labels=["status"]
        )
        for status, count in sorted(counts.connections.items()):
            connections.add_metric([status], count)
        yield connections
        yield GaugeMetricFamily(
            "webhost_conversations", "Chat conversations held in memory.", value=counts.conversations
        )
        yield GaugeMetricFamily(
            "webhost_approvals_waiting", "Requests for a person's approval not yet answered.", value=counts.approvals
        )
        spools = GaugeMetricFamily(
            "webhost_spool_rows",
            "Rows kept in this process's spool files until the database has them, by kind.",
            labels=["kind"],
        )
        for kind, depth in sorted(spool_depths().items()):
            spools.add_metric([kind], depth)
        yield spools
        yield GaugeMetricFamily(
            "webhost_event_loop_lag_max_seconds",
            "The event loop's worst lag since the previous scrape.",
            value=self.loop_lag.take_worst(),
        )
