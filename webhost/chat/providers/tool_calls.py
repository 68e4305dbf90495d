"""OpenAI-style streamed tool-call deltas → webhost's start / arguments / end events, whatever the server's quirks.

Chat Completions streams a tool call as deltas keyed by `index`: the first carries `id` and
`function.name`, later ones `function.arguments` fragments. Compatible servers bend this; each bend
is normalised here (tests/fast/test_chat_providers_*.py replays each one):

- Ollama sends each call whole in one delta (id, name, complete arguments), sometimes with
  `finish_reason` in the same chunk, and older versions finish with "stop": one start, one fragment,
  one end (and openai_stream makes a "stop" after tool calls "tool_calls");
- llama.cpp repeats `id`, `name` and `type` in every delta: the first name and id stick, a repeated
  one neither starts a second call nor grows the name;
- vLLM sends `arguments` "" or leaves it out altogether: the end's arguments are "{}";
- some servers send `arguments` as a JSON object, not a string: it is written as JSON text;
- some leave out `index`, or give index 0 to every call, each with its own id: a call is then found
  by its `id`, and a new id at a known index is a new call.

A call starts (`ToolCallStart`) as soon as its name is known; argument text that came before is sent
just after. `finish()` ends every call, in order, with its full arguments.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from webhost.chat.providers.events import StreamEvent, ToolArgsDelta, ToolCallEnd, ToolCallStart


def new_call_id() -> str:
    """An id for a call the server sent without one (the result must name the call it answers)."""
    return "call_" + secrets.token_hex(8)


@dataclass
class _Call:
    index: int  # ours: the position among this answer's calls
    id: str | None = None
    name: str | None = None
    started: bool = False
    ended: bool = False
    arguments: list[str] = field(default_factory=list)
    unsent: list[str] = field(default_factory=list)  # fragments that came before the name


def arguments_text(value: object) -> str:
    """A delta's `arguments` as text: a string as is, an object (some servers) as JSON, nothing as ""."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def normalised(arguments: str) -> str:
    return arguments if arguments.strip() else "{}"


class ToolCallAccumulator:
    def __init__(self, new_id: Callable[[], str] = new_call_id) -> None:
        self._new_id = new_id
        self._calls: list[_Call] = []
        self._by_wire_index: dict[int, _Call] = {}
        self._by_id: dict[str, _Call] = {}

    @property
    def any_started(self) -> bool:
        return bool(self._calls)

    def feed(self, index: int | None, call_id: str | None, name: str | None, arguments: object) -> list[StreamEvent]:
        """One tool-call delta (`index`, `id`, `function.name`, `function.arguments` as the wire gave them)."""
        index = index if isinstance(index, int) else None
        call_id = call_id if isinstance(call_id, str) and call_id else None
        name = name if isinstance(name, str) and name else None
        call = self._find(index, call_id, name)
        if call is None:
            call = _Call(len(self._calls))
            self._calls.append(call)
        if index is not None:
            self._by_wire_index[index] = call
        if call_id and not call.id:
            call.id = call_id
            self._by_id[call_id] = call
        if name and not call.name:
            call.name = name
        if call.ended:  # deltas after the finish: nothing more can be said about an ended call
            return []
        events: list[StreamEvent] = []
        text = arguments_text(arguments)
        if text:
            call.unsent.append(text)
        if not call.started and call.name:
            events.append(self._start(call))
        if call.started and call.unsent:
            events.append(self._send(call))
        return events

    def finish(self) -> list[StreamEvent]:
        """End every call not yet ended, in the order they started (one without a name starts with name "")."""
        events: list[StreamEvent] = []
        for call in self._calls:
            if call.ended:
                continue
            if not call.started:
                events.append(self._start(call))
            if call.unsent:
                events.append(self._send(call))
            call.ended = True
            events.append(ToolCallEnd(call.index, normalised("".join(call.arguments))))
        return events

    def _find(self, index: int | None, call_id: str | None, name: str | None) -> _Call | None:
        if index is not None and index in self._by_wire_index:
            call = self._by_wire_index[index]
            if call_id and call.id and call_id != call.id:
                return self._by_id.get(call_id)  # the index reused for another call: by id, or a new one
            return call
        if call_id is not None:
            return self._by_id.get(call_id)
        if index is None and name is None and self._calls:
            return self._calls[-1]  # a bare fragment belongs to the latest call
        return None

    def _start(self, call: _Call) -> ToolCallStart:
        call.started = True
        if not call.id:
            call.id = self._new_id()
            self._by_id[call.id] = call
        return ToolCallStart(call.index, call.id, call.name or "")

    def _send(self, call: _Call) -> ToolArgsDelta:
        fragment = "".join(call.unsent)
        call.unsent.clear()
        call.arguments.append(fragment)
        return ToolArgsDelta(call.index, fragment)


__all__ = ["ToolCallAccumulator", "arguments_text", "new_call_id", "normalised"]
