"""`GET /metrics`: the Prometheus text format, for admins only (the gate refuses anyone without a credential
first, contract §3; a member who signed in gets 403). docs/deploy.md, "Metrics and traces", lists the series.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from webhost.app.state import HostState
from webhost.observability.gauges import HostCounts, HostGauges
from webhost.observability.looplag import LoopLagSampler
from webhost.observability.metrics import REGISTRY
from webhost.people import person_of


def host_counts(host: HostState) -> HostCounts:
    """This process's tabs, workspaces, connections, conversations and waiting approvals, read at scrape time."""
    workspaces = list(host.workspaces.values())
    connections: dict[str, int] = {}
    for workspace in workspaces:
        for connection in workspace.connections.values():
            connections[connection.status] = connections.get(connection.status, 0) + 1
    approvals = sum(len(s.approvals.pending()) for s in host.sessions)
    approvals += sum(len(w.chat.approvals.pending()) for w in workspaces)
    return HostCounts(
        tabs=len(host.sessions),
        workspaces=len(workspaces),
        connections=connections,
        conversations=sum(w.chat.open_conversations for w in workspaces),
        approvals=approvals,
    )


class _Shared(Collector):
    """The process-wide counters (observability.metrics), beside this app's gauges in its own registry."""

    def collect(self) -> Iterable[Metric]:
        return REGISTRY.collect()


def add_metrics_route(app: FastAPI, host: HostState) -> None:
    loop_lag = LoopLagSampler()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Shared())
    registry.register(HostGauges(lambda: host_counts(host), loop_lag))

    @app.get("/metrics")
    async def scrape(request: Request) -> Response:
        """Admins only: the Prometheus exposition of this process (docs/api.md)."""
        if not person_of(request.scope).is_admin:
            return JSONResponse({"error": "only an admin may read the metrics"}, status_code=403)
        loop_lag.ensure_running()
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
