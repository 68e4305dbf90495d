"""One person's tasks: a `tools/call` a server runs as a task, followed to its end, shown to every tab of theirs.

A call becomes a task in either era (`upstream/tasks.py`): before 2026-07-28 because the tool's
`execution.taskSupport` asks for one ("required"; "optional" when the caller wants one), since because the
server answered with one. The task is followed by the person's workspace, not by the tab that started it:
`tasks/get` every `pollIntervalMs` (woken early by the server's status notifications) until it ends, then its
result (2025-11-25: `tasks/result`). A task that needs input asks the person as the server's own requests do
(2025-11-25: on `tasks/result`; 2026-07-28: its `inputRequests`, answered with `tasks/update`). A reload, or
a tab closing, leaves it running and shown; the call that started it waits for its end and answers with its
result, so the workbench and the chat use tasks as they use any call. Each change is told to the person's tabs
(`tasks/changed`); the newest `KEEP` tasks are kept.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from webhost.errors import Cancelled, NotConnected, RequestRefused, UpstreamError, UpstreamTimeout, WebhostError
from webhost.upstream.connection import Connection, ProgressFn

KEEP = 100  # tasks kept per person (the oldest ended ones go first)
POLL_DEFAULT, POLL_MIN, POLL_MAX = 1.0, 0.05, 10.0  # seconds between polls, as the server suggests within these
CANCEL_SECONDS = 10.0  # how long a stopped caller waits for the server to take a task's `tasks/cancel`
GIVE_UP_AFTER = 30  # failed polls in a row (the server gone, the task forgotten) before the task counts as lost
TERMINAL = ("completed", "failed", "cancelled")

Tell = Callable[[str, dict[str, Any]], None]
# Answers one of a task's input requests (`elicitation/create`, `sampling/createMessage`, `roots/list`, as wire
# dicts) the way the person's workspace answers a server's requests; `RequestRefused` when it will not.
Ask = Callable[[Connection, str, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(eq=False)
class TrackedTask:
    """A task webhost follows for the person: the server's task, and what started it."""

    id: str
    server: str
    task_id: str
    tool: str
    arguments: dict[str, Any]
    era: str
    state: dict[str, Any]
    call_id: str | None = None
    progress_token: str | None = None  # 2025-11-25: the server's notifications/progress for the task carry it
    progress: dict[str, Any] | None = None  # the last one: progress, total, message
    started_at: float = field(default_factory=time.time)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    answered: set[str] = field(default_factory=set)  # 2026-07-28: the input requests answered (tasks/update)
    done: anyio.Event = field(default_factory=anyio.Event)
    wake: anyio.Event = field(default_factory=anyio.Event)

    @property
    def status(self) -> str:
        return str(self.state.get("status") or "working")

    def view(self, *, full: bool = False) -> dict[str, Any]:
        """What the page is told (the result and error only when asked: they may be large)."""
        state = {k: v for k, v in self.state.items() if k not in ("result", "error", "inputRequests")}
        view: dict[str, Any] = {
            "id": self.id,
            "server": self.server,
            "tool": self.tool,
            "callId": self.call_id,
            "startedAt": self.started_at,
            "task": state,
            "status": self.status,
            "statusMessage": self.state.get("statusMessage"),
            "progress": self.progress,
            "hasResult": self.result is not None,
            "hasError": self.error is not None,
        }
        if full:
            view |= {"arguments": self.arguments, "result": self.result, "error": self.error}
        return view


class TaskBook:
    """The person's tasks, each followed in the workspace's task group."""

    def __init__(
        self,
        task_group: anyio.abc.TaskGroup,
        tell: Tell,
        connections: Mapping[str, Connection],
        ask: Ask | None = None,
    ) -> None:
        self._task_group = task_group
        self._tell = tell
        self._connections = connections
        self._ask = ask
        self._tasks: dict[str, TrackedTask] = {}

    def track(
        self,
        connection: Connection,
        task: dict[str, Any],
        *,
        tool: str,
        arguments: dict[str, Any],
        call_id: str | None,
        progress_token: str | None = None,
    ) -> TrackedTask:
        entry = TrackedTask(
            id="t-" + secrets.token_urlsafe(8),
            server=connection.name,
            task_id=str(task.get("taskId")),
            tool=tool,
            arguments=arguments,
            era=str(task.get("era") or connection.era or "legacy"),
            state=task,
            call_id=call_id,
            progress_token=progress_token,
        )
        self._tasks[entry.id] = entry
        self._prune()
        connection.log(
            direction="local", kind="notification", method="tasks", summary=f"{tool} runs as task {entry.task_id}"
        )
        self._changed(entry)
        self._task_group.start_soon(self._follow, entry, name=f"task:{entry.server}:{entry.task_id}")
        return entry

    def list(self) -> list[dict[str, Any]]:
        return [entry.view() for entry in sorted(self._tasks.values(), key=lambda e: -e.started_at)]

    def get(self, task: str) -> TrackedTask | None:
        return self._tasks.get(task)

    def for_call(self, call_id: str) -> TrackedTask | None:
        return next((e for e in self._tasks.values() if e.call_id == call_id and not e.done.is_set()), None)

    async def cancel(self, entry: TrackedTask) -> None:
        """Ask the server to cancel (cooperative: it may still end otherwise); the next poll says how it ended."""
        if entry.done.is_set():
            return
        connection = self._connections[entry.server]
        await connection.tasks.cancel(entry.task_id)
        entry.wake.set()

    def noted(self, server: str, params: dict[str, Any]) -> None:
        """A server's status notification: the task moves now, and its follower looks at once."""
        task_id = params.get("taskId")
        entry = next((e for e in self._tasks.values() if e.server == server and e.task_id == task_id), None)
        if entry is None or entry.done.is_set():
            return
        entry.state = {**entry.state, **{k: v for k, v in params.items() if k != "_meta"}}
        if entry.status not in TERMINAL:  # an end is told by the follower, with its result
            self._changed(entry)
        entry.wake.set()

    def progressed(self, server: str, params: dict[str, Any]) -> None:
        """A server's `notifications/progress` for a task it runs (2025-11-25: the task's request's token)."""
        token = params.get("progressToken")
        entry = next(
            (e for e in self._tasks.values() if e.server == server and token and e.progress_token == token), None
        )
        progress = params.get("progress")
        # Kept even once the task ended: the note may be handled after the poll that saw the end.
        if entry is None or not isinstance(progress, int | float) or isinstance(progress, bool):
            return
        total, message = params.get("total"), params.get("message")
        entry.progress = {
            "progress": progress,
            "total": total if isinstance(total, int | float) and not isinstance(total, bool) else None,
            "message": message if isinstance(message, str) else None,
        }
        self._changed(entry)

    async def wait(self, entry: TrackedTask) -> dict[str, Any]:
        """The task's end as a call's answer: its result (with the task named), or its error raised."""
        await entry.done.wait()
        brief = {"id": entry.id, "taskId": entry.task_id, "status": entry.status}
        if entry.result is not None:
            return {**entry.result, "webhost": {**(entry.result.get("webhost") or {}), "task": brief}}
        if entry.status == "cancelled":
            raise Cancelled(
                f"{entry.server}: task {entry.task_id} was cancelled", {"server": entry.server, "task": brief}
            )
        error = entry.error or {"message": str(entry.state.get("statusMessage") or "the task failed")}
        data = {"server": entry.server, "task": brief, "upstreamCode": error.get("code")}
        raise UpstreamError(f"{entry.server}: {error.get('message')}", data)

    # -- following one task -------------------------------------------------------------------------

    async def _follow(self, entry: TrackedTask) -> None:
        connection = self._connections[entry.server]
        failures = 0
        try:
            while entry.status not in TERMINAL:
                with anyio.move_on_after(_poll_seconds(entry.state)):
                    await entry.wake.wait()
                entry.wake = anyio.Event()
                try:
                    entry.state = await connection.tasks.get(entry.task_id)
                    failures = 0
                except WebhostError as exc:
                    failures += 1
                    if failures >= GIVE_UP_AFTER or (not isinstance(exc, NotConnected) and _unknown_task(exc)):
                        entry.error = exc.to_jsonrpc()
                        entry.state = {**entry.state, "status": "failed", "statusMessage": f"lost: {exc.message}"}
                        break
                    continue
                if entry.status not in TERMINAL:  # the end is told once its result (or error) is in
                    self._changed(entry)
                if entry.status == "input_required":
                    if entry.era == "legacy" and await self._legacy_input(entry, connection):
                        return
                    if entry.era == "modern":
                        await self._answer(entry, connection)
            await self._ended(entry, connection)
        finally:
            entry.done.set()
            self._changed(entry)

    async def _legacy_input(self, entry: TrackedTask, connection: Connection) -> bool:
        """2025-11-25: a task that needs input asks on `tasks/result` (its questions reach the person as any
        server's do), which then waits for the end. True once the result (or error) is in; False when the wait
        outlived `timeouts.call` after the answers, and polling goes on."""
        try:
            entry.result = await connection.tasks.result(entry.task_id)
        except UpstreamTimeout:
            return False
        except WebhostError as exc:
            data = exc.data or {}
            entry.error = {"code": data.get("upstreamCode", exc.code), "message": exc.message}
        try:
            entry.state = await connection.tasks.get(entry.task_id)
        except WebhostError:
            pass
        if entry.status not in TERMINAL:  # the answer came before the server's own record of the end
            entry.state = {**entry.state, "status": "completed" if entry.result is not None else "failed"}
        return True

    async def _answer(self, entry: TrackedTask, connection: Connection) -> None:
        """2026-07-28: the task's `inputRequests` answered as the person answers a server's requests, then sent
        back with `tasks/update`; a refused one cancels the task (the extension has no way to refuse one)."""
        requests = entry.state.get("inputRequests")
        if not isinstance(requests, dict) or self._ask is None:
            return
        responses: dict[str, Any] = {}
        for key, request in requests.items():
            if key in entry.answered or not isinstance(request, dict):
                continue
            params = request.get("params")
            try:
                responses[key] = await self._ask(
                    connection, str(request.get("method")), params if isinstance(params, dict) else {}
                )
            except RequestRefused as exc:
                await self._give_up(entry, connection, f"input refused: {exc.message}", exc)
                return
        if not responses:
            return
        try:
            await connection.tasks.update(entry.task_id, responses)
        except WebhostError as exc:
            await self._give_up(entry, connection, f"the answers were not taken: {exc.message}", exc)
            return
        entry.answered |= responses.keys()
        entry.wake.set()  # look again at once: the task moves on

    async def _give_up(self, entry: TrackedTask, connection: Connection, why: str, exc: WebhostError) -> None:
        entry.error = exc.to_jsonrpc()
        entry.state = {**entry.state, "status": "failed", "statusMessage": why}
        try:
            await connection.tasks.cancel(entry.task_id)
        except WebhostError:
            pass

    async def _ended(self, entry: TrackedTask, connection: Connection) -> None:
        if entry.error is not None or entry.status == "cancelled":
            return
        if entry.era == "modern":
            result, error = entry.state.get("result"), entry.state.get("error")
            entry.result = result if isinstance(result, dict) else None
            entry.error = error if isinstance(error, dict) else None
            return
        try:  # 2025-11-25: the result is a request of its own (or the task's JSON-RPC error)
            entry.result = await connection.tasks.result(entry.task_id)
        except WebhostError as exc:
            data = exc.data or {}
            entry.error = {"code": data.get("upstreamCode", exc.code), "message": exc.message}

    def _changed(self, entry: TrackedTask) -> None:
        self._tell("tasks/changed", {"task": entry.view()})

    def _prune(self) -> None:
        ended = sorted((e for e in self._tasks.values() if e.done.is_set()), key=lambda e: e.started_at)
        while len(self._tasks) > KEEP and ended:
            self._tasks.pop(ended.pop(0).id, None)


def _poll_seconds(state: dict[str, Any]) -> float:
    interval = state.get("pollIntervalMs")
    if not isinstance(interval, int | float) or isinstance(interval, bool):
        return POLL_DEFAULT
    return min(POLL_MAX, max(POLL_MIN, interval / 1000))


def _unknown_task(exc: WebhostError) -> bool:
    """The server no longer knows the task (it restarted, or the task outlived its TTL): `-32602`."""
    return (exc.data or {}).get("upstreamCode") == -32602


async def listed_support(
    lookup: Callable[[Connection, str], Awaitable[dict[str, Any] | None]], connection: Connection, name: str
) -> str | None:
    """A 2025-11-25 tool's task support as listed (`lookup` is the catalogue's); None on a 2026-07-28 server (the
    server decides per call) and when the list cannot be had (the call itself then says what is wrong)."""
    if connection.era != "legacy":
        return None
    try:
        return task_support(await lookup(connection, name))
    except WebhostError:
        return None


def task_support(tool: dict[str, Any] | None) -> str | None:
    """A listed tool's `execution.taskSupport` (2025-11-25): "required", "optional", or None (forbidden)."""
    execution = (tool or {}).get("execution")
    support = execution.get("taskSupport") if isinstance(execution, dict) else None
    return support if support in ("required", "optional") else None


async def call_tool(
    book: TaskBook | None,
    connection: Connection,
    name: str,
    arguments: dict[str, Any],
    *,
    support: str | None = None,
    as_task: bool = False,
    meta: dict[str, Any] | None = None,
    on_progress: ProgressFn | None = None,
    call_id: str | None = None,
    started: Callable[[TrackedTask], Awaitable[None] | None] | None = None,
    summary: str | None = None,
    data: dict[str, Any] | None = None,
    cancel_with_caller: bool = False,
) -> dict[str, Any]:
    """A `tools/call` that may become a task: the result, once the task (if any) has ended.

    Before 2026-07-28 the call asks for a task when the tool requires one (or offers one and `as_task`);
    since, the server decides. `started` is told of the task as soon as there is one; `summary` and `data` mark
    the plain call's activity entry (an app's call). A task outlives a caller that goes away (a reload), unless
    `cancel_with_caller`: then a caller cancelled while it waits (the chat's Stop) asks the server to cancel it."""
    if book is not None and connection.era == "legacy" and (support == "required" or (support and as_task)):
        first = await connection.tasks.call_as_task(name, arguments, meta=meta)
    else:
        first = await connection.client.call_tool(
            name, arguments, on_progress=on_progress, meta=meta, summary=summary, data=data
        )
    task = first.get("task")
    if not isinstance(task, dict) or "content" in first:
        return first
    if book is None:
        raise UpstreamError(f"{connection.name}: {name} answered with a task, which this caller cannot follow")
    token = first.get("progressToken")
    entry = book.track(
        connection,
        task,
        tool=name,
        arguments=arguments,
        call_id=call_id,
        progress_token=token if isinstance(token, str) else None,
    )
    if started is not None:
        pending = started(entry)
        if pending is not None:
            await pending
    try:
        return await book.wait(entry)
    except anyio.get_cancelled_exc_class():
        if cancel_with_caller:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_SECONDS):
                try:
                    await book.cancel(entry)
                except WebhostError:  # the server may refuse or be gone: the task view shows how it ends
                    pass
        raise
