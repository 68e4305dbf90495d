"""One person's chat: their conversations, the turns running in them, and the requests for their decisions.

It lives with the person's workspace (so a turn goes on across a reload of the tab that started it)
and tells every tab of the person what happens (`chat/event`); the page shows a conversation's events
where that conversation is open. Conversations are the person's alone: every read names them.
"""

from __future__ import annotations

import functools
import logging
import secrets
import time
from typing import Any

import anyio
import anyio.abc

from webhost.access_policy import may_use_model
from webhost.approvals import ApprovalBroker
from webhost.call_record import run_recorded
from webhost.chat import sampling
from webhost.chat.app_side import AppSide
from webhost.chat.auto_title import write_title
from webhost.chat.budget import PersonBudget, estimate
from webhost.chat.conversation import ActiveConversation, interrupted
from webhost.chat.deps import ChatDeps
from webhost.chat.endpoints import Providers
from webhost.chat.providers.errors import ProviderError
from webhost.chat.search import ConversationSearch
from webhost.chat.titles import first_line_title
from webhost.chat.tool_choice import ToolChoice, picker
from webhost.chat.toolset import ToolSet, offered_tools
from webhost.chat.transcript import Message, ToolCall, new_id
from webhost.chat.turn import ProgressFn, Turn, TurnModel
from webhost.chat.turn_lease import TurnLeases
from webhost.config.chat import ChatModel
from webhost.elicitation.url_retry import call_with_url_steps
from webhost.errors import ChatUnavailable, InvalidParams, UpstreamError
from webhost.storage.conversations import ConversationStore
from webhost.tasks import call_tool, listed_support

logger = logging.getLogger(__name__)

MAX_TEXT = 100_000  # characters of one message the person (or an app) sends
KEPT = 8  # idle conversations kept in memory per person (the ones just opened)


class Chat(AppSide):
    """One person's chat (its app side, what apps in its conversations do, is app_side.py's)."""

    def __init__(self, deps: ChatDeps) -> None:
        self.deps = deps
        self.options = deps.options
        self.person = deps.person
        self.task_group = deps.task_group
        self.replica_id = deps.replica_id
        self.owner = deps.replica_id or "r-" + secrets.token_urlsafe(9)  # whose turn leases and budget holds
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
        given, usable = self.deps.input_values(), self._usable
        return {
            "models": [{**m.public(), "needsKey": bool(m.key_input and m.key_input not in given)} for m in usable],
            "defaultModel": usable[0].id if usable else None,
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
        tools: ToolChoice | None = None,
        attachments: list[dict[str, Any]] | None = None,  # checked by attachments.send_with_attachments
    ) -> dict[str, Any]:
        text = _checked(text) if text.strip() or not attachments else ""
        user = Message(id=new_id("m-"), role="user", text=text, from_app=from_app, attachments=attachments or [])
        return await self.post(conversation_id, [user], model_id, tools=tools)

    async def post(
        self, conversation_id: str | None, messages: list[Message], model_id: str | None, *, tools: ToolChoice | None
    ) -> dict[str, Any]:
        """Add messages to the branch shown (a new conversation without an id) and, when the last is the
        person's, start the model's answer (a prompt's messages may end with the assistant's)."""
        model = self._model(model_id)
        if conversation_id is None:
            conversation_id = new_id("c-")
            title = first_line_title(next((m.text for m in messages if m.role == "user"), ""))
            await self.store.create(self.deps.person.id, conversation_id, title, model.id, time.time())
            self._tell("conversations")
        active = await self._idle(conversation_id)
        if tools is not None:  # chosen in the picker before the conversation existed: holds from its first request
            await active.set_tool_choice(tools)
        for message in messages:
            active.add(message)
            active.publish("message", message=message.to_json())
        assistant = await self._start(active, model) if messages[-1].role == "user" else None
        answer = assistant.id if assistant is not None else None
        return {"conversationId": conversation_id, "messageId": messages[-1].id, "answerId": answer}

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

    async def tool_picker(self, conversation_id: str | None) -> dict[str, Any]:
        """The picker of what the model may use (tool_choice.py): a conversation's, or a new one's default."""
        if conversation_id is None:
            choice = ToolChoice.default(self.options.chat.default_servers)
        else:
            choice = (await self._conversation(conversation_id)).tool_choice
        connected = [c.name for c in self.deps.connections.values() if c.status == "connected"]
        return picker(await self.tools(), choice, connected)

    async def set_tool_choice(self, conversation_id: str, choice: ToolChoice) -> None:
        await (await self._conversation(conversation_id)).set_tool_choice(choice)

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

    async def sample(self, model_id: str | None, params: dict[str, Any]) -> dict[str, Any]:
        """A sampling request's reply written by the person's chosen model (after they chose it, as shown)."""
        model = self._model(model_id)
        provider = self.providers.get(model, self.deps.input_values())
        request = sampling.sampling_request(model.model, model.max_tokens, params)
        cost = estimate(provider.wire_body(request)) + model.max_tokens
        async with self.budget.step(cost, model.id, "sampling") as used:
            try:
                text, used.input, used.output = await sampling.answer(provider, request)
            except ProviderError as exc:
                raise UpstreamError(exc.message, {"model": model.id}) from None
        if not text.strip():
            raise UpstreamError(f"{model.label or model.id} answered with no text", {"model": model.id})
        return {"text": text, "model": model.model}

    # -- turns ---------------------------------------------------------------------------------------------

    @property
    def _usable(self) -> list[ChatModel]:  # the models the person's groups allow (webhost.access)
        access, groups = self.options.access, self.deps.person.groups
        return [m for m in self.options.chat.models if may_use_model(access, groups, m.id)]

    def _model(self, model_id: str | None) -> ChatModel:
        usable = self._usable
        if not self.options.chat.models:
            raise ChatUnavailable('no model is configured: add one under "webhost": {"chat": {"models": [...]}}')
        # A model the person may not use gets the same answer as one not configured (no oracle).
        model = usable[0] if model_id is None and usable else next((m for m in usable if m.id == model_id), None)
        if model is None:
            raise InvalidParams(f"no model {model_id!r} is configured", {"model": model_id})
        return model

    async def _start(self, active: ActiveConversation, model: ChatModel) -> Message:
        provider = self.providers.get(model, self.deps.input_values())
        assistant = Message(id=new_id("m-"), role="assistant", status="streaming", model=model.id)
        turn = Turn(
            active,
            provider,
            TurnModel(model.id, model.model, model.max_tokens, model.context_tokens),
            assistant,
            active.publish,
        )
        active.turn = turn  # before anything is awaited: a second turn here is refused (`_idle`)
        try:
            lease = await self.leases.take(active.conversation_id)  # refused while another replica runs one here
        except BaseException:
            active.turn = None
            raise
        active.add(assistant)
        active.publish("message", message=assistant.to_json())
        if model.id != active.model_id:
            active.model_id = model.id
            self.task_group.start_soon(
                lambda: self.store.update(self.deps.person.id, active.conversation_id, model_id=model.id)
            )

        async def run() -> None:
            async with self.leases.held(active.conversation_id, lease, self.task_group):
                try:
                    await turn.run()
                finally:
                    # Before the lease is given back: this replica may start the next turn at once.
                    active.turn, active.attached = None, {}
            await write_title(self, active, model, lambda: self._tell("conversations"))

        self._keep(active)
        self.deps.task_group.start_soon(run, name=f"chat-turn:{active.conversation_id}")
        return assistant

    async def _idle(self, conversation_id: str) -> ActiveConversation:
        active = await self._conversation(conversation_id)
        await self.leases.refuse_if_elsewhere(conversation_id)  # first: nothing is awaited from the check below on
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
        if active is not None and active.turn is None and any(m.status == "streaming" for m in active.every()):
            del self._active[conversation_id]  # another replica writes it: read it again as it is now
            active = None
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
        streaming = [m for m in active.every() if m.status == "streaming"]
        if streaming and not await self.leases.elsewhere(conversation_id):  # no live replica writes them
            for message in streaming:
                interrupted(message)
                await active.save(message)
        self._keep(active)
        return active

    def _tell(self, kind: str) -> None:
        self.deps.notify_all("chat/event", {"type": kind})

    # -- what a turn's conversation needs (conversation.py calls back) -------------------------------------

    async def tools(self) -> ToolSet:
        return await offered_tools(self.deps.connections, self.deps.catalogue, self.options, self.deps.person.groups)

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

        async def attempt() -> dict[str, Any]:
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

        async def action() -> dict[str, Any]:
            if self.deps.until_connected is not None:
                await self.deps.until_connected(connection, f"the model's call of {tool}")
            # Never offered to the model when the person may not use it; refused here all the same (access rules).
            await self.deps.catalogue.check_call(connection, tool)
            return await call_with_url_steps(attempt, self.deps.requests, connection)

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

    @functools.cached_property
    def budget(self) -> PersonBudget:
        return PersonBudget(self.options, self.person, self.store.storage, self.owner, self.deps.lease)

    @functools.cached_property
    def leases(self) -> TurnLeases:
        return TurnLeases(self.store.storage, self.person.id, self.owner, self.deps.lease)

    @property
    def open_conversations(self) -> int:
        """Conversations held in memory (for /metrics)."""
        return len(self._active)

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


def _checked(text: str) -> str:
    text = text.strip()
    if not text:
        raise InvalidParams("the message is empty")
    if len(text) > MAX_TEXT:
        raise InvalidParams(f"the message is longer than {MAX_TEXT} characters")
    return text
