"""The demo's MCP Apps: the pages composed from `apps/`, and the dashboard tools and resources on `Apps`.

The apps are plain HTML + inline JS with no external URLs; they speak the postMessage protocol by hand.
`apps/bridge.js` is the host bridge shared by both (JSON-RPC 2.0 over postMessage with window.parent) and
`apps/app.css` their common style; each page names them with an include marker, replaced at import.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime
from importlib import resources
from typing import Annotated, Literal

from mcp.server.apps import Apps
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

APP_MIME_TYPE = "text/html;profile=mcp-app"
DASHBOARD_URI = "ui://demo/dashboard.html"
PICKER_URI = "ui://demo/picker.html"

_INCLUDES = {"/* @include app.css */\n": "app.css", "// @include bridge.js\n": "bridge.js"}


def _asset(name: str) -> str:
    return (resources.files("webhost.demo") / "apps" / name).read_text(encoding="utf-8")


def _page(name: str) -> str:
    """An app page from `apps/`, each include marker line replaced by the file it names."""
    page = _asset(name)
    for marker, include in _INCLUDES.items():
        page = page.replace(marker, _asset(include))
    return page


DASHBOARD_HTML = _page("dashboard.html")
PICKER_HTML = _page("picker.html")


class DashboardMetrics(BaseModel):
    requestsPerMinute: int
    errorRatePercent: float
    p95LatencyMs: int
    activeUsers: int


class DashboardData(BaseModel):
    """What the dashboard shows."""

    region: str
    generatedAt: str
    metrics: DashboardMetrics
    series: list[int]


Region = Literal["global", "europe", "americas", "asia"]


def _dashboard_data(region: str) -> DashboardData:
    rng = random.Random(f"{region}:{time.time_ns() // 1_000_000_000}")
    base = {"global": 1800, "europe": 640, "americas": 720, "asia": 540}.get(region, 500)
    series = [int(base * rng.uniform(0.7, 1.3)) for _ in range(12)]
    return DashboardData(
        region=region,
        generatedAt=datetime.now(UTC).isoformat(timespec="seconds"),
        metrics=DashboardMetrics(
            requestsPerMinute=series[-1],
            errorRatePercent=round(rng.uniform(0.05, 2.5), 2),
            p95LatencyMs=rng.randint(80, 420),
            activeUsers=int(base * rng.uniform(3, 6)),
        ),
        series=series,
    )


def _dashboard_result(data: DashboardData) -> CallToolResult:
    m = data.metrics
    text = (
        f"Service dashboard ({data.region}): {m.requestsPerMinute} requests/min, "
        f"{m.errorRatePercent} % errors, "
        f"p95 {m.p95LatencyMs} ms, {m.activeUsers} active users."
    )
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=data.model_dump(mode="json")
    )


def register_apps(apps: Apps) -> None:
    """Register the dashboard tools and both app pages; call it before `MCPServer` consumes `apps`."""

    @apps.tool(
        resource_uri=DASHBOARD_URI,
        title="Show the service dashboard",
        description="An interactive MCP App: live metrics, a refresh button that calls a tool, and buttons for "
        "every host feature (message, model context, links, fullscreen). Text summary for other clients.",
    )
    def show_dashboard(
        region: Annotated[Region, Field(description="Which region to show")] = "global",
    ) -> Annotated[CallToolResult, DashboardData]:
        return _dashboard_result(_dashboard_data(region))

    @apps.tool(
        resource_uri=DASHBOARD_URI,
        visibility=["app"],
        title="Refresh the dashboard",
        description="App-only: fresh numbers for the dashboard app.",
    )
    def dashboard_refresh(region: Region = "global") -> Annotated[CallToolResult, DashboardData]:
        return _dashboard_result(_dashboard_data(region))

    apps.add_html_resource(
        DASHBOARD_URI,
        DASHBOARD_HTML,
        name="dashboard",
        title="Service dashboard",
        description="The dashboard app for show_dashboard",
        prefers_border=True,
    )
    apps.add_html_resource(
        PICKER_URI,
        PICKER_HTML,
        name="picker",
        title="Colour picker",
        description="Renders pick_color's question (app-rendered elicitation)",
        prefers_border=True,
    )
