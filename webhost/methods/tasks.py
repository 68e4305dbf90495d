"""Tasks: the person's tasks (calls a server runs as tasks), one with its result, cancelling one; and a
2025-11-25 server's own `tasks/list`. A task of a tool the person may not use (now: their groups may have changed)
is absent, as one never started (webhost.access)."""

from __future__ import annotations

from typing import Any

from webhost.errors import InvalidParams
from webhost.session import BrowserSession
from webhost.tasks import TrackedTask

from . import _params


def _usable(session: BrowserSession, server: str, tool: str) -> bool:
    return server in session.workspace.connections and session.catalogue.allows(server, tool)


def _tracked(session: BrowserSession, params: dict[str, Any]) -> TrackedTask:
    task_id = _params.string(params, "id", max_length=100)
    entry = session.workspace.tasks.get(task_id)
    if entry is None or not _usable(session, entry.server, entry.tool):
        raise InvalidParams(f"no task {task_id!r} (tasks are kept while the person's workspace is open)")
    return entry


async def list_tasks(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """The person's tasks, newest first; with `server`, only that server's, and what it lists itself (2025-11-25)."""
    tasks = [task for task in session.workspace.tasks.list() if _usable(session, task["server"], task["tool"])]
    if params.get("server") is None:
        return {"tasks": tasks}
    connection = session.connection(params)
    mine = [task for task in tasks if task["server"] == connection.name]
    return {"tasks": mine, "serverTasks": await connection.tasks.list()}


async def get_task(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    return {"task": _tracked(session, params).view(full=True)}


async def cancel_task(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    entry = _tracked(session, params)
    await session.workspace.tasks.cancel(entry)
    return {"task": entry.view()}


METHODS = {"tasks/list": list_tasks, "tasks/get": get_task, "tasks/cancel": cancel_task}
