"""One person's chat: their conversations, the turns running in them, and the requests for their decisions.

It lives with the person's workspace (so a turn goes on across a reload of the tab that started it)
and tells every tab of the person what happens (`chat/event`); the page shows a conversation's events
where that conversation is open. Conversations are the person's alone: every read names them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from webhost.approvals import ApprovalBroker
from webhost.audit import AuditLog
from webhost.call_record import Recorder, run_recorded
from webhost.calls import CallRegistry
from webhost.catalogue import Catalogue
from webhost.chat import sampling
from webhost.chat.app_context import AppContext, make_context
from webhost.chat.conversation import ActiveConversation, interrupted
from webhost.chat.endpoints import Providers
from webhost.chat.providers.errors import ProviderError
from webhost.chat.search import ConversationSearch
from webhost.chat.titles import first_line_title
from webhost.chat.toolset import ToolSet, decision_for, offered_tools
from webhost.chat.transcript import Message, ToolCall, new_id
from webhost.chat.turn import ProgressFn, Turn, TurnModel
from webhost.config import WebhostOptions
from webhost.config_chat import ChatModel
from webhost.elicitation.requests import InputRequests
from webhost.errors import ChatUnavailable, InvalidParams, PolicyRefused, UpstreamError, WebhostError
from webhost.people import Person
from webhost.redact import Redactor
from webhost.storage.conversations import ConversationStore
from webhost.tasks import TaskBook, call_tool, listed_support
from webhost.upstream.connection import Connection

logger = logging.getLogger(__name__)

MAX_TEXT = 100_000  # characters of one message the person (or an app) sends
KEPT = 8  # idle conversations kept in memory per person (the ones just opened)
URL_ELICITATION_REQUIRED = -32042


@dataclass
class ChatDeps:
    """What one person's chat is built from (by their workspace)."""

    options: WebhostOptions
    person: Person
    store: ConversationStore | None
    audit: AuditLog
    connections: Mapping[str, Connection]
    catalogue: Catalogue
    notify_all: Callable[[str, dict[str, Any]], None]  # to every tab of the person
    task_group: anyio.abc.TaskGroup
    calls: CallRegistry  # the registry the model's calls run in (input requests are attributed through it)
    requests: InputRequests  # where those calls' input requests are asked (every tab of the person)
    recorder: Recorder  # the person's call history
    input_values: Callable[[], Mapping[str, str]]  # the person's `${input:ID}` values (their own API keys)
    redactor: Callable[[], Redactor]  # what "What the model saw" masks: the configuration's secrets and the keys
    replica_id: str | None = None
    lease: float = 10.0
    tasks: TaskBook | None = None  # the person's tasks: a model's call the server runs as one is followed there
    # A call to a server still connecting waits for it (bounded by `timeouts.connect`; workspace/connecting.py).
    until_connected: Callable[[Connection, str], Awaitable[None]] | None = None


class Chat:
    def __init__(self, deps: ChatDeps) -> None:
        self.deps = deps
        self.options = deps.options
        self.person = deps.person
        self.task_group = deps.task_group
        self.replica_id = deps.replica_id
        self.notify_all = deps.notify_all
        self.redactor = deps.redactor
        self.approvals = ApprovalBroker(deps.notify_all, timeout=deps.options.human_timeout)
        self.providers = Providers()
        # The person's conversations in use: those with a turn running, and the last few opened (a send
        # into the one on screen then reads nothing from the database first).
        self._active: dict[str, ActiveConversation] = {}
        self._app_message_times: dict[str, list[float]] = {}  # per app instance, for the rate limit
        self._loading = anyio.Lock()
        self.search = ConversationSearch(lambda: self.store, deps.person.id)  # in memory only (search.py)

    # -- what the page asks ---------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        chat = self.options.chat
        given = self.deps.input_values()
        return {
            "models": [{**m.public(), "needsKey": bool(m.key_input and m.key_input not in given)} for m in chat.models],
            "defaultModel": chat.models[0].id if chat.models else None,
            "toolCalls": chat.tool_calls,
            "available": self.deps.store is not None,
        }

    @property
    def store(self) -> ConversationStore:
        if self.deps.store is None:
            raise ChatUnavailable("the chat needs webhost's database, which this process was started without")
        return self.deps.store

    async def conversations(self) -> list[dict[str, Any]]:
        return [c.summary() for c in await self.store.listing(self.deps.person.id)]

    async def open(self, conversation_id: str) -> dict[str, Any]:
        active = await self._conversation(conversation_id)
        return {
            "conversation": active.summary(),
            "messages": active.shown_json(),
            "contexts": [c.to_json() for c in active.contexts.values()],
            "running": active.turn is not None,
        }

    async def send(
        self,
        conversation_id: str | None,
        text: str,
        model_id: str | None,
        *,
        from_app: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        text = _checked(text)
        model = self._model(model_id)
        if conversation_id is None:
            conversation_id = new_id("c-")
            title = first_line_title(text)
            await self.store.create(self.deps.person.id, conversation_id, title, model.id, time.time())
            self._tell("conversations")
        active = await self._idle(conversation_id)
        user = Message(id=new_id("m-"), role="user", text=text, from_app=from_app)
        active.add(user)
        active.publish("message", message=user.to_json())
        assistant = await self._start(active, model)
        return {"conversationId": conversation_id, "messageId": user.id, "answerId": assistant.id}

    async def retry(self, conversation_id: str, model_id: str | None) -> dict[str, Any]:
        """Ask again after an answer that failed or was interrupted (it is replaced)."""
        active = await self._idle(conversation_id)
        last = active.messages[-1] if active.messages else None
        if last is not None and last.role == "assistant":
            if last.status not in ("error", "interrupted"):
                raise InvalidParams("the last answer did not fail: send a new message instead")
            await active.remove(last)
            active.publish("removed", messageId=last.id)
        if not active.messages or active.messages[-1].role != "user":
            raise InvalidParams("there is no message to answer")
        assistant = await self._start(active, self._model(model_id or active.model_id))
        return {"conversationId": conversation_id, "answerId": assistant.id}

    async def edit(self, conversation_id: str, message_id: str, text: str, model_id: str | None) -> dict[str, Any]:
        """Send `text` in place of a message of the branch shown: a new version of it, in a new branch (the
        old one and what followed it stay, as the other version)."""
        text, model = _checked(text), self._model(model_id)
        active = await self._idle(conversation_id)
        self.providers.get(model, self.deps.input_values())  # a model without its key is refused before any change
        active.fork_before(message_id, "user")
        user = Message(id=new_id("m-"), role="user", text=text)
        active.add(user)
        active.publish_branch()
        assistant = await self._start(active, model)
        return {"conversationId": conversation_id, "messageId": user.id, "answerId": assistant.id}

    async def regenerate(self, conversation_id: str, message_id: str, model_id: str | None) -> dict[str, Any]:
        """A new answer beside an answer of the branch shown (the old one stays, as the other version)."""
        active = await self._idle(conversation_id)
        model = self._model(model_id or active.model_id)
        self.providers.get(model, self.deps.input_values())  # a model without its key is refused before any change
        active.fork_before(message_id, "assistant")
        assistant = await self._start(active, model)
        active.publish_branch()
        return {"conversationId": conversation_id, "answerId": assistant.id}

    async def show_version(self, conversation_id: str, message_id: str, index: int) -> None:
        active = await self._idle(conversation_id)
        await active.show_version(message_id, index)

    async def opened(self, conversation_id: str) -> ActiveConversation:
        """One of the person's conversations (an unknown id is refused)."""
        return await self._conversation(conversation_id)

    def stop(self, conversation_id: str) -> bool:
        active = self._active.get(conversation_id)
        if active is None or active.turn is None:
            return False
        active.turn.stop()
        return True

    async def rename(self, conversation_id: str, title: str) -> None:
        title = " ".join(title.split())[:200]
        if not title:
            raise InvalidParams("the title is empty")
        if not await self.store.update(self.deps.person.id, conversation_id, title=title):
            raise InvalidParams("no such conversation", {"conversationId": conversation_id})
        kept = self._active.get(conversation_id)
        if kept is not None:
            kept.title = title
        self._tell("conversations")

    async def delete(self, conversation_id: str) -> None:
        active = self._active.pop(conversation_id, None)
        if active is not None and active.turn is not None:
            active.turn.stop()
            await active.turn.done.wait()
        if not await self.store.delete(self.deps.person.id, conversation_id):
            raise InvalidParams("no such conversation", {"conversationId": conversation_id})
        self._tell("conversations")

    async def requests(self, conversation_id: str, message_id: str) -> list[dict[str, Any]]:
        await self._conversation(conversation_id)
        return await self.store.requests(self.deps.person.id, conversation_id, message_id)

    # -- what apps in a conversation do ------------------------------------------------------------------

    async def set_context(
        self, conversation_id: str, instance: str, server: str, app: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        active = await self._conversation(conversation_id)
        if active.call(instance) is None:
            raise PolicyRefused("this app is not part of that conversation")
        context = make_context(instance, server, app, params, limit=self.options.chat.max_app_context_chars)
        await active.set_context(context)
        return context.to_json()

    async def check_app_call(self, conversation_id: str, call_id: str, server: str, tool: str) -> None:
        """An app may open for this call of the model's: the person's, of this tool, not waiting for approval."""
        active = await self._conversation(conversation_id)
        call = active.call(call_id)
        if call is None or call.server != server or call.tool != tool:
            raise InvalidParams("no such tool call in this conversation", {"callId": call_id})
        if call.status in ("approval", "denied"):
            raise PolicyRefused("the person has not allowed this tool call", {"callId": call_id})

    def denied_to_model(self, server: str, tool: str) -> bool:
        """The model may not call this tool (`deny`): nor may an app its call opened (apps/policy.py)."""
        return decision_for(self.options, server, tool) == "deny"

    async def remove_context(self, conversation_id: str, instance: str) -> None:
        active = await self._conversation(conversation_id)
        await active.remove_context(instance)

    async def app_message(
        self, conversation_id: str, instance: str, server: str, app: str, text: str, *, frame: str | None
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

    def _rate_limit(self, instance: str) -> None:
        now = time.monotonic()
        recent = [t for t in self._app_message_times.get(instance, []) if now - t < 60]
        if len(recent) >= self.options.chat.app_messages_per_minute:
            raise PolicyRefused(
                f"this app sent more than {self.options.chat.app_messages_per_minute} messages in a minute"
            )
        self._app_message_times[instance] = [*recent, now]

    async def sample(self, model_id: str | None, params: dict[str, Any]) -> dict[str, Any]:
        """A sampling request's reply written by the person's chosen model (after they chose it, as shown)."""
        model = self._model(model_id)
        refusal = await self.budget_left()
        if refusal is not None:
            raise PolicyRefused(refusal)
        provider = self.providers.get(model, self.deps.input_values())
        request = sampling.sampling_request(model.model, model.max_tokens, params)
        try:
            text, used_in, used_out = await sampling.answer(provider, request)
        except ProviderError as exc:
            raise UpstreamError(exc.message, {"model": model.id}) from None
        await self.use_tokens("sampling", model.id, used_in, used_out)
        if not text.strip():
            raise UpstreamError(f"{model.label or model.id} answered with no text", {"model": model.id})
        return {"text": text, "model": model.model}

    # -- turns ---------------------------------------------------------------------------------------------

    def _model(self, model_id: str | None) -> ChatModel:
        chat = self.options.chat
        if not chat.models:
            raise ChatUnavailable('no model is configured: add one under "webhost": {"chat": {"models": [...]}}')
        model = chat.model(model_id)
        if model is None:
            raise InvalidParams(f"no model {model_id!r} is configured", {"model": model_id})
        return model

    async def _start(self, active: ActiveConversation, model: ChatModel) -> Message:
        provider = self.providers.get(model, self.deps.input_values())
        assistant = Message(id=new_id("m-"), role="assistant", status="streaming", model=model.id)
        active.add(assistant)
        active.publish("message", message=assistant.to_json())
        if model.id != active.model_id:
            active.model_id = model.id
            self.task_group.start_soon(
                lambda: self.store.update(self.deps.person.id, active.conversation_id, model_id=model.id)
            )
        turn = Turn(active, provider, TurnModel(model.id, model.model, model.max_tokens), assistant, active.publish)
        active.turn = turn

        async def run() -> None:
            try:
                await turn.run()
            finally:
                active.turn = None

        self._keep(active)
        self.deps.task_group.start_soon(run, name=f"chat-turn:{active.conversation_id}")
        return assistant

    async def _idle(self, conversation_id: str) -> ActiveConversation:
        active = await self._conversation(conversation_id)
        if active.turn is not None:
            raise InvalidParams("the model is still answering in this conversation: stop it or wait")
        return active

    def _keep(self, active: ActiveConversation) -> None:
        """Keep a conversation in use, dropping the least recently used idle ones past `KEPT`."""
        self._active.pop(active.conversation_id, None)
        self._active[active.conversation_id] = active
        idle = [c for c in self._active.values() if c.turn is None and c is not active]
        for old in idle[: max(0, len(self._active) - KEPT)]:
            self._active.pop(old.conversation_id, None)

    async def _conversation(self, conversation_id: str) -> ActiveConversation:
        active = self._active.get(conversation_id)
        if active is not None:
            self._keep(active)
            return active
        async with self._loading:  # two requests for a conversation not in memory load it once
            active = self._active.get(conversation_id)
            if active is not None:
                return active
            return await self._load(conversation_id)

    async def _load(self, conversation_id: str) -> ActiveConversation:
        stored = await self.store.get(self.deps.person.id, conversation_id)
        if stored is None:
            raise InvalidParams("no such conversation", {"conversationId": conversation_id})
        active = ActiveConversation(self, stored)
        await active.load()
        for message in active.every():
            if message.status == "streaming":  # no turn of this process runs it: its replica stopped
                interrupted(message)
                await active.save(message)
        self._keep(active)
        return active

    def _tell(self, kind: str) -> None:
        self.deps.notify_all("chat/event", {"type": kind})

    # -- what a turn's conversation needs (conversation.py calls back) -------------------------------------

    async def tools(self) -> ToolSet:
        return await offered_tools(self.deps.connections, self.deps.catalogue, self.options)

    async def run_call(
        self, conversation_id: str, call: ToolCall, arguments: dict[str, Any], on_progress: ProgressFn
    ) -> dict[str, Any]:
        assert call.server is not None and call.tool is not None
        connection = self.deps.connections.get(call.server)
        if connection is None:
            raise InvalidParams(f"no server named {call.server!r} is configured")
        origin = {
            "method": "tools/call",
            "name": call.tool,
            "server": call.server,
            "conversationId": conversation_id,
            "chatCallId": call.id,
        }
        tool = call.tool

        async def action() -> dict[str, Any]:
            if self.deps.until_connected is not None:
                await self.deps.until_connected(connection, f"the model's call of {tool}")
            seen: set[str] = set()
            while True:
                try:
                    support = await listed_support(self.deps.catalogue.tool, connection, tool)
                    return await call_tool(
                        self.deps.tasks,
                        connection,
                        tool,
                        arguments,
                        support=support,
                        on_progress=on_progress,
                        call_id=call.id,
                        cancel_with_caller=True,  # Stop ends the turn's calls, tasks included
                    )
                except WebhostError as exc:
                    data = exc.data or {}
                    if data.get("upstreamCode") != URL_ELICITATION_REQUIRED:
                        raise
                    await self.deps.requests.complete_required_urls(connection, data.get("upstreamData"), seen)

        return await run_recorded(self.deps.recorder, self.deps.calls, "tool", origin, arguments, call.id, action)

    async def audit_call(self, conversation_id: str, call: ToolCall, decision: str) -> None:
        await self.deps.audit.record(
            "chat.tool-call",
            person=self.deps.person,
            server=call.server,
            decision=decision,
            summary=f"{call.tool} (conversation {conversation_id})",
            detail={"conversationId": conversation_id, "tool": call.tool, "callId": call.id},
        )

    async def use_tokens(
        self, conversation_id: str, model_id: str, input_tokens: int, output_tokens: int
    ) -> str | None:
        day = time.strftime("%Y-%m-%d", time.gmtime())
        person = self.deps.person.id
        await self.store.add_usage(person, day, model_id, conversation_id, input_tokens, output_tokens)
        budget = self.options.chat.daily_token_budget
        if budget is not None and await self.store.tokens_on(person, day) > budget:
            return _budget_line(budget)
        return None

    async def budget_left(self) -> str | None:
        budget = self.options.chat.daily_token_budget
        if budget is None:
            return None
        used = await self.store.tokens_on(self.deps.person.id, time.strftime("%Y-%m-%d", time.gmtime()))
        return _budget_line(budget) if used >= budget else None

    @property
    def open_conversations(self) -> int:
        """Conversations held in memory (for /metrics)."""
        return len(self._active)

    def active_context(self, conversation_id: str) -> ActiveConversation | None:
        return self._active.get(conversation_id)

    async def close(self, *, shutting_down: bool = False) -> None:
        """The workspace closes: every turn ends (its answer is kept), approvals are released. When webhost
        itself stops (a restart, a deploy), the turns end interrupted and retryable, not done."""
        self.approvals.release()
        self.search.forget()
        for active in list(self._active.values()):
            if active.turn is not None:
                if shutting_down:
                    active.turn.interrupt()
                else:
                    active.turn.stop()
        for active in list(self._active.values()):
            if active.turn is not None:
                with anyio.move_on_after(5):
                    await active.turn.done.wait()
        await self.providers.close()

    def contexts_of(self, conversation_id: str) -> list[AppContext]:
        active = self._active.get(conversation_id)
        return list(active.contexts.values()) if active is not None else []


def _checked(text: str) -> str:
    text = text.strip()
    if not text:
        raise InvalidParams("the message is empty")
    if len(text) > MAX_TEXT:
        raise InvalidParams(f"the message is longer than {MAX_TEXT} characters")
    return text


def _budget_line(budget: int) -> str:
    return f"Your daily token budget ({budget} tokens) is used up; it starts again at 00:00 UTC."
