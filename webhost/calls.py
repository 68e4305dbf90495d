"""The page actions running in one session (tools/call, resources/read, prompts/get): the one owner of calls.

Each call has an id chosen by the page, an origin (what it is: method, name, server), a cancel
scope, and, for the legacy URL_ELICITATION_REQUIRED flow, the URL steps it is waiting on. Input requests a server
sends while a call runs are attributed to it: exactly, through a context variable, when the
request arrives in the call's own task (2026-07-28 input rounds); by elimination when it arrives
on the SDK's receive task (legacy server→client requests), which is exact only when one call is
in flight on that server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio

from webhost.errors import Cancelled, InvalidParams

T = TypeVar("T")
# Told about each call while it runs (the replica's journal: webhost/journal.py): (tab, origin) → a context.
CallHook = Callable[[str | None, dict[str, Any]], AbstractContextManager[None]]

# Which page action caused the upstream request running in this task, and which tab it runs in.
current_origin: ContextVar[dict[str, Any] | None] = ContextVar("current_origin", default=None)
current_tab: ContextVar[str | None] = ContextVar("current_tab", default=None)


@dataclass(eq=False)
class UrlStep:
    """One legacy URL step of a call, from the person's consent on: the input request that waits for the server's
    notifications/elicitation/complete (once consent is given), or whether that notification came first."""

    waiting: str | None = None
    completed: bool = False


@dataclass(eq=False)
class Call:
    id: str
    origin: dict[str, Any]
    scope: anyio.CancelScope


class CallRegistry:
    def __init__(self, on_end: Callable[[str], None], *, tab: str | None = None, hook: CallHook | None = None) -> None:
        self.tab = tab
        self._hook: CallHook = hook or (lambda tab, origin: nullcontext())
        self._calls: dict[str, Call] = {}
        self._on_end = on_end  # releases what the call left waiting (its input requests)
        self._url_steps: dict[tuple[str, str], UrlStep] = {}

    async def run(self, call_id: str, origin: dict[str, Any], action: Callable[[], Awaitable[T]]) -> T:
        """Run one cancellable page action; input requests it causes are attributed to it and end with it."""
        if call_id in self._calls:
            raise InvalidParams(f"callId {call_id!r} is already running")
        full_origin = {**origin, "callId": call_id}
        token = current_origin.set(full_origin)
        tab_token = current_tab.set(self.tab)
        try:
            with anyio.CancelScope() as scope, self._hook(self.tab, full_origin):
                self._calls[call_id] = Call(call_id, full_origin, scope)
                return await action()
            raise Cancelled("the call was cancelled", {"callId": call_id})
        finally:
            self._calls.pop(call_id, None)
            current_origin.reset(token)
            current_tab.reset(tab_token)
            self._on_end(call_id)

    def cancel(self, call_id: str) -> bool:
        call = self._calls.get(call_id)
        if call is None:
            return False
        call.scope.cancel()
        return True

    def cancel_all(self, *, keep: set[str] | None = None) -> None:
        """Cancel every call running here but those in `keep` (calls left to run on when their tab goes)."""
        for call in list(self._calls.values()):
            if keep is None or call.id not in keep:
                call.scope.cancel()

    def cancel_on(self, server: str) -> int:
        """Cancel every call running on `server` (the person lost it, or it left the configuration)."""
        calls = [c for c in self._calls.values() if c.origin.get("server") == server]
        for call in calls:
            call.scope.cancel()
        return len(calls)

    def running(self, call_id: str) -> bool:
        return call_id in self._calls

    def origin_for(self, server: str) -> dict[str, Any] | None:
        """The call that caused a request from `server`: this task's call, else the only one in flight there."""
        origin = current_origin.get()
        if origin is not None and current_tab.get() == self.tab:
            return origin
        return self.only_call_on(server)

    def only_call_on(self, server: str) -> dict[str, Any] | None:
        """The origin of the one call in flight on `server` (None when there are none, or several)."""
        candidates = [c.origin for c in self._calls.values() if c.origin.get("server") == server]
        return dict(candidates[0]) if len(candidates) == 1 else None

    def busy_on(self, server: str) -> bool:
        return any(c.origin.get("server") == server for c in self._calls.values())

    def tools_in_flight(self, server: str) -> set[str]:
        """Names of the tools being called on `server` right now."""
        return {
            str(c.origin.get("name"))
            for c in self._calls.values()
            if c.origin.get("server") == server and c.origin.get("method") == "tools/call"
        }

    # -- legacy URL_ELICITATION_REQUIRED: URL steps a call waits on, completed by notifications/elicitation/complete --

    @contextmanager
    def url_step(self, server: str, elicitation_id: str, request_id: str | None = None) -> Iterator[UrlStep]:
        """A URL step from the person's consent on (its waiting request, once there is one, set on the step)."""
        key = (server, elicitation_id)
        step = UrlStep(waiting=request_id)
        self._url_steps[key] = step
        try:
            yield step
        finally:
            if self._url_steps.get(key) is step:
                del self._url_steps[key]

    def take_url_step(self, server: str, elicitation_id: str) -> str | None:
        """The waiting input request for a completed URL step (once); None while the step waits for no request."""
        step = self._url_steps.get((server, elicitation_id))
        if step is None or step.waiting is None:
            return None
        del self._url_steps[(server, elicitation_id)]
        return step.waiting

    def complete_url_step_early(self, server: str, elicitation_id: str) -> bool:
        """The server completed a URL step before the person consented to it: the call will not wait for it then.
        False when no call of this tab is at that step."""
        step = self._url_steps.get((server, elicitation_id))
        if step is None or step.waiting is not None:
            return False
        step.completed = True
        return True
