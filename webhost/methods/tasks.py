"""Tasks: the person's tasks (calls a server runs as tasks), one with its result, cancelling one; and a
2025-11-25 server's own `tasks/list`."""

from __future__ import annotations

from typing import Any

from webhost.errors import InvalidParams
from webhost.session import BrowserSession
from webhost.tasks import TrackedTask

from . import _params


def _tracked(session: BrowserSession, params: dict[str, Any]) -> TrackedTask:
    task_id = _params.string(params, "id", max_length=100)
    entry = session.workspace.tasks.get(task_id)
    if entry is None:
        raise InvalidParams(f"no task {task_id!r} (tasks are kept while the person's workspace is open)")
    return entry


async def list_tasks(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """The person's tasks, newest first; with `server`, also what that server lists itself (2025-11-25)."""
    answer: dict[str, Any] = {"tasks": session.workspace.tasks.list()}
    if params.get("server") is not None:
        connection = session.connection(params)
        answer["serverTasks"] = await connection.tasks.list()
    return answer


async def get_task(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    return {"task": _tracked(session, params).view(full=True)}


async def cancel_task(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    entry = _tracked(session, params)
    await session.workspace.tasks.cancel(entry)
    return {"task": entry.view()}


METHODS = {"tasks/list": list_tasks, "tasks/get": get_task, "tasks/cancel": cancel_task}
