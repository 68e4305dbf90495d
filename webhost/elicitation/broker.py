"""Pending input requests of one browser session: one state machine per request, answered once.

Both eras arrive here through one path: a legacy server→client `elicitation/create` and each
entry of a 2026-07-28 `InputRequiredResult` round reach the SDK's elicitation callback, which
calls `ask`. The person's answer comes back through `respond`, is validated by the caller's
validator (never trusted from the page), and only then released to the server.

States (published whole to the page as `state`, beside the contract's `mode`):

    form ──────────────────────────────▶ answered | released
    app ──(fallback, with a reason)──▶ fallback ──▶ answered | released
    app ───────────────────────────────▶ answered | released

`form` is any native view (form, URL consent, sampling). `app` is bound to one app frame: only
that frame may answer, and leaving `app` (fallback or end) closes the frame, here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from webhost.calls import current_origin
from webhost.errors import InvalidParams
from webhost.pending import Pending, PendingRegistry, Publish

__all__ = ["InputBroker", "PendingInput", "State", "current_origin"]

Validator = Callable[[dict[str, Any]], tuple[dict[str, Any] | None, list[dict[str, str]]]]
State = Literal["form", "app", "fallback", "answered", "released"]
LeaveApp = Callable[[str, str], None]


@dataclass(eq=False)
class PendingInput(Pending):
    validate: Validator | None = None
    result: dict[str, Any] | None = None

    @property
    def frame_id(self) -> str | None:
        """The app frame this request is bound to, while it is shown in one."""
        if self.view.get("state") != "app":
            return None
        return str((self.view.get("app") or {}).get("frameId", "")) or None


class InputBroker:
    def __init__(self, publish: Publish, *, human_timeout: float, leave_app: LeaveApp | None = None) -> None:
        self._registry: PendingRegistry[PendingInput] = PendingRegistry(
            publish, notification="elicitation", timeout=human_timeout
        )
        self._leave_app = leave_app or (lambda frame_id, reason: None)

    def pending(self) -> list[dict[str, Any]]:
        return self._registry.views()

    @staticmethod
    def new_id() -> str:
        return PendingRegistry.new_id("in-")

    def get(self, request_id: str) -> PendingInput | None:
        return self._registry.get(request_id)

    async def ask(
        self,
        server: str,
        view: dict[str, Any],
        validate: Validator,
        *,
        request_id: str | None = None,
        origin: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Publish one input request and wait for its validated answer (or a cancel on timeout/release)."""
        request_id = request_id or self.new_id()
        origin = origin if origin is not None else current_origin.get()
        state: State = "app" if view.get("mode") == "app" else "form"
        pending = PendingInput(
            request_id,
            server,
            {**view, "id": request_id, "server": server, "origin": origin, "state": state},
            origin,
            validate=validate,
        )
        try:
            await self._registry.wait(pending)
        finally:
            frame_id = pending.frame_id
            pending.view["state"] = "answered" if pending.result is not None else "released"
            if frame_id is not None:
                self._leave_app(frame_id, "input request ended")
        if pending.result is None:
            return {"action": "cancel"}
        return pending.result

    def respond(self, request_id: str, answer: object, *, frame_id: str | None = None) -> None:
        """Validate and deliver an answer; refuse unknown, finished, misrouted or invalid answers.

        While a request is shown in an app, only that app's frame may answer it; an invalid answer
        from the app sends the request back to the native form instead of to the server.
        """
        pending = self._registry.get(request_id)
        if pending is None:
            raise InvalidParams("this input request is unknown or was already answered", {"id": request_id})
        bound = pending.frame_id
        if bound is not None and frame_id != bound:
            raise InvalidParams("this input request is bound to another app instance", {"id": request_id})
        if bound is None and frame_id is not None:
            raise InvalidParams("this input request is not shown in an app", {"id": request_id})
        if not isinstance(answer, dict):
            raise InvalidParams("the answer must be an object", {"id": request_id})
        assert pending.validate is not None
        result, errors = pending.validate(answer)
        if result is None:
            if bound is not None:
                self.fall_back(request_id, "the app's answer did not match the requested schema")
            raise InvalidParams("the answer does not match the requested schema", {"id": request_id, "errors": errors})
        pending.result = result
        pending.finish(str(result.get("action", "accept")))

    def complete(self, request_id: str, result: dict[str, Any], outcome: str) -> bool:
        """Resolve a request from the server's side (e.g. notifications/elicitation/complete)."""
        pending = self._registry.get(request_id)
        if pending is None:
            return False
        pending.result = result
        pending.finish(outcome)
        return True

    def fall_back(self, request_id: str, reason: str) -> bool:
        """Show an app-bound request as the native form instead, with nothing lost, and say why."""
        pending = self._registry.get(request_id)
        frame_id = pending.frame_id if pending is not None else None
        if pending is None or frame_id is None:
            return False
        pending.view.update(mode="form", app=None, state="fallback", fallbackReason=reason)
        self._leave_app(frame_id, "fell back to form")
        self._registry.publish(pending)
        return True

    def update(self, request_id: str, **changes: Any) -> None:
        """Push a change of an open request to the page."""
        pending = self._registry.get(request_id)
        if pending is not None:
            pending.view.update(changes)
            self._registry.publish(pending)

    def release(self, predicate: Callable[[PendingInput], bool] | None = None, *, outcome: str = "released") -> int:
        """Cancel every matching pending request (tab closed, call cancelled, server gone)."""
        return self._registry.release(predicate, outcome=outcome)
