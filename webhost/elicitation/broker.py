"""Pending input requests of one browser session: shown once, answered once, released on every exit.

Both eras arrive here through one path: a legacy server→client `elicitation/create` and each
entry of a 2026-07-28 `InputRequiredResult` round reach the SDK's elicitation callback, which
calls `ask`. The person's answer comes back through `respond`, is validated by the caller's
validator (never trusted from the page), and only then released to the server.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio

from webhost.errors import InvalidParams

Validator = Callable[[dict[str, Any]], tuple[dict[str, Any] | None, list[dict[str, str]]]]
Publish = Callable[[str, dict[str, Any]], None]

# Which page action caused the upstream request running in this task (tools/call, prompts/get, …).
current_origin: ContextVar[dict[str, Any] | None] = ContextVar("current_origin", default=None)


@dataclass
class PendingInput:
    id: str
    server: str
    view: dict[str, Any]
    validate: Validator
    origin: dict[str, Any] | None
    created: float = field(default_factory=time.monotonic)
    done: anyio.Event = field(default_factory=anyio.Event)
    result: dict[str, Any] | None = None
    outcome: str | None = None


class InputBroker:
    def __init__(self, publish: Publish, *, human_timeout: float) -> None:
        self._publish = publish
        self.human_timeout = human_timeout
        self._pending: dict[str, PendingInput] = {}
        self.on_fallback: Callable[[PendingInput, str], None] | None = None
        # Legacy server→client requests run outside the caller's task, so the session guesses the
        # originating call from what is in flight on that server (exact when only one is).
        self.guess_origin: Callable[[str], dict[str, Any] | None] | None = None

    def pending(self) -> list[dict[str, Any]]:
        return [p.view for p in self._pending.values()]

    @staticmethod
    def new_id() -> str:
        return "in-" + secrets.token_urlsafe(12)

    def get(self, request_id: str) -> PendingInput | None:
        return self._pending.get(request_id)

    async def ask(
        self,
        server: str,
        view: dict[str, Any],
        validate: Validator,
        *,
        on_cancel: dict[str, Any] | None = None,
        request_id: str | None = None,
    ) -> dict[str, Any]:
        """Publish one input request and wait for its validated answer (or a cancel on timeout/release)."""
        request_id = request_id or self.new_id()
        origin = current_origin.get()
        if origin is None and self.guess_origin is not None:
            origin = self.guess_origin(server)
        pending = PendingInput(
            id=request_id,
            server=server,
            view={**view, "id": request_id, "server": server, "origin": origin},
            validate=validate,
            origin=origin,
        )
        self._pending[request_id] = pending
        self._publish("elicitation/request", pending.view)
        timed_out = False
        try:
            with anyio.move_on_after(self.human_timeout) as waiting:
                await pending.done.wait()
            timed_out = waiting.cancelled_caught
        finally:
            self._pending.pop(request_id, None)
            if pending.outcome is None:
                pending.outcome = "timeout" if timed_out else "released"
            self._publish("elicitation/resolved", {"id": request_id, "outcome": pending.outcome})
        if pending.result is None:
            return dict(on_cancel or {"action": "cancel"})
        return pending.result

    def respond(self, request_id: str, answer: object, *, frame_id: str | None = None) -> None:
        """Validate and deliver an answer; refuse unknown, finished, misrouted or invalid answers.

        While a request is shown in an app, only that app's frame may answer it; an invalid answer
        from the app sends the request back to the native form instead of to the server.
        """
        pending = self._pending.get(request_id)
        if pending is None or pending.done.is_set():
            raise InvalidParams("this input request is unknown or was already answered", {"id": request_id})
        bound = pending.view.get("mode") == "app"
        if bound and frame_id != (pending.view.get("app") or {}).get("frameId"):
            raise InvalidParams("this input request is bound to another app instance", {"id": request_id})
        if not bound and frame_id is not None:
            raise InvalidParams("this input request is not shown in an app", {"id": request_id})
        if not isinstance(answer, dict):
            raise InvalidParams("the answer must be an object", {"id": request_id})
        result, errors = pending.validate(answer)
        if result is None:
            if bound:
                self.fall_back(request_id, "the app's answer did not match the requested schema")
            raise InvalidParams("the answer does not match the requested schema", {"id": request_id,
                                                                                   "errors": errors})
        pending.result = result
        pending.outcome = str(result.get("action", "accept"))
        pending.done.set()

    def complete(self, request_id: str, result: dict[str, Any], outcome: str) -> bool:
        """Resolve a request from the server's side (e.g. notifications/elicitation/complete)."""
        pending = self._pending.get(request_id)
        if pending is None or pending.done.is_set():
            return False
        pending.result = result
        pending.outcome = outcome
        pending.done.set()
        return True

    def fall_back(self, request_id: str, reason: str) -> bool:
        """Show an app-rendered request as the native form instead, with nothing lost, and say why."""
        pending = self._pending.get(request_id)
        if pending is None or pending.done.is_set() or pending.view.get("mode") != "app":
            return False
        app = pending.view.get("app") or {}
        pending.view.update(mode="form", app=None, fallbackReason=reason)
        if self.on_fallback is not None:
            self.on_fallback(pending, str(app.get("frameId", "")))
        self._publish("elicitation/request", pending.view)
        return True

    def update(self, request_id: str, **changes: Any) -> None:
        """Push a change of an open request to the page (e.g. URL mode: the server reports completion)."""
        pending = self._pending.get(request_id)
        if pending is not None:
            pending.view.update(changes)
            self._publish("elicitation/request", pending.view)

    def release(self, predicate: Callable[[PendingInput], bool] | None = None, *, outcome: str = "released") -> int:
        """Cancel every matching pending request (tab closed, call cancelled, server gone)."""
        released = 0
        for pending in list(self._pending.values()):
            if predicate is None or predicate(pending):
                pending.outcome = outcome
                pending.done.set()
                released += 1
        return released
