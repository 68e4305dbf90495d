"""Requests for a person's approval (an app's tool call, a link to open): asked once, decided once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from webhost.errors import InvalidParams
from webhost.pending import Pending, PendingRegistry, Publish

Decision = Literal["allow", "deny"]


@dataclass(eq=False)
class PendingApproval(Pending):
    kind: str = ""
    frame: str | None = None
    decision: Decision | None = None
    remember: bool = False
    opened: bool | None = None

    def resolution(self) -> dict[str, Any]:
        return {"id": self.id, "decision": self.decision or "deny"}


@dataclass(frozen=True)
class Answer:
    """A person's answer to one approval."""

    decision: Decision
    remembered: bool  # given earlier ("remember"), not asked now
    # A link (kind "open-link"): whether the page opened the tab within the person's click on Allow; None when
    # not known (remembered, or denied), so the page opens it itself.
    opened: bool | None = None
    # The person asked for this answer to hold for what comes next ("remember", or the chat's "for this
    # conversation"); True for a remembered one. What it holds for is the asker's to keep when `ask`ed not to.
    remember: bool = False


class ApprovalBroker:
    def __init__(self, publish: Publish, *, timeout: float) -> None:
        self._registry: PendingRegistry[PendingApproval] = PendingRegistry(
            publish, notification="approval", timeout=timeout
        )
        # (server, kind, subject) → decision, remembered for this session when the person asks to.
        self._remembered: dict[tuple[str, str, str], Decision] = {}

    async def ask(
        self,
        server: str,
        kind: str,
        summary: str,
        detail: dict[str, Any],
        *,
        frame: str | None = None,
        subject: str = "",
    ) -> tuple[Decision, bool]:
        """Wait for the person's decision; returns (decision, was_remembered). Timeout or release denies."""
        answer = await self.answer(server, kind, summary, detail, frame=frame, subject=subject)
        return answer.decision, answer.remembered

    async def answer(
        self,
        server: str,
        kind: str,
        summary: str,
        detail: dict[str, Any],
        *,
        frame: str | None = None,
        subject: str = "",
        session_memory: bool = True,
    ) -> Answer:
        """`ask`, with all the person's answer says (for a link: whether it opened in their click). With
        `session_memory=False` a "remember" answer is not kept here: the asker keeps it where it holds (the chat's
        model calls: in their conversation), and `Answer.remember` says the person asked for it."""
        key = (server, kind, subject)
        if session_memory and key in self._remembered:
            return Answer(self._remembered[key], True, remember=True)
        approval_id = PendingRegistry.new_id("ap-")
        # `subject` (the tool, the URL) lets the page show identical requests from one frame as one card.
        view = {
            "id": approval_id,
            "server": server,
            "kind": kind,
            "summary": summary,
            "detail": detail,
            "frame": frame,
            "subject": subject,
        }
        pending = PendingApproval(approval_id, server, view, kind=kind, frame=frame)
        await self._registry.wait(pending)
        if session_memory and pending.remember and pending.decision is not None:
            self._remembered[key] = pending.decision
        opened = pending.opened if pending.decision == "allow" else None
        return Answer(pending.decision or "deny", False, opened, remember=pending.remember)

    def respond(self, approval_id: str, decision: object, remember: object = False, opened: object = None) -> None:
        pending = self._registry.get(approval_id)
        if pending is None:
            raise InvalidParams("this approval is unknown or was already decided", {"id": approval_id})
        if decision not in ("allow", "deny"):
            raise InvalidParams('decision must be "allow" or "deny"')
        if opened is not None and not isinstance(opened, bool):
            raise InvalidParams("opened must be true or false")
        pending.decision = "allow" if decision == "allow" else "deny"
        pending.remember = remember is True
        pending.opened = opened if isinstance(opened, bool) else None
        pending.finish(pending.decision)

    def asks(self, approval_id: str) -> bool:
        """Whether this broker is waiting on that approval."""
        return self._registry.get(approval_id) is not None

    def release(self, predicate: Callable[[PendingApproval], bool] | None = None) -> None:
        self._registry.release(predicate)

    def release_frame(self, frame_id: str) -> None:
        self._registry.release(lambda p: p.frame == frame_id)

    def pending(self) -> list[dict[str, Any]]:
        return self._registry.views()
