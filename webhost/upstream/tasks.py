"""Tasks on one server, in both eras, on the SDK's own request plumbing: a `tools/call` that becomes a task, and
`tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/list`; every value in and out is a wire dict.

- 2025-11-25 (the task utility): a tool whose `execution.taskSupport` asks for it is called with
  `params.task` and answered with `CreateTaskResult` (`{"task": {...}}`), which the SDK cannot parse as a
  `tools/call` answer (`sdk.send_unchecked`); `tasks/result` gives the result once the task has ended; status
  changes may come as `notifications/tasks/status`.
- 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663): the extension is advertised on every
  request (`TasksExtension`, a `ClientExtension` with a claim on `resultType: "task"`); the server decides per
  call, and a task answer leaves the SDK's `call_tool` as `TaskStarted`, caught by `ServerClient.call_tool`.
  `tasks/get` carries the result (or error) once the task has ended, and the task's `inputRequests` while it is
  `input_required` (answered with `tasks/update`); `tasks/get`, `tasks/update` and `tasks/cancel` name the
  task in `Mcp-Name`; status changes may come as `notifications/tasks`.

`Task` below is the one shape the rest of webhost sees: the server's task with `era` added, its `ttlMs` and
`pollIntervalMs` under one spelling in both eras.
"""

from __future__ import annotations

import secrets
from typing import Any, ClassVar, Literal, cast

from mcp import Client
from mcp.types import (
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    CancelTaskRequest,
    CancelTaskRequestParams,
    GetTaskPayloadRequest,
    GetTaskPayloadRequestParams,
    GetTaskRequest,
    GetTaskRequestParams,
    ListTasksRequest,
    PaginatedRequestParams,
    Request,
    RequestParams,
    RequestParamsMeta,
    TaskMetadata,
)

from .client import ServerClient
from .results import to_wire
from .sdk import send_unchecked
from .task_wire import Open, task_view

TASK_TTL_MS = 3_600_000  # asked of a 2025-11-25 server for a task's life (it may give less)
BaseRequest = Request[Any, Any]


class _TaskIdParams(RequestParams):
    task_id: str


class _ModernGet(Request[_TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskIdParams
    name_param: ClassVar[str | None] = "taskId"  # Mcp-Name: routes the poll to the task's server instance


class _ModernCancel(Request[_TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: _TaskIdParams
    name_param: ClassVar[str | None] = "taskId"


class _UpdateParams(RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class _ModernUpdate(Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams
    name_param: ClassVar[str | None] = "taskId"


class TaskClient:
    """The task requests of one server, over its `ServerClient` (timed, audited, errors mapped)."""

    def __init__(self, client: ServerClient) -> None:
        self.client = client

    @property
    def era(self) -> str:
        return self.client.link.era or "legacy"

    async def call_as_task(
        self, name: str, arguments: dict[str, Any], *, meta: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A 2025-11-25 `tools/call` augmented with a task: `{"task": Task, "progressToken": str}`, or the server's
        plain result. The progress token is webhost's own: the request's answer comes at once, so the SDK no
        longer routes the task's `notifications/progress`; they reach the workspace, which matches the token."""
        token = "webhost-task-" + secrets.token_urlsafe(12)
        request_meta = cast("RequestParamsMeta", {**(meta or {}), "progressToken": token})

        async def send(c: Client) -> dict[str, Any]:
            params = CallToolRequestParams(
                name=name, arguments=arguments, task=TaskMetadata(ttl=TASK_TTL_MS), _meta=request_meta
            )
            raw = await send_unchecked(c.session, CallToolRequest(params=params))
            if isinstance(raw.get("task"), dict):
                return {"task": task_view(raw["task"], "legacy"), "progressToken": token}
            return to_wire(CallToolResult.model_validate(raw, by_name=False))

        result: dict[str, Any] = await self.client.request(
            "tools/call", f"{name} (as a task)", send, data={"arguments": arguments, "task": {"ttl": TASK_TTL_MS}}
        )
        return result

    async def get(self, task_id: str) -> dict[str, Any]:
        """The task as the server has it now (2026-07-28: with its `result` or `error` once it ended)."""
        modern = self.era == "modern"
        request: BaseRequest = (
            _ModernGet(params=_TaskIdParams(task_id=task_id))
            if modern
            else GetTaskRequest(params=GetTaskRequestParams(task_id=task_id))
        )

        async def send(c: Client) -> dict[str, Any]:
            return task_view(to_wire(await c.session.send_request(request, Open)), self.era)

        result: dict[str, Any] = await self.client.request("tasks/get", task_id, send)
        return result

    async def result(self, task_id: str) -> dict[str, Any]:
        """2025-11-25: the ended task's result (`tasks/result`), or its JSON-RPC error raised."""
        request = GetTaskPayloadRequest(params=GetTaskPayloadRequestParams(task_id=task_id))

        async def send(c: Client) -> dict[str, Any]:
            return to_wire(await c.session.send_request(request, CallToolResult))

        result: dict[str, Any] = await self.client.request("tasks/result", task_id, send)
        return result

    async def cancel(self, task_id: str) -> None:
        modern = self.era == "modern"
        request: BaseRequest = (
            _ModernCancel(params=_TaskIdParams(task_id=task_id))
            if modern
            else CancelTaskRequest(params=CancelTaskRequestParams(task_id=task_id))
        )

        async def send(c: Client) -> None:
            await c.session.send_request(request, Open)

        await self.client.request("tasks/cancel", task_id, send)

    async def update(self, task_id: str, responses: dict[str, Any]) -> None:
        """2026-07-28: the answers to a task's `inputRequests` (`tasks/update`, keyed as the server asked)."""
        request = _ModernUpdate(params=_UpdateParams(task_id=task_id, input_responses=responses))

        async def send(c: Client) -> None:
            await c.session.send_request(request, Open)

        await self.client.request("tasks/update", task_id, send, data={"inputResponses": sorted(responses)})

    async def list(self) -> list[dict[str, Any]]:
        """2025-11-25 `tasks/list` (every page, bounded); 2026-07-28 has none (the extension dropped it)."""
        if self.era == "modern":
            return []
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(20):
            request = ListTasksRequest(params=PaginatedRequestParams(cursor=cursor) if cursor else None)

            async def send(c: Client, request: ListTasksRequest = request) -> dict[str, Any]:
                return to_wire(await c.session.send_request(request, Open))

            page: dict[str, Any] = await self.client.request("tasks/list", "tasks/list", send)
            found += [task_view(t, "legacy") for t in page.get("tasks") or [] if isinstance(t, dict)]
            cursor = page.get("nextCursor") if isinstance(page.get("nextCursor"), str) else None
            if cursor is None:
                break
        return found
