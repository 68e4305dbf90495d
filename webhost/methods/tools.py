"""Tools: list (with app metadata and visibility computed), call with progress, cancel; the calls a gone tab left."""

from __future__ import annotations

import time
from typing import Any

from webhost.apps.meta import tool_resource_uri, tool_visibility
from webhost.elicitation.requests import URL_ELICITATION_REQUIRED
from webhost.errors import UpstreamError
from webhost.session import BrowserSession
from webhost.workspace.left_calls import RunningCall

from . import _params
from ._recorded import recorded


def _for_page(tool: dict[str, Any]) -> dict[str, Any]:
    """The wire tool plus what the backend computed for the page (a copy: the catalogue keeps the wire)."""
    meta = tool.get("_meta")
    visibility = tool_visibility(meta)
    return {
        **tool,
        "webhost": {
            **tool.get("webhost", {}),  # `invalid` for a malformed item (upstream/lenient.py)
            "resourceUri": tool_resource_uri(meta),
            "visibility": visibility,
            "appOnly": "model" not in visibility,
        },
    }


async def list_tools(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """The server's tools: listed anew (the catalogue updated), or with `refresh: false` as the catalogue holds them."""
    connection = session.connection(params)
    refresh = _params.optional_bool(params, "refresh", default=True)
    tools = await session.catalogue.listing(connection, "tools", refresh=refresh)
    return {"tools": [_for_page(tool) for tool in tools]}


async def call_tool(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    name = _params.string(params, "name")
    arguments = _params.optional_object(params, "arguments")
    call_id = _params.string(params, "callId", max_length=200)
    left_calls = session.workspace.left_calls
    running = RunningCall(
        tab=session.id,
        call_id=call_id,
        server=connection.name,
        name=name,
        arguments=arguments,
        started_at=time.time(),
        cancel=lambda: session.calls.cancel(call_id),
    )

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        report = {"callId": call_id, "progress": progress, "total": total, "message": message}
        left_calls.progress(running, report, session.notify)

    async def run() -> dict[str, Any]:
        seen: set[str] = set()
        while True:
            try:
                return await connection.call_tool(name, arguments, on_progress=on_progress)
            except UpstreamError as exc:
                data = exc.data or {}
                if data.get("upstreamCode") != URL_ELICITATION_REQUIRED:
                    raise
                # Legacy URL_ELICITATION_REQUIRED: run the URL steps it names, then retry the call (with a loop guard).
                await session.requests.complete_required_urls(connection, data.get("upstreamData"), seen)

    origin = {"method": "tools/call", "name": name, "server": connection.name}
    # In the workspace, not in this request: a reload of the tab does not end it (workspace/left_calls.py).
    return await left_calls.run(running, lambda: recorded(session, "tool", origin, arguments, call_id, run))


async def cancel(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """Cancel a call of this tab, or, with `tab`, one another tab of the person left running when it went."""
    call_id = _params.string(params, "callId", max_length=200)
    tab = params.get("tab")
    if isinstance(tab, str) and tab and tab != session.id:
        return {"cancelled": session.workspace.left_calls.cancel(tab, call_id)}
    return {"cancelled": session.calls.cancel(call_id)}


async def running_calls(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """The person's tool calls still running that a tab which went away left behind (a reload's new tab shows them)."""
    calls = session.workspace.left_calls.running()
    for call in calls:
        session.activity(
            call["server"],
            direction="local",
            kind="notification",
            method="tools/call",
            summary=f"{call['name']}: still running, started before this tab opened",
            data={"callId": call["callId"], "arguments": call["arguments"]},
        )
    return {"calls": calls}


METHODS = {"tools/list": list_tools, "tools/call": call_tool, "tools/cancel": cancel, "calls/running": running_calls}
