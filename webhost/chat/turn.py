"""One turn of a conversation: stream the model's answer, run the tool calls it makes, and go on until it
answers without calling a tool, the person stops it, or `maxSteps` requests were made.

Each tool call is decided by the policy (toolset.py), and for `ask` by the person (an approval showing
the full arguments, before any app of it renders); it then runs on the person's own connection through
the same recorded path as the workbench's calls (history, audit, input requests, progress,
cancellation). Calls of one step run in parallel. What the model gets back is each result's
`content` (content.py). The assistant message is saved when the turn starts, after each step and when
it ends, and while its text streams at most `SAVE_TEXT_SECONDS` or `SAVE_TEXT_CHARS` behind what the
person's tabs were sent, so a replica killed mid-turn leaves it marked streaming, with that text, to be found
interrupted. A replica that is stopped (SIGTERM, a deploy) ends its turns as interrupted and retryable, with
their text kept: not the way the person's Stop ends one (done).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import anyio.abc
import orjson

from webhost.approvals import ApprovalBroker
from webhost.chat import prompt
from webhost.chat.app_context import AppContext
from webhost.chat.budget import BudgetRefused, estimate
from webhost.chat.partial import PartialArguments, flush_soon
from webhost.chat.providers import Provider
from webhost.chat.providers.errors import ProviderError
from webhost.chat.providers.events import Stop, TextDelta, ToolArgsDelta, ToolCallEnd, ToolCallStart, Usage
from webhost.chat.providers.messages import Block, ChatRequest
from webhost.chat.toolset import OfferedTool, ToolSet
from webhost.chat.transcript import Message, Part, ToolCall, call_json, new_id
from webhost.config import WebhostOptions
from webhost.errors import WebhostError
from webhost.storage.budgets import Hold

logger = logging.getLogger(__name__)

Publish = Callable[..., None]  # (kind, **payload): an event of this turn for the person's tabs
STOPPED = "Stopped."
SHUT_DOWN = "The answer was interrupted (webhost stopped while it was being written). Retry to ask again."
# A streamed text is saved once this many characters are unsaved, or this long after its first unsaved one
# (whichever comes first; one save at a time): what a SIGKILL loses of what the person saw (docs/chat.md).
SAVE_TEXT_CHARS = 2000
SAVE_TEXT_SECONDS = 0.5


class TurnHost(Protocol):
    """What a turn needs from its conversation's owner (runner.py)."""

    options: WebhostOptions
    approvals: ApprovalBroker
    conversation_id: str

    async def tools(self) -> ToolSet: ...
    def app_contexts(self) -> list[AppContext]: ...
    def history(self) -> list[Message]: ...
    async def attachment_blocks(self) -> Mapping[str, tuple[Block, ...]]: ...
    async def save(self, message: Message) -> None: ...
    def save_request(self, message: Message, step: int, body: dict[str, Any]) -> None: ...
    async def reserve_tokens(self, tokens: int) -> Hold: ...
    async def settle_tokens(self, hold: Hold, model_id: str, input_tokens: int, output_tokens: int) -> None: ...
    def remembered(self, call: ToolCall) -> bool: ...
    async def remember(self, call: ToolCall) -> None: ...
    async def run_call(self, call: ToolCall, arguments: dict[str, Any], on_progress: ProgressFn) -> dict[str, Any]: ...
    async def audit_call(self, call: ToolCall, decision: str) -> None: ...


ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]


@dataclass(frozen=True)
class TurnModel:
    id: str
    model: str
    max_tokens: int
    context_tokens: int | None = None  # None: the request is not fitted (prompt.fit)


class Turn:
    def __init__(
        self, host: TurnHost, provider: Provider, model: TurnModel, message: Message, publish: Publish
    ) -> None:
        self.host = host
        self.provider = provider
        self.model = model
        self.message = message
        self.publish = publish
        self.scope = anyio.CancelScope()
        self.stopped = False
        self.shut_down = False
        self.done = anyio.Event()
        self._unsaved_chars = 0
        self._unsaved = anyio.Event()  # set by the first text not saved yet
        self._many_unsaved = anyio.Event()  # set once `SAVE_TEXT_CHARS` are not saved yet

    def stop(self) -> None:
        """End the model's answer (what it streamed is kept) and the turn's running calls, now."""
        self.stopped = True
        self.scope.cancel()

    def interrupt(self) -> None:
        """webhost stops: end the turn now, its text kept, as interrupted and retryable (not as the person's Stop)."""
        self.shut_down = True
        self.stop()

    async def run(self) -> None:
        message = self.message
        try:
            with self.scope:
                await self._steps()
            if self.shut_down:
                self._end_unfinished_calls("interrupted: webhost stopped while this call ran")
                message.status = "interrupted"
                message.error = SHUT_DOWN
                message.retryable = True
            elif self.stopped:
                self._end_unfinished_calls(STOPPED)
                message.status = "stopped"
                message.error = STOPPED if not message.full_text() and not message.calls() else None
        except ProviderError as exc:
            self._end_unfinished_calls("The turn ended: " + exc.message)
            message.status = "error"
            message.error = exc.message
            message.retryable = exc.retryable
        except WebhostError as exc:
            self._end_unfinished_calls(exc.message)
            message.status = "error"
            message.error = exc.message
            message.retryable = True
        except Exception:
            logger.exception("chat: a turn failed")
            self._end_unfinished_calls("webhost failed while running this call")
            message.status = "error"
            message.error = "webhost failed while answering (the log has the details); you can retry"
            message.retryable = True
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await self.host.save(message)
                except Exception:
                    logger.exception("chat: the answer could not be saved")
                self.publish("message", message=message.to_json())
                self.done.set()

    def _end_unfinished_calls(self, reason: str) -> None:
        for call in self.message.calls():
            if call.status in ("streaming", "approval", "running"):
                call.finish("error", error=reason)

    async def _steps(self) -> None:
        message = self.message
        for step in range(1, self.host.options.chat.max_steps + 1):
            message.steps = step
            tools = await self.host.tools()
            try:
                calls = await self._stream(step, tools)
            except BudgetRefused as refused:  # before this step's request: the steps before it stay the answer
                if step == 1:
                    raise ProviderError(refused.line, kind="other", retryable=False) from None
                message.status = "done"
                self._note(f"\n\n[webhost: {refused.line} This turn was ended before its next request.]", step)
                return
            await self.host.save(message)
            if not calls:
                message.status = "done"
                return
            await self._run_calls(calls, tools)
            await self.host.save(message)
        message.status = "done"
        steps = self.host.options.chat.max_steps
        self._note(f"\n\n[webhost: this turn made {steps} requests to the model and was ended]")

    def _note(self, note: str, step: int | None = None) -> None:
        self.message.add_text(note, step if step is not None else self.message.steps)
        self.publish("text", delta=note)

    async def _stream(self, step: int, tools: ToolSet) -> list[ToolCall]:
        """One request to the model; its text and tool calls are added to the message as they come."""
        options = self.host.options
        system, cut = prompt.system_prompt(
            options.chat.system_prompt, self.host.app_contexts(), limit=options.chat.max_context_chars
        )
        if cut:  # the person is told which apps' context did not fit whole in this request
            self.publish("contexts-cut", instances=cut, limit=options.chat.max_context_chars)
        structured = frozenset(name for name, p in options.servers.items() if p.model_sees_structured_content)
        request = prompt.request(
            model=self.model.model,
            max_tokens=self.model.max_tokens,
            system=system,
            messages=[*self.host.history(), self._so_far()],
            tools=tools.specs(),
            result_limit=options.chat.max_tool_result_chars,
            structured_servers=structured,
            context_tokens=self.model.context_tokens,
            attachments=await self.host.attachment_blocks(),
        )
        body = self.provider.wire_body(request)
        hold = await self.host.reserve_tokens(estimate(body) + self.model.max_tokens)  # BudgetRefused: not sent
        self.host.save_request(self.message, step, body)
        by_index: dict[int, tuple[ToolCall, OfferedTool | None, PartialArguments | None]] = {}
        before = dict(self.message.usage)
        try:
            await self._read(step, request, body, tools, by_index)
        except BaseExceptionGroup as group:  # the flushers' group wraps what the stream raised: one error, as raised
            raise _sole(group) from None
        finally:  # what the provider reported is what this step costs, whatever ended it
            used = {k: self.message.usage[k] - before.get(k, 0) for k in ("input", "output")}
            with anyio.CancelScope(shield=True):
                await self.host.settle_tokens(hold, self.model.id, used["input"], used["output"])
        return [call for call, _, _ in by_index.values()]

    async def _read(
        self,
        step: int,
        request: ChatRequest,
        body: dict[str, Any],
        tools: ToolSet,
        by_index: dict[int, tuple[ToolCall, OfferedTool | None, PartialArguments | None]],
    ) -> None:
        async with anyio.create_task_group() as flushers:
            flushers.start_soon(self._keep_text_saved)
            async for event in self.provider.stream(request, body):
                if isinstance(event, TextDelta):
                    if event.text:
                        self.message.add_text(event.text, step)
                        self.publish("text", delta=event.text)
                        self._text_unsaved(len(event.text))
                elif isinstance(event, ToolCallStart):
                    by_index[event.index] = self._start_call(step, event, tools)
                elif isinstance(event, ToolArgsDelta):
                    entry = by_index.get(event.index)
                    if entry is not None:
                        self._args(entry[0], entry[2], event.fragment, flushers)
                elif isinstance(event, ToolCallEnd):
                    entry = by_index.get(event.index)
                    if entry is not None:
                        self._end_call(entry[0], event.arguments)
                elif isinstance(event, Usage):  # settled when the step ends (`_stream`)
                    self.message.usage["input"] += event.input_tokens
                    self.message.usage["output"] += event.output_tokens
                elif isinstance(event, Stop) and event.reason == "length" and not by_index:
                    note = "\n\n[webhost: the answer reached the model's token limit (maxTokens)]"
                    self.message.add_text(note, step)
                    self.publish("text", delta=note)
            flushers.cancel_scope.cancel()

    def _text_unsaved(self, chars: int) -> None:
        self._unsaved_chars += chars
        self._unsaved.set()
        if self._unsaved_chars >= SAVE_TEXT_CHARS:
            self._many_unsaved.set()

    async def _keep_text_saved(self) -> None:
        """Save the message while its text streams, bounded by `SAVE_TEXT_CHARS` and `SAVE_TEXT_SECONDS`; one
        save at a time (text that comes during one waits for the next). The step's end saves the rest."""
        while True:
            await self._unsaved.wait()
            with anyio.move_on_after(SAVE_TEXT_SECONDS):
                await self._many_unsaved.wait()
            self._unsaved_chars = 0
            self._unsaved = anyio.Event()
            self._many_unsaved = anyio.Event()
            with anyio.CancelScope(shield=True):  # a write is never cut in the middle by the stream's end
                try:
                    await self.host.save(self.message)
                except Exception:  # the answer goes on; the step's end saves it again
                    logger.exception("chat: the streamed text could not be saved")

    def _so_far(self) -> Message:
        """This turn's assistant message as the next request must include it (the steps before this one)."""
        return self.message

    def _start_call(
        self, step: int, event: ToolCallStart, tools: ToolSet
    ) -> tuple[ToolCall, OfferedTool | None, PartialArguments | None]:
        offered = tools.get(event.name)
        call = ToolCall(
            id=new_id("tc-"),
            model_call_id=event.id or new_id("call_"),
            step=step,
            model_name=event.name,
            server=offered.ref.server if offered else None,
            tool=offered.ref.tool if offered else None,
            decision=offered.decision if offered else None,
            resource_uri=offered.resource_uri if offered else None,
        )
        if offered is not None and offered.decision == "ask" and not self.host.remembered(call):
            call.status = "approval"
        self.message.parts.append(Part(call=call, step=step))
        self.publish("call", call=call_json(call))
        # Only an app that may open before the call is decided sees the arguments while they are written.
        streams = offered is not None and offered.resource_uri is not None and call.status != "approval"
        return call, offered, PartialArguments() if streams else None

    def _args(
        self, call: ToolCall, partial: PartialArguments | None, fragment: str, flushers: anyio.abc.TaskGroup
    ) -> None:
        if partial is None:
            call.arguments_text += fragment
            return
        healed = partial.add(fragment)
        call.arguments_text = partial.text
        if healed is not None:
            self._send_partial(call, healed)
        else:
            flush_soon(
                partial,
                flushers,
                lambda held: self._send_partial(call, held),
                still_wanted=lambda: call.status == "streaming",
            )

    def _send_partial(self, call: ToolCall, healed: dict[str, Any]) -> None:
        call.partial = healed
        self.publish("args", callId=call.id, partial=healed)

    def _end_call(self, call: ToolCall, arguments: str) -> None:
        call.partial = None
        call.arguments_text = arguments or "{}"
        try:
            value = orjson.loads(call.arguments_text)
        except orjson.JSONDecodeError:
            value = None
        call.arguments = value if isinstance(value, dict) else None
        if call.status == "streaming":
            call.status = "running"
        self.publish("call", call=call_json(call))

    async def _run_calls(self, calls: list[ToolCall], tools: ToolSet) -> None:
        async with anyio.create_task_group() as tg:
            for call in calls:
                tg.start_soon(self._run_call, call)

    async def _run_call(self, call: ToolCall) -> None:
        try:
            await self._decide_and_run(call)
        finally:
            self.publish("call", call=call_json(call))

    async def _decide_and_run(self, call: ToolCall) -> None:
        if call.server is None or call.tool is None:
            call.finish("error", error=f"There is no tool named {call.model_name!r}.")
            return
        if call.arguments is None:
            call.finish("error", error="The arguments were not a JSON object: " + _short(call.arguments_text))
            return
        decision = call.decision or "ask"
        if call.status == "approval":
            self.publish("call", call=call_json(call))
            answer = await self.host.approvals.answer(
                call.server,
                "model-tool-call",
                f"The model wants to call {call.tool} on {call.server}",
                {
                    "conversationId": self.host.conversation_id,
                    "callId": call.id,
                    "tool": call.tool,
                    "arguments": call.arguments,
                    "remember": "conversation",
                },
                subject=call.id,
                session_memory=False,  # "allow for this conversation" is the conversation's (`remember`)
            )
            if answer.decision != "allow":
                await self.host.audit_call(call, "denied")
                call.finish("denied", error="The person denied this tool call.")
                return
            if answer.remember:
                await self.host.remember(call)
            decision = "approved"
        call.status = "running"
        self.publish("call", call=call_json(call))
        await self.host.audit_call(call, decision)

        async def on_progress(progress: float, total: float | None, note: str | None) -> None:
            self.publish("progress", callId=call.id, progress=progress, total=total, message=note)

        try:
            result = await self.host.run_call(call, call.arguments, on_progress)
        except WebhostError as exc:
            call.finish("error", error=exc.message)
            return
        call.finish("error" if result.get("isError") is True else "ok", result=result)


def _sole(group: BaseExceptionGroup[BaseException]) -> BaseException:
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
