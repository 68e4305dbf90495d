"""Test MCP server that really runs tasks, in both eras (issue 25, item 1).

`MCPServer` has no task support, so a middleware serves the task methods itself, ahead of the SDK's handlers
(a middleware may answer a request without calling on; the SDK's server does not know `tasks/*`):

- 2025-11-25 (the task utility): `tools/list` declares `execution.taskSupport` ("required" for `long_job`,
  "optional" for `maybe_job`); a `tools/call` with `params.task` gets a `CreateTaskResult` at once and the
  work runs on; `tasks/get`, `tasks/result` (waits for the end; the tool's result, or the task's error),
  `tasks/cancel`, `tasks/list`; a `notifications/tasks/status` at each change, and a `notifications/progress`
  at each step of `long_job` when the task's request carried a progress token. `long_job` without `task` is
  refused (`-32602`).
- 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663): advertised in `server/discover`;
  a `tools/call` of `long_job` or `maybe_job` from a client that declares the extension on that request gets
  `resultType: "task"`; `tasks/get` answers the detailed task (its `result` once completed, its `error` once
  failed, its `inputRequests` while `input_required`), `tasks/update` (the answers) and `tasks/cancel`
  acknowledge. `long_job` from a client without the extension is
  refused with `-32021` naming it; `maybe_job` then runs at once.

`long_job(steps=3, every=0.05, fail=False)`: once the client first polls the task (`tasks/get`), `steps` steps
`every` seconds apart, the status message saying which ("step 2 of 3"); then "done after N steps", or a
JSON-RPC error (`fail`). `wait_job(label)`: runs until `release(label)` (a plain tool) is called, so a test
decides when a task ends (or cancels it first).
`job_board()`: opens an MCP App (`ui://tasks/board`), whose calls of the jobs run as tasks too.
`maybe_job(text)`: answers the text, as a task when the client can take one. `ask_job()`: the task needs input
(`input_required`): a name, asked as a form elicitation on `tasks/result` (2025-11-25) or in the task's
`inputRequests` answered with `tasks/update` (2026-07-28); then "hello NAME".
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from datetime import UTC, datetime
from typing import Any

import anyio
from _support import add_common_args, serve
from mcp.server import MCPServer, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp.types import (
    ProgressNotification,
    ProgressNotificationParams,
    TaskStatusNotification,
    TaskStatusNotificationParams,
)

EXTENSION = "io.modelcontextprotocol/tasks"
MODERN = "2026-07-28"
TASK_TOOLS = {"long_job": "required", "wait_job": "required", "maybe_job": "optional", "ask_job": "required"}
QUESTION: dict[str, Any] = {
    "mode": "form",
    "message": "Whom should the job greet?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
}
TERMINAL = ("completed", "failed", "cancelled")

mcp = MCPServer("tasks", version="1.0.0", instructions="Runs long jobs as tasks.")
releases: dict[str, anyio.Event] = {}


@mcp.tool(description="Steps `every` seconds apart, as a task; fails with a JSON-RPC error when `fail`.")
def long_job(steps: int = 3, every: float = 0.05, fail: bool = False) -> str:
    return f"done after {steps} steps"  # (run by the task engine below; a plain call is refused)


@mcp.tool(description="Runs as a task until release(label) is called.")
def wait_job(label: str) -> str:
    return f"released {label}"


@mcp.tool(description="Answers the text, as a task when the client can take one.")
def maybe_job(text: str) -> str:
    return f"maybe {text}"


@mcp.tool(description="Asks the person a name (the task needs input), then greets it.")
def ask_job() -> str:
    return "asks first"


@mcp.tool(description="Let the wait_job task with this label finish.")
def release(label: str) -> str:
    releases.setdefault(label, anyio.Event()).set()
    return f"released {label}"


@mcp.tool(description="The job board, an MCP App that starts jobs.", meta={"ui": {"resourceUri": "ui://tasks/board"}})
def job_board() -> str:
    return "the job board"


@mcp.resource("ui://tasks/board", name="board", mime_type="text/html;profile=mcp-app")
def board() -> str:
    return "<!doctype html><html><head><title>Jobs</title></head><body><p>Jobs</p></body></html>"


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class Job:
    def __init__(self, name: str, arguments: dict[str, Any], modern: bool, notify: Any) -> None:
        self.id = str(uuid.uuid4())
        self.name, self.arguments, self.modern, self.notify = name, arguments, modern, notify
        self.status = "working"
        self.message: str | None = "started"
        self.created = self.updated = _now()
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.done = anyio.Event()
        self.runner: asyncio.Task[None] | None = None
        self.answer: asyncio.Future[dict[str, Any]] | None = None  # ask_job: the person's answer, once asked
        self.polled = anyio.Event()  # set by the first tasks/get: the client follows the task from then on
        self.progress: Any = None  # 2025-11-25: told of each step (the task's request's progress token)

    def view(self) -> dict[str, Any]:
        ttl = "ttlMs" if self.modern else "ttl"
        poll = "pollIntervalMs" if self.modern else "pollInterval"
        task: dict[str, Any] = {
            "taskId": self.id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            ttl: 600_000,
            poll: 50,
        }
        if self.message:
            task["statusMessage"] = self.message
        if self.modern and self.status == "completed" and self.result is not None:
            task["result"] = self.result
        if self.modern and self.status == "failed" and self.error is not None:
            task["error"] = self.error
        if self.modern and self.status == "input_required":
            task["inputRequests"] = {"greet": {"method": "elicitation/create", "params": QUESTION}}
        return task

    async def move(self, status: str, message: str | None) -> None:
        if self.status in TERMINAL:
            return
        self.status, self.message, self.updated = status, message, _now()
        if status in TERMINAL:
            self.done.set()
        if self.notify is not None:
            try:
                await self.notify(self)
            except Exception:  # the client went away: the task still ends
                pass

    async def run(self) -> None:
        try:
            if self.name == "wait_job":
                label = str(self.arguments.get("label", ""))
                await releases.setdefault(label, anyio.Event()).wait()
                text = f"released {label}"
            elif self.name == "ask_job":
                self.answer = asyncio.get_running_loop().create_future()
                await self.move("input_required", "waiting for a name")
                answer = await self.answer
                name = (answer.get("content") or {}).get("name") if answer.get("action") == "accept" else None
                await self.move("working", "greeting")
                text = f"hello {name}" if name else "nobody to greet"
            elif self.name == "maybe_job":
                text = f"maybe {self.arguments.get('text', '')}"
            else:
                steps = int(self.arguments.get("steps", 3))
                await self.polled.wait()  # so every step is seen by a client that follows the task
                for step in range(1, steps + 1):
                    await anyio.sleep(float(self.arguments.get("every", 0.05)))
                    await self.move("working", f"step {step} of {steps}")
                    if self.progress is not None:
                        await self.progress(step, steps, f"step {step} of {steps}")
                if self.arguments.get("fail"):
                    self.error = {"code": -32603, "message": "the job failed on purpose"}
                    await self.move("failed", "the job failed on purpose")
                    return
                text = f"done after {steps} steps"
            self.result = {"content": [{"type": "text", "text": text}], "isError": False}
            await self.move("completed", text)
        except asyncio.CancelledError:
            await self.move("cancelled", "cancelled by the client")


jobs: dict[str, Job] = {}


def _declares_extension(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = (ctx.meta or {}).get("io.modelcontextprotocol/clientCapabilities") or {}
    return EXTENSION in ((capabilities.get("extensions") if isinstance(capabilities, dict) else None) or {})


def _start(ctx: ServerRequestContext[Any, Any], name: str, arguments: dict[str, Any], modern: bool) -> Job:
    session = ctx.session

    async def notify(job: Job) -> None:
        if modern:
            return  # 2026-07-28 sends notifications/tasks only on a listen stream; clients poll tasks/get
        await session.send_notification(
            TaskStatusNotification(params=TaskStatusNotificationParams.model_validate(job.view()))
        )

    job = Job(name, arguments, modern, None if modern else notify)
    token = (ctx.meta or {}).get("progressToken") or ((ctx.params or {}).get("_meta") or {}).get("progressToken")
    if not modern and token is not None:

        async def progress(step: int, steps: int, message: str) -> None:
            params = ProgressNotificationParams(progress_token=token, progress=step, total=steps, message=message)
            try:
                await session.send_notification(ProgressNotification(params=params))
            except Exception:  # the client went away: the task still runs
                pass

        job.progress = progress
    jobs[job.id] = job
    job.runner = asyncio.get_running_loop().create_task(job.run())
    return job


def _job(params: Any) -> Job:
    task_id = (params or {}).get("taskId")
    job = jobs.get(task_id) if isinstance(task_id, str) else None
    if job is None:
        raise MCPError(code=-32602, message="Failed to retrieve task: Task not found")
    return job


async def engine(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    method, params = ctx.method, dict(ctx.params or {})
    modern = ctx.protocol_version >= MODERN
    if method == "server/discover":
        result = await call_next(ctx)
        if isinstance(result, dict) and isinstance(result.get("capabilities"), dict):
            extensions = dict(result["capabilities"].get("extensions") or {})
            extensions[EXTENSION] = {}
            result = {**result, "capabilities": {**result["capabilities"], "extensions": extensions}}
        return result
    if method == "initialize":
        result = await call_next(ctx)
        if isinstance(result, dict) and isinstance(result.get("capabilities"), dict):
            tasks = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
            result = {**result, "capabilities": {**result["capabilities"], "tasks": tasks}}
        return result
    if method == "tools/list":
        result = await call_next(ctx)
        if isinstance(result, dict) and not modern:
            for tool in result.get("tools", []):
                if tool.get("name") in TASK_TOOLS:
                    tool["execution"] = {"taskSupport": TASK_TOOLS[tool["name"]]}
        return result
    if method == "tools/call" and params.get("name") in TASK_TOOLS:
        name, arguments = str(params["name"]), dict(params.get("arguments") or {})
        required = TASK_TOOLS[name] == "required"
        if modern:
            if _declares_extension(ctx):
                job = _start(ctx, name, arguments, True)
                return {"resultType": "task", **job.view()}
            if required:
                raise MCPError(
                    code=-32021,
                    message="Missing required client capability",
                    data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
                )
            return await call_next(ctx)
        if params.get("task") is not None:
            return {"task": _start(ctx, name, arguments, False).view()}
        if required:
            raise MCPError(code=-32602, message=f"{name} must be called as a task (taskSupport: required)")
        return await call_next(ctx)
    if method == "tasks/get":
        _job(params).polled.set()
        return {"resultType": "complete", **_job(params).view()} if modern else _job(params).view()
    if method == "tasks/result" and not modern:
        job = _job(params)
        if job.status == "input_required" and job.answer is not None and not job.answer.done():
            asked = await ctx.session.elicit_form(
                QUESTION["message"], QUESTION["requestedSchema"], related_request_id=ctx.request_id
            )
            job.answer.set_result(asked.model_dump(mode="json", exclude_none=True))
        await job.done.wait()
        if job.status == "completed" and job.result is not None:
            return job.result
        if job.status == "failed" and job.error is not None:
            raise MCPError(code=int(job.error["code"]), message=str(job.error["message"]))
        raise MCPError(code=-32000, message="Task cancelled")
    if method == "tasks/cancel":
        job = _job(params)
        if job.runner is not None and job.status not in TERMINAL:
            job.runner.cancel()
            await job.done.wait()
        return {"resultType": "complete"} if modern else job.view()
    if method == "tasks/update" and modern:
        job = _job(params)
        answer = (params.get("inputResponses") or {}).get("greet")
        if isinstance(answer, dict) and job.answer is not None and not job.answer.done():
            job.answer.set_result(answer)
        return {"resultType": "complete"}
    if method == "tasks/list" and not modern:
        return {"tasks": [job.view() for job in jobs.values() if not job.modern]}
    return await call_next(ctx)


mcp.middleware.insert(0, engine)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_common_args(parser)
    serve(mcp, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
