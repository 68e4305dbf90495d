"""Tools: list (with app metadata and visibility computed), call with progress, cancel."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from mcp import Client
from mcp.types import ListToolsResult

from webhost.apps.meta import tool_resource_uri, tool_visibility
from webhost.elicitation.requests import complete_required_urls
from webhost.errors import UpstreamError
from webhost.upstream.results import to_wire

from . import _params

if TYPE_CHECKING:
    from webhost.session import BrowserSession

URL_ELICITATION_REQUIRED = -32042


async def _list_page(client: Client, *, cursor: str | None) -> ListToolsResult:
    return await client.list_tools(cursor=cursor, cache_mode="refresh")


async def list_tools(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _page in range(50):  # a bound on pagination, against a server that never stops paging
        timeout = session.host.config.options.call_timeout
        page = await connection.request("tools/list", "tools/list", partial(_list_page, cursor=cursor), timeout=timeout)
        tools.extend(to_wire(tool) for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    for tool in tools:
        meta = tool.get("_meta")
        visibility = tool_visibility(meta)
        tool["webhost"] = {
            "resourceUri": tool_resource_uri(meta),
            "visibility": visibility,
            "appOnly": "model" not in visibility,
        }
    connection.tools = {tool["name"]: tool for tool in tools}
    return {"tools": tools}


async def call_tool(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    name = _params.string(params, "name")
    arguments = _params.optional_object(params, "arguments")
    call_id = _params.string(params, "callId", max_length=200)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        session.notify("progress", {"callId": call_id, "progress": progress, "total": total, "message": message})

    async def run() -> dict[str, Any]:
        seen: set[str] = set()
        while True:
            try:
                result = await connection.request(
                    "tools/call", name,
                    lambda c: c.call_tool(name, arguments, progress_callback=on_progress),
                    timeout=session.host.config.options.call_timeout,
                    data={"arguments": arguments},
                )
                return to_wire(result)
            except UpstreamError as exc:
                data = exc.data or {}
                if data.get("upstreamCode") != URL_ELICITATION_REQUIRED:
                    raise
                # Legacy -32042: run the URL steps it names, then retry the call (with a loop guard).
                await complete_required_urls(session, connection, data.get("upstreamData"), seen)

    origin = {"method": "tools/call", "name": name, "server": connection.name}
    result: dict[str, Any] = await session.tracked_call(call_id, origin, run)
    return result


async def cancel(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    return {"cancelled": session.cancel_call(_params.string(params, "callId", max_length=200))}


METHODS = {"tools/list": list_tools, "tools/call": call_tool, "tools/cancel": cancel}
