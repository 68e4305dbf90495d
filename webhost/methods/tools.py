"""Tools: list (with app metadata and visibility computed), call with progress, cancel; the calls a gone tab left."""

from __future__ import annotations

import time
from typing import Any

from webhost import tasks as task_calls
from webhost.apps.meta import tool_resource_uri, tool_visibility
from webhost.elicitation.url_retry import call_with_url_steps
from webhost.errors import InvalidParams, WebhostError
from webhost.session import BrowserSession
from webhost.tasks import TrackedTask, listed_support
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
    return {"tools": [_for_page(tool) for tool in tools], "cacheHint": connection.cache_hints.get("tools/list")}


async def call_tool(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    name = _params.string(params, "name")
    arguments = _params.optional_object(params, "arguments")
    call_id = _params.string(params, "callId", max_length=200)
    meta = _params.request_meta(params)
    as_task = _params.optional_bool(params, "asTask", default=False)
    dropped = session.catalogue.dropped(connection.name, name)
    if dropped is not None:  # listed (as a stub) so the person sees why; never sent
        raise InvalidParams(f"{name} cannot be called: {dropped}", {"dropped": dropped})
    tasks = session.workspace.tasks
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

    async def attempt() -> dict[str, Any]:
        # A tool may run as a task (before 2026-07-28 when its taskSupport asks; since, as the server decides):
        # followed by the person's tasks, this call answers with its end (webhost/tasks.py).
        support = await listed_support(session.catalogue.tool, connection, name)
        return await task_calls.call_tool(
            tasks,
            connection,
            name,
            arguments,
            support=support,
            as_task=as_task,
            meta=meta,
            on_progress=on_progress,
            call_id=call_id,
            started=lambda entry: session.notify("progress", _task_progress(call_id, entry)),
        )

    async def run() -> dict[str, Any]:
        await session.workspace.until_connected(connection, f"the call of {name}")  # many tabs opening at once
        await session.catalogue.check_call(connection, name)  # a tool the person may not use is never sent
        return await call_with_url_steps(attempt, session.requests, connection)

    origin = {"method": "tools/call", "name": name, "server": connection.name}
    # In the workspace, not in this request: a reload of the tab does not end it (workspace/left_calls.py).
    return await left_calls.run(running, lambda: recorded(session, "tool", origin, arguments, call_id, run))


def _task_progress(call_id: str, entry: TrackedTask) -> dict[str, Any]:
    """The call's progress line when it became a task (the tasks view follows it from there)."""
    message = f"running as task {entry.task_id} on {entry.server}"
    return {"callId": call_id, "progress": 0, "total": None, "message": message, "task": entry.view()}


async def cancel(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """Cancel a call of this tab, or, with `tab`, one another tab of the person left running when it went; a call
    waiting on its task cancels the task first."""
    call_id = _params.string(params, "callId", max_length=200)
    tab = params.get("tab")
    left_calls = session.workspace.left_calls
    other = tab if isinstance(tab, str) and tab and tab != session.id else None
    ours = left_calls.holds(other, call_id) if other is not None else session.calls.running(call_id)
    task = session.workspace.tasks.for_call(call_id) if ours else None
    if task is not None:  # the task is what is cancelled
        try:
            await session.workspace.tasks.cancel(task)
        except WebhostError:  # the call still ends (the refused tasks/cancel is in the activity log as any request)
            pass
    if other is not None:
        return {"cancelled": left_calls.cancel(other, call_id)}
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
