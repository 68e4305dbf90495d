"""One conversation while it is in use: its messages and app contexts as stored, the turn running in it,
and the person's decisions that hold for this conversation ("allow for this conversation", an app
allowed to send messages). It is what a turn asks for everything (turn.py `TurnHost`).

Its messages are a tree (branches.py): each names the message before it in its branch, and the
conversation shows one branch, the path to its `leaf`. Editing a message starts a new branch beside it,
regenerating an answer a new answer beside it; nothing is deleted but a failed answer that is retried.
The model and the page are given the branch shown (`messages`); every branch's tool calls stay findable
(`call`), so the apps of a branch shown again open from their stored input and result.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import anyio
import anyio.abc

from webhost.approvals import ApprovalBroker
from webhost.chat.app_context import AppContext
from webhost.chat.attachments import attachments_of
from webhost.chat.branches import Branches
from webhost.chat.budget import PersonBudget
from webhost.chat.content import stored_result
from webhost.chat.providers.messages import Block
from webhost.chat.tool_choice import SETTINGS_KEY, ToolChoice
from webhost.chat.toolset import ToolSet
from webhost.chat.transcript import Message, ToolCall
from webhost.chat.turn import ProgressFn, Turn
from webhost.chat.wire_images import without_image_data
from webhost.config import WebhostOptions
from webhost.errors import InvalidParams
from webhost.people import Person
from webhost.redact import Redactor
from webhost.storage.budgets import Hold
from webhost.storage.conversations import Conversation, ConversationStore


class ChatOwner(Protocol):
    """What a conversation needs from the person's chat (runner.py `Chat`)."""

    options: WebhostOptions
    approvals: ApprovalBroker
    person: Person
    task_group: anyio.abc.TaskGroup
    replica_id: str | None
    notify_all: Callable[[str, dict[str, Any]], None]
    redactor: Callable[[], Redactor]

    @property
    def store(self) -> ConversationStore: ...
    async def tools(self) -> ToolSet: ...
    async def run_call(
        self, conversation_id: str, call: ToolCall, arguments: dict[str, Any], on_progress: ProgressFn
    ) -> dict[str, Any]: ...
    async def audit_call(self, conversation_id: str, call: ToolCall, decision: str) -> None: ...
    @property
    def budget(self) -> PersonBudget: ...


INTERRUPTED = "The answer was interrupted (webhost stopped while it was being written). Retry to ask again."


def interrupted(message: Message) -> None:
    message.status = "interrupted"
    message.error = INTERRUPTED
    message.retryable = True
    for call in message.calls():
        if call.status in ("streaming", "approval", "running"):
            call.finish("error", error="interrupted: webhost stopped while this call ran")


def _stored(message: Message) -> dict[str, Any]:
    """The message as stored: each tool result bounded (content.py `stored_result`)."""
    data = message.to_json()
    for part in data.get("parts", []):
        call = part.get("call")
        if isinstance(call, dict) and isinstance(call.get("result"), dict):
            call["result"] = stored_result(call["result"])
    return data


class ActiveConversation:
    def __init__(self, chat: ChatOwner, stored: Conversation) -> None:
        self.chat = chat
        self.options = chat.options
        self.approvals = chat.approvals
        self.conversation_id = stored.id
        self.title = stored.title
        self.model_id = stored.model_id
        self.created_at = stored.created_at
        self.updated_at = stored.updated_at
        self.settings: dict[str, Any] = dict(stored.settings)
        self.branches = Branches(stored.leaf_id)
        self.contexts: dict[str, AppContext] = {}
        self._writing = anyio.Lock()  # the conversation's writes, one at a time, in the order they were asked
        self.turn: Turn | None = None
        self.attached: Mapping[str, tuple[Block, ...]] = {}  # set by the chat when a turn starts (attachments.py)

    @property
    def _person(self) -> str:
        return self.chat.person.id

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.conversation_id,
            "title": self.title,
            "model": self.model_id,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }

    @property
    def messages(self) -> list[Message]:
        """The branch shown, first message first."""
        return self.branches.shown()

    def shown_json(self) -> list[dict[str, Any]]:
        """The branch shown as the page has it: each message with `branch` where it has other versions."""
        out = []
        for message in self.messages:
            data = message.to_json()
            versions = self.branches.versions(message.id)
            if versions is not None:
                data["branch"] = versions
            out.append(data)
        return out

    def publish_branch(self) -> None:
        """The branch shown changed (an edit, a regenerated answer, another version chosen): every tab of the
        person draws it again from this snapshot (the events after it apply on top)."""
        self.publish("branch", messages=self.shown_json())

    def publish(self, kind: str, **payload: Any) -> None:
        event = {"type": kind, "conversationId": self.conversation_id, **payload}
        if self.turn is not None and "messageId" not in event:
            event["messageId"] = self.turn.message.id
        self.chat.notify_all("chat/event", event)

    # -- messages --------------------------------------------------------------------------------------

    async def load(self) -> None:
        store = self.chat.store
        for stored in await store.messages(self._person, self.conversation_id):
            self.branches.put(Message.from_json(stored.body), stored.parent_id, stored.seq)
        for raw in await store.contexts(self._person, self.conversation_id):
            context = AppContext.from_json(raw)
            self.contexts[context.instance] = context

    def add(self, message: Message) -> None:
        """Append a message to the branch shown; it is written in the background (`save_soon`), off the turn's
        first token."""
        self.branches.append(message)
        self.save_soon(message)

    def every(self) -> list[Message]:
        """The messages of every branch."""
        return self.branches.every()

    def fork_before(self, message_id: str, role: str) -> Message:
        """Show the branch up to just before this message of the branch shown (the next `add` starts a version
        of it beside it). Refused for a message of another role or not shown (the caller refuses while a turn runs)."""
        message = self.branches.get(message_id)
        if message is None or message.role != role or message not in self.messages:
            raise InvalidParams("no such message in the conversation shown", {"messageId": message_id})
        self.branches.show_before(message_id)
        return message

    async def show_version(self, message_id: str, index: int) -> None:
        """Show the branch through version `index` (1-based) of this message (its newest messages after it)."""
        if not self.branches.show_version(message_id, index):
            raise InvalidParams("no such version of that message", {"messageId": message_id, "index": index})
        leaf = self.branches.leaf
        async with self._writing:
            await self.chat.store.update(self._person, self.conversation_id, leaf_id=leaf)
        self.publish_branch()

    def save_soon(self, message: Message) -> None:
        self.chat.task_group.start_soon(self.save, message)

    async def save(self, message: Message) -> None:
        """Write the message as it is when its turn to be written comes (writes of one conversation are in
        order, so a later state is never overwritten by an earlier one)."""
        async with self._writing:
            seq = self.branches.seq(message.id)
            if seq is None:
                return  # removed meanwhile (a retried answer)
            replica = self.chat.replica_id if message.status == "streaming" else None
            now = time.time()
            self.updated_at = now
            await self.chat.store.save_message(
                self._person,
                self.conversation_id,
                _stored(message),
                seq=seq,
                replica_id=replica,
                now=now,
                parent_id=self.branches.parent(message.id),
                leaf_id=self.branches.leaf,
            )

    async def remove(self, message: Message) -> None:
        self.branches.remove(message.id)
        async with self._writing:
            await self.chat.store.delete_message(self._person, self.conversation_id, message.id)

    def history(self) -> list[Message]:
        """The conversation before the answer being written."""
        if self.turn is not None and self.messages and self.messages[-1].id == self.turn.message.id:
            return self.messages[:-1]
        return list(self.messages)

    async def attachment_blocks(self) -> Mapping[str, tuple[Block, ...]]:
        """What the model is given of the attachments of the branch shown, read once per turn (the chat forgets
        them when the turn ends)."""
        model = self.options.chat.model(self.model_id)
        self.attached = await attachments_of(self.chat).blocks(
            self.messages, self.attached, vision=bool(model and model.vision)
        )
        return self.attached

    def call(self, call_id: str) -> ToolCall | None:
        """A tool call of any branch (an app of a branch shown again asks for its own)."""
        for message in reversed(self.every()):
            found = message.call(call_id)
            if found is not None:
                return found
        return None

    def save_request(self, message: Message, step: int, body: dict[str, Any]) -> None:
        """Keep the exact request of a step (masked), written in the background while the model answers."""
        store, person, conversation, redactor = self.chat.store, self._person, self.conversation_id, self.chat.redactor
        sent_at = time.time()

        async def write() -> None:
            masked = redactor().value(without_image_data(body))
            assert isinstance(masked, dict)
            async with self._writing:
                await store.save_request(person, conversation, message.id, step, masked, sent_at)

        self.chat.task_group.start_soon(write)

    # -- app contexts ------------------------------------------------------------------------------------

    def app_contexts(self) -> list[AppContext]:
        return list(self.contexts.values())

    async def set_context(self, context: AppContext) -> None:
        self.contexts[context.instance] = context
        await self.chat.store.save_context(
            self._person, self.conversation_id, context.instance, context.to_json(), context.updated_at
        )
        self._publish_contexts()

    async def remove_context(self, instance: str) -> None:
        if self.contexts.pop(instance, None) is not None:
            await self.chat.store.remove_context(self._person, self.conversation_id, instance)
        self._publish_contexts()

    def _publish_contexts(self) -> None:
        self.publish("contexts", contexts=[c.to_json() for c in self.contexts.values()])

    # -- decisions that hold for this conversation -------------------------------------------------------

    def remembered(self, call: ToolCall) -> bool:
        return f"{call.server}\n{call.tool}" in self.settings.get("allowedTools", [])

    async def remember(self, call: ToolCall) -> None:
        allowed = [*self.settings.get("allowedTools", []), f"{call.server}\n{call.tool}"]
        await self._settings(allowedTools=sorted(set(allowed)))

    def app_allowed(self, instance: str) -> bool:
        return instance in self.settings.get("allowedApps", [])

    async def allow_app(self, instance: str) -> None:
        await self._settings(allowedApps=sorted({*self.settings.get("allowedApps", []), instance}))

    @property
    def tool_choice(self) -> ToolChoice:
        """What the model may use in this conversation (the person's picker, else the configured default)."""
        return ToolChoice.of_settings(self.settings, self.options.chat.default_servers)

    async def set_tool_choice(self, choice: ToolChoice) -> None:
        await self._settings(**{SETTINGS_KEY: choice.to_json()})

    async def _settings(self, **changes: Any) -> None:
        self.settings = {**self.settings, **changes}
        await self.chat.store.update(self._person, self.conversation_id, settings=self.settings)

    # -- TurnHost: what the turn asks of its owner -------------------------------------------------------

    async def tools(self) -> ToolSet:
        """The tools offered at each request: only those checked for this conversation (a call of another is
        refused by the turn as an unknown name)."""
        return (await self.chat.tools()).only(self.tool_choice.allows)

    async def run_call(self, call: ToolCall, arguments: dict[str, Any], on_progress: ProgressFn) -> dict[str, Any]:
        return await self.chat.run_call(self.conversation_id, call, arguments, on_progress)

    async def audit_call(self, call: ToolCall, decision: str) -> None:
        await self.chat.audit_call(self.conversation_id, call, decision)

    async def reserve_tokens(self, tokens: int) -> Hold:
        return await self.chat.budget.reserve(tokens)

    async def settle_tokens(self, hold: Hold, model_id: str, input_tokens: int, output_tokens: int) -> None:
        await self.chat.budget.settle(hold, model_id, self.conversation_id, input_tokens, output_tokens)
