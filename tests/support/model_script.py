"""Scripts for the scripted model endpoint: one neutral language, rendered as either wire's stream.

A script is a list of rules; a request gets the first rule whose `match` occurs in its newest input
(all the text after the model's last answer: user text and tool results; a rule without `match` is
a fallback) and that is not used up (`times`). A rule's `events`, in order:

- `{"text": "Hello "}`: a piece of the answer's text;
- `{"tool": {"id": "call_1", "name": "x", "args": ["{\"a\":", " 1}"]}}`: a tool call and its
  argument fragments; `{"args": {"id": "call_1", "fragment": "..."}}` adds a fragment later
  (interleaved calls; openai wire only, Anthropic's blocks cannot interleave);
- `{"usage": {"input": 10, "output": 5}}`; `{"stop": "end" | "tool_calls" | "length"}` (default:
  tool_calls after a tool call, else end);
- `{"quirk": NAME}`: how the rest of this answer is sent (QUIRKS);
- `{"status": 429, "retryAfter": 2, "message": "..."}`: as the first event, an HTTP error answer
  (`{key}` in the message becomes the API key the request carried); later, an error inside the stream;
- `{"cut": true}`: drop the connection mid-answer; `{"cut": "clean"}`: end the body properly, unfinished;
- `{"raw": "data: not json\n\n"}`: these characters as they are, in the body;
- `{"pause": 0.01}`: wait between chunks (streaming realism); as the first event, before answering at
  all (a server that does not answer, for timeouts);
- `{"at": 0.25}`: wait until that many seconds after the answer's body began: a steady pace (`i / rate`
  for the i-th token) that a timer's granularity cannot slow, as a run of short pauses would (each
  pause is rounded up to the event loop's millisecond);
- `{"gate": "NAME"}`: hold the rest of the answer until the test opens that gate (`POST /_release`,
  `ModelEndpointServer.release`): a test waits for what the host shows mid-stream, then lets it go on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

QUIRKS = {
    "ollama-whole": "openai: every tool call whole (id, name, all arguments) in one chunk that also ends the answer",
    "llamacpp-repeat-name": "openai: id, type and name again in every tool-call delta",
    "vllm-empty-args": 'openai: arguments "" in the call\'s first delta, no fragments',
    "vllm-no-args": "openai: no arguments key at all, no fragments",
    "object-args": "openai: arguments as a JSON object in one delta",
    "no-index": "openai: tool-call deltas without index",
    "index-zero": "openai: index 0 for every tool call",
    "anthropic-buffered": "anthropic: a tool's whole input JSON in one delta just before its block stops",
    "anthropic-input-in-start": "anthropic: a tool's input complete in content_block_start, no deltas",
}


@dataclass
class Rule:
    events: list[dict[str, Any]]
    match: str | None = None
    times: int | None = None

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> Rule:
        if not isinstance(raw.get("events"), list):
            raise ValueError(f"a rule needs a list of events: {raw!r}")
        for event in raw["events"]:
            if event.get("quirk") is not None and event["quirk"] not in QUIRKS:
                raise ValueError(f"unknown quirk {event['quirk']!r}; known: {sorted(QUIRKS)}")
        return cls(list(raw["events"]), raw.get("match"), raw.get("times"))


@dataclass
class Scripts:
    """Rules per key (the request's model name; "*" for every model without its own) and what was received."""

    rules: dict[str, list[Rule]] = field(default_factory=dict)
    received: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    gates: dict[str, asyncio.Event] = field(default_factory=dict)  # `{"gate": NAME}`: set when a test opens it

    def gate(self, name: str) -> asyncio.Event:
        return self.gates.setdefault(name, asyncio.Event())

    def set(self, key: str, rules: list[dict[str, Any]]) -> None:
        self.rules[key] = [Rule.parse(rule) for rule in rules]

    def load(self, document: object) -> None:
        """A script file: a list of rules (for every model) or {"KEY": [rules], ...}."""
        if isinstance(document, list):
            self.set("*", document)
        elif isinstance(document, dict):
            for key, rules in document.items():
                self.set(key, rules)
        else:
            raise ValueError("a script is a list of rules or an object of them by model name")

    def pick(self, key: str, newest: str) -> Rule | None:
        for rule in self.rules.get(key, self.rules.get("*", [])):
            if rule.times is not None and rule.times <= 0:
                continue
            if rule.match is None or rule.match in newest:
                if rule.times is not None:
                    rule.times -= 1
                return rule
        return None


def newest_input(messages: list[dict[str, Any]]) -> str:
    """All the text after the last assistant message, on either wire."""
    texts: list[str] = []
    for message in messages:
        if message.get("role") == "assistant":
            texts = []
            continue
        texts += _texts(message.get("content"))
    return "\n".join(texts)


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    found: list[str] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "text":
            found.append(str(part.get("text", "")))
        elif isinstance(part, dict) and part.get("type") == "tool_result":
            found += _texts(part.get("content"))
    return found


# A rendered answer is a sequence of steps: bytes to send, a pause, or the end of the body.
Cut = Literal["abrupt", "clean"]
Step = bytes | float | tuple[Literal["cut"], Cut] | tuple[Literal["gate"], str] | tuple[Literal["at"], float]


@dataclass
class Fault:
    status: int
    message: str
    retry_after: str | None


def leading_fault(events: list[dict[str, Any]], model: str, key: str) -> Fault | None:
    """The HTTP error a rule answers with instead of a stream (its first event is a status)."""
    if not events or "status" not in events[0]:
        return None
    event = events[0]
    status = int(event["status"])
    retry = event.get("retryAfter")
    return Fault(status, fault_message(event, model, key), None if retry is None else str(retry))


DEFAULT_MESSAGES = {
    400: "Invalid request.",
    401: "Incorrect API key provided.",
    403: "You do not have access to this model.",
    404: "The model '{model}' does not exist.",
    429: "Rate limit reached for requests.",
    500: "The server had an error while processing your request.",
    503: "The engine is currently overloaded.",
    529: "Overloaded.",
}


def fault_message(event: dict[str, Any], model: str, key: str) -> str:
    template = str(event.get("message") or DEFAULT_MESSAGES.get(int(event["status"]), "Error."))
    return template.replace("{model}", model).replace("{key}", key)


def sse(data: object, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def tools_of(events: list[dict[str, Any]]) -> bool:
    return any("tool" in event for event in events)


def steps_before(event: dict[str, Any]) -> Iterator[Step]:
    """The pause or cut an event is, if it is one."""
    if "pause" in event:
        yield float(event["pause"])
    if "at" in event:
        yield ("at", float(event["at"]))
    if "cut" in event:
        yield ("cut", "clean" if event["cut"] == "clean" else "abrupt")
    if "gate" in event:
        yield ("gate", str(event["gate"]))


__all__ = [
    "QUIRKS",
    "Fault",
    "Rule",
    "Scripts",
    "Step",
    "fault_message",
    "leading_fault",
    "newest_input",
    "sse",
    "steps_before",
    "tools_of",
]
