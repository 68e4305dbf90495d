"""The person's page tool calls that outlive the tab that made them: a reload's new tab sees them run and end.

A page's `tools/call` runs in the workspace's task group, not in the request task of the tab that sent it, so
a tab that goes away (a reload, a closed lid, a dropped connection) does not take its calls with it. Its calls
are then *left* here: they keep running on the person's connections; every tab of the person is told of them
(`calls/left`, and `calls/running` lists them for a tab that opens), with their progress; and how each ends
reaches every tab as `calls/outcome` with `reattached: true`. An ending no tab was there to hear (the reload's
gap) is kept, a few at most, for the next tab that opens. A call whose tab is still open ends as before: its
answer goes to that tab only. Left calls end with the workspace (`webhost.timeouts.idle` after the last tab
closed); `tools/cancel` naming the call's `tab` cancels one from another tab of the person.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.abc

from webhost.errors import INTERNAL_ERROR, Cancelled, WebhostError

logger = logging.getLogger(__name__)

T = TypeVar("T")
KEEP_UNHEARD = 20  # endings kept for the next tab, at most (the oldest go first)
Tell = Callable[[str, dict[str, Any]], None]


@dataclass(eq=False)
class RunningCall:
    """One page tool call, as a tab that did not make it is told about it."""

    tab: str
    call_id: str
    server: str
    name: str
    arguments: dict[str, Any]
    started_at: float
    cancel: Callable[[], bool]  # cancels it in its tab's registry
    left: bool = False  # its tab has gone
    progress: dict[str, Any] | None = field(default=None)  # the last progress it reported

    def describe(self) -> dict[str, Any]:
        view: dict[str, Any] = {
            "callId": self.call_id,
            "tab": self.tab,
            "method": "tools/call",
            "server": self.server,
            "name": self.name,
            "arguments": self.arguments,
            "startedAt": self.started_at,
        }
        if self.progress is not None:
            view["progress"] = self.progress
        return view


class LeftCalls:
    """Runs a person's page tool calls so that they can outlive their tab, and tells the other tabs about them."""

    def __init__(
        self,
        task_group: anyio.abc.TaskGroup,
        *,
        tell_all: Tell,
        has_tabs: Callable[[], bool],
        tab_done: Callable[[str], None],
    ) -> None:
        self._task_group = task_group
        self._tell_all = tell_all
        self._has_tabs = has_tabs
        self._tab_done = tab_done  # the last left call of a tab ended: what was kept for that tab can go
        self._running: dict[tuple[str, str], RunningCall] = {}
        self._unheard: list[dict[str, Any]] = []

    async def run(self, call: RunningCall, action: Callable[[], Awaitable[T]]) -> T:
        """Run `action` in the workspace's task group and wait for it here (the tab's request task).

        If the tab goes while it runs, this wait is cancelled and the call goes on (`leave`).
        """
        key = (call.tab, call.call_id)
        done = anyio.Event()
        results: list[T] = []
        errors: list[BaseException] = []

        async def body() -> None:
            try:
                results.append(await action())
            except anyio.get_cancelled_exc_class():
                errors.append(Cancelled("the call was cancelled", {"callId": call.call_id}))
                raise
            except Exception as exc:  # given to the request task, which answers it as it answers any
                errors.append(exc)
            finally:
                if self._running.get(key) is call:
                    del self._running[key]
                done.set()
                if call.left:
                    self._ended(call, results, errors)

        self._running[key] = call
        self._task_group.start_soon(body, name=f"call:{call.tab}:{call.call_id}")
        await done.wait()
        if results:
            return results[0]
        raise errors[0] if errors else Cancelled("the call was cancelled", {"callId": call.call_id})

    def progress(self, call: RunningCall, params: dict[str, Any], notify: Tell) -> None:
        """A progress report of `call`: to its tab, or, once left, to every tab of the person."""
        call.progress = params
        if call.left:
            self._tell_all("progress", {**params, "tab": call.tab})
        else:
            notify("progress", params)

    def leave(self, tab: str) -> set[str]:
        """`tab` has gone: its calls go on, and the person's other tabs are told. Returns their call ids."""
        left = [call for call in self._running.values() if call.tab == tab]
        for call in left:
            call.left = True
        if left:
            self._tell_all("calls/left", {"calls": [call.describe() for call in left]})
        return {call.call_id for call in left}

    def holds(self, tab: str, call_id: str) -> bool:
        """Whether this is a left call still running."""
        call = self._running.get((tab, call_id))
        return call is not None and call.left

    def running(self) -> list[dict[str, Any]]:
        """The left calls still running, oldest first."""
        calls = sorted((c for c in self._running.values() if c.left), key=lambda c: c.started_at)
        return [call.describe() for call in calls]

    def cancel(self, tab: str, call_id: str) -> bool:
        """Cancel a left call (any tab of the person may)."""
        call = self._running.get((tab, call_id))
        return call is not None and call.left and call.cancel()

    def cancel_on(self, server: str) -> None:
        """Every call on `server` ends, left or not (the person lost it, or it left the configuration)."""
        for call in list(self._running.values()):
            if call.server == server:
                call.cancel()

    def cancel_all(self) -> None:
        """The workspace closes: every left call ends."""
        for call in list(self._running.values()):
            if call.left:
                call.cancel()

    def unheard(self) -> list[dict[str, Any]]:
        """The endings no tab was there to hear, for the tab that just opened (each is handed out once)."""
        endings, self._unheard = self._unheard, []
        return endings

    def _ended(self, call: RunningCall, results: list[Any], errors: list[BaseException]) -> None:
        ending: dict[str, Any] = {
            "callId": call.call_id,
            "tab": call.tab,
            "method": "tools/call",
            "server": call.server,
            "name": call.name,
            "startedAt": call.started_at,
            "reattached": True,
        }
        if results:
            ending["result"] = results[0]
        else:
            ending["error"] = _error_of(errors[0] if errors else None)
        if self._has_tabs():
            self._tell_all("calls/outcome", ending)
        else:
            self._unheard = [*self._unheard, ending][-KEEP_UNHEARD:]
        if not any(c.tab == call.tab for c in self._running.values()):
            self._tab_done(call.tab)


def _error_of(exc: object) -> dict[str, Any]:
    if isinstance(exc, WebhostError):
        return exc.to_jsonrpc()
    if isinstance(exc, Exception):
        logger.error("a left call failed", exc_info=exc)
    return {"code": INTERNAL_ERROR, "message": "internal error (see the webhost log)"}
