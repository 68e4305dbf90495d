"""What apps in a conversation do (apps/policy.py's `ChatApps`): give the model context, open for the model's calls,
call tools within the model's policy, and send messages as the person's next turn, the first one of each instance
after the person's consent. A part of `Chat` (runner.py), typed by what it uses of it (`_Chat`).
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from webhost.approvals import ApprovalBroker
from webhost.chat.app_context import make_context
from webhost.chat.conversation import ActiveConversation
from webhost.chat.deps import ChatDeps
from webhost.chat.toolset import decision_for
from webhost.config import WebhostOptions
from webhost.errors import InvalidParams, PolicyRefused


class _Chat(Protocol):
    deps: ChatDeps
    options: WebhostOptions
    approvals: ApprovalBroker
    _app_message_times: dict[str, list[float]]

    async def _conversation(self, conversation_id: str) -> ActiveConversation: ...

    async def send(
        self, conversation_id: str | None, text: str, model_id: str | None, *, from_app: dict[str, Any] | None = None
    ) -> dict[str, Any]: ...

    def _rate_limit(self, instance: str) -> None: ...


class AppSide:
    async def set_context(
        self: _Chat, conversation_id: str, instance: str, server: str, app: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        active = await self._conversation(conversation_id)
        if active.call(instance) is None:
            raise PolicyRefused("this app is not part of that conversation")
        context = make_context(instance, server, app, params, limit=self.options.chat.max_app_context_chars)
        await active.set_context(context)
        return context.to_json()

    async def check_app_call(self: _Chat, conversation_id: str, call_id: str, server: str, tool: str) -> None:
        """An app may open for this call of the model's: the person's, of this tool, not waiting for approval."""
        active = await self._conversation(conversation_id)
        call = active.call(call_id)
        if call is None or call.server != server or call.tool != tool:
            raise InvalidParams("no such tool call in this conversation", {"callId": call_id})
        if call.status in ("approval", "denied"):
            raise PolicyRefused("the person has not allowed this tool call", {"callId": call_id})

    def denied_to_model(self: _Chat, server: str, tool: str) -> bool:
        """The model may not call this tool (`deny`): nor may an app its call opened (apps/policy.py)."""
        return decision_for(self.options, server, tool) == "deny"

    async def remove_context(self: _Chat, conversation_id: str, instance: str) -> None:
        active = await self._conversation(conversation_id)
        await active.remove_context(instance)

    async def app_message(
        self: _Chat, conversation_id: str, instance: str, server: str, app: str, text: str, *, frame: str | None
    ) -> dict[str, Any]:
        """An app's `ui/message`: the first of each app instance waits for the person's consent."""
        active = await self._conversation(conversation_id)
        if active.call(instance) is None:
            raise PolicyRefused("this app is not part of that conversation")
        self._rate_limit(instance)
        if not active.app_allowed(instance):
            answer = await self.approvals.answer(
                server,
                "app-message",
                f"The app {app} wants to send a message in this conversation",
                {"conversationId": conversation_id, "instance": instance, "app": app, "text": text[:4000]},
                frame=frame,
                subject=instance,
            )
            await self.deps.audit.record(
                "chat.app-message",
                person=self.deps.person,
                server=server,
                frame=frame,
                decision="allowed" if answer.decision == "allow" else "denied",
                summary=f"conversation {conversation_id}",
                detail={"conversationId": conversation_id, "instance": instance},
            )
            if answer.decision != "allow":
                raise PolicyRefused("the person did not allow this message")
            if answer.remember:
                await active.allow_app(instance)
        else:
            self.deps.audit.note(
                "chat.app-message",
                person=self.deps.person,
                server=server,
                frame=frame,
                decision="allowed",
                summary=f"conversation {conversation_id}",
                detail={"conversationId": conversation_id, "instance": instance, "remembered": True},
            )
        if active.turn is not None:
            await active.turn.done.wait()
        return await self.send(
            conversation_id, text, active.model_id, from_app={"server": server, "name": app, "instance": instance}
        )

    def _rate_limit(self: _Chat, instance: str) -> None:
        now = time.monotonic()
        recent = [t for t in self._app_message_times.get(instance, []) if now - t < 60]
        if len(recent) >= self.options.chat.app_messages_per_minute:
            raise PolicyRefused(
                f"this app sent more than {self.options.chat.app_messages_per_minute} messages in a minute"
            )
        self._app_message_times[instance] = [*recent, now]
