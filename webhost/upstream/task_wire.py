"""The wire side of tasks that the SDK client itself must know: the tasks extension (advertised on every 2026-07-28
request, claiming `resultType: "task"`), the task answer leaving `call_tool`, and one spelling of a task for
both eras (`tasks.py` makes the requests)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

from mcp.client import ClientExtension
from mcp.client.extension import ClaimContext, NotificationBinding, ResultClaim
from mcp.types import CallToolResult, NotificationParams, Result
from pydantic import ConfigDict

from .results import to_wire

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
TaskStatusFn = Callable[[str, dict[str, Any]], Awaitable[None]]


class TaskStarted(Exception):
    """A 2026-07-28 `tools/call` the server answered with a task (`resultType: "task"`): the task, as wire."""

    def __init__(self, task: dict[str, Any]) -> None:
        super().__init__(f"the server made task {task.get('taskId')}")
        self.task = task


class Open(Result):
    """A result kept as the server sent it (a task, in either era's spelling)."""

    model_config = ConfigDict(extra="allow")


class CreatedTask(Open):
    """The claim's model: a `CreateTaskResult` of the tasks extension (the task's fields, kept as sent)."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str


class _TaskNote(NotificationParams):
    model_config = ConfigDict(extra="allow")


class TasksExtension(ClientExtension):
    """Advertises the tasks extension on every 2026-07-28 request and claims its `resultType: "task"`; tells
    `on_status` of the servers' status notifications (both eras' methods)."""

    identifier = TASKS_EXTENSION

    def __init__(self, on_status: TaskStatusFn) -> None:
        self._on_status = on_status

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self._started)]

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        return [
            NotificationBinding(method=method, params_type=_TaskNote, handler=self._noted(method))
            for method in ("notifications/tasks", "notifications/tasks/status")
        ]

    async def _started(self, result: CreatedTask, context: ClaimContext) -> CallToolResult:
        raise TaskStarted(to_wire(result))

    def _noted(self, method: str) -> Callable[[_TaskNote], Awaitable[None]]:
        async def noted(params: _TaskNote) -> None:
            await self._on_status(method, to_wire(params))

        return noted


def task_view(raw: dict[str, Any], era: str) -> dict[str, Any]:
    """A server's task (either era's spelling) as webhost keeps it: `ttlMs`, `pollIntervalMs`, `era`."""
    task = {k: v for k, v in raw.items() if k not in ("ttl", "pollInterval", "resultType", "_meta")}
    if "ttl" in raw:
        task["ttlMs"] = raw["ttl"]
    if "pollInterval" in raw:
        task["pollIntervalMs"] = raw["pollInterval"]
    return {**task, "era": era}
