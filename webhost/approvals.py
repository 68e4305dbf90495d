"""Requests for a person's approval (an app's tool call, a link to open, a permission): asked once, decided once."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from webhost.errors import InvalidParams

Decision = Literal["allow", "deny"]


@dataclass
class PendingApproval:
    id: str
    server: str
    kind: str
    frame: str | None
    view: dict[str, Any]
    done: anyio.Event = field(default_factory=anyio.Event)
    decision: Decision | None = None
    remember: bool = False


class ApprovalBroker:
    def __init__(self, publish: Callable[[str, dict[str, Any]], None], *, timeout: float) -> None:
        self._publish = publish
        self._timeout = timeout
        self._pending: dict[str, PendingApproval] = {}
        # (server, kind, subject) → decision, remembered for this session when the person asks to.
        self.remembered: dict[tuple[str, str, str], Decision] = {}

    async def ask(
        self, server: str, kind: str, summary: str, detail: dict[str, Any], *, frame: str | None = None,
        subject: str = "",
    ) -> tuple[Decision, bool]:
        """Wait for the person's decision; returns (decision, was_remembered). Timeout or release denies."""
        key = (server, kind, subject)
        if key in self.remembered:
            return self.remembered[key], True
        approval_id = "ap-" + secrets.token_urlsafe(10)
        view = {"id": approval_id, "server": server, "kind": kind, "summary": summary, "detail": detail,
                "frame": frame}
        pending = PendingApproval(approval_id, server, kind, frame, view)
        self._pending[approval_id] = pending
        self._publish("approval/request", view)
        try:
            with anyio.move_on_after(self._timeout):
                await pending.done.wait()
        finally:
            self._pending.pop(approval_id, None)
            decision: Decision = pending.decision or "deny"
            self._publish("approval/resolved", {"id": approval_id, "decision": decision})
        if pending.remember and pending.decision is not None:
            self.remembered[key] = pending.decision
        return decision, False

    def respond(self, approval_id: str, decision: object, remember: object = False) -> None:
        pending = self._pending.get(approval_id)
        if pending is None or pending.done.is_set():
            raise InvalidParams("this approval is unknown or was already decided", {"id": approval_id})
        if decision not in ("allow", "deny"):
            raise InvalidParams("decision must be \"allow\" or \"deny\"")
        pending.decision = "allow" if decision == "allow" else "deny"
        pending.remember = remember is True
        pending.done.set()

    def release(self, predicate: Callable[[PendingApproval], bool] | None = None) -> None:
        for pending in list(self._pending.values()):
            if predicate is None or predicate(pending):
                pending.done.set()

    def pending(self) -> list[dict[str, Any]]:
        return [p.view for p in self._pending.values()]
