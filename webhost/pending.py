"""Requests waiting for a person (input requests, approvals): published once, decided once, released on every exit.

`PendingRegistry` is the one owner of a session's open requests of one kind. It publishes each
request to the page when it opens (and again when it changes), waits for the decision with a
timeout, and publishes its resolution whatever ended it: an answer, the timeout, or a release
(call cancelled, server gone, tab closed).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio

Publish = Callable[[str, dict[str, Any]], None]


@dataclass(eq=False)
class Pending:
    """One open request. `view` is what the page is shown; `outcome` says how it ended."""

    id: str
    server: str
    view: dict[str, Any]
    origin: dict[str, Any] | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    outcome: str | None = None

    @property
    def open(self) -> bool:
        return not self.done.is_set()

    def finish(self, outcome: str) -> None:
        if self.open:
            self.outcome = outcome
            self.done.set()

    def resolution(self) -> dict[str, Any]:
        """The `…/resolved` notification's params."""
        return {"id": self.id, "outcome": self.outcome}


P = TypeVar("P", bound=Pending)


class PendingRegistry(Generic[P]):
    def __init__(self, publish: Publish, *, notification: str, timeout: float) -> None:
        self._publish = publish
        self._request_method = f"{notification}/request"
        self._resolved_method = f"{notification}/resolved"
        self.timeout = timeout
        self._open: dict[str, P] = {}

    @staticmethod
    def new_id(prefix: str) -> str:
        return prefix + secrets.token_urlsafe(12)

    def get(self, request_id: str) -> P | None:
        """The open request with this id (None once it has ended)."""
        pending = self._open.get(request_id)
        return pending if pending is not None and pending.open else None

    def __iter__(self) -> Iterator[P]:
        return iter(list(self._open.values()))

    def views(self) -> list[dict[str, Any]]:
        return [p.view for p in self._open.values()]

    def publish(self, pending: P) -> None:
        """Send the request's whole view again (it changed); the page replaces what it shows."""
        if pending.id in self._open:
            self._publish(self._request_method, pending.view)

    async def wait(self, pending: P) -> None:
        """Publish the request and wait until it is decided, released or timed out; always publish the end."""
        self._open[pending.id] = pending
        self._publish(self._request_method, pending.view)
        try:
            with anyio.move_on_after(self.timeout) as waiting:
                await pending.done.wait()
            if waiting.cancelled_caught:
                pending.finish("timeout")
        finally:
            self._open.pop(pending.id, None)
            pending.finish("released")
            self._publish(self._resolved_method, pending.resolution())

    def release(self, predicate: Callable[[P], bool] | None = None, *, outcome: str = "released") -> int:
        """End every matching open request (tab closed, call cancelled, server gone)."""
        released = 0
        for pending in list(self._open.values()):
            if pending.open and (predicate is None or predicate(pending)):
                pending.finish(outcome)
                released += 1
        return released
